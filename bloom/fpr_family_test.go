package bloom

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"testing"
)

// familyFilter is what the statistical tests need of the SBBF and the
// counting filter.
type familyFilter interface {
	Add([]byte)
	Test([]byte) bool
	Stats() Stats
}

type sbbfAdder struct{ *SBBF }

func (s sbbfAdder) Add(k []byte) { s.SBBF.Add(k) }

// familyLayouts builds each layout for n keys at rate p and returns the
// expected false-positive rate of the sized filter after n keys by the
// layout's own formula.
var familyLayouts = []struct {
	name     string
	build    func(t testing.TB, n uint64, p float64) familyFilter
	expected func(f familyFilter, n uint64) float64
}{
	{
		"sbbf",
		func(t testing.TB, n uint64, p float64) familyFilter { return sbbfAdder{mustSBBF(t, n, p)} },
		func(f familyFilter, n uint64) float64 { return SBBFFalsePositiveRate(f.(sbbfAdder).Blocks(), n) },
	},
	{
		"counting",
		func(t testing.TB, n uint64, p float64) familyFilter { return mustCounting(t, n, p) },
		func(f familyFilter, n uint64) float64 {
			c := f.(*Counting)
			k, m := float64(c.K()), float64(c.M())
			return math.Pow(1-math.Exp(-k*float64(n)/m), k)
		},
	},
}

// checkFPR compares a measured false-positive count with the filter's own
// conditional rate (Stats.EstimatedFPR: the block-aware rate given the
// bits for the SBBF, fill^k of nonzero counters for the counting filter)
// by the 99.9% binomial interval (z = 3.29), and that rate with the
// expected rate of the sized filter (within 5%), which must be within 10%
// of p, and at most p for the SBBF (whose sizing searches for it).
func checkFPR(t *testing.T, f familyFilter, expected, p float64, fp, probes uint64) {
	t.Helper()
	st := f.Stats()
	q := st.EstimatedFPR
	measured := float64(fp) / float64(probes)
	half := 3.29 * math.Sqrt(q*(1-q)/float64(probes))
	t.Logf("m=%d k=%d bytes=%d (%.2f bits/key) fill=%.4f: own formula %.6f, expected %.6f, measured %.6f (%d/%d) ± %.6f",
		st.M, st.K, st.Bytes, 8*float64(st.Bytes)/float64(st.N), st.FillRatio, q, expected, measured, fp, probes, half)
	if math.Abs(measured-q) > half {
		t.Errorf("measured FPR %.6f outside the 99.9%% interval %.6f ± %.6f", measured, q, half)
	}
	if math.Abs(q-expected)/expected > 0.05 {
		t.Errorf("conditional FPR %.6f far from the expected %.6f", q, expected)
	}
	if _, ok := f.(sbbfAdder); ok && (expected > p || expected < 0.9*p) {
		// SBBFSizing searches for the smallest size meeting p.
		t.Errorf("expected FPR %.6f of the sized SBBF not in [0.9p, p] for p = %v", expected, p)
	}
	if math.Abs(expected-p)/p > 0.1 {
		// The classic sizing (counting filter) rounds k, so it may exceed
		// p slightly, as for Filter.
		t.Errorf("expected FPR %.6f of the sized filter not within 10%% of p = %v", expected, p)
	}
}

// TestFamilyFalsePositiveRate measures the SBBF's and the counting
// filter's false-positive rates at p = 0.1, 0.01 and 0.001 on unique,
// structured keys (members 0 … n−1 of a family, probes n … n+probes−1),
// with at least 100/p probes.
func TestFamilyFalsePositiveRate(t *testing.T) {
	cases := []struct {
		n uint64
		p float64
	}{{1e4, 0.1}, {1e5, 0.01}, {1e6, 0.001}}
	for _, layout := range familyLayouts {
		for ci, c := range cases {
			for fi, fam := range keyFamilies {
				if (raceEnabled || testing.Short()) && fi != ci%len(keyFamilies) {
					continue
				}
				if testing.Short() && c.n > 1e5 {
					continue
				}
				t.Run(fmt.Sprintf("%s/n=%g,p=%g,%s", layout.name, float64(c.n), c.p, fam.name), func(t *testing.T) {
					t.Parallel()
					probes := uint64(max(100/c.p, 1_000_000))
					if raceEnabled {
						probes = uint64(max(100/c.p, 100_000))
					}
					f := layout.build(t, c.n, c.p)
					var buf []byte
					for i := uint64(0); i < c.n; i++ {
						f.Add(fam.key(buf, i))
					}
					var fp uint64
					for i := c.n; i < c.n+probes; i++ {
						if f.Test(fam.key(buf, i)) {
							fp++
						}
					}
					checkFPR(t, f, layout.expected(f, c.n), c.p, fp, probes)
				})
			}
		}
	}
}

// TestRealNamesFamily repeats the measurement on the 4.5M npm package names
// (scripts/fetch-data.sh; skipped when absent, in -short mode and under the
// race detector): the names at even lines are the members (2.25M), the
// names at odd lines (distinct from them: the list has no duplicates) are
// the probes, so every one of the 4.5M names is used. No member may test
// absent.
func TestRealNamesFamily(t *testing.T) {
	data, err := os.ReadFile("../data/names.txt")
	if err != nil {
		t.Skip("data/names.txt missing: run scripts/fetch-data.sh")
	}
	if testing.Short() || raceEnabled {
		t.Skip("real data: not in -short mode or under the race detector")
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	var members, probes [][]byte
	for i, l := range lines {
		l = bytes.TrimSuffix(l, []byte("\r"))
		if i%2 == 0 {
			members = append(members, l)
		} else {
			probes = append(probes, l)
		}
	}
	t.Logf("%d names: %d members, %d probes", len(lines), len(members), len(probes))
	n := uint64(len(members))
	for _, layout := range familyLayouts {
		for _, p := range []float64{0.1, 0.01, 0.001} {
			t.Run(fmt.Sprintf("%s/p=%g", layout.name, p), func(t *testing.T) {
				f := layout.build(t, n, p)
				if s, ok := f.(sbbfAdder); ok {
					s.AddMany(members)
				} else {
					f.(*Counting).AddMany(members)
				}
				var out []bool
				switch g := f.(type) {
				case sbbfAdder:
					out = g.TestMany(members, out)
				case *Counting:
					out = g.TestMany(members, out)
				}
				for i, ok := range out {
					if !ok {
						t.Fatalf("false negative for member %q", members[i])
					}
				}
				var fp uint64
				for _, k := range probes {
					if f.Test(k) {
						fp++
					}
				}
				checkFPR(t, f, layout.expected(f, n), p, fp, uint64(len(probes)))
			})
		}
	}
}
