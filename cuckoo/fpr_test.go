package cuckoo

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

// TestFalsePositiveRate fills one sub-filter of 2^14 buckets to 50%, 80%
// and 95% load (bucket size 4; 50% and 80% also with bucket size 2) with
// unique structured keys, probes at least 100/p keys that were never
// inserted, and requires the measured rate to lie inside the 99.99%
// binomial interval (normal approximation, z = 3.89) around
//
//	p = 1 − (1 − 1/(2^f − 1))^(2b·α),
//
// α being the measured load, and below the upper end of the interval
// around 2b/2^f, the rate of a full table.
func TestFalsePositiveRate(t *testing.T) {
	type tc struct {
		fpBits, bs int
		load       float64
		fam        keyFamily
	}
	var cases []tc
	i := 0
	for _, fb := range []int{8, 16} {
		for _, bs := range []int{4, 2} {
			for _, load := range []float64{0.5, 0.8, 0.95} {
				if bs == 2 && load > 0.84 {
					continue // beyond what bucket size 2 reaches
				}
				cases = append(cases, tc{fb, bs, load, keyFamilies[i%len(keyFamilies)]})
				i++
			}
		}
	}
	const z = 3.89
	for _, c := range cases {
		t.Run(fmt.Sprintf("f=%d,b=%d,load=%v,%s", c.fpBits, c.bs, c.load, c.fam.name), func(t *testing.T) {
			t.Parallel()
			f := mustConfig(t, Config{Buckets: 1 << 14, BucketSize: c.bs, FingerprintBits: c.fpBits, MaxKicks: 500})
			slots := uint64(1<<14) * uint64(c.bs)
			target := uint64(c.load * float64(slots))
			var buf []byte
			next := uint64(0)
			for f.Stats().N < target {
				buf = c.fam.key(buf, next)
				next++
				if err := f.Add(buf); err != nil && !errors.Is(err, ErrFull) {
					t.Fatal(err)
				}
			}
			st := f.Stats()
			q := 1 / (math.Exp2(float64(c.fpBits)) - 1)
			p := -math.Expm1(2 * float64(c.bs) * st.FillRatio * math.Log1p(-q))
			probes := uint64(max(100/p, 500_000))
			if raceEnabled {
				probes = uint64(max(100/p, 100_000))
			}
			var fp uint64
			for i := uint64(0); i < probes; i++ {
				buf = c.fam.key(buf, 1<<40+i) // never inserted
				if f.Test(buf) {
					fp++
				}
			}
			measured := float64(fp) / float64(probes)
			half := z * math.Sqrt(p*(1-p)/float64(probes))
			full := 2 * float64(c.bs) / math.Exp2(float64(c.fpBits))
			fullHalf := z * math.Sqrt(full*(1-full)/float64(probes))
			t.Logf("load %.4f: theory %.3g, measured %.3g (%d/%d) ± %.2g; full-table bound 2b/2^f = %.3g; Stats.FPR %.3g",
				st.FillRatio, p, measured, fp, probes, half, full, st.FPR)
			if math.Abs(measured-p) > half {
				t.Errorf("measured FPR %.4g outside the 99.99%% interval %.4g ± %.2g", measured, p, half)
			}
			if measured > full+fullHalf {
				t.Errorf("measured FPR %.4g above the full-table rate %.4g", measured, full)
			}
			if math.Abs(st.FPR-p) > 1e-12 {
				t.Errorf("Stats.FPR %v, want %v", st.FPR, p)
			}
		})
	}
}
