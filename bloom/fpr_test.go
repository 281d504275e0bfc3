package bloom

import (
	"fmt"
	"math"
	"testing"
)

// TestFalsePositiveRate measures the false-positive rate on unique
// non-member keys and requires it to lie inside the 99.9% binomial interval
// (normal approximation, z = 3.29) around the theoretical rate.
//
// The theory used is the conditional rate given the filter's actual bits:
// q = fill^k, where fill is the measured fraction of set bits (this removes
// the variance of the fill from the comparison). As a cross-check, fill^k
// must also agree with the expected rate (1 − e^(−k·n/m))^k for the actual
// m, k and n to within 5%, and that expected rate must be within 10% of the
// target p the filter was sized for (k is rounded, so it is not exactly p).
//
// Keys are deterministic, unique and structured: members are keys 0 … n−1
// of a family, probes are keys n … n+probes−1 of the same family, so the
// result is reproducible (no flakiness) and exercises common prefixes.
func TestFalsePositiveRate(t *testing.T) {
	type tc struct {
		n   uint64
		p   float64
		fam keyFamily
	}
	var cases []tc
	for ci, np := range []struct {
		n uint64
		p float64
	}{{1e4, 0.1}, {1e5, 0.01}, {1e6, 0.001}} {
		for i, fam := range keyFamilies { // user-%d, 8-byte counters, 16-byte common prefix
			if raceEnabled && i != ci%len(keyFamilies) {
				continue // one family per (n, p), rotating
			}
			cases = append(cases, tc{np.n, np.p, fam})
		}
	}
	const z = 3.29
	for _, c := range cases {
		probes := uint64(max(100/c.p, 1_000_000)) // ≥ 100/p, more for a tighter interval
		if raceEnabled {
			probes = uint64(max(100/c.p, 100_000))
		}
		if testing.Short() && c.n > 1e5 {
			continue
		}
		t.Run(fmt.Sprintf("n=%g,p=%g,%s", float64(c.n), c.p, c.fam.name), func(t *testing.T) {
			t.Parallel()
			f := mustNew(t, c.n, c.p)
			var buf []byte
			for i := uint64(0); i < c.n; i++ {
				buf = c.fam.key(buf, i)
				f.Add(buf)
			}
			var fp uint64
			for i := c.n; i < c.n+probes; i++ {
				buf = c.fam.key(buf, i)
				if f.Test(buf) {
					fp++
				}
			}
			s := f.Stats()
			m, k, n := float64(f.numBits()), float64(f.numHashes()), float64(c.n)
			q := s.FPR // fill^k
			expected := math.Pow(1-math.Exp(-k*n/m), k)
			measured := float64(fp) / float64(probes)
			half := z * math.Sqrt(q*(1-q)/float64(probes))
			t.Logf("m=%d k=%d fill=%.4f fill^k=%.6f expected=%.6f measured=%.6f (%d/%d) interval ±%.6f",
				f.numBits(), f.numHashes(), s.FillRatio, q, expected, measured, fp, probes, half)
			if math.Abs(measured-q) > half {
				t.Errorf("measured FPR %.6f outside the 99.9%% interval %.6f ± %.6f", measured, q, half)
			}
			if math.Abs(q-expected)/expected > 0.05 {
				t.Errorf("fill^k = %.6f far from the expected %.6f", q, expected)
			}
			if math.Abs(expected-c.p)/c.p > 0.1 {
				t.Errorf("expected FPR %.6f of the sized filter is not within 10%% of the target %v", expected, c.p)
			}
		})
	}
}
