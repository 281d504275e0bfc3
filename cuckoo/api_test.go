package cuckoo

import (
	"errors"
	"fmt"
	"testing"
)

// Both constructors grow by default; NoGrowth turns it off (issue 14: a
// Config{Capacity: 1000} filter used to never grow while New(n, p) did).
func TestGrowsByDefault(t *testing.T) {
	byConfig, err := NewWithConfig(Config{Capacity: 1000})
	if err != nil {
		t.Fatal(err)
	}
	byNP, err := New(1000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := NewWithConfig(Config{Capacity: 1000, Expansion: NoGrowth})
	if err != nil {
		t.Fatal(err)
	}
	var buf []byte
	full := false
	for i := uint64(0); i < 5000; i++ {
		buf = userKey(buf, i)
		if err := byConfig.Add(buf); err != nil {
			t.Fatalf("Config{Capacity: 1000}: add %d: %v", i, err)
		}
		if err := byNP.Add(buf); err != nil {
			t.Fatalf("New(1000, 0.01): add %d: %v", i, err)
		}
		if err := fixed.Add(buf); err != nil {
			if !errors.Is(err, ErrFull) {
				t.Fatalf("NoGrowth: %v", err)
			}
			full = true
		}
	}
	if !full {
		t.Fatal("a NoGrowth filter of capacity 1000 took 5000 keys")
	}
	for _, f := range []*Filter{byConfig, byNP} {
		if st := f.Stats(); st.SubFilters < 2 || st.N != 5000 || st.Capacity <= 1000 {
			t.Fatalf("after 5000 adds: %+v", st)
		}
		for i := uint64(0); i < 5000; i++ {
			buf = userKey(buf, i)
			if !f.Test(buf) {
				t.Fatalf("key %d lost", i)
			}
		}
	}
	if c := byConfig.Config(); c.Expansion != DefaultExpansion || c.Capacity != 1000 {
		t.Fatalf("Config() = %+v", c)
	}
	if c := fixed.Config(); c.Expansion != NoGrowth {
		t.Fatalf("NoGrowth filter: Config() = %+v", c)
	}
	// Config() round-trips through NewWithConfig to the same shape.
	for _, f := range []*Filter{byConfig, byNP, fixed} {
		g, err := NewWithConfig(f.Config())
		if err != nil || g.Config() != f.Config() {
			t.Fatalf("NewWithConfig(Config()) = %+v, %v; want %+v", g.Config(), err, f.Config())
		}
	}
}

// New reports the n and p it was sized for (Config().Capacity used to read
// 0 after New).
func TestNewReportsCapacityAndP(t *testing.T) {
	f, err := New(1000, 0.001)
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Config(); c.Capacity != 1000 {
		t.Fatalf("Config().Capacity = %d", c.Capacity)
	}
	st := f.Stats()
	if st.Capacity != 1000 || st.P != 0.001 || st.K != 2 || st.N != 0 || st.SetBits != 0 || st.FillRatio != 0 || st.FPR != 0 {
		t.Fatalf("Stats() = %+v", st)
	}
	if st.M != st.Buckets*uint64(st.BucketSize) || st.Bytes != st.M*2 {
		t.Fatalf("Stats() sizes = %+v", st)
	}
	for i := 0; i < 500; i++ {
		if err := f.Add([]byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	st = f.Stats()
	if st.N != 500 || st.SetBits != 500 || st.FillRatio != float64(500)/float64(st.M) || !(st.FPR > 0 && st.FPR < st.P) {
		t.Fatalf("after 500 adds: %+v", st)
	}
	// Decoded filters do not know n and p: Capacity is the first
	// sub-filter's slots and P the full-table rate.
	data, _ := f.MarshalBinary()
	var g Filter
	if err := g.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if gs := g.Stats(); gs.Capacity != gs.M || gs.P != 2*4/65535.0 || gs.N != 500 {
		t.Fatalf("decoded: %+v", gs)
	}
}

// The verbs: TestAndAdd reports Test's answer before and adds only a new
// key; AddMany stops at the first error; TestMany appends; Reset empties.
func TestVerbs(t *testing.T) {
	f, err := NewWithConfig(Config{Buckets: 2, BucketSize: 2, FingerprintBits: 16, Expansion: NoGrowth})
	if err != nil {
		t.Fatal(err)
	}
	if was, err := f.TestAndAdd([]byte("a")); was || err != nil {
		t.Fatalf("first TestAndAdd = %v, %v", was, err)
	}
	if was, err := f.TestAndAdd([]byte("a")); !was || err != nil || f.Count([]byte("a")) != 1 {
		t.Fatalf("second TestAndAdd = %v, %v, count %d", was, err, f.Count([]byte("a")))
	}
	if !f.Remove([]byte("a")) || f.Remove([]byte("a")) || f.Test([]byte("a")) {
		t.Fatal("Remove")
	}
	keys := make([][]byte, 20)
	for i := range keys {
		keys[i] = []byte(fmt.Sprint("k", i))
	}
	err = f.AddMany(keys) // 4 slots: it fills up
	if !errors.Is(err, ErrFull) {
		t.Fatalf("AddMany on a full filter: %v", err)
	}
	n := f.Stats().N
	if n == 0 || n >= 20 {
		t.Fatalf("AddMany added %d keys", n)
	}
	got := f.TestMany(keys[:n], []bool{false})
	if len(got) != int(n)+1 || got[0] {
		t.Fatalf("TestMany did not append: %v", got)
	}
	for i, ok := range got[1:] {
		if !ok {
			t.Fatalf("key %d added by AddMany not found", i)
		}
	}
	g, _ := New(10, 0.01)
	for i := 0; i < 100; i++ {
		g.Add([]byte(fmt.Sprint(i)))
	}
	if g.Stats().SubFilters < 2 {
		t.Fatal("g did not grow")
	}
	g.Reset()
	st := g.Stats()
	if st.N != 0 || st.SetBits != 0 || st.SubFilters != 1 || st.Deletes != 0 || st.Bytes != g.tableBytes(0) {
		t.Fatalf("after Reset: %+v", st)
	}
	h, _ := New(10, 0.01)
	if !g.equal(h) {
		t.Fatal("a reset filter differs from a new one")
	}
	if g.Test([]byte("1")) {
		t.Fatal("a key survived Reset")
	}
}
