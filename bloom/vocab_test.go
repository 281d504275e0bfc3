package bloom

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestNewStableWindow checks NewStable's meaning of (n, p) on a stream: an
// item added n adds ago is still reported with probability ≥ about 1 − p,
// and items never added test positive at about the stable-point rate p.
func TestNewStableWindow(t *testing.T) {
	const n, p = 2000, 0.02
	s, err := NewStable(n, p)
	if err != nil {
		t.Fatal(err)
	}
	s.setRandSeed(7)
	if got := s.stablePointFPR(); got > 1.2*p {
		t.Fatalf("stable-point FPR %v, want about %v", got, p)
	}
	key := func(i int) []byte { return fmt.Appendf(nil, "stream-%d", i) }
	const total = 40 * n // far past the stable point
	var lost, checked, fp, probes int
	for i := range total {
		_ = s.Add(key(i))
		if i >= 20*n && i%7 == 0 {
			// key(i−n) was added, then n more items were.
			checked++
			if !s.Test(key(i - n)) {
				lost++
			}
			probes++
			if s.Test(fmt.Appendf(nil, "never-%d", i)) {
				fp++
			}
		}
	}
	// Binomial noise: checked ≈ 11400 trials; allow 4 standard deviations.
	slack := func(q float64, trials int) float64 { return q + 4*math.Sqrt(q*(1-q)/float64(trials)) }
	if fl := float64(lost) / float64(checked); fl > slack(p, checked) {
		t.Errorf("%d of %d items lost after a window of %d adds (%.4f), want ≤ about %v", lost, checked, n, fl, p)
	}
	if ff := float64(fp) / float64(probes); ff > slack(1.2*p, probes) {
		t.Errorf("false-positive rate %.4f over %d probes, want about %v", ff, probes, p)
	}
	t.Logf("m=%d d=%d k=%d P=%d: %.2f bits per window item, lost %d/%d, false positives %d/%d",
		s.m, s.d, s.k, s.p, float64(s.m)*float64(s.d)/n, lost, checked, fp, probes)
}

// TestNewStableSizing pins the documented sizes and the errors.
func TestNewStableSizing(t *testing.T) {
	for _, c := range []struct {
		p       float64
		d       uint32
		bitsPer float64
	}{{0.01, 6, 86}, {0.001, 7, 143}} {
		s, err := NewStable(1_000_000, c.p)
		if err != nil {
			t.Fatal(err)
		}
		bits := float64(s.m) * float64(s.d) / 1e6
		if s.d != c.d || math.Abs(bits-c.bitsPer) > 1 || s.targetP != c.p {
			t.Errorf("NewStable(1e6, %v): d=%d, %.1f bits per item, target %v; want d=%d, about %v", c.p, s.d, bits, s.targetP, c.d, c.bitsPer)
		}
	}
	for _, c := range []struct {
		n    uint64
		p    float64
		want error
	}{{0, 0.01, ErrInvalidParameter}, {10, 0, ErrInvalidParameter}, {10, 1, ErrInvalidParameter}, {10, math.NaN(), ErrInvalidParameter}, {1 << 40, 1e-9, ErrTooLarge}, {1, 0.5, nil}} {
		if _, err := NewStable(c.n, c.p); !errors.Is(err, c.want) {
			t.Errorf("NewStable(%d, %v) = %v, want %v", c.n, c.p, err, c.want)
		}
	}
}

// TestConfigErrorsNameTheField: every WithConfig constructor refuses a
// parameter out of range with ErrInvalidParameter (or ErrTooLarge for a
// size over the maximum) and names the field.
func TestConfigErrorsNameTheField(t *testing.T) {
	for _, c := range []struct {
		err   error
		want  error
		field string
	}{
		{second(NewWithConfig(Config{K: 1})), ErrInvalidParameter, "M"},
		{second(NewWithConfig(Config{M: 1})), ErrInvalidParameter, "K"},
		{second(NewWithConfig(Config{M: MaxBits + 1, K: 1})), ErrTooLarge, "M"},
		{second(NewWithConfig(Config{M: 1, K: MaxK + 1})), ErrInvalidParameter, "K"},
		{second(NewSBBFWithConfig(SBBFConfig{})), ErrInvalidParameter, "Blocks"},
		{second(NewSBBFWithConfig(SBBFConfig{Blocks: MaxSBBFBlocks + 1})), ErrTooLarge, "Blocks"},
		{second(NewCountingWithConfig(CountingConfig{K: 1})), ErrInvalidParameter, "M"},
		{second(NewCountingWithConfig(CountingConfig{M: 1})), ErrInvalidParameter, "K"},
		{second(NewCountingWithConfig(CountingConfig{M: MaxCounters + 1, K: 1})), ErrTooLarge, "M"},
		{second(NewStableWithConfig(StableConfig{M: 10, K: 1, Decrements: 1})), ErrInvalidParameter, "CellBits"},
		{second(NewStableWithConfig(StableConfig{M: 1, CellBits: 2, K: 1, Decrements: 1})), ErrInvalidParameter, "M"},
		{second(NewStableWithConfig(StableConfig{M: 10, CellBits: 2, K: 10, Decrements: 1})), ErrInvalidParameter, "K"},
		{second(NewStableWithConfig(StableConfig{M: 10, CellBits: 2, K: 1, Decrements: 11})), ErrInvalidParameter, "Decrements"},
		{second(NewScalableWithConfig(ScalableConfig{ErrorRate: 0.01})), ErrInvalidParameter, "Capacity"},
		{second(NewScalableWithConfig(ScalableConfig{Capacity: 1, ErrorRate: 2})), ErrInvalidParameter, "ErrorRate"},
	} {
		if !errors.Is(c.err, c.want) || !strings.Contains(c.err.Error(), c.field) {
			t.Errorf("error %v: want %v naming %s", c.err, c.want, c.field)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// TestConfigSeed: the Seed of each Config reaches the key hash (filters
// with other seeds set other bits) and the encoding.
func TestConfigSeed(t *testing.T) {
	key := []byte("seeded")
	f0, _ := NewWithConfig(Config{M: 1 << 12, K: 4})
	f1, _ := NewWithConfig(Config{M: 1 << 12, K: 4, Seed: 99})
	_, _ = f0.Add(key), f1.Add(key)
	if f1.seed != 99 || f0.equal(f1) || errors.Is(f0.Merge(f1), nil) {
		t.Error("Config.Seed not used by Filter")
	}
	var g Filter
	if data, _ := f1.MarshalBinary(); g.UnmarshalBinary(data) != nil || g.seed != 99 || !g.Test(key) {
		t.Error("Filter seed not round-tripped")
	}
	s0, _ := NewSBBFWithConfig(SBBFConfig{Blocks: 64})
	s1, _ := NewSBBFWithConfig(SBBFConfig{Blocks: 64, Seed: 99})
	_, _ = s0.Add(key), s1.Add(key)
	if s1.seed != 99 || s0.equal(s1) {
		t.Error("SBBFConfig.Seed not used")
	}
	c1, _ := NewCountingWithConfig(CountingConfig{M: 1 << 12, K: 4, Seed: 99})
	_ = c1.Add(key)
	if h1, h2 := keyHash(HashXXH3_128, 99, key, ""); c1.seed != 99 || c1.CountHash(h1, h2) != 1 {
		t.Error("CountingConfig.Seed not used")
	}
	st, _ := NewStableWithConfig(StableConfig{M: 1 << 12, CellBits: 3, K: 4, Decrements: 2, Seed: 99})
	_ = st.Add(key)
	if h1, h2 := keyHash(HashXXH3_128, 99, key, ""); st.seed != 99 || !st.TestHash(h1, h2) {
		t.Error("StableConfig.Seed not used")
	}
	sc, _ := NewScalableWithConfig(ScalableConfig{Capacity: 10, ErrorRate: 0.01, Seed: 99})
	_ = sc.Add(key)
	if h1, h2 := keyHash(HashXXH3_128, 99, key, ""); !sc.TestHash(h1, h2) || sc.links[0].Filter.seed != 99 {
		t.Error("ScalableConfig.Seed not used")
	}
}

// TestReset: every type is empty after Reset, keeps its parameters, and
// works again (no false negatives after re-adding).
func TestReset(t *testing.T) {
	keys := make([][]byte, 300)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "reset-%d", i)
	}
	type filter interface {
		Add([]byte) error
		Test([]byte) bool
		Stats() Stats
		Reset()
	}
	f, _ := New(100, 0.01)
	sb, _ := NewSBBF(100, 0.01)
	c, _ := NewCounting(100, 0.01)
	st, _ := NewStable(100, 0.01)
	sc, _ := NewScalable(100, 0.01) // grows past 100
	for name, x := range map[string]filter{"Filter": f, "SBBF": sb, "Counting": c, "Stable": st, "Scalable": sc} {
		before := x.Stats()
		for _, k := range keys {
			if err := x.Add(k); err != nil {
				t.Fatal(err)
			}
		}
		x.Reset()
		got := x.Stats()
		if got.N != 0 || got.SetBits != 0 || got.M != before.M || got.K != before.K || got.Bytes != before.Bytes ||
			got.Capacity != before.Capacity || got.P != before.P {
			t.Errorf("%s after Reset: %+v, want empty %+v", name, got, before)
		}
		for _, k := range keys[:50] {
			if x.Test(k) {
				t.Errorf("%s: %q present after Reset", name, k)
				break
			}
		}
		for _, k := range keys {
			_ = x.Add(k)
		}
		for _, k := range keys[len(keys)-50:] {
			if !x.Test(k) {
				t.Errorf("%s: false negative for %q after Reset and re-add", name, k)
			}
		}
	}
	if sc.numLinks() == 1 {
		t.Error("Scalable did not grow on re-add after Reset")
	}
}

// TestTestAndAddAllTypes: TestAndAdd's bool is Test's answer before the
// add, on every type that has it.
func TestTestAndAddAllTypes(t *testing.T) {
	f, _ := New(1000, 0.01)
	sb, _ := NewSBBF(1000, 0.01)
	st, _ := NewStable(1000, 0.01)
	sc, _ := NewScalable(10, 0.01)
	c, _ := NewCounting(1000, 0.01)
	for name, x := range map[string]interface {
		Test([]byte) bool
		TestAndAdd([]byte) (bool, error)
	}{"Filter": f, "SBBF": sb, "Stable": st, "Scalable": sc, "Counting": c} {
		for i := range 200 {
			k := fmt.Appendf(nil, "k%d", i)
			before := x.Test(k)
			present, err := x.TestAndAdd(k)
			if err != nil || present != before {
				t.Fatalf("%s: TestAndAdd(%q) = %v, %v; Test before said %v", name, k, present, err, before)
			}
			if again, err := x.TestAndAdd(k); err != nil || !again {
				t.Fatalf("%s: second TestAndAdd(%q) = %v, %v", name, k, again, err)
			}
		}
	}
	full, _ := NewScalableWithConfig(ScalableConfig{Capacity: 1, ErrorRate: 0.01, Growth: NoGrowth})
	_ = full.Add([]byte("a"))
	if present, err := full.TestAndAdd([]byte("b")); present || !errors.Is(err, ErrFull) {
		t.Errorf("full Scalable: TestAndAdd = %v, %v; want false, ErrFull", present, err)
	}
}
