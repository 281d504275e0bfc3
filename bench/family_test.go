package bench

// Cuckoo, HyperLogLog and Bloom-family comparisons (see docs/BENCHMARKS.md,
// "Cuckoo filters", "HyperLogLog", "Bloom family"). Keys are key(c) from
// bloom_test.go (16 bytes from a counter, identical for every library).
// Sub-benchmarks end in impl=…, so -count N interleaves the libraries.
//
//	go test -run '^$' -bench 'Cuckoo|HLL|Family' -benchtime 1000000x -count 5 . | tee family.txt
//	benchstat -col /impl family.txt
//	go test -run 'CuckooOverfill|FamilyFPR' -v .
//
// panmari/cuckoofilter v1.0.6: the module proxy lists no versions (403 on
// @v/list) but serves that exact version.

import (
	"fmt"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	xorf "github.com/FastFilter/xorfilter"
	axhll "github.com/axiomhq/hyperloglog"
	bab "github.com/bits-and-blooms/bloom/v3"
	pmcf "github.com/panmari/cuckoofilter"
	sfcf "github.com/seiflotfy/cuckoofilter"
	boom "github.com/tylertreat/BoomFilters"
	"github.com/zeebo/xxh3"

	"github.com/probly/probly/bloom"
	"github.com/probly/probly/cuckoo"
	"github.com/probly/probly/hll"
)

// rounds is BENCH_ROUNDS (default 5). Each benchmark runs its impl=…
// sub-benchmarks in that many rounds (p, s, p, s, …) in one process, so the
// libraries are interleaved; run with -count 1 and strip the "#NN" suffix
// Go adds to repeated names before benchstat (see docs/BENCHMARKS.md).
func rounds() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 5
}

// ---------------------------------------------------------------- cuckoo

const (
	cfSlots = 1 << 20          // 2^18 buckets × 4 slots, both libraries
	cfKeys  = cfSlots * 9 / 10 // ~90% load: 943,718 keys
)

type cuckooImpl struct {
	name string
	new  func(slots uint64) (insert func([]byte) bool, lookup func([]byte) bool)
}

var cuckooImpls = []cuckooImpl{
	{"probly", func(slots uint64) (func([]byte) bool, func([]byte) bool) {
		f, err := cuckoo.NewWithConfig(cuckoo.Config{Buckets: slots / 4, BucketSize: 4, FingerprintBits: 8, MaxKicks: 500, Expansion: cuckoo.NoGrowth})
		if err != nil {
			panic(err)
		}
		return func(k []byte) bool { return f.Add(k) == nil }, f.Test
	}},
	{"seiflotfy", func(slots uint64) (func([]byte) bool, func([]byte) bool) {
		f := sfcf.NewFilter(uint(slots)) // nextPow2(slots)/4 buckets of 4 one-byte slots
		return f.Insert, f.Lookup
	}},
	// 16-bit fingerprints: panmari's only width, against probly's 16-bit
	// option. panmari doubles the buckets when asked for more than 96% of
	// the slots, so it is asked for exactly 96% to get slots/4 buckets.
	{"probly-fp16", func(slots uint64) (func([]byte) bool, func([]byte) bool) {
		f, err := cuckoo.NewWithConfig(cuckoo.Config{Buckets: slots / 4, BucketSize: 4, FingerprintBits: 16, MaxKicks: 500, Expansion: cuckoo.NoGrowth})
		if err != nil {
			panic(err)
		}
		return func(k []byte) bool { return f.Add(k) == nil }, f.Test
	}},
	{"panmari", func(slots uint64) (func([]byte) bool, func([]byte) bool) {
		f := pmcf.NewFilter(uint(slots * 24 / 25)) // slots/4 buckets of 4 two-byte slots
		return f.Insert, f.Lookup
	}},
}

var cuckooFilled sync.Map // name -> lookup func

func filledCuckoo(b testing.TB, im cuckooImpl) func([]byte) bool {
	if v, ok := cuckooFilled.Load(im.name); ok {
		return v.(func([]byte) bool)
	}
	ins, look := im.new(cfSlots)
	var k [16]byte
	for c := uint64(0); c < cfKeys; c++ {
		putKey(k[:], c)
		if !ins(k[:]) {
			b.Fatalf("%s: insert %d failed at %.1f%% load", im.name, c, 100*float64(c)/cfSlots)
		}
	}
	cuckooFilled.Store(im.name, look)
	return look
}

// BenchmarkCuckooInsert: ns per insert while filling an empty 2^20-slot
// filter to 90% load (run with -benchtime 943718x to fill exactly once).
func BenchmarkCuckooInsert(b *testing.B) {
	for r := 0; r < rounds(); r++ {
		for _, im := range cuckooImpls {
			b.Run("impl="+im.name, func(b *testing.B) {
				ins, _ := im.new(cfSlots)
				var k [16]byte
				fails := 0
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if i > 0 && i%cfKeys == 0 {
						b.StopTimer()
						ins, _ = im.new(cfSlots)
						b.StartTimer()
					}
					putKey(k[:], uint64(i%cfKeys))
					if !ins(k[:]) {
						fails++
					}
				}
				if fails > 0 {
					b.Fatalf("%d inserts failed", fails)
				}
			})
		}
	}
}

// BenchmarkCuckooLookup: ns per lookup in a filter at 90% load, of members
// (random order) and of non-members.
func BenchmarkCuckooLookup(b *testing.B) {
	for _, probe := range []string{"member", "nonmember"} {
		b.Run("probe="+probe, func(b *testing.B) {
			for r := 0; r < rounds(); r++ {
				for _, im := range cuckooImpls {
					b.Run("impl="+im.name, func(b *testing.B) {
						look := filledCuckoo(b, im)
						var k [16]byte
						hits := 0
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							r := mix(uint64(i) ^ defaultSeed)
							c := nonMember | r>>1
							if probe == "member" {
								c, _ = bits.Mul64(r, cfKeys)
							}
							putKey(k[:], c)
							if look(k[:]) {
								hits++
							}
						}
						b.StopTimer()
						if probe == "member" && hits != b.N {
							b.Fatalf("%d false negatives", b.N-hits)
						}
					})
				}
			}
		})
	}
}

// TestCuckooOverfill: a 1,024-slot filter (256 buckets × 4, 8-bit
// fingerprints, no growth), 5,000 distinct inserts; every key whose insert
// reported success must still be found.
func TestCuckooOverfill(t *testing.T) {
	for _, im := range cuckooImpls {
		ins, look := im.new(1024)
		var k [16]byte
		var ok []uint64
		for c := uint64(0); c < 5000; c++ {
			putKey(k[:], c)
			if ins(k[:]) {
				ok = append(ok, c)
			}
		}
		lost := 0
		for _, c := range ok {
			putKey(k[:], c)
			if !look(k[:]) {
				lost++
			}
		}
		t.Logf("%-11s accepted %4d of 5000, lost (accepted but not found) %d", im.name, len(ok), lost)
		if strings.HasPrefix(im.name, "probly") && lost != 0 {
			t.Errorf("probly lost %d accepted keys", lost)
		}
	}
}

// TestCuckooFPR: measured FPR on 1M non-members at 90% load.
func TestCuckooFPR(t *testing.T) {
	for _, im := range cuckooImpls {
		look := filledCuckoo(t, im)
		var k [16]byte
		fp := 0
		for c := uint64(0); c < 1_000_000; c++ {
			putKey(k[:], nonMember|c)
			if look(k[:]) {
				fp++
			}
		}
		slotBits := 8
		if strings.HasSuffix(im.name, "fp16") || im.name == "panmari" {
			slotBits = 16
		}
		t.Logf("%-11s FPR %.4f%% (bits/key %.2f)", im.name, 100*float64(fp)/1e6, float64(cfSlots*slotBits)/cfKeys)
	}
}

// ---------------------------------------------------------------- HLL

const hllPrefill = 200_000 // far past the sparse→dense switch of both

func denseProbly(b testing.TB) *hll.Sketch {
	s, err := hll.New(14)
	if err != nil {
		b.Fatal(err)
	}
	var k [16]byte
	for c := uint64(0); c < hllPrefill; c++ {
		putKey(k[:], nonMember|c)
		s.Add(k[:])
	}
	if s.Stats().Sparse {
		b.Fatal("probly sketch still sparse")
	}
	return s
}

func denseAxiom() *axhll.Sketch {
	s := axhll.New14()
	var k [16]byte
	for c := uint64(0); c < hllPrefill; c++ {
		putKey(k[:], nonMember|c)
		s.Insert(k[:])
	}
	s.Estimate() // drain any sparse/tmp state
	return s
}

// BenchmarkHLLInsert: dense insert, ns per element (hashing included; the
// keys are made before the timer starts, see keyBuf). None of them was in
// the prefill.
func BenchmarkHLLInsert(b *testing.B) {
	keys := newKeyBuf(func(i uint64) uint64 { return i })
	for r := 0; r < rounds(); r++ {
		benchHLLInsertOnce(b, keys)
	}
}

func benchHLLInsertOnce(b *testing.B, keys keyBuf) {
	b.Run("impl=probly", func(b *testing.B) {
		s := denseProbly(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s.Add(keys.at(i))
		}
	})
	b.Run("impl=axiomhq", func(b *testing.B) {
		s := denseAxiom()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s.Insert(keys.at(i))
		}
	})
	// probly with a caller's hash (XXH3-64) through AddHash: not
	// Redis-compatible (Redis hashes with MurmurHash64A), for library-only
	// sketches.
	b.Run("impl=probly-xxh3", func(b *testing.B) {
		s := denseProbly(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s.AddHash(xxh3.Hash(keys.at(i)))
		}
	})
}

// BenchmarkHLLCount: estimate of a dense sketch. probly caches the estimate
// (as PFCOUNT does): "cached" calls Count repeatedly; "uncached" first
// raises one register with AddHash so the cache is invalid every time.
// axiomhq has no cache: Estimate recomputes on every call.
func BenchmarkHLLCount(b *testing.B) {
	for r := 0; r < rounds(); r++ {
		benchHLLCountOnce(b)
	}
}

func benchHLLCountOnce(b *testing.B) {
	var sink uint64
	b.Run("mode=cached/impl=probly", func(b *testing.B) {
		s := denseProbly(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			sink += s.Count()
		}
	})
	b.Run("mode=uncached/impl=probly", func(b *testing.B) {
		s := denseProbly(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			reg := uint64(i % 16384)
			cnt := 25 + uint64(i/16384)%26 // run length 25…50 (> any prefilled value)
			s.AddHash(reg | 1<<(14+cnt-1))
			sink += s.Count()
		}
	})
	for _, mode := range []string{"cached", "uncached"} {
		b.Run("mode="+mode+"/impl=axiomhq", func(b *testing.B) {
			s := denseAxiom()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sink += s.Estimate()
			}
		})
	}
	_ = sink
}

// ---------------------------------------------------------------- Bloom family

// famN is BENCH_FAMILY_N (default 1M): the keys each filter is sized for
// and filled with. Stable filters get 10·famN cells; scalable filters
// start at famN/10 (growth 2, tightening 0.8, BoomFilters' r).
var (
	famN      = envUint("BENCH_FAMILY_N", 1_000_000)
	stableM   = 10 * famN
	scaleHint = famN / 10
)

const stableD = 2 // bits per stable cell

func envUint(name string, def uint64) uint64 {
	if n, err := strconv.ParseUint(os.Getenv(name), 10, 64); err == nil && n > 0 {
		return n
	}
	return def
}

type famImpl struct {
	name string
	// new returns add, test and (after adds) the size in bytes.
	new  func() (add func([]byte), test func([]byte) bool, size func() uint64)
	many func() (add func([]byte), testMany func([][]byte, []bool) []bool)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

var famImpls = []famImpl{
	{name: "probly-classic", new: func() (func([]byte), func([]byte) bool, func() uint64) {
		f := must(bloom.New(famN, fpRate))
		return func(k []byte) { f.Add(k) }, f.Test, func() uint64 { return f.Stats().Bytes }
	}, many: func() (func([]byte), func([][]byte, []bool) []bool) {
		f := must(bloom.New(famN, fpRate))
		return func(k []byte) { f.Add(k) }, f.TestMany
	}},
	{name: "probly-sbbf", new: func() (func([]byte), func([]byte) bool, func() uint64) {
		f := must(bloom.NewSBBF(famN, fpRate))
		return func(k []byte) { f.Add(k) }, f.Test, func() uint64 { return f.Stats().Bytes }
	}, many: func() (func([]byte), func([][]byte, []bool) []bool) {
		f := must(bloom.NewSBBF(famN, fpRate))
		return func(k []byte) { f.Add(k) }, f.TestMany
	}},
	{name: "bitsandblooms", new: func() (func([]byte), func([]byte) bool, func() uint64) {
		f := bab.NewWithEstimates(uint(famN), fpRate)
		return func(k []byte) { f.Add(k) }, f.Test, func() uint64 { return uint64(f.Cap()+63) / 64 * 8 }
	}},
	{name: "probly-counting", new: func() (func([]byte), func([]byte) bool, func() uint64) {
		f := must(bloom.NewCounting(famN, fpRate))
		return func(k []byte) { f.Add(k) }, f.Test, func() uint64 { return f.Stats().Bytes }
	}},
	{name: "boom-counting", new: func() (func([]byte), func([]byte) bool, func() uint64) {
		f := boom.NewCountingBloomFilter(uint(famN), 4, fpRate)
		return func(k []byte) { f.Add(k) }, f.Test, func() uint64 { return uint64(f.Capacity()) * 4 / 8 }
	}},
	{name: "probly-scalable", new: func() (func([]byte), func([]byte) bool, func() uint64) {
		f := must(bloom.NewScalableWithConfig(bloom.ScalableConfig{Capacity: scaleHint, ErrorRate: fpRate, Growth: 2, Tightening: 0.8}))
		return func(k []byte) {
			if err := f.Add(k); err != nil {
				panic(err)
			}
		}, f.Test, func() uint64 { return f.Stats().Bytes }
	}},
	{name: "boom-scalable", new: func() (func([]byte), func([]byte) bool, func() uint64) {
		f := boom.NewScalableBloomFilter(uint(scaleHint), fpRate, 0.8)
		return func(k []byte) { f.Add(k) }, f.Test, func() uint64 { return uint64(f.Capacity()) / 8 }
	}},
	{name: "probly-stable", new: func() (func([]byte), func([]byte) bool, func() uint64) {
		// The parameters of boom's filter for (m, d, p), so that both
		// implementations run the same m, d, k and P.
		b := boom.NewStableBloomFilter(uint(stableM), stableD, fpRate)
		f := must(bloom.NewStableWithConfig(bloom.StableConfig{M: stableM, CellBits: stableD, K: uint32(b.K()), Decrements: uint64(b.P())}))
		return func(k []byte) { f.Add(k) }, f.Test, func() uint64 { return f.Stats().Bytes }
	}},
	{name: "boom-stable", new: func() (func([]byte), func([]byte) bool, func() uint64) {
		f := boom.NewStableBloomFilter(uint(stableM), stableD, fpRate)
		return func(k []byte) { f.Add(k) }, f.Test, func() uint64 { return uint64(f.Cells()) * stableD / 8 }
	}},
}

// binaryFuse8 builds a BinaryFuse8 from the xxh3 hashes of keys 0…n−1.
func binaryFuse8(n uint64) *xorf.BinaryFuse8 {
	hs := make([]uint64, n)
	var k [16]byte
	for c := range hs {
		putKey(k[:], uint64(c))
		hs[c] = xxh3.Hash(k[:])
	}
	return must(xorf.PopulateBinaryFuse8(hs))
}

var famFilled sync.Map // name -> test func

func filledFam(im famImpl) func([]byte) bool {
	if v, ok := famFilled.Load(im.name); ok {
		return v.(func([]byte) bool)
	}
	add, test, _ := im.new()
	var k [16]byte
	for c := uint64(0); c < famN; c++ {
		putKey(k[:], c)
		add(k[:])
	}
	famFilled.Store(im.name, test)
	return test
}

// BenchmarkFamilyAdd: ns per add into a fresh filter (use -benchtime
// 1000000x: exactly 1M keys). xorfilter: hashing the keys plus building the
// static filter, per key.
func BenchmarkFamilyAdd(b *testing.B) {
	for r := 0; r < rounds(); r++ {
		benchFamilyAddOnce(b)
	}
}

func benchFamilyAddOnce(b *testing.B) {
	for _, im := range famImpls {
		b.Run("impl="+im.name, func(b *testing.B) {
			add, _, _ := im.new()
			var k [16]byte
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				putKey(k[:], uint64(i))
				add(k[:])
			}
		})
	}
	b.Run("impl=xor-binaryfuse8", func(b *testing.B) {
		binaryFuse8(uint64(b.N))
	})
}

// keyBuf holds n 16-byte keys, putKey(fn(i)) for i < n, in one flat buffer
// made before a benchmark's timer starts, so that the timed loop measures
// the filter and not the making of keys (about 12 ns per key for
// putKey∘probeCounter on this VM, the same for every library). The i-th
// key of a loop is key i mod n; the buffer is read in order, which the
// hardware prefetcher streams. n is BENCH_KEYS (default 2^20, 16 MiB)
// rounded up to a power of two (≥ batch); at 100M keys the script sets it
// above the -benchtime, so that no probe repeats and none finds its block
// cached by an earlier one.
type keyBuf struct {
	flat  []byte
	views [][]byte // views[i] = key i, for the batch (TestMany) forms
}

func newKeyBuf(fn func(i uint64) uint64) keyBuf {
	n := max(batch, 1<<bits.Len64(envUint("BENCH_KEYS", 1<<20)-1))
	kb := keyBuf{flat: make([]byte, 16*n), views: make([][]byte, n)}
	for i := range kb.views {
		k := kb.flat[16*i : 16*i+16 : 16*i+16]
		putKey(k, fn(uint64(i)))
		kb.views[i] = k
	}
	return kb
}

// at returns key i mod n.
func (kb keyBuf) at(i int) []byte {
	o := 16 * (i & (len(kb.views) - 1))
	return kb.flat[o : o+16 : o+16]
}

// batchAt returns the nb keys from key i mod n (i a multiple of batch,
// nb ≤ batch).
func (kb keyBuf) batchAt(i, nb int) [][]byte {
	o := i & (len(kb.views) - 1)
	return kb.views[o : o+nb]
}

// probeKeys are the Test probes: probeCounter(i, famN), half members, half
// non-members.
var probeKeys = sync.OnceValue(func() keyBuf {
	return newKeyBuf(func(i uint64) uint64 { return probeCounter(i, famN) })
})

// BenchmarkFamilyTest: ns per Test on a filter holding famN keys, half
// members, half non-members (probeKeys).
func BenchmarkFamilyTest(b *testing.B) {
	for r := 0; r < rounds(); r++ {
		benchFamilyTestOnce(b)
	}
}

func benchFamilyTestOnce(b *testing.B) {
	keys := probeKeys()
	for _, im := range famImpls {
		b.Run("impl="+im.name, func(b *testing.B) {
			test := filledFam(im)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				test(keys.at(i))
			}
		})
	}
	b.Run("impl=xor-binaryfuse8", func(b *testing.B) {
		var f *xorf.BinaryFuse8
		if v, ok := famFilled.Load("xor"); ok {
			f = v.(*xorf.BinaryFuse8)
		} else {
			f = binaryFuse8(famN)
			famFilled.Store("xor", f)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			f.Contains(xxh3.Hash(keys.at(i)))
		}
	})
}

// BenchmarkFamilyTestMany: probly classic and SBBF TestMany, batches of
// 1024 keys (probeKeys), ns per key.
func BenchmarkFamilyTestMany(b *testing.B) {
	keys := probeKeys()
	for r := 0; r < rounds(); r++ {
		for _, im := range famImpls {
			if im.many == nil {
				continue
			}
			b.Run("impl="+im.name, func(b *testing.B) {
				v, ok := famFilled.Load(im.name + "/many")
				if !ok {
					add, tm := im.many()
					var k [16]byte
					for c := uint64(0); c < famN; c++ {
						putKey(k[:], c)
						add(k[:])
					}
					v = tm
					famFilled.Store(im.name+"/many", v)
				}
				tm := v.(func([][]byte, []bool) []bool)
				out := make([]bool, batch)
				b.ResetTimer()
				for i := 0; i < b.N; i += batch {
					out = tm(keys.batchAt(i, min(batch, b.N-i)), out[:0])
				}
			})
		}
	}
}

// TestFamilyFPR: bits/key and measured FPR on 1M non-members after 1M adds.
func TestFamilyFPR(t *testing.T) {
	var k [16]byte
	for _, im := range famImpls {
		add, test, size := im.new()
		for c := uint64(0); c < famN; c++ {
			putKey(k[:], c)
			add(k[:])
		}
		fp := 0
		for c := uint64(0); c < famN; c++ {
			putKey(k[:], nonMember|c)
			if test(k[:]) {
				fp++
			}
		}
		t.Logf("%s", fmt.Sprintf("| %-17s | %6.2f | %.3f%% |", im.name, float64(size()*8)/float64(famN), 100*float64(fp)/float64(famN)))
	}
	f := binaryFuse8(famN)
	fp := 0
	for c := uint64(0); c < famN; c++ {
		putKey(k[:], nonMember|c)
		if f.Contains(xxh3.Hash(k[:])) {
			fp++
		}
	}
	t.Logf("| %-17s | %6.2f | %.3f%% |", "xor-binaryfuse8", float64(len(f.Fingerprints)*8)/float64(famN), 100*float64(fp)/float64(famN))
}
