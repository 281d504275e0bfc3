package bloom

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"testing"
)

func mustStable(t testing.TB, m uint64, d uint8, p float64) *Stable {
	t.Helper()
	s, err := newStableMDP(m, d, p)
	if err != nil {
		t.Fatalf("newStableMDP(%d, %d, %v): %v", m, d, p, err)
	}
	return s
}

// stableModel is a direct transcription of Deng & Rafiei's insert with one
// byte per cell and the same decrement sequence as Stable.
type stableModel struct {
	cells []uint8
	max   uint8
	k     uint32
	p     uint64
	rng   uint64
}

func (s *stableModel) add(h1, h2 uint64) {
	s.rng += 0x9e3779b97f4a7c15
	z := s.rng
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	start, _ := bits.Mul64(z^z>>31, uint64(len(s.cells)))
	for j := uint64(0); j < s.p; j++ {
		if x := (start + j) % uint64(len(s.cells)); s.cells[x] > 0 {
			s.cells[x]--
		}
	}
	for i := uint32(0); i < s.k; i++ {
		s.cells[(h1+uint64(i)*h2)%uint64(len(s.cells))] = s.max
	}
}

// TestStableMatchesModel compares the packed cells with the byte-per-cell
// model for every cell width and for cell counts that do and do not fill
// the last word, including decrement runs that wrap around.
func TestStableMatchesModel(t *testing.T) {
	for d := uint8(1); d <= MaxStableCellBits; d++ {
		for _, m := range []uint64{2, 21, 64, 100, 1000} {
			k := uint32(min(3, m-1))
			dec := min(m, 1+m/3)
			s, err := NewStableWithConfig(StableConfig{M: m, CellBits: d, K: k, Decrements: dec})
			if err != nil {
				t.Fatal(err)
			}
			s.setRandSeed(uint64(m) * uint64(d))
			model := &stableModel{cells: make([]uint8, m), max: uint8(1<<d - 1), k: k, p: dec, rng: s.rng}
			var buf []byte
			for i := uint64(0); i < 300; i++ {
				h1, h2 := Hash(userKey(buf, i))
				s.AddHash(h1, h2)
				model.add(h1, h2)
			}
			var nonzero uint64
			for x := uint64(0); x < m; x++ {
				if s.cell(x) != uint64(model.cells[x]) {
					t.Fatalf("d=%d m=%d: cell %d = %d, model %d", d, m, x, s.cell(x), model.cells[x])
				}
				if model.cells[x] != 0 {
					nonzero++
				}
			}
			if st := s.Stats(); st.SetBits != nonzero || st.N != 300 {
				t.Fatalf("d=%d m=%d: stats %+v, nonzero %d", d, m, st, nonzero)
			}
			if err := s.checkPadding(); err != nil {
				t.Fatalf("d=%d m=%d: %v", d, m, err)
			}
		}
	}
}

// TestStableStablePointFPR runs a stream long enough to reach the stable
// point (15·Max·m/(P+k) adds; the distance to it shrinks by e^-15) and
// measures the false-positive rate on keys never added, at target rates
// 0.1, 0.01 and 0.001 with ≥ 100/p probes. The measured rate must lie in
// the 99.9% binomial interval around the current conditional rate fill^k,
// and fill^k must agree with StablePointFPR (Deng & Rafiei's formula) up
// to the fluctuation of the fill (4 standard deviations, treating cells as
// independent, plus 2%).
func TestStableStablePointFPR(t *testing.T) {
	const m = 50_000
	for _, d := range []uint8{1, 3} {
		for _, p := range []float64{0.1, 0.01, 0.001} {
			if raceEnabled && d == 3 {
				continue
			}
			t.Run(fmt.Sprintf("d=%d,p=%g", d, p), func(t *testing.T) {
				t.Parallel()
				s := mustStable(t, m, d, p)
				s.setRandSeed(uint64(d))
				adds := 15 * uint64(s.max) * m / (s.p + uint64(s.k))
				var buf []byte
				for i := uint64(0); i < adds; i++ {
					s.Add(userKey(buf, i))
				}
				probes := uint64(max(100/p, 200_000))
				if raceEnabled {
					probes = uint64(100 / p)
				}
				var fp uint64
				for i := uint64(0); i < probes; i++ {
					if s.Test(prefixKey(buf, i)) {
						fp++
					}
				}
				st := s.Stats()
				q, fps := st.FPR, s.stablePointFPR()
				measured := float64(fp) / float64(probes)
				half := halfWidth999(q, probes)
				f := st.FillRatio
				tol := 4*float64(s.k)*math.Sqrt(f*(1-f)/m)/f + 0.02
				t.Logf("k=%d P=%d Max=%d adds=%d: stable point %.6f, fill^k %.6f, measured %.6f (%d/%d) ± %.6f",
					s.k, s.p, s.max, adds, fps, q, measured, fp, probes, half)
				if math.Abs(measured-q) > half {
					t.Errorf("measured %.6f outside %.6f ± %.6f", measured, q, half)
				}
				if math.Abs(q-fps)/fps > tol {
					t.Errorf("fill^k %.6f differs from the stable point %.6f by more than %.1f%%", q, fps, 100*tol)
				}
				// Independent evaluation of the formula.
				kf, mf, pf := float64(s.k), float64(m), float64(s.p)
				zero := math.Pow(1/(1+1/(pf*(1/kf-1/mf))), float64(s.max))
				if want := math.Pow(1-zero, kf); math.Abs(want-fps) > 1e-15 {
					t.Errorf("StablePointFPR %v, formula %v", fps, want)
				}
				if math.Abs(fps-p)/p > 0.3 {
					t.Errorf("stable point %v far from the target %v", fps, p)
				}
			})
		}
	}
}

// TestStableForgetsOldItems documents the false negatives that the
// stable filter has by design: long after they were added, old items test
// absent (most of them), while the newest item always tests present.
func TestStableForgetsOldItems(t *testing.T) {
	s := mustStable(t, 10_000, 2, 0.01)
	s.setRandSeed(3)
	var buf []byte
	const n = 200_000 // ≫ Max·m/P
	for i := uint64(0); i < n; i++ {
		buf = userKey(buf, i)
		s.Add(buf)
		if !s.Test(buf) {
			t.Fatalf("the item just added (%q) is absent", buf)
		}
	}
	forgotten := 0
	for i := uint64(0); i < 1000; i++ {
		if !s.Test(userKey(buf, i)) {
			forgotten++
		}
	}
	recent := 0
	for i := uint64(n - 100); i < n; i++ {
		if s.Test(userKey(buf, i)) {
			recent++
		}
	}
	t.Logf("of the first 1000 items %d are forgotten (false negatives by design); %d of the last 100 are present", forgotten, recent)
	if forgotten < 900 {
		t.Errorf("only %d of 1000 old items forgotten", forgotten)
	}
	if recent < 95 {
		t.Errorf("only %d of the last 100 items present", recent)
	}
	// TestAndAdd detects a recent duplicate.
	if !was(s.TestAndAdd(userKey(buf, n-1))) {
		t.Error("TestAndAdd missed a recent duplicate")
	}
}

func TestStableParameters(t *testing.T) {
	for _, c := range []struct {
		m    uint64
		d    uint8
		p    float64
		want error
	}{
		{1000, 0, 0.01, ErrInvalidParameter},
		{1000, 9, 0.01, ErrInvalidParameter},
		{1, 1, 0.01, ErrInvalidParameter},
		{1000, 1, 0, ErrInvalidParameter},
		{1000, 1, 1, ErrInvalidParameter},
		{1000, 1, math.NaN(), ErrInvalidParameter},
		{MaxBits/4 + 1, 4, 0.01, ErrTooLarge},
	} {
		if _, err := newStableMDP(c.m, c.d, c.p); !errors.Is(err, c.want) {
			t.Errorf("newStableMDP(%d, %d, %v): %v, want %v", c.m, c.d, c.p, err, c.want)
		}
	}
	for _, c := range []struct {
		m   uint64
		k   uint32
		dec uint64
	}{{100, 0, 1}, {100, 100, 1}, {100, MaxK + 1, 1}, {100, 3, 0}, {100, 3, 101}} {
		if _, err := NewStableWithConfig(StableConfig{M: c.m, CellBits: 2, K: c.k, Decrements: c.dec}); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("m=%d k=%d P=%d: %v", c.m, c.k, c.dec, err)
		}
	}
	// Tiny filters clamp k below m and P to [1, m].
	k, dec, err := stableSizing(2, 1, 1e-9)
	if err != nil || k != 1 || dec < 1 || dec > 2 {
		t.Errorf("stableSizing(2, 1, 1e-9) = %d, %d, %v", k, dec, err)
	}
	s := mustStable(t, 1000, 4, 0.02)
	if s.cellBits() != 4 || s.numBits() != 1000 || s.numHashes() != 6 || s.decrements() == 0 || s.targetRate() != 0.02 || s.sizeBytes() != 8*63 {
		t.Errorf("accessors: d=%d m=%d k=%d P=%d bytes=%d", s.cellBits(), s.numBits(), s.numHashes(), s.decrements(), s.sizeBytes())
	}
	if err := s.setHash(0, 0); !errors.Is(err, ErrInvalidParameter) {
		t.Error("setHash(0)")
	}
	if err := s.setHash(HashXXH3_128, 5); err != nil || s.hashSeed() != 5 || s.hashKind() != HashXXH3_128 {
		t.Error("SetHash")
	}
	s.addString("a")
	if !s.testString("a") || !s.Test([]byte("a")) || s.items() != 1 {
		t.Error("AddString/TestString")
	}
	c := s.clone()
	c.Add([]byte("b"))
	if s.equal(c) || s.items() != 1 {
		t.Error("Clone is not independent")
	}
}
