package bench

// Classic Bloom filter: probly's bloom package against
// github.com/bits-and-blooms/bloom/v3, 16-byte keys, p = 0.01, at 1M keys
// (in cache) and 100M keys (≈ 120 MB per filter, out of cache).
//
// Run (see docs/BENCHMARKS.md for the full procedure):
//
//	cd bench
//	go test -run '^$' -bench 'Bloom' -count 6 -timeout 60m | tee bloom.txt
//	benchstat -col /impl bloom.txt
//
// Every benchmark is split into sub-benchmarks whose last level is
// impl=probly / impl=bitsandblooms, so -count N runs the two
// implementations interleaved (probly, bab, probly, bab, ...) in one
// process, and benchstat -col /impl prints them side by side with the ratio.
// ns/op is per key everywhere (TestMany included).
//
// Keys are generated on the fly from a counter c: key(c) is 16 bytes, two
// splitmix64 outputs, identical for both libraries; members are
// c ∈ [0, n), non-members have the top bit set. Generating one key costs a
// few ns (BenchmarkKeyGen) and is included identically in both columns.
// The 100M filters are built once per process (a few minutes in total) and
// shared by all counts; set BENCH_SKIP_100M=1 to run only the 1M sizes.

import (
	"encoding/binary"
	"math/bits"
	"os"
	"sync"
	"testing"

	bab "github.com/bits-and-blooms/bloom/v3"

	"github.com/probly/probly/bloom"
)

const (
	fpRate      = 0.01
	batch       = 1024     // keys per TestMany call
	fprProbes   = 10000000 // non-member probes for the measured FPR
	nonMember   = uint64(1) << 63
	defaultSeed = 0x5eed
)

var sizes = []struct {
	name string
	n    uint64
}{
	{"1M", 1_000_000},
	{"100M", 100_000_000},
}

// mix is the splitmix64 finalizer: a bijection on uint64.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// putKey writes key(c) into dst: 16 bytes, distinct for distinct c (the
// first 8 bytes already are, since mix is a bijection).
func putKey(dst []byte, c uint64) {
	binary.LittleEndian.PutUint64(dst[:8], mix(c))
	binary.LittleEndian.PutUint64(dst[8:16], mix(c^0x6a09e667f3bcc908))
}

// probeCounter returns the counter of the i-th probe of a Test benchmark:
// a pseudo-random member of [0, n) or, with probability 1/2, a non-member.
func probeCounter(i, n uint64) uint64 {
	r := mix(i ^ defaultSeed)
	if r&1 == 0 {
		hi, _ := bits.Mul64(r, n)
		return hi // member
	}
	return nonMember | r>>1 // non-member
}

func skip100M(b testing.TB, n uint64) {
	if n > 1_000_000 && os.Getenv("BENCH_SKIP_100M") != "" {
		b.Skip("BENCH_SKIP_100M set")
	}
}

// Filled filters, built once per process.
var (
	fullMu    sync.Mutex
	fullProbl = map[uint64]*bloom.Filter{}
	fullBab   = map[uint64]*bab.BloomFilter{}
)

func filledProbly(tb testing.TB, n uint64) *bloom.Filter {
	fullMu.Lock()
	defer fullMu.Unlock()
	if f := fullProbl[n]; f != nil {
		return f
	}
	f, err := bloom.New(n, fpRate)
	if err != nil {
		tb.Fatal(err)
	}
	var k [16]byte
	for c := uint64(0); c < n; c++ {
		putKey(k[:], c)
		f.Add(k[:])
	}
	fullProbl[n] = f
	return f
}

func filledBab(n uint64) *bab.BloomFilter {
	fullMu.Lock()
	defer fullMu.Unlock()
	if f := fullBab[n]; f != nil {
		return f
	}
	f := bab.NewWithEstimates(uint(n), fpRate)
	var k [16]byte
	for c := uint64(0); c < n; c++ {
		putKey(k[:], c)
		f.Add(k[:])
	}
	fullBab[n] = f
	return f
}

// BenchmarkKeyGen is the cost of generating one key, included in every
// other benchmark.
func BenchmarkKeyGen(b *testing.B) {
	var k [16]byte
	var sink byte
	for i := 0; i < b.N; i++ {
		putKey(k[:], probeCounter(uint64(i), 1_000_000))
		sink ^= k[0]
	}
	_ = sink
}

// addState keeps, per benchmark, a filter that is filled with fresh keys
// key(0), key(1), ... and replaced by an empty one when it reaches its
// capacity n, so every Add inserts a key that was never added before and
// the fill stays between 0 and the design load.
type addState struct {
	next uint64
	pf   *bloom.Filter
	bf   *bab.BloomFilter
}

var (
	addMu     sync.Mutex
	addStates = map[string]*addState{}
)

func getAddState(key string) *addState {
	addMu.Lock()
	defer addMu.Unlock()
	s := addStates[key]
	if s == nil {
		s = &addState{}
		addStates[key] = s
	}
	return s
}

// BenchmarkBloomAdd: ns per Add of a new 16-byte key into a filter sized
// for n keys at p = 1%.
func BenchmarkBloomAdd(b *testing.B) {
	for _, sz := range sizes {
		b.Run("keys="+sz.name, func(b *testing.B) {
			skip100M(b, sz.n)
			b.Run("impl=probly", func(b *testing.B) {
				s := getAddState("probly/" + sz.name)
				var k [16]byte
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if s.pf == nil || s.next == sz.n {
						b.StopTimer()
						s.pf, _ = bloom.New(sz.n, fpRate)
						s.next = 0
						b.StartTimer()
					}
					putKey(k[:], s.next)
					s.next++
					s.pf.Add(k[:])
				}
			})
			b.Run("impl=bitsandblooms", func(b *testing.B) {
				s := getAddState("bab/" + sz.name)
				var k [16]byte
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if s.bf == nil || s.next == sz.n {
						b.StopTimer()
						if s.bf == nil {
							s.bf = bab.NewWithEstimates(uint(sz.n), fpRate)
						} else {
							s.bf.ClearAll()
						}
						s.next = 0
						b.StartTimer()
					}
					putKey(k[:], s.next)
					s.next++
					s.bf.Add(k[:])
				}
			})
		})
	}
}

// BenchmarkBloomAddBatch: like BenchmarkBloomAdd, in batches of 1024 new
// keys: probly's AddMany against a loop of bits-and-blooms Add (which has
// no batch form). ns/op is per key; key generation is included.
func BenchmarkBloomAddBatch(b *testing.B) {
	for _, sz := range sizes {
		b.Run("keys="+sz.name, func(b *testing.B) {
			skip100M(b, sz.n)
			buf := make([]byte, 16*batch)
			keys := make([][]byte, batch)
			for j := range keys {
				keys[j] = buf[16*j : 16*j+16 : 16*j+16]
			}
			// fill returns the next cnt new keys of s, fewer if the filter
			// reaches its capacity (the caller then replaces it).
			fill := func(s *addState, cnt int) [][]byte {
				cnt = int(min(uint64(cnt), sz.n-s.next))
				for j := 0; j < cnt; j++ {
					putKey(keys[j], s.next)
					s.next++
				}
				return keys[:cnt]
			}
			b.Run("impl=probly", func(b *testing.B) {
				s := getAddState("probly-batch/" + sz.name)
				b.ReportAllocs()
				for i := 0; i < b.N; {
					if s.pf == nil || s.next == sz.n {
						b.StopTimer()
						s.pf, _ = bloom.New(sz.n, fpRate)
						s.next = 0
						b.StartTimer()
					}
					ks := fill(s, min(batch, b.N-i))
					s.pf.AddMany(ks)
					i += len(ks)
				}
			})
			b.Run("impl=bitsandblooms", func(b *testing.B) {
				s := getAddState("bab-batch/" + sz.name)
				b.ReportAllocs()
				for i := 0; i < b.N; {
					if s.bf == nil || s.next == sz.n {
						b.StopTimer()
						if s.bf == nil {
							s.bf = bab.NewWithEstimates(uint(sz.n), fpRate)
						} else {
							s.bf.ClearAll()
						}
						s.next = 0
						b.StartTimer()
					}
					ks := fill(s, min(batch, b.N-i))
					for _, k := range ks {
						s.bf.Add(k)
					}
					i += len(ks)
				}
			})
		})
	}
}

// BenchmarkBloomTest: ns per Test of a 16-byte key against a filter holding
// n keys (p = 1%), probing members and non-members (1/2 each) in
// pseudo-random order.
func BenchmarkBloomTest(b *testing.B) {
	for _, sz := range sizes {
		b.Run("keys="+sz.name, func(b *testing.B) {
			skip100M(b, sz.n)
			b.Run("impl=probly", func(b *testing.B) {
				f := filledProbly(b, sz.n)
				var k [16]byte
				hits := 0
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					putKey(k[:], probeCounter(uint64(i), sz.n))
					if f.Test(k[:]) {
						hits++
					}
				}
				b.ReportMetric(float64(hits)/float64(b.N), "hit-ratio")
			})
			b.Run("impl=bitsandblooms", func(b *testing.B) {
				f := filledBab(sz.n)
				var k [16]byte
				hits := 0
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					putKey(k[:], probeCounter(uint64(i), sz.n))
					if f.Test(k[:]) {
						hits++
					}
				}
				b.ReportMetric(float64(hits)/float64(b.N), "hit-ratio")
			})
		})
	}
}

// BenchmarkBloomTestBatch: the same probes as BenchmarkBloomTest, in
// batches of 1024 keys: probly's TestMany against a loop of
// bits-and-blooms Test (which has no batch form). ns/op is per key; key
// generation for the batch is included.
func BenchmarkBloomTestBatch(b *testing.B) {
	for _, sz := range sizes {
		b.Run("keys="+sz.name, func(b *testing.B) {
			skip100M(b, sz.n)
			buf := make([]byte, 16*batch)
			keys := make([][]byte, batch)
			for j := range keys {
				keys[j] = buf[16*j : 16*j+16 : 16*j+16]
			}
			fill := func(i, cnt int) [][]byte {
				for j := 0; j < cnt; j++ {
					putKey(keys[j], probeCounter(uint64(i+j), sz.n))
				}
				return keys[:cnt]
			}
			b.Run("impl=probly", func(b *testing.B) {
				f := filledProbly(b, sz.n)
				out := make([]bool, 0, batch)
				hits := 0
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i += batch {
					out = f.TestMany(fill(i, min(batch, b.N-i)), out)
					for _, ok := range out {
						if ok {
							hits++
						}
					}
				}
				b.ReportMetric(float64(hits)/float64(b.N), "hit-ratio")
			})
			b.Run("impl=bitsandblooms", func(b *testing.B) {
				f := filledBab(sz.n)
				hits := 0
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i += batch {
					for _, k := range fill(i, min(batch, b.N-i)) {
						if f.Test(k) {
							hits++
						}
					}
				}
				b.ReportMetric(float64(hits)/float64(b.N), "hit-ratio")
			})
		})
	}
}

// BenchmarkBloomFPR reports, for filters holding 1M keys at p = 1%, the
// bitset size in bytes, m, k and the false-positive rate measured on 10M
// non-members. It times nothing (ns/op is suppressed).
func BenchmarkBloomFPR(b *testing.B) {
	const n = 1_000_000
	b.Run("keys=1M", func(b *testing.B) {
		b.Run("impl=probly", func(b *testing.B) {
			f := filledProbly(b, n)
			fp := countFP("probly", f.Test)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(f.Stats().Bytes), "bytes")
			b.ReportMetric(float64(f.Stats().M), "m-bits")
			b.ReportMetric(float64(f.Stats().K), "k")
			b.ReportMetric(float64(fp)/fprProbes, "fpr")
		})
		b.Run("impl=bitsandblooms", func(b *testing.B) {
			f := filledBab(n)
			fp := countFP("bab", f.Test)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64((f.Cap()+63)/64*8), "bytes")
			b.ReportMetric(float64(f.Cap()), "m-bits")
			b.ReportMetric(float64(f.K()), "k")
			b.ReportMetric(float64(fp)/fprProbes, "fpr")
		})
	})
}

var fpCache sync.Map // impl name -> false positives

func countFP(key string, test func([]byte) bool) int {
	if v, ok := fpCache.Load(key); ok {
		return v.(int)
	}
	var k [16]byte
	fp := 0
	for c := uint64(0); c < fprProbes; c++ {
		putKey(k[:], nonMember|c)
		if test(k[:]) {
			fp++
		}
	}
	fpCache.Store(key, fp)
	return fp
}

// TestNoFalseNegatives is a quick sanity check of the benchmark setup: both
// filters report every member, and the key generator gives distinct keys.
func TestNoFalseNegatives(t *testing.T) {
	const n = 100_000
	pf, _ := bloom.New(n, fpRate)
	bf := bab.NewWithEstimates(n, fpRate)
	seen := make(map[[16]byte]bool, 2*n)
	var k [16]byte
	for c := uint64(0); c < n; c++ {
		putKey(k[:], c)
		pf.Add(k[:])
		bf.Add(k[:])
		seen[k] = true
		putKey(k[:], nonMember|c)
		seen[k] = true
	}
	if len(seen) != 2*n {
		t.Fatalf("key generator: %d distinct keys of %d", len(seen), 2*n)
	}
	pfp, bfp := 0, 0
	for c := uint64(0); c < n; c++ {
		putKey(k[:], c)
		if !pf.Test(k[:]) || !bf.Test(k[:]) {
			t.Fatalf("false negative for key %d", c)
		}
		putKey(k[:], nonMember|c)
		if pf.Test(k[:]) {
			pfp++
		}
		if bf.Test(k[:]) {
			bfp++
		}
	}
	t.Logf("fpr at n=%d: probly %.4f, bitsandblooms %.4f", n, float64(pfp)/n, float64(bfp)/n)
	if pfp > 2*n/100 || bfp > 2*n/100 {
		t.Fatalf("fpr too high: probly %d, bitsandblooms %d of %d", pfp, bfp, n)
	}
}
