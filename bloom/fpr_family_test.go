package bloom

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/probly/probly/internal/testutil"
)

// familyFilter is what the statistical tests need of the classic, SBBF
// and counting filters.
type familyFilter interface {
	Add([]byte) error
	Test([]byte) bool
	Stats() Stats
}

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
		func(t testing.TB, n uint64, p float64) familyFilter { return mustSBBF(t, n, p) },
		func(f familyFilter, n uint64) float64 { return sbbfFalsePositiveRate(f.(*SBBF).numBlocks(), n) },
	},
	{
		"classic",
		func(t testing.TB, n uint64, p float64) familyFilter { return mustNew(t, n, p) },
		func(f familyFilter, n uint64) float64 {
			c := f.(*Filter)
			k, m := float64(c.numHashes()), float64(c.numBits())
			return math.Pow(1-math.Exp(-k*float64(n)/m), k)
		},
	},
	{
		"counting",
		func(t testing.TB, n uint64, p float64) familyFilter { return mustCounting(t, n, p) },
		func(f familyFilter, n uint64) float64 {
			c := f.(*Counting)
			k, m := float64(c.numHashes()), float64(c.numBits())
			return math.Pow(1-math.Exp(-k*float64(n)/m), k)
		},
	},
}

// halfWidth999 is the half-width of the 99.9% binomial interval (normal
// approximation, z = 3.29) around a rate q measured on n probes.
func halfWidth999(q float64, n uint64) float64 { return 3.29 * math.Sqrt(q*(1-q)/float64(n)) }

// falsePositives counts the probes test answers "maybe" for.
func falsePositives(test func([]byte) bool, probes [][]byte) (fp uint64) {
	for _, k := range probes {
		if test(k) {
			fp++
		}
	}
	return fp
}

// checkFPR compares a measured false-positive count with the filter's own
// conditional rate (Stats.FPR: the block-aware rate given the
// bits for the SBBF, fill^k of nonzero counters for the counting filter)
// by the 99.9% binomial interval (z = 3.29), and that rate with the
// expected rate of the sized filter (within 5%), which must be within 10%
// of p, and at most p for the SBBF (whose sizing searches for it).
func checkFPR(t *testing.T, f familyFilter, expected, p float64, fp, probes uint64) {
	t.Helper()
	st := f.Stats()
	q := st.FPR
	measured := float64(fp) / float64(probes)
	half := halfWidth999(q, probes)
	t.Logf("m=%d k=%d bytes=%d (%.2f bits/key) fill=%.4f: own formula %.6f, expected %.6f, measured %.6f (%d/%d) ± %.6f",
		st.M, st.K, st.Bytes, 8*float64(st.Bytes)/float64(st.N), st.FillRatio, q, expected, measured, fp, probes, half)
	if math.Abs(measured-q) > half {
		t.Errorf("measured FPR %.6f outside the 99.9%% interval %.6f ± %.6f", measured, q, half)
	}
	if math.Abs(q-expected)/expected > 0.05 {
		t.Errorf("conditional FPR %.6f far from the expected %.6f", q, expected)
	}
	if _, ok := f.(*SBBF); ok && (expected > p || expected < 0.9*p) {
		// sbbfSizing searches for the smallest size meeting p.
		t.Errorf("expected FPR %.6f of the sized SBBF not in [0.9p, p] for p = %v", expected, p)
	}
	if math.Abs(expected-p)/p > 0.1 {
		// The classic sizing (counting filter) rounds k, so it may exceed
		// p slightly, as for Filter.
		t.Errorf("expected FPR %.6f of the sized filter not within 10%% of p = %v", expected, p)
	}
}

// TestFamilyFalsePositiveRate measures the SBBF's, the classic and the
// counting filter's false-positive rates at p = 0.1, 0.01 and 0.001 on unique,
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
// for all five layouts at p = 0.1, 0.01 and 0.001 (scripts/fetch-data.sh;
// skipped when absent, in -short mode and under the race detector): the
// names at even lines are the members (2.25M), the names at odd lines
// (distinct from them: the list has no duplicates) are the probes, so every
// one of the 4.5M names is used. No member may test absent, except in the
// stable filter, which forgets old items by design.
func TestRealNamesFamily(t *testing.T) {
	testutil.Full(t)
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
				var out []bool
				switch g := f.(type) {
				case *SBBF:
					g.AddMany(members)
					out = g.TestMany(members, out)
				case *Filter:
					g.AddMany(members)
					out = g.TestMany(members, out)
				case *Counting:
					g.AddMany(members)
					out = g.TestMany(members, out)
				default:
					t.Fatalf("layout %s: no batch form", layout.name)
				}
				for i, ok := range out {
					if !ok {
						t.Fatalf("false negative for member %q", members[i])
					}
				}
				checkFPR(t, f, layout.expected(f, n), p, falsePositives(f.Test, probes), uint64(len(probes)))
			})
		}
	}
	for _, p := range []float64{0.1, 0.01, 0.001} {
		t.Run(fmt.Sprintf("scalable/p=%g", p), func(t *testing.T) {
			realNamesScalable(t, members, probes, p)
		})
		t.Run(fmt.Sprintf("stable/p=%g", p), func(t *testing.T) {
			realNamesStable(t, members, probes, p)
		})
	}
}

// realNamesScalable fills a scalable filter that starts at 1/100 of the
// members (growth 2, tightening 0.5, so it grows through about eight
// sub-filters) and checks: no false negative, the measured rate inside the
// 99.9% interval of the chain's own compound rate 1 − Π(1 − fill_i^k_i),
// and that rate at most the bound p/(1 − r).
func realNamesScalable(t *testing.T, members, probes [][]byte, p float64) {
	s := mustScalable(t, ScalableConfig{Capacity: uint64(len(members)) / 100, ErrorRate: p, Growth: 2, Tightening: 0.5})
	for _, k := range members {
		if err := s.Add(k); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range members {
		if !s.Test(k) {
			t.Fatalf("false negative for member %q", k)
		}
	}
	fp := falsePositives(s.Test, probes)
	q := s.Stats().FPR
	measured := float64(fp) / float64(len(probes))
	half := halfWidth999(q, uint64(len(probes)))
	t.Logf("%d links, %d bytes (%.2f bits/key): compound %.6f, measured %.6f (%d/%d) ± %.6f, bound %.6f",
		s.numLinks(), s.sizeBytes(), 8*float64(s.sizeBytes())/float64(len(members)), q, measured, fp, len(probes), half, p/(1-0.5))
	if math.Abs(measured-q) > half {
		t.Errorf("measured FPR %.6f outside the 99.9%% interval %.6f ± %.6f", measured, q, half)
	}
	if q > p/(1-0.5) {
		t.Errorf("compound FPR %.6f above the bound p/(1-r) = %.6f", q, p/(1-0.5))
	}
}

// realNamesStable streams the members through a stable filter of 100,000
// cells of 3 bits (far fewer cells than members, so it reaches its stable
// point) and checks the measured rate on the probes inside the 99.9%
// interval of its own current rate fill^k, and that rate within 30% of the
// stable-point rate (as TestStableStablePointFPR). Old members may test
// absent: false negatives are the stable filter's documented design.
func realNamesStable(t *testing.T, members, probes [][]byte, p float64) {
	s := mustStable(t, 100_000, 3, p)
	s.setRandSeed(1)
	for _, k := range members {
		s.Add(k)
	}
	if !s.Test(members[len(members)-1]) {
		t.Fatal("the newest member tests absent")
	}
	fp := falsePositives(s.Test, probes)
	st := s.Stats()
	q, fps := st.FPR, s.stablePointFPR()
	measured := float64(fp) / float64(len(probes))
	half := halfWidth999(q, uint64(len(probes)))
	t.Logf("k=%d fill=%.4f: stable point %.6f, fill^k %.6f, measured %.6f (%d/%d) ± %.6f",
		st.K, st.FillRatio, fps, q, measured, fp, len(probes), half)
	if math.Abs(measured-q) > half {
		t.Errorf("measured FPR %.6f outside the 99.9%% interval %.6f ± %.6f", measured, q, half)
	}
	if math.Abs(q-fps)/fps > 0.3 {
		t.Errorf("fill^k %.6f far from the stable point %.6f", q, fps)
	}
}
