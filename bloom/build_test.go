package bloom

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// exclusiveCases are (m, k) shapes for the equivalence tests: m below one
// word, m not a multiple of 64, the classic 1% shape, k = 1, and
// k > batchPositions (the per-item fallback).
var exclusiveCases = []struct {
	m uint64
	k uint32
}{
	{1, 1}, {37, 3}, {64, 2}, {1000, 7}, {9585, 7}, {100_003, 13}, {4096, batchPositions + 7},
}

// exclusiveKeys returns n keys from every key family plus duplicates and
// an empty key, interleaved, so that batches mix new and repeated keys.
func exclusiveKeys(n int) [][]byte {
	var keys [][]byte
	rng := splitmix64(7)
	for i := range uint64(n) {
		keys = append(keys, userKey(nil, i), counterKey(nil, i), prefixKey(nil, i), rng.randomKey(nil))
		if i%5 == 0 {
			keys = append(keys, userKey(nil, i/2)) // a duplicate
		}
	}
	return append(keys, []byte{})
}

// TestAddManyExclusiveEquivalence checks that addManyExclusive,
// addHashManyExclusive and a builder give exactly the bits and N of
// calling Add on each key in order, for several shapes, seeds, chunkings
// and a filter that already holds keys.
func TestAddManyExclusiveEquivalence(t *testing.T) {
	n := 3000
	if raceEnabled {
		n = 400
	}
	keys := exclusiveKeys(n)
	for _, c := range exclusiveCases {
		for _, seed := range []uint64{0, 0x9e3779b97f4a7c15} {
			for _, chunk := range []int{1, 5, 36, 128, 1000, len(keys)} {
				t.Run(fmt.Sprintf("m=%d/k=%d/seed=%#x/chunk=%d", c.m, c.k, seed, chunk), func(t *testing.T) {
					mk := func() *Filter {
						f, err := NewWithConfig(Config{M: c.m, K: c.k})
						if err != nil {
							t.Fatal(err)
						}
						if err := f.setHash(HashXXH3_128, seed); err != nil {
							t.Fatal(err)
						}
						// Start from a filter that already holds keys, so
						// that "new bit" is judged against existing bits.
						for i := range 50 {
							f.addString(fmt.Sprintf("pre-%d", i))
						}
						return f
					}
					want, viaKeys, viaHash, viaBuilder := mk(), mk(), mk(), mk()
					preN := want.items()
					var added uint64
					for _, k := range keys {
						if newly(want.TestAndAdd(k)) {
							added++
						}
					}
					h1 := make([]uint64, len(keys))
					h2 := make([]uint64, len(keys))
					for i, k := range keys {
						h1[i], h2[i] = keyHash(HashXXH3_128, seed, k, zeroFilter)
					}
					bld := newBuilder(viaBuilder)
					for i := 0; i < len(keys); i += chunk {
						j := min(i+chunk, len(keys))
						viaKeys.addManyExclusive(keys[i:j])
						viaHash.addHashManyExclusive(h1[i:j], h2[i:j])
						switch chunk % 3 { // every builder add method
						case 0:
							bld.AddMany(keys[i:j])
						case 1:
							for _, k := range keys[i:j] {
								bld.addString(string(k))
							}
						default:
							for x := i; x < j; x++ {
								bld.AddHash(h1[x], h2[x])
							}
						}
					}
					bld.Close()
					if !viaKeys.equal(want) || !viaHash.equal(want) || !viaBuilder.equal(want) {
						t.Fatalf("differs from Add: N want %d, addManyExclusive %d, addHashManyExclusive %d, builder %d",
							want.items(), viaKeys.items(), viaHash.items(), viaBuilder.items())
					}
					if want.items()-preN != added {
						t.Fatalf("N grew by %d, Add reported %d", want.items()-preN, added)
					}
					for _, k := range keys {
						if !viaKeys.Test(k) || !viaHash.Test(k) || !viaBuilder.Test(k) {
							t.Fatalf("false negative for %q", k)
						}
					}
				})
			}
		}
	}
}

// TestBuilderBatches checks a builder against Add over many full batches
// (k = 7), with k = MaxK (a few items per batch) and k = 1, that an empty
// builder changes nothing, and that a second Close panics.
func TestBuilderBatches(t *testing.T) {
	n := 200_000
	if raceEnabled {
		n = 30_000
	}
	keys := benchKeys(n, 3)
	for _, c := range []struct {
		m uint64
		k uint32
	}{{uint64(10 * n), 7}, {1 << 20, MaxK}, {999, 1}} {
		want, _ := NewWithConfig(Config{M: c.m, K: c.k})
		got, _ := NewWithConfig(Config{M: c.m, K: c.k})
		nk := len(keys)
		if c.k == MaxK {
			nk = 100
		}
		b := newBuilder(got)
		for _, k := range keys[:nk] {
			want.Add(k)
			b.Add(k)
		}
		b.Close()
		if !got.equal(want) {
			t.Fatalf("m=%d k=%d: builder differs from Add (N %d, want %d)", c.m, c.k, got.items(), want.items())
		}
	}
	f, _ := New(100, 0.01)
	b := newBuilder(f)
	b.Close()
	if f.items() != 0 || f.Stats().SetBits != 0 {
		t.Fatal("an empty builder changed the filter")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a second Close did not panic")
		}
	}()
	b.Close()
}

// TestAddHashManyExclusiveLengths checks the documented panic on slices of
// different lengths, with nothing changed, and that empty input is a no-op.
func TestAddHashManyExclusiveLengths(t *testing.T) {
	f, _ := New(1000, 0.01)
	g := f.clone()
	f.addHashManyExclusive(nil, nil)
	f.addManyExclusive(nil)
	if !f.equal(g) {
		t.Fatal("empty input changed the filter")
	}
	func() {
		defer func() {
			r := recover()
			if r == nil || !strings.Contains(fmt.Sprint(r), "len(h1) = 2 != len(h2) = 1") {
				t.Fatalf("recover() = %v, want the length panic", r)
			}
		}()
		f.addHashManyExclusive([]uint64{1, 2}, []uint64{3})
	}()
	if !f.equal(g) {
		t.Fatal("the panicking call changed the filter")
	}
}

// TestAddManyExclusiveThenShare follows the documented pattern: one
// goroutine builds a filter with the exclusive methods and a builder, publishes it over
// a channel, and then many goroutines Test and Add concurrently. Under
// -race this checks that the hand-off is enough.
func TestAddManyExclusiveThenShare(t *testing.T) {
	keys := exclusiveKeys(500)
	ch := make(chan *Filter)
	go func() {
		f, _ := New(uint64(len(keys)), 0.01)
		for i := 0; i < len(keys)/2; i += 100 {
			f.addManyExclusive(keys[i:min(i+100, len(keys)/2)])
		}
		b := newBuilder(f)
		b.AddMany(keys[len(keys)/2:])
		b.Close()
		ch <- f
	}()
	f := <-ch
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for w := range 4 {
		wg.Go(func() {
			for i, k := range keys {
				if !f.Test(k) {
					errs <- fmt.Sprintf("false negative for %q", k)
					return
				}
				f.Add(userKey(nil, uint64(1_000_000*(w+1)+i)))
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// TestAddManyExclusiveAllocs checks that the exclusive adds do not allocate.
func TestAddManyExclusiveAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	keys := exclusiveKeys(300)
	h1 := make([]uint64, len(keys))
	h2 := make([]uint64, len(keys))
	f, _ := New(10_000, 0.01)
	for i, k := range keys {
		h1[i], h2[i] = Hash(k)
	}
	if a := testing.AllocsPerRun(20, func() {
		f.addManyExclusive(keys)
		f.addHashManyExclusive(h1, h2)
	}); a != 0 {
		t.Fatalf("%v allocations per run, want 0", a)
	}
	b := newBuilder(f)
	defer b.Close()
	if a := testing.AllocsPerRun(20, func() { b.AddMany(keys) }); a != 0 {
		t.Fatalf("builder.AddMany: %v allocations per run, want 0", a)
	}
}

// BenchmarkBuild fills an empty filter sized for n 16-byte keys at p = 1%
// with n keys, in batches of 4096, with AddMany (atomic),
// addManyExclusive, addHashManyExclusive on precomputed pairs, and a
// builder (two goroutines; the wall time of the last batch's bits is
// counted only when the filter is refilled or the benchmark ends). ns/op is
// per key. n = 4.5M is the size of the npm-names build in BENCHMARKS.md.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1_000_000, 4_500_000} {
		keys := benchKeys(n, 1)
		h1 := make([]uint64, n)
		h2 := make([]uint64, n)
		for i, k := range keys {
			h1[i], h2[i] = Hash(k)
		}
		f, _ := New(uint64(n), 0.01)
		for _, impl := range []string{"AddMany", "addManyExclusive", "addHashManyExclusive", "builder"} {
			b.Run(fmt.Sprintf("keys=%g/impl=%s", float64(n), impl), func(b *testing.B) {
				b.ReportAllocs()
				var bld *builder
				if impl == "builder" {
					bld = newBuilder(f)
					defer func() { bld.Close() }()
				}
				done := 0 // keys added to f since it was cleared
				for i := 0; i < b.N; {
					if done == n {
						b.StopTimer()
						if bld != nil {
							bld.Close()
							bld = newBuilder(f)
						}
						clear(f.bits)
						f.setN(0)
						done = 0
						b.StartTimer()
					}
					c := min(4096, n-done, b.N-i)
					switch impl {
					case "AddMany":
						f.AddMany(keys[done : done+c])
					case "builder":
						bld.AddMany(keys[done : done+c])
					case "addManyExclusive":
						f.addManyExclusive(keys[done : done+c])
					default:
						f.addHashManyExclusive(h1[done:done+c], h2[done:done+c])
					}
					done += c
					i += c
				}
			})
		}
	}
}
