package guard_test

import (
	"testing"

	"github.com/probly/probly/guard"
)

// TestAdaptersOnePath: every adapter adds, tests and reports stats the
// same way; exactly the deleting filters implement Deleter, and their
// Delete refuses a key they do not hold.
func TestAdaptersOnePath(t *testing.T) {
	for _, c := range []struct {
		name    string
		nf      guard.NewFilterFunc
		deletes bool
	}{
		{"bloom", guard.NewBloom, false}, {"sbbf", guard.NewSBBF, false}, {"scalable", guard.NewScalable, false},
		{"counting", guard.NewCounting, true}, {"cuckoo", guard.NewCuckoo, true},
	} {
		f, err := c.nf(1000, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		key := []byte("k")
		if f.Test(key) {
			t.Fatalf("%s: empty filter has %q", c.name, key)
		}
		if err := f.Add(key); err != nil || !f.Test(key) {
			t.Fatalf("%s: Add: %v, Test %v", c.name, err, f.Test(key))
		}
		st := f.(guard.StatsReporter).FilterStats()
		if st.Items != 1 || st.Capacity == 0 || st.Bytes == 0 || !(st.FillRatio > 0) || !(st.FPR >= 0 && st.FPR < 0.01) {
			t.Errorf("%s: FilterStats %+v", c.name, st)
		}
		d, ok := f.(guard.Deleter)
		if ok != c.deletes {
			t.Fatalf("%s: Deleter %v, want %v", c.name, ok, c.deletes)
		}
		if !ok {
			continue
		}
		if err := d.Delete(key); err != nil || f.Test(key) {
			t.Errorf("%s: Delete of an added key: %v, still present %v", c.name, err, f.Test(key))
		}
		if err := d.Delete(key); err == nil {
			t.Errorf("%s: Delete of a key no longer held succeeded", c.name)
		}
	}
}
