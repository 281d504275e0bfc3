package bloom

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// mustPanicWith runs f and requires a panic whose message is want.
func mustPanicWith(t *testing.T, name, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s on the zero value did not panic", name)
			return
		}
		if msg, ok := r.(string); !ok || msg != want {
			t.Errorf("%s on the zero value panicked with %v, want %q", name, r, want)
		}
	}()
	f()
}

// Every method of a zero value that reads or changes its contents panics
// with a message naming the constructors; the plain getters return zeros;
// decoding into a zero value works.
func TestZeroValues(t *testing.T) {
	key := []byte("k")
	keys := [][]byte{key, []byte("l")}
	t.Run("Filter", func(t *testing.T) {
		ok, _ := New(100, 0.01)
		cases := map[string]func(f *Filter){
			"Add": func(f *Filter) { f.Add(key) }, "Reset": func(f *Filter) { f.Reset() }, "AddString": func(f *Filter) { f.addString("k") },
			"AddHash": func(f *Filter) { f.AddHash(1, 2) }, "Test": func(f *Filter) { f.Test(key) },
			"TestString": func(f *Filter) { f.testString("k") }, "TestHash": func(f *Filter) { f.TestHash(1, 2) },
			"TestAndAdd": func(f *Filter) { f.TestAndAdd(key) }, "TestAndAddHash": func(f *Filter) { f.TestAndAddHash(1, 2) },
			"AddMany": func(f *Filter) { f.AddMany(keys) }, "TestMany": func(f *Filter) { f.TestMany(keys, nil) },
			"addManyExclusive":     func(f *Filter) { f.addManyExclusive(keys) },
			"addHashManyExclusive": func(f *Filter) { f.addHashManyExclusive([]uint64{1}, []uint64{2}) },
			"Stats":                func(f *Filter) { f.Stats() },
			"Compatible":           func(f *Filter) { _ = f.compatible(ok) },
			"Union":                func(f *Filter) { _ = f.Merge(ok) }, "Intersect": func(f *Filter) { _ = f.Intersect(ok) },
			"Union into":    func(f *Filter) { _ = ok.Merge(f) },
			"MarshalBinary": func(f *Filter) { _, _ = f.MarshalBinary() },
			"AppendBinary":  func(f *Filter) { _, _ = f.AppendBinary(nil) },
			"WriteTo":       func(f *Filter) { _, _ = f.WriteTo(&bytes.Buffer{}) },
			"newBuilder":    func(f *Filter) { newBuilder(f) },
		}
		for name, c := range cases {
			mustPanicWith(t, name, zeroFilter, func() { c(new(Filter)) })
		}
		var z Filter
		if z.numBits() != 0 || z.numHashes() != 0 || z.items() != 0 || z.sizeBytes() != 0 || z.capacityN() != 0 {
			t.Fatal("zero Filter getters")
		}
		ok.Add(key)
		data, _ := ok.MarshalBinary()
		if err := z.UnmarshalBinary(data); err != nil || !z.Test(key) {
			t.Fatalf("UnmarshalBinary into a zero Filter: %v", err)
		}
	})
	t.Run("builder", func(t *testing.T) {
		for name, c := range map[string]func(b *builder){
			"Add": func(b *builder) { b.Add(key) }, "AddString": func(b *builder) { b.addString("k") },
			"AddHash": func(b *builder) { b.AddHash(1, 2) }, "AddMany": func(b *builder) { b.AddMany(keys) },
			"Close": func(b *builder) { b.Close() },
		} {
			mustPanicWith(t, name, zeroBuilder, func() { c(new(builder)) })
		}
	})
	t.Run("Counting", func(t *testing.T) {
		ok, _ := NewCounting(100, 0.01)
		for name, c := range map[string]func(c *Counting){
			"Add": func(c *Counting) { c.Add(key) }, "Reset": func(c *Counting) { c.Reset() }, "TestAndAdd": func(c *Counting) { _, _ = c.TestAndAdd(key) }, "AddString": func(c *Counting) { c.addString("k") },
			"AddHash": func(c *Counting) { c.AddHash(1, 2) }, "Remove": func(c *Counting) { _ = c.Remove(key) },
			"RemoveHash": func(c *Counting) { _ = c.RemoveHash(1, 2) }, "Test": func(c *Counting) { c.Test(key) },
			"TestHash": func(c *Counting) { c.TestHash(1, 2) }, "Count": func(c *Counting) { c.Count(key) },
			"CountHash": func(c *Counting) { c.CountHash(1, 2) }, "AddMany": func(c *Counting) { c.AddMany(keys) },
			"TestMany": func(c *Counting) { c.TestMany(keys, nil) }, "Stats": func(c *Counting) { c.Stats() },
			"Union": func(c *Counting) { _ = c.Merge(ok) }, "Intersect": func(c *Counting) { _ = c.Intersect(ok) },
			"Union into":    func(c *Counting) { _ = ok.Merge(c) },
			"MarshalBinary": func(c *Counting) { _, _ = c.MarshalBinary() },
			"WriteTo":       func(c *Counting) { _, _ = c.WriteTo(&bytes.Buffer{}) },
		} {
			mustPanicWith(t, name, zeroCounting, func() { c(new(Counting)) })
		}
		var z Counting
		ok.Add(key)
		data, _ := ok.MarshalBinary()
		if err := z.UnmarshalBinary(data); err != nil || !z.Test(key) {
			t.Fatalf("UnmarshalBinary into a zero Counting: %v", err)
		}
	})
	t.Run("Stable", func(t *testing.T) {
		ok, _ := newStableMDP(1000, 3, 0.01)
		for name, c := range map[string]func(s *Stable){
			"Add": func(s *Stable) { s.Add(key) }, "Reset": func(s *Stable) { s.Reset() }, "AddString": func(s *Stable) { s.addString("k") },
			"AddHash": func(s *Stable) { s.AddHash(1, 2) }, "Test": func(s *Stable) { s.Test(key) },
			"TestString": func(s *Stable) { s.testString("k") }, "TestHash": func(s *Stable) { s.TestHash(1, 2) },
			"TestAndAdd": func(s *Stable) { s.TestAndAdd(key) }, "Stats": func(s *Stable) { s.Stats() },
			"MarshalBinary": func(s *Stable) { _, _ = s.MarshalBinary() },
			"WriteTo":       func(s *Stable) { _, _ = s.WriteTo(&bytes.Buffer{}) },
		} {
			mustPanicWith(t, name, zeroStable, func() { c(new(Stable)) })
		}
		var z Stable
		ok.Add(key)
		data, _ := ok.MarshalBinary()
		if err := z.UnmarshalBinary(data); err != nil || !z.Test(key) {
			t.Fatalf("UnmarshalBinary into a zero Stable: %v", err)
		}
	})
	t.Run("Scalable", func(t *testing.T) {
		ok, _ := NewScalableWithConfig(ScalableConfig{Capacity: 100, ErrorRate: 0.01, Growth: 2})
		for name, c := range map[string]func(s *Scalable){
			"Add": func(s *Scalable) { _ = s.Add(key) }, "AddString": func(s *Scalable) { _, _ = s.addString("k") },
			"AddHash": func(s *Scalable) { _ = s.AddHash(1, 2) }, "Test": func(s *Scalable) { s.Test(key) },
			"TestString": func(s *Scalable) { s.testString("k") }, "TestHash": func(s *Scalable) { s.TestHash(1, 2) },
			"Reset": func(s *Scalable) { s.Reset() }, "TestAndAdd": func(s *Scalable) { _, _ = s.TestAndAdd(key) },
			"MarshalBinary": func(s *Scalable) { _, _ = s.MarshalBinary() },
			"WriteTo":       func(s *Scalable) { _, _ = s.WriteTo(&bytes.Buffer{}) },
		} {
			mustPanicWith(t, name, zeroScalable, func() { c(new(Scalable)) })
		}
		var z Scalable
		if z.items() != 0 || z.numLinks() != 0 || z.capacityN() != 0 || z.sizeBytes() != 0 || len(z.linkList()) != 0 {
			t.Fatal("zero Scalable getters")
		}
		ok.Add(key)
		data, _ := ok.MarshalBinary()
		if err := z.UnmarshalBinary(data); err != nil || !z.Test(key) {
			t.Fatalf("UnmarshalBinary into a zero Scalable: %v", err)
		}
	})
	t.Run("SBBF", func(t *testing.T) {
		ok, _ := NewSBBF(100, 0.01)
		for name, c := range map[string]func(s *SBBF){
			"Add": func(s *SBBF) { s.Add(key) }, "Reset": func(s *SBBF) { s.Reset() }, "AddString": func(s *SBBF) { s.addString("k") },
			"AddHash": func(s *SBBF) { s.AddHash(1) }, "Test": func(s *SBBF) { s.Test(key) },
			"TestString": func(s *SBBF) { s.testString("k") }, "TestHash": func(s *SBBF) { s.TestHash(1) },
			"TestAndAdd": func(s *SBBF) { s.TestAndAdd(key) }, "AddMany": func(s *SBBF) { s.AddMany(keys) },
			"AddHashMany": func(s *SBBF) { s.addHashMany([]uint64{1}) },
			"TestMany":    func(s *SBBF) { s.TestMany(keys, nil) }, "TestHashMany": func(s *SBBF) { s.testHashMany([]uint64{1}, nil) },
			"Stats": func(s *SBBF) { s.Stats() }, "Union": func(s *SBBF) { _ = s.Merge(ok) },
			"Intersect": func(s *SBBF) { _ = s.Intersect(ok) }, "Union into": func(s *SBBF) { _ = ok.Merge(s) },
			"MarshalBinary": func(s *SBBF) { _, _ = s.MarshalBinary() },
			"WriteTo":       func(s *SBBF) { _, _ = s.WriteTo(&bytes.Buffer{}) },
			"ParquetBitset": func(s *SBBF) { s.ParquetBitset() },
			"AppendParquet": func(s *SBBF) { _, _ = s.AppendParquet(nil) },
		} {
			mustPanicWith(t, name, zeroSBBF, func() { c(new(SBBF)) })
		}
		var z SBBF
		ok.Add(key)
		data, _ := ok.MarshalBinary()
		if err := z.UnmarshalBinary(data); err != nil || !z.Test(key) {
			t.Fatalf("UnmarshalBinary into a zero SBBF: %v", err)
		}
	})
	for _, msg := range []string{zeroFilter, zeroCounting, zeroStable, zeroScalable, zeroSBBF, zeroBuilder} {
		if !strings.HasPrefix(msg, "bloom: ") || !strings.Contains(msg, "create it with New") {
			t.Errorf("message %q does not name a constructor", msg)
		}
	}
}

// Issue 13: a floor on the sub-filters' error rate at or above the target
// rate is refused (MinErrorRate 0.5 with ErrorRate 0.01 used to make a
// filter whose first link had a 48 % false-positive rate).
func TestScalableMinErrorRate(t *testing.T) {
	for _, min := range []float64{0.5, 0.01, 0.02} {
		_, err := NewScalableWithConfig(ScalableConfig{Capacity: 100, ErrorRate: 0.01, MinErrorRate: min, Growth: 2})
		if !errors.Is(err, ErrInvalidParameter) || !strings.Contains(err.Error(), "must be below ErrorRate") {
			t.Errorf("MinErrorRate %v with ErrorRate 0.01: %v", min, err)
		}
		if _, err := restoreScalable(ScalableConfig{Capacity: 100, ErrorRate: 0.01, MinErrorRate: min}, nil); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("RestoreScalable with MinErrorRate %v: %v", min, err)
		}
	}
	s, err := NewScalableWithConfig(ScalableConfig{Capacity: 100, ErrorRate: 0.01, MinErrorRate: 0.001, Growth: 2})
	if err != nil || s.linkList()[0].ErrorRate != 0.005 {
		t.Fatalf("MinErrorRate below the rate: %v", err)
	}
	// The default floor still serves a tiny target rate, as before.
	if s, err := NewScalableWithConfig(ScalableConfig{Capacity: 10, ErrorRate: 1e-305, Growth: 2}); err != nil || s.linkList()[0].ErrorRate != DefaultMinErrorRate {
		t.Fatalf("ErrorRate 1e-305 with the default floor: %v", err)
	}
	// An encoding that records a floor at or above its rate (written before
	// the rule) still decodes.
	s.cfg.MinErrorRate = 0.5
	enc, _ := s.MarshalBinary()
	var d Scalable
	if err := d.UnmarshalBinary(enc); err != nil || d.config().MinErrorRate != 0.5 {
		t.Fatalf("decoding a floor above the rate: %v", err)
	}
}
