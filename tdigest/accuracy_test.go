package tdigest

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/probly/probly/internal/testutil"
)

// The accuracy bound tested: for a digest of compression C over T values,
// the estimate v = Quantile(q) has a true rank within
//
//	ε(q) = q(1−q)·2π·ln T / C + 2/T
//
// of q: the fraction of values < v is at most q + ε and the fraction ≤ v
// at least q − ε. The first term is the largest centroid weight the merge
// pass allows near q (w ≤ q(1−q)·2π·T·ln T/C, the scale function of the
// merging digest, Dunning & Ertl 2019, §2.1 eq. 1 and §3 "merging
// t-digest"), as a fraction of T: interpolation inside one centroid, or
// between two neighbours, cannot move the rank further than that weight.
// 2/T covers the singleton rules at both ends. The bound holds for any
// data, ties included (the interval form gives a tied value all the ranks
// of its run).
func rankBound(q float64, T, C int) float64 {
	return q*(1-q)*2*math.Pi*math.Log(float64(T))/float64(C) + 2/float64(T)
}

var accuracyQs = []float64{0.001, 0.01, 0.5, 0.99, 0.999}

func TestAccuracy(t *testing.T) {
	n, comps := 1_000_000, []int{100}
	if testutil.FullEnabled() && !testutil.Race {
		n, comps = 10_000_000, []int{100, 500}
	}
	dists := []struct {
		name string
		gen  func(r *rand.Rand) float64
	}{
		{"uniform", func(r *rand.Rand) float64 { return r.Float64() }},
		{"normal", func(r *rand.Rand) float64 { return r.NormFloat64() }},
		{"exponential", func(r *rand.Rand) float64 { return r.ExpFloat64() }},
		// Heavily tied: 20 distinct values, geometric frequencies.
		{"tied", func(r *rand.Rand) float64 { return math.Min(math.Floor(r.ExpFloat64()*3), 19) }},
	}
	for _, c := range comps {
		for _, dist := range dists {
			r := rand.New(rand.NewPCG(uint64(c), 7))
			d := mustNew(t, c)
			vals := make([]float64, n)
			for i := range vals {
				vals[i] = dist.gen(r)
				if err := d.Add(vals[i]); err != nil {
					t.Fatal(err)
				}
			}
			slices.Sort(vals)
			est := d.Quantiles(nil, accuracyQs...)
			for i, q := range accuracyQs {
				v := est[i]
				below := float64(sort.SearchFloat64s(vals, v)) / float64(n)                             // < v
				atMost := float64(sort.Search(n, func(j int) bool { return vals[j] > v })) / float64(n) // ≤ v
				errRank := math.Max(0, math.Max(below-q, q-atMost))
				bound := rankBound(q, n, c)
				if errRank > bound {
					t.Errorf("C=%d %s n=%d q=%v: estimate %v has rank [%v, %v], error %.3g > bound %.3g",
						c, dist.name, n, q, v, below, atMost, errRank, bound)
				}
				t.Logf("C=%d %-11s q=%-5v rank error %.2e (bound %.2e)", c, dist.name, q, errRank, bound)
				// The single-quantile rule (ByRank's) obeys the same bound.
				if s := d.Quantile(q); math.Abs(s-v) > 0 && (float64(sort.SearchFloat64s(vals, s))/float64(n)-q > bound ||
					q-float64(sort.Search(n, func(j int) bool { return vals[j] > s }))/float64(n) > bound) {
					t.Errorf("C=%d %s q=%v: Quantile %v outside the bound", c, dist.name, q, s)
				}
			}
			if d.Min() != vals[0] || d.Max() != vals[n-1] {
				t.Errorf("%s: min/max %v %v, want %v %v", dist.name, d.Min(), d.Max(), vals[0], vals[n-1])
			}
		}
	}
}
