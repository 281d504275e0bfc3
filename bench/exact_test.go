package bench

// Checks that the fast paths of probly's bloom package keep the documented
// positions x_i = (h1 + i·h2) mod m exactly (the RedisBloom layer depends
// on them), and that AddMany/TestMany equal Add/Test key by key. These are
// correctness tests of what the benchmarks measure, not timed tests.

import (
	"math"
	"math/bits"
	"testing"

	"github.com/probly/probly/bloom"
)

func TestPositionsExact(t *testing.T) {
	ms := []uint64{1, 2, 3, 7, 63, 64, 65, 127, 1000, 9585059, 1<<20 - 1, 1 << 20, 1<<20 + 1, 1<<31 - 1}
	hs := []uint64{0, 1, 2, 63, 64, 1 << 32, 1<<63 - 1, 1 << 63, math.MaxUint64 - 1, math.MaxUint64}
	for _, m := range ms {
		for _, k := range []uint32{1, 3, 7, 20} {
			f, err := bloom.NewWithConfig(bloom.Config{M: m, K: k})
			if err != nil {
				t.Fatal(err)
			}
			ref := make([]uint64, (m+63)/64)
			add := func(h1, h2 uint64) {
				f.AddHash(h1, h2)
				for i := uint64(0); i < uint64(k); i++ {
					x := (h1 + i*h2) % m
					ref[x>>6] |= 1 << (x & 63)
				}
			}
			for _, h1 := range hs {
				for _, h2 := range hs {
					add(h1, h2)
				}
			}
			for i := uint64(0); i < 2000; i++ {
				add(mix(i), mix(i^0xabcdef))
				add(mix(i)|1<<63, mix(^i))
			}
			// The bitset is the encoding less its 64-byte header and
			// 4-byte checksum (docs/FORMATS.md, "Bloom filter (classic)").
			enc, err := f.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			got := enc[64 : len(enc)-4]
			for w, v := range ref {
				for b := 0; b < 8 && w*8+b < len(got); b++ {
					if got[w*8+b] != byte(v>>(8*b)) {
						t.Fatalf("m=%d k=%d: byte %d = %#x, want %#x", m, k, w*8+b, got[w*8+b], byte(v>>(8*b)))
					}
				}
			}
		}
	}
}

// TestModReduction checks the identity the fast reduction relies on over
// random and extreme x for m up to MaxBits, against the % operator.
func TestModReduction(t *testing.T) {
	for _, m := range []uint64{1, 3, 1 << 32, 1<<32 + 1, 1<<40 - 1, bloom.MaxBits, 9585059, 958505838} {
		inv := math.MaxUint64 / m
		for i := uint64(0); i < 200000; i++ {
			x := mix(i)
			if i < 64 {
				x = math.MaxUint64 - i
			}
			q, _ := bits.Mul64(x, inv)
			r := x - q*m
			if r >= m {
				r -= m
			}
			if r != x%m {
				t.Fatalf("m=%d x=%d: %d != %d", m, x, r, x%m)
			}
		}
	}
}

func TestManyEqualsSingle(t *testing.T) {
	for _, k := range []uint32{1, 7, 37, 300} {
		single, _ := bloom.NewWithConfig(bloom.Config{M: 50000, K: k})
		many, _ := bloom.NewWithConfig(bloom.Config{M: 50000, K: k})
		var keys [][]byte
		for c := uint64(0); c < 3000; c++ {
			key := make([]byte, 16)
			putKey(key, c%2500) // some duplicates
			keys = append(keys, key)
			single.Add(key)
		}
		many.AddMany(keys[:1])
		many.AddMany(keys[1:])
		if !sameEncoding(t, single, many) {
			t.Fatalf("k=%d: AddMany differs from Add (N %d vs %d)", k, many.Stats().N, single.Stats().N)
		}
		var probes [][]byte
		for c := uint64(0); c < 6000; c++ {
			key := make([]byte, 16)
			putKey(key, probeCounter(c, 2500))
			probes = append(probes, key)
		}
		out := single.TestMany(probes, nil)
		for i, key := range probes {
			if out[i] != single.Test(key) {
				t.Fatalf("k=%d: TestMany[%d] != Test", k, i)
			}
		}
	}
}

// TestAddManyConcurrent runs AddMany and TestMany from several goroutines
// (run with -race): no data race, no false negative.
func TestAddManyConcurrent(t *testing.T) {
	f, _ := bloom.New(40000, 0.01)
	done := make(chan [][]byte)
	for w := uint64(0); w < 4; w++ {
		go func() {
			var keys [][]byte
			for c := w * 10000; c < (w+1)*10000; c++ {
				key := make([]byte, 16)
				putKey(key, c)
				keys = append(keys, key)
			}
			for i := 0; i < len(keys); i += 100 {
				f.AddMany(keys[i : i+100])
				f.TestMany(keys[:i+100], nil)
			}
			done <- keys
		}()
	}
	for range 4 {
		for i, ok := range f.TestMany(<-done, nil) {
			if !ok {
				t.Fatalf("false negative at %d", i)
			}
		}
	}
}

// sameEncoding reports whether two filters encode to the same bytes
// (parameters, hash, count and bits).
func sameEncoding(t *testing.T, a, b *bloom.Filter) bool {
	t.Helper()
	x, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	y, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}
