package rediscuckoo

import "testing"

// NewMemoryUsage and HeaderMemoryUsage agree with the filters New and
// DecodeHeader build, and report failure exactly when they fail.
func TestMemoryUsageBeforeAllocating(t *testing.T) {
	for _, capacity := range []uint64{0, 1, 3, 1000, 123457, 1 << 40} {
		for _, bs := range []uint16{0, 1, 2, 4, 255} {
			for _, x := range []uint16{0, 1, 2, 3, 32768, 40000} {
				for _, budget := range []uint64{0, 4096, 1 << 20} {
					p := Params{Capacity: capacity, BucketSize: bs, MaxIterations: 20, Expansion: x}
					got, ok := NewMemoryUsage(p, budget)
					f, err := New(p, budget)
					if ok != (err == nil) {
						t.Fatalf("%+v budget %d: NewMemoryUsage ok=%v, New error %v", p, budget, ok, err)
					}
					if err != nil {
						continue
					}
					if want := f.MemoryUsage(); got != want {
						t.Fatalf("%+v budget %d: NewMemoryUsage %d, MemoryUsage %d", p, budget, got, want)
					}
					for _, maxFilters := range []int{1, 32} {
						hgot, ok := HeaderMemoryUsage(f.Header(), maxFilters, budget)
						d, err := DecodeHeader(f.Header(), maxFilters, budget)
						if ok != (err == nil) || (ok && hgot != d.MemoryUsage()) {
							t.Fatalf("%+v: HeaderMemoryUsage %d %v, DecodeHeader %v", p, hgot, ok, err)
						}
					}
				}
			}
		}
	}
	// A filter of several sub-filters.
	f, err := New(Params{Capacity: 64, BucketSize: 2, MaxIterations: 20, Expansion: 2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if err := f.Insert([]byte{byte(i), byte(i >> 8)}); err != nil {
			t.Fatal(err)
		}
	}
	if f.NumFilters() < 3 {
		t.Fatalf("%d sub-filters", f.NumFilters())
	}
	got, ok := HeaderMemoryUsage(f.Header(), 32, 0)
	if !ok || got != f.MemoryUsage() {
		t.Fatalf("HeaderMemoryUsage %d %v, MemoryUsage %d", got, ok, f.MemoryUsage())
	}
	if _, ok := HeaderMemoryUsage([]byte("short"), 32, 0); ok {
		t.Fatal("HeaderMemoryUsage accepted a bad header")
	}
}
