package bloom

import (
	"fmt"
	"testing"
)

// familyBenchKeys returns n distinct pseudo-random 16-byte keys.
func familyBenchKeys(n int, seed uint64) [][]byte {
	rng := splitmix64(seed)
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = rng.randomKey(nil)
	}
	return keys
}

// benchSBBF returns an SBBF sized for n keys at 1% holding n pseudo-random
// hashes (cheap to fill, same bits as n keys).
func benchSBBF(b *testing.B, n uint64) *SBBF {
	s, err := NewSBBF(n, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	r := splitmix64(n)
	for i := uint64(0); i < n; i++ {
		s.AddHash(r.next())
	}
	return s
}

// BenchmarkSBBF compares Test with TestMany and Add with AddMany on
// 16-byte keys, in cache (1M keys, 1.3 MB) and out of the L2 (30M, 40 MB).
// Run with -tags purego for the bounds-checked twin.
func BenchmarkSBBF(b *testing.B) {
	keys := familyBenchKeys(1<<16, 99)
	for _, n := range []uint64{1e6, 3e7} {
		s := benchSBBF(b, n)
		b.Run(fmt.Sprintf("Test/n=%g", float64(n)), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s.Test(keys[i&(1<<16-1)])
			}
		})
		b.Run(fmt.Sprintf("TestMany/n=%g", float64(n)), func(b *testing.B) {
			out := make([]bool, 0, 1024)
			for i := 0; i < b.N; i += 1024 {
				j := i & (1<<16 - 1)
				out = s.TestMany(keys[j:j+1024], out)
			}
		})
		b.Run(fmt.Sprintf("Add/n=%g", float64(n)), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s.Add(keys[i&(1<<16-1)])
			}
		})
		b.Run(fmt.Sprintf("AddMany/n=%g", float64(n)), func(b *testing.B) {
			for i := 0; i < b.N; i += 1024 {
				j := i & (1<<16 - 1)
				s.AddMany(keys[j : j+1024])
			}
		})
	}
}

func BenchmarkCounting(b *testing.B) {
	keys := familyBenchKeys(1<<16, 7)
	c, _ := NewCounting(1e6, 0.01)
	b.Run("Add+Remove", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			k := keys[i&(1<<16-1)]
			c.Add(k)
			_ = c.Remove(k)
		}
	})
	b.Run("Test", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c.Test(keys[i&(1<<16-1)])
		}
	})
}

func BenchmarkStableAdd(b *testing.B) {
	keys := familyBenchKeys(1<<16, 8)
	s, _ := newStableMDP(1e6, 2, 0.01)
	for i := 0; i < b.N; i++ {
		s.Add(keys[i&(1<<16-1)])
	}
}
