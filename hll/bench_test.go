package hll

import (
	"strconv"
	"testing"
)

func benchKeys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("user-" + strconv.Itoa(i) + "-0123456")[:16]
	}
	return keys
}

// BenchmarkAddDense: 16-byte keys into a dense p=14 sketch (hash + register
// update).
func BenchmarkAddDense(b *testing.B) {
	keys := benchKeys(1 << 16)
	s, _ := NewWithConfig(Config{SparseMaxBytes: -1})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Add(keys[i&(1<<16-1)])
	}
}

// BenchmarkAddHashDense: pre-hashed inserts.
func BenchmarkAddHashDense(b *testing.B) {
	s, _ := NewWithConfig(Config{SparseMaxBytes: -1})
	h := uint64(0x9e3779b97f4a7c15)
	for i := 0; i < b.N; i++ {
		h += 0x9e3779b97f4a7c15
		s.AddHash(h * 0xbf58476d1ce4e5b9)
	}
}

// BenchmarkAddSparse: the first 1000 distinct keys (sparse updater).
func BenchmarkAddSparse(b *testing.B) {
	keys := benchKeys(1000)
	for i := 0; i < b.N; i++ {
		s, _ := New(DefaultPrecision)
		for _, k := range keys {
			s.Add(k)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
}

// BenchmarkCountDense: a full estimate (cache invalid) of a dense sketch.
func BenchmarkCountDense(b *testing.B) {
	s, _ := New(DefaultPrecision)
	for _, k := range benchKeys(100000) {
		s.Add(k)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		invalidateCache(s.b)
		s.Count()
	}
}

// BenchmarkMerge: union of two dense sketches.
func BenchmarkMerge(b *testing.B) {
	x, _ := New(DefaultPrecision)
	y, _ := New(DefaultPrecision)
	for i, k := range benchKeys(100000) {
		if i%2 == 0 {
			x.Add(k)
		} else {
			y.Add(k)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x.Merge(y)
	}
}

// BenchmarkRedisAddDense: PFADD of 10 elements on a dense Redis string
// (the server's path).
func BenchmarkRedisAddDense(b *testing.B) {
	keys := benchKeys(1 << 14)
	v, _, _ := RedisAdd(nil, keys, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := (i * 10) & (1<<14 - 10)
		v, _, _ = RedisAdd(v, keys[j:j+10], DefaultSparseMaxBytes)
	}
}
