package bloom

import (
	"testing"
)

const benchN = 1_000_000

// benchKeys returns n distinct 16-byte keys backed by one allocation.
func benchKeys(n int, seed uint64) [][]byte {
	rng := splitmix64(seed)
	backing := make([]byte, 0, 16*n)
	keys := make([][]byte, n)
	for i := range keys {
		start := len(backing)
		backing = append(backing, rng.randomKey(nil)...)
		keys[i] = backing[start:len(backing):len(backing)]
	}
	return keys
}

// BenchmarkAdd adds 16-byte keys to a filter sized for 1M keys at p = 1%.
func BenchmarkAdd(b *testing.B) {
	keys := benchKeys(benchN, 1)
	f, _ := New(benchN, 0.01)
	b.SetBytes(16)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.Add(keys[i%benchN])
	}
}

// BenchmarkTest tests 16-byte keys (half members, half not) against a full
// filter of 1M keys at p = 1%.
func BenchmarkTest(b *testing.B) {
	keys := benchKeys(benchN, 1)
	others := benchKeys(benchN, 2)
	f, _ := New(benchN, 0.01)
	f.AddMany(keys)
	b.SetBytes(16)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % benchN
		if i&1 == 0 {
			f.Test(keys[j])
		} else {
			f.Test(others[j])
		}
	}
}

// BenchmarkTestHash measures the probe loop alone (pairs precomputed).
func BenchmarkTestHash(b *testing.B) {
	keys := benchKeys(benchN, 1)
	f, _ := New(benchN, 0.01)
	f.AddMany(keys)
	pairs := make([][2]uint64, benchN)
	for i, k := range keys {
		pairs[i][0], pairs[i][1] = Hash(k)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := pairs[i%benchN]
		f.TestHash(p[0], p[1])
	}
}

// BenchmarkTestMany tests batches of 1024 keys.
func BenchmarkTestMany(b *testing.B) {
	keys := benchKeys(benchN, 1)
	f, _ := New(benchN, 0.01)
	f.AddMany(keys[:benchN/2])
	out := make([]bool, 0, 1024)
	b.SetBytes(16 * 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := (i * 1024) % (benchN - 1024)
		out = f.TestMany(keys[j:j+1024], out)
	}
}

// BenchmarkScalableAdd adds to a default chain starting at capacity 100.
func BenchmarkScalableAdd(b *testing.B) {
	keys := benchKeys(benchN, 1)
	s, _ := NewScalable(ScalableConfig{Capacity: 100, ErrorRate: 0.01, Growth: 2})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, _ = s.Add(keys[i%benchN])
	}
}
