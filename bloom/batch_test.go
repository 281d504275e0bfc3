package bloom

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"testing"
)

// TestModExact checks the division-free reduction that Filter's and
// Counting's batch paths use against the % operator: m = 1, powers of two
// and their neighbours, MaxBits = MaxCounters, m above 2^63, and random
// m; x at 0, the top of the range, around multiples of m and random.
func TestModExact(t *testing.T) {
	ms := []uint64{1, 2, 3, 7, 63, 64, 65, 1000, 9585059, 1<<32 - 1, 1 << 32, 1<<32 + 1,
		MaxBits - 1, MaxBits, MaxBits + 1, 1<<63 - 1, 1 << 63, 1<<63 + 1, math.MaxUint64 - 1, math.MaxUint64}
	rng := splitmix64(42)
	for range 200 {
		ms = append(ms, rng.next()>>(rng.next()%64), 1+rng.next()%MaxBits)
	}
	for _, m := range ms {
		if m == 0 {
			continue
		}
		inv := reciprocal(m)
		xs := []uint64{0, 1, m - 1, m, m + 1, math.MaxUint64, math.MaxUint64 - 1, math.MaxUint64 - m}
		if hi, _ := bits.Mul64(m, 2); hi == 0 {
			xs = append(xs, 2*m-1, 2*m, 2*m+1)
		}
		q := math.MaxUint64 / m
		xs = append(xs, q*m, q*m-1, (q/2)*m, (q/2)*m-1)
		for range 2000 {
			xs = append(xs, rng.next())
		}
		for _, x := range xs {
			if got, want := mod(x, m, inv), x%m; got != want {
				t.Fatalf("mod(%d, %d) = %d, want %d", x, m, got, want)
			}
		}
	}
}

// batchShapes are (m, k) shapes for the batch equivalence tests: m = 1, m
// below one word and not a multiple of 64, the classic 1% shape, k = 1, k
// that leaves a partial last group, k = batchPositions (one key per group)
// and k > batchPositions (the per-key fallback).
var batchShapes = []struct {
	m uint64
	k uint32
}{
	{1, 1}, {37, 3}, {64, 2}, {1000, 7}, {9585, 7}, {100_003, 13}, {77_777, 64},
	{50_000, batchPositions}, {4096, batchPositions + 7},
}

// TestFilterTestManyEqualsTest checks that TestMany answers exactly Test
// for every key, at several fills (empty, light, about 50%, overfull),
// with a seed, for every batch length around the group boundaries, and
// that it reuses out's storage.
func TestFilterTestManyEqualsTest(t *testing.T) {
	n := 2000
	if raceEnabled {
		n = 300
	}
	probes := exclusiveKeys(n) // members and non-members below
	for _, c := range batchShapes {
		for _, seed := range []uint64{0, 0x9e3779b97f4a7c15} {
			f, err := NewWithConfig(Config{M: c.m, K: c.k})
			if err != nil {
				t.Fatal(err)
			}
			if err := f.setHash(HashXXH3_128, seed); err != nil {
				t.Fatal(err)
			}
			// Fill in stages, adding every other probe key: empty, then
			// about 1/16, 1/2 and 2× the keys of half fill (m·ln2/k).
			half := int(max(1, float64(c.m)*math.Ln2/float64(c.k)))
			added := 0
			for _, target := range []int{0, half / 8, half, 4 * half} {
				for ; added < target && added < len(probes); added += 2 {
					f.Add(probes[added]) // every other probe is a member
				}
				want := make([]bool, len(probes))
				pos := 0
				for i, key := range probes {
					want[i] = f.Test(key)
					if want[i] {
						pos++
					}
				}
				for _, chunk := range []int{1, 2, 5, 36, 37, 128, 1000, len(probes)} {
					out := make([]bool, 0, chunk)
					for lo := 0; lo < len(probes); lo += chunk {
						hi := min(lo+chunk, len(probes))
						out = f.TestMany(probes[lo:hi], out)
						if len(out) != hi-lo {
							t.Fatalf("m=%d k=%d: TestMany returned %d results for %d keys", c.m, c.k, len(out), hi-lo)
						}
						for i := range out {
							if out[i] != want[lo+i] {
								t.Fatalf("m=%d k=%d seed=%#x fill=%d chunk=%d: TestMany[%d] = %v, Test = %v",
									c.m, c.k, seed, target, chunk, lo+i, out[i], want[lo+i])
							}
						}
					}
				}
				if target > 0 && pos == 0 {
					t.Fatalf("m=%d k=%d: no positives after %d adds", c.m, c.k, added)
				}
			}
		}
	}
	// Storage reuse, no allocation, and a nil/short out.
	f := mustNew(t, 1000, 0.01)
	keys := exclusiveKeys(100)
	f.AddMany(keys[:200])
	out := make([]bool, 3, len(keys))
	if allocs := testing.AllocsPerRun(20, func() { out = f.TestMany(keys, out) }); allocs != 0 {
		t.Errorf("TestMany with room in out allocates %v times", allocs)
	}
	if got := f.TestMany(keys, nil); len(got) != len(keys) || !got[0] || !got[199] {
		t.Errorf("TestMany(keys, nil): len %d", len(got))
	}
	if got := f.TestMany(nil, out); len(got) != 0 {
		t.Errorf("TestMany(nil) = %v", got)
	}
}

// TestFilterTestManyConcurrent runs TestMany of already-added keys (which
// must all be present) and of new keys against concurrent AddMany and Add
// calls; under -race this also checks that TestMany only uses atomic loads.
func TestFilterTestManyConcurrent(t *testing.T) {
	const n = 4000
	f := mustNew(t, 4*n, 0.01)
	old := exclusiveKeys(n / 4)
	f.AddMany(old)
	fresh := make([][]byte, n)
	for i := range fresh {
		fresh[i] = userKey(nil, uint64(1_000_000+i))
	}
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 2 * 50 {
				if w == 0 {
					f.AddMany(fresh[i:min(i+50, n)])
				} else {
					for _, k := range fresh[i:min(i+50, n)] {
						f.Add(k)
					}
				}
			}
		}()
	}
	errs := make(chan error, 2)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out []bool
			for round := range 20 {
				out = f.TestMany(old, out)
				for i, ok := range out {
					if !ok {
						errs <- fmt.Errorf("reader %d round %d: false negative for old key %d", r, round, i)
						return
					}
				}
				out = f.TestMany(fresh, out) // racing adds: any answer
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, ok := range f.TestMany(fresh, nil) {
		if !ok && (i%100 < 50) {
			t.Fatalf("fresh key %d added by AddMany/Add but absent", i)
		}
	}
}

// TestCountingBatchPositions checks that Counting's batch positions (the
// division-free reduction) are exactly (h1 + i·h2) mod m computed with %,
// for m not a power of two, m = 1 and k up to countingGroup, and that
// AddMany and TestMany agree with Add and Test on such shapes.
func TestCountingBatchPositions(t *testing.T) {
	keys := exclusiveKeys(300)
	for _, c := range []struct {
		m uint64
		k uint32
	}{{1, 1}, {17, 3}, {1000, 7}, {9587, 7}, {123_457, 13}, {65_537, countingGroup}} {
		a, err := NewCountingWithConfig(CountingConfig{M: c.m, K: c.k})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewCountingWithConfig(CountingConfig{M: c.m, K: c.k})
		per := countingGroup / int(c.k)
		var pos [countingGroup]uint64
		for lo := 0; lo < len(keys); lo += per {
			g := keys[lo:min(lo+per, len(keys))]
			ps := a.positions(g, pos[:len(g)*int(c.k)])
			for j, key := range g {
				h1, h2 := Hash(key)
				for i := range uint64(c.k) {
					if want := (h1 + i*h2) % c.m; ps[j*int(c.k)+int(i)] != want {
						t.Fatalf("m=%d k=%d key %d probe %d: position %d, want %d", c.m, c.k, lo+j, i, ps[j*int(c.k)+int(i)], want)
					}
				}
			}
		}
		members := keys[:len(keys)/2]
		for _, k := range members {
			a.Add(k)
		}
		b.AddMany(members)
		if !a.equal(b) {
			t.Fatalf("m=%d k=%d: AddMany differs from Add", c.m, c.k)
		}
		out := b.TestMany(keys, nil)
		for i, k := range keys {
			if out[i] != a.Test(k) {
				t.Fatalf("m=%d k=%d: TestMany[%d] = %v, Test = %v", c.m, c.k, i, out[i], a.Test(k))
			}
		}
	}
}
