package bloom

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/probly/probly/internal/testutil"
)

// TestScalableAcceptance is issue 6's acceptance test for library users:
// growth 2, tightening r = 0.5, capacity 100, target p0 = 1%, 10M distinct
// keys. Growth must be geometric (link i holds exactly 100·2^i items at
// error rate p0·(1−r)·r^i, so Σ p_i = p0 bounds the compound rate:
// Almeida et al.'s P0/(1−r) with P0 = p0·(1−r) the first link's rate), no
// inserted key may be lost, and the measured compound false-positive rate
// on 1M non-member keys must be at most p0. Under -short or without
// PROBLY_FULL=1 it inserts 1M keys, under the race detector 200k.
func TestScalableAcceptance(t *testing.T) {
	const p0 = 0.01
	n, probes := uint64(10_000_000), uint64(1_000_000)
	switch {
	case raceEnabled:
		n, probes = 200_000, 100_000
	case testing.Short() || !testutil.FullEnabled():
		n = 1_000_000
	}
	t.Parallel()
	start := time.Now()
	s := mustScalable(t, ScalableConfig{Capacity: 100, ErrorRate: p0, Growth: 2, Tightening: 0.5})
	var buf []byte
	for i := uint64(0); i < n; i++ {
		buf = userKey(buf, i)
		if err := s.Add(buf); err != nil {
			t.Fatal(err)
		}
	}
	addTime := time.Since(start)
	links := s.linkList()
	var sumP float64
	var absorbed uint64 // keys that tested positive when added (false positives of the chain)
	for i, l := range links {
		wantCap, wantP := uint64(100)<<i, p0*0.5*math.Pow(0.5, float64(i))
		if l.Capacity != wantCap || math.Abs(l.ErrorRate-wantP) > 1e-18 {
			t.Errorf("link %d: capacity %d rate %v, want %d %v", i, l.Capacity, l.ErrorRate, wantCap, wantP)
		}
		if i < len(links)-1 && l.Filter.items() != l.Capacity {
			t.Errorf("link %d holds %d items, want its capacity %d", i, l.Filter.items(), l.Capacity)
		}
		sumP += l.ErrorRate
	}
	absorbed = n - s.items()
	for i := uint64(0); i < n; i += 97 {
		if buf = userKey(buf, i); !s.Test(buf) {
			t.Fatalf("false negative for %q", buf)
		}
	}
	var fp uint64
	for i := n; i < n+probes; i++ {
		if buf = userKey(buf, i); s.Test(buf) {
			fp++
		}
	}
	measured := float64(fp) / float64(probes)
	est := s.Stats().FPR
	t.Logf("%d keys in %v: %d links, %d bytes (%.2f bits/key), N=%d (%d absorbed as positives), Σp_i=%.6f, "+
		"conditional compound FPR %.5f, measured %.5f (%d/%d), target %v",
		n, addTime.Round(time.Millisecond), len(links), s.sizeBytes(), 8*float64(s.sizeBytes())/float64(n), s.items(), absorbed,
		sumP, est, measured, fp, probes, p0)
	if sumP > p0 {
		t.Errorf("Σ p_i = %v above p0", sumP)
	}
	if measured > p0 || est > p0 {
		t.Errorf("compound FPR: measured %.5f, conditional %.5f, above the target %v", measured, est, p0)
	}
}

// TestScalableGrowthOneFloor adds equal-capacity links (growth 1) until
// there are more than 60: no error and no panic, every link's rate is
// max(p0·(1−r)·r^i, floor), and once the floor is reached every further
// link is sized at exactly the floor. A second chain with the default
// floor (1e-300) and tightening 0.1 grows to 320 links, past the point
// (~300) where the rates would underflow without it; its links at the
// floor need k = 997 probes, within MaxK. With 100-item links the measured
// compound FPR stays below Σ p_i.
func TestScalableGrowthOneFloor(t *testing.T) {
	for _, c := range []struct {
		capacity, links uint64
		floor, r        float64
	}{{100, 61, 1e-9, 0.5}, {10, 320, 0, 0.1}} {
		if c.links > 100 && (raceEnabled || testing.Short()) {
			continue
		}
		s := mustScalable(t, ScalableConfig{Capacity: c.capacity, ErrorRate: 0.01, Growth: 1, MinErrorRate: c.floor, Tightening: c.r})
		floor := s.config().MinErrorRate
		var buf []byte
		var i uint64
		for ; uint64(s.numLinks()) <= c.links; i++ {
			if err := s.Add(counterKey(buf, i)); err != nil {
				t.Fatalf("add %d (%d links): %v", i, s.numLinks(), err)
			}
		}
		var sumP float64
		floorLinks := 0
		for j, l := range s.linkList() {
			want := max(0.01*(1-c.r)*math.Pow(c.r, float64(j)), floor)
			if l.Capacity != c.capacity || l.ErrorRate < floor || math.Abs(l.ErrorRate-want) > want*1e-9 {
				t.Fatalf("link %d: capacity %d rate %v, want %d %v (floor %v)", j, l.Capacity, l.ErrorRate, c.capacity, want, floor)
			}
			if l.ErrorRate == floor {
				floorLinks++
				m, k, _ := chainSizingFn(c.capacity, floor)
				if l.Filter.numBits() != m || l.Filter.numHashes() != k {
					t.Fatalf("link %d at the floor: m=%d k=%d, want %d %d", j, l.Filter.numBits(), l.Filter.numHashes(), m, k)
				}
			}
			sumP += l.ErrorRate
		}
		if floorLinks == 0 {
			t.Fatalf("%d links never reached the floor %v", s.numLinks(), floor)
		}
		for j := uint64(0); j < i; j++ {
			if !s.Test(counterKey(buf, j)) {
				t.Fatalf("false negative for key %d", j)
			}
		}
		probes := uint64(200_000)
		if raceEnabled {
			probes = 20_000 // ≥ 100/p0
		}
		var fp uint64
		for j := uint64(0); j < probes; j++ {
			if s.Test(userKey(buf, j)) {
				fp++
			}
		}
		last := s.linkList()[s.numLinks()-1].Filter
		measured := float64(fp) / float64(probes)
		t.Logf("growth 1, floor %v: %d links (%d at the floor, last k=%d m=%d), %d keys, Σp_i=%.6g, measured %.6f",
			floor, s.numLinks(), floorLinks, last.numHashes(), last.numBits(), i, sumP, measured)
		// With 100-item links the compound rate stays below Σ p_i = p0.
		// With 10-item links most links ask for rates below the floor of
		// double hashing (≈ 1/(m·k) per link; see chainSizingFn), so the
		// compound rate exceeds p0 somewhat: logged, not asserted.
		if c.capacity == 100 && measured > sumP+3.29*math.Sqrt(sumP/float64(probes)) {
			t.Errorf("measured %.6f above Σp_i = %.6f", measured, sumP)
		}
	}
}

// TestChainSizing checks chainSizingFn against its bound and the classic
// sizing, and measures what it is for: small filters meeting p on average.
func TestChainSizing(t *testing.T) {
	for _, c := range []struct {
		n uint64
		p float64
	}{{1, 0.5}, {2, 0.05}, {100, 0.005}, {1000, 0.01}, {1e6, 0.01}, {1e9, 1e-3}, {10, 1e-300}} {
		m, k, err := chainSizingFn(c.n, c.p)
		if err != nil {
			t.Fatalf("chainSizingFn(%d, %v): %v", c.n, c.p, err)
		}
		m0, k0, _ := classicSizing(c.n, c.p) // chainSizingFn has no MinP floor
		bound := doubleHashingFPRBound(m, k, c.n)
		capped := c.p < 1e-100 // below the double-hashing floor: m is capped at 2× classic
		if k != k0 || m < m0 || m > 2*m0 || (bound > c.p) != capped || (capped && m != 2*m0) {
			t.Errorf("chainSizingFn(%d, %v) = %d, %d; classic %d, %d; bound %v", c.n, c.p, m, k, m0, k0, bound)
		}
		if c.n >= 1e6 && float64(m)/float64(m0) > 1.01 {
			t.Errorf("n=%d: %.4f× the classic size", c.n, float64(m)/float64(m0))
		}
		t.Logf("n=%d p=%g: m=%d (classic %d, +%.2f%%) k=%d", c.n, c.p, m, m0, 100*(float64(m)/float64(m0)-1), k)
	}
	for _, p := range []float64{0, 1, math.NaN()} {
		if _, _, err := chainSizingFn(10, p); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("p=%v: %v", p, err)
		}
	}
	if _, _, err := chainSizingFn(1<<38, 1e-3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("huge n: %v", err)
	}
	if totient(1) != 1 || totient(12) != 4 || totient(97) != 96 || totient(1024) != 512 {
		t.Error("totient")
	}
	if raceEnabled || testing.Short() {
		return
	}
	// 200 filters of 100 items at p = 0.005, sized by chainSizingFn and
	// seeded independently: the mean measured rate is below p (with the
	// classic size it is about 0.0054; see TestDoubleHashingSmallM).
	const n, R, probes, p = 100, 200, 20_000, 0.005
	m, k, _ := chainSizingFn(n, p)
	var meas float64
	var buf []byte
	for seed := uint64(1); seed <= R; seed++ {
		f, _ := NewWithConfig(Config{M: m, K: k})
		_ = f.setHash(HashXXH3_128, seed)
		for i := uint64(0); i < n; i++ {
			f.Add(userKey(buf, i))
		}
		fp := 0
		for i := uint64(n); i < n+probes; i++ {
			if f.Test(userKey(buf, i)) {
				fp++
			}
		}
		meas += float64(fp) / probes
	}
	t.Logf("m=%d k=%d n=%d: mean measured FPR over %d filters %.6f, target %v", m, k, n, R, meas/R, p)
	if meas/R > p {
		t.Errorf("mean measured FPR %.6f above %v", meas/R, p)
	}
}
