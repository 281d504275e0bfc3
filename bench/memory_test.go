package bench

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkMemoryMiss measures this machine's cost of one random load
// from a table far larger than the caches (512 MiB), the yardstick for
// "batched out-of-cache Test close to one overlapped cache miss per key":
//
//   - overlapped: independent random loads (the addresses do not depend on
//     earlier loads, so the CPU keeps several misses in flight, as
//     TestMany's compute-then-touch loop lets it);
//   - dependent: each address comes from the previous load (a pointer
//     chase over one random cycle), so every miss waits for the last.
//
// ns/op is per load.
func BenchmarkMemoryMiss(b *testing.B) {
	const words = 512 << 20 / 8
	next := make([]uint64, words)
	// One random cycle through every slot (Sattolo's algorithm), so the
	// chase visits all of them before repeating.
	for i := range next {
		next[i] = uint64(i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := len(next) - 1; i > 0; i-- {
		j := r.IntN(i)
		next[i], next[j] = next[j], next[i]
	}
	b.Run("mode=overlapped", func(b *testing.B) {
		var sum uint64
		for i := 0; i < b.N; i++ {
			h := mix(uint64(i))
			sum += next[(h>>32)*words>>32]
		}
		sink = sum
	})
	b.Run("mode=dependent", func(b *testing.B) {
		p := uint64(0)
		for i := 0; i < b.N; i++ {
			p = next[p]
		}
		sink = p
	})
}

var sink uint64
