package redisbloom

import "testing"

// NewMemoryUsage and HeaderMemoryUsage agree with the chains New and
// DecodeHeader build, and report failure exactly when they fail.
func TestNewMemoryUsage(t *testing.T) {
	for _, capacity := range []uint64{1, 2, 7, 100, 1000, 123457, 1 << 20, 1 << 40} {
		for _, er := range []float64{0.25, 0.1, 0.01, 0.001, 1e-6, 1e-30, 1e-200} {
			for _, x := range []uint32{0, 1, 2, 4} {
				for _, ns := range []bool{false, true} {
					for _, budget := range []uint64{0, 4096, 1 << 20} {
						p := Params{ErrorRate: er, Capacity: capacity, Expansion: x, NonScaling: ns}
						got, ok := NewMemoryUsage(p, budget)
						ch, err := New(p, budget)
						if ok != (err == nil) {
							t.Fatalf("%+v budget %d: NewMemoryUsage ok=%v, New error %v", p, budget, ok, err)
						}
						if err != nil {
							continue
						}
						if want := ch.MemoryUsage(); got != want {
							t.Fatalf("%+v budget %d: NewMemoryUsage %d, MemoryUsage %d", p, budget, got, want)
						}
						hdr := ch.Header()
						hgot, ok := HeaderMemoryUsage(hdr, budget)
						dc, err := DecodeHeader(hdr, budget)
						if ok != (err == nil) || (ok && hgot != dc.MemoryUsage()) {
							t.Fatalf("%+v: HeaderMemoryUsage %d %v, DecodeHeader %v", p, hgot, ok, err)
						}
					}
				}
			}
		}
	}
	// A chain of several links.
	ch, err := New(Params{ErrorRate: 0.01, Capacity: 10, Expansion: 2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		if _, err := ch.Add([]byte{byte(i), byte(i >> 8)}); err != nil {
			t.Fatal(err)
		}
	}
	if ch.NumFilters() < 3 {
		t.Fatalf("%d links", ch.NumFilters())
	}
	got, ok := HeaderMemoryUsage(ch.Header(), 0)
	if !ok || got != ch.MemoryUsage() {
		t.Fatalf("HeaderMemoryUsage %d %v, MemoryUsage %d", got, ok, ch.MemoryUsage())
	}
	if _, ok := HeaderMemoryUsage([]byte("short"), 0); ok {
		t.Fatal("HeaderMemoryUsage accepted a bad header")
	}
}
