package hll

import (
	"bytes"
	"strconv"
	"testing"
)

// The zero Sketch is an empty sketch of DefaultPrecision: every method
// gives what it gives on New(DefaultPrecision), byte for byte.
func TestZeroSketch(t *testing.T) {
	fresh := func() *Sketch {
		s, err := New(DefaultPrecision)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	same := func(what string, z, n *Sketch) {
		t.Helper()
		zb, err1 := z.MarshalBinary()
		nb, err2 := n.MarshalBinary()
		if err1 != nil || err2 != nil || !bytes.Equal(zb, nb) || z.Count() != n.Count() ||
			z.Stats().Precision != n.Stats().Precision || z.Stats() != n.Stats() || !bytes.Equal(z.Registers(), n.Registers()) {
			t.Fatalf("%s: the zero Sketch differs from New(DefaultPrecision)", what)
		}
	}
	// Reads on a zero value.
	if (&Sketch{}).Stats().Precision != DefaultPrecision || (&Sketch{}).Count() != 0 || len((&Sketch{}).Registers()) != 1<<DefaultPrecision {
		t.Fatal("zero Sketch reads")
	}
	if st := (&Sketch{}).Stats(); st != fresh().Stats() {
		t.Fatalf("zero Sketch Stats %+v", st)
	}
	same("empty", &Sketch{}, fresh())
	var buf bytes.Buffer
	if _, err := (&Sketch{}).WriteTo(&buf); err != nil || buf.Len() == 0 {
		t.Fatalf("WriteTo: %v", err)
	}
	// Adds (the first through Add and AddHash), sparse then dense.
	for _, first := range []func(s *Sketch) bool{
		func(s *Sketch) bool { return s.Add([]byte("a")) },
		func(s *Sketch) bool { return s.AddHash(Hash([]byte("a"))) },
	} {
		var z Sketch
		n := fresh()
		if first(&z) != first(n) {
			t.Fatal("first add differs")
		}
		for i := range 5000 {
			e := []byte("user-" + strconv.Itoa(i))
			if z.Add(e) != n.Add(e) {
				t.Fatalf("add %d differs", i)
			}
			if i == 10 {
				same("sparse", &z, n)
			}
		}
		same("dense", &z, n)
	}
	// Reset on a zero value gives the same empty sketch as New, and
	// NewWithConfig(Config{}) is New(DefaultPrecision).
	var z Sketch
	z.Reset()
	n := fresh()
	same("reset zero", &z, n)
	cfg, err := NewWithConfig(Config{})
	if err != nil {
		t.Fatal(err)
	}
	same("zero config", cfg, n)
	// Merge with zero sketches on either side, and Clone of one.
	full := fresh()
	for i := range 100 {
		full.Add([]byte(strconv.Itoa(i)))
	}
	var into Sketch
	if err := into.Merge(full); err != nil {
		t.Fatal(err)
	}
	ref := fresh()
	_ = ref.Merge(full)
	same("merge into zero", &into, ref)
	m := full.Clone()
	if err := m.Merge(&Sketch{}); err != nil {
		t.Fatal(err)
	}
	ref = full.Clone()
	_ = ref.Merge(fresh())
	same("merge zero into", m, ref)
	p8, _ := New(8)
	if err := p8.Merge(&Sketch{}); err == nil {
		t.Fatal("merging a zero (precision 14) Sketch into precision 8 succeeded")
	}
	c := (&Sketch{}).Clone()
	c.Add([]byte("a"))
	r := fresh()
	r.Add([]byte("a"))
	same("clone of zero", c, r)
}
