package cms

import (
	"math"
	"math/rand"
	"strconv"
	"testing"

	"github.com/probly/probly/internal/testutil"
)

// TestAccuracy checks the count-min promise on Zipf(1.1) and uniform
// streams, for both hashes and both sizing rules (the paper's for
// HashXXH3, RedisBloom's ⌈2/ε⌉ × ⌈log2(1/δ)⌉ for HashMurmur2): no
// estimate is below the truth, and the estimates above truth + ε·N are at
// most a δ fraction of the queries up to a binomial interval (mean + 5
// standard deviations + 1). Queries: every key of the stream plus 100,000
// keys never added. 1M items by default, 10M with PROBLY_FULL=1.
func TestAccuracy(t *testing.T) {
	n := 1_000_000
	if testutil.FullEnabled() {
		n = 10_000_000
	}
	const eps, delta = 0.0005, 0.05
	paper, err := New(eps, delta)
	if err != nil {
		t.Fatal(err)
	}
	rb := mustNew(t, Config{Width: uint64(math.Ceil(2 / eps)), Depth: uint32(math.Ceil(math.Log2(1 / delta))), Hash: HashMurmur2})
	for _, stream := range []string{"zipf", "uniform"} {
		for _, s := range []*Sketch{paper, rb} {
			t.Run(stream+"/"+s.hashID.String(), func(t *testing.T) {
				s = s.Clone()
				accuracy(t, s, stream, n, eps, delta)
			})
		}
	}
}

func accuracy(t *testing.T, s *Sketch, stream string, n int, eps, delta float64) {
	r := rand.New(rand.NewSource(int64(len(stream)) + int64(s.hashID)))
	const universe = 1 << 22
	var next func() uint64
	if stream == "zipf" {
		z := rand.NewZipf(r, 1.1, 1, universe-1)
		next = z.Uint64
	} else {
		next = func() uint64 { return uint64(r.Int63n(universe)) }
	}
	truth := map[uint64]uint64{}
	var key []byte
	for range n {
		k := next()
		truth[k]++
		key = strconv.AppendUint(append(key[:0], 'k'), k, 10)
		s.Add(key)
	}
	N := float64(s.Stats().N)
	if N != float64(n) {
		t.Fatalf("N = %v, want %d", N, n)
	}
	queries, over := 0, 0
	query := func(k, want uint64) {
		key = strconv.AppendUint(append(key[:0], 'k'), k, 10)
		est := s.Count(key)
		if est < want {
			t.Fatalf("key %d: estimate %d below the true count %d", k, est, want)
		}
		queries++
		if float64(est-want) > eps*N {
			over++
		}
	}
	for k, c := range truth {
		query(k, c)
	}
	for k := uint64(universe); k < universe+100_000; k++ {
		query(k, 0)
	}
	q := float64(queries)
	limit := q*delta + 5*math.Sqrt(q*delta*(1-delta)) + 1
	t.Logf("%s %v %d×%d: %d items, %d queries, %d over ε·N = %.0f (%.5f; δ = %v, limit %.0f)",
		stream, s.hashID, s.width, s.depth, n, queries, over, eps*N, float64(over)/q, delta, limit)
	if float64(over) > limit {
		t.Fatalf("%d of %d estimates exceed the truth by more than ε·N; at most %.0f allowed", over, queries, limit)
	}
}

// TestRowIndependence checks what the δ bound rests on: rows place keys
// independently. On a uniform stream (1M items over 2^22 keys, 1000
// counters per row: about 1000 per counter) it measures p1, the fraction
// of keys whose single-row estimate exceeds the truth by more than one
// standard deviation of a counter's load, then the same fraction p4 with 4
// rows. Independent rows give p4 ≈ p1^4; rows that share columns would give
// p4 ≈ p1. The test requires p4 ≤ 4·p1^4 + 20/queries.
func TestRowIndependence(t *testing.T) {
	const n, universe, width = 1_000_000, 1 << 22, 1000
	for _, h := range []HashID{HashXXH3, HashMurmur2} {
		one := mustNew(t, Config{Width: width, Depth: 1, Hash: h})
		four := mustNew(t, Config{Width: width, Depth: 4, Hash: h})
		r := rand.New(rand.NewSource(7))
		truth := map[uint64]uint64{}
		var key []byte
		for range n {
			k := uint64(r.Int63n(universe))
			truth[k]++
			key = strconv.AppendUint(append(key[:0], 'k'), k, 10)
			one.Add(key)
			four.Add(key)
		}
		threshold := uint64(n/width + math.Sqrt(n/width))
		var over1, over4 float64
		for k, c := range truth {
			key = strconv.AppendUint(append(key[:0], 'k'), k, 10)
			if one.Count(key)-c > threshold {
				over1++
			}
			if four.Count(key)-c > threshold {
				over4++
			}
		}
		q := float64(len(truth))
		p1, p4 := over1/q, over4/q
		t.Logf("%v: p1 = %.4f, p4 = %.6f, p1^4 = %.6f (%d keys)", h, p1, p4, math.Pow(p1, 4), len(truth))
		if p1 < 0.05 || p4 > 4*math.Pow(p1, 4)+20/q {
			t.Errorf("%v: rows look dependent: p1 = %.4f, p4 = %.6f", h, p1, p4)
		}
	}
}
