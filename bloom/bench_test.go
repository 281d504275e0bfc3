package bloom

import (
	"fmt"
	"math"
	"os"
	"strconv"
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
	s, _ := NewScalableWithConfig(ScalableConfig{Capacity: 100, ErrorRate: 0.01, Growth: 2})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = s.Add(keys[i%benchN])
	}
}

// BenchmarkClassicTestMany compares a loop of Test with TestMany (batches
// of 1024 keys) on one classic filter at p = 1%, filled to capacity with
// pseudo-random hash pairs, probed with 16-byte keys half of which are
// members. Sizes: 1M keys (9.6M bits, 1.2 MB: in L2) and 100M bits
// (10.4M keys, 12.5 MB: larger than L2); BLOOM_BENCH_BITS=4e9 adds a
// filter of that many bits (500 MB: larger than most L3 caches). The
// metric ns/key is the time per tested key; compare the two sub-benchmarks
// of one size within one run.
//
//	go test ./bloom -run '^$' -bench BenchmarkClassicTestMany -benchtime 2s
func BenchmarkClassicTestMany(b *testing.B) {
	sizes := []uint64{9_585_059, 100_000_000}
	if s := os.Getenv("BLOOM_BENCH_BITS"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 64 || v > float64(MaxBits) {
			b.Fatalf("BLOOM_BENCH_BITS=%q: want a bit count in [64, MaxBits]", s)
		}
		sizes = append(sizes, uint64(v))
	}
	const nProbes = 1 << 18
	probes := benchKeys(nProbes, 3)
	for _, m := range sizes {
		n := uint64(float64(m) * math.Ln2 * math.Ln2 / -math.Log(0.01)) // keys at p = 1%
		f, err := NewWithConfig(Config{M: m, K: 7})
		if err != nil {
			b.Fatal(err)
		}
		rng := splitmix64(m)
		var h1, h2 [exclusiveGroup]uint64
		for left := n; left > 0; {
			g := min(left, exclusiveGroup)
			for i := range g {
				h1[i], h2[i] = rng.next(), rng.next()
			}
			f.addHashManyExclusive(h1[:g], h2[:g])
			left -= g
		}
		f.AddMany(probes[:nProbes/2]) // half the probes are members
		name := fmt.Sprintf("m=%.3g/n=%.3g", float64(m), float64(n))
		b.Run(name+"/Test", func(b *testing.B) {
			hits := 0
			for i := 0; i < b.N; i++ {
				if f.Test(probes[i&(nProbes-1)]) {
					hits++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/key")
			benchSink += hits
		})
		b.Run(name+"/TestMany", func(b *testing.B) {
			const batch = 1024
			out := make([]bool, 0, batch)
			hits := 0
			for i := 0; i < b.N; i += batch { // b.N keys in all
				j := i & (nProbes - batch) // the same keys in the same order as Test
				out = f.TestMany(probes[j:j+min(batch, b.N-i)], out)
				for _, ok := range out {
					if ok {
						hits++
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/key")
			benchSink += hits
		})
	}
}

var benchSink int

// BenchmarkScalableAddLarge adds new items (pseudo-random hash pairs) to
// the chain of BF.RESERVE bf 0.01 10000000 (one 12 MB sub-filter: larger
// than L2), as the server's BF.ADD does.
func BenchmarkScalableAddLarge(b *testing.B) {
	s, err := NewScalableWithConfig(ScalableConfig{Capacity: 10_000_000, ErrorRate: 0.01, Growth: 2})
	if err != nil {
		b.Fatal(err)
	}
	x := uint64(0x9e3779b97f4a7c15)
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		if n++; n == 9_000_000 { // stay below capacity: one sub-filter
			s.Reset()
			n = 0
		}
		_, _ = s.TestAndAddHash(x, x*0xff51afd7ed558ccd|1)
	}
}
