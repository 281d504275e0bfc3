package bloom

import "testing"

// TestFamilyZeroAllocations: the hot paths of the SBBF, counting and stable
// filters do not allocate (the batch methods given an out slice with
// enough capacity), including the seeded XXH64 path.
func TestFamilyZeroAllocations(t *testing.T) {
	s := mustSBBF(t, 1000, 0.01)
	seeded := mustSBBF(t, 1000, 0.01)
	seeded.setHashSeed(42)
	c := mustCounting(t, 1000, 0.01)
	st := mustStable(t, 10000, 2, 0.01)
	key := []byte("some-key-16bytes")
	skey := "some-key-16bytes"
	h := Hash64(key)
	h1, h2 := Hash(key)
	keys := [][]byte{key, []byte("b"), []byte("c")}
	hs := []uint64{1, 2, 3}
	out := make([]bool, 0, len(keys))
	c.Add(key)
	for name, fn := range map[string]func(){
		"SBBF.Add":          func() { s.Add(key) },
		"SBBF.AddString":    func() { s.addString(skey) },
		"SBBF.AddHash":      func() { s.AddHash(h) },
		"SBBF.Test":         func() { s.Test(key) },
		"SBBF.TestString":   func() { s.testString(skey) },
		"SBBF.TestHash":     func() { s.TestHash(h) },
		"SBBF.TestAndAdd":   func() { s.TestAndAdd(key) },
		"SBBF.AddMany":      func() { s.AddMany(keys) },
		"SBBF.AddHashMany":  func() { s.addHashMany(hs) },
		"SBBF.TestMany":     func() { out = s.TestMany(keys, out) },
		"SBBF.TestHashMany": func() { out = s.testHashMany(hs, out) },
		"SBBF seeded":       func() { seeded.Add(key); seeded.testString(skey) },
		"Counting.Add":      func() { c.Add(key); _ = c.Remove(key) },
		"Counting.Test":     func() { c.Test(key); c.testString(skey); c.Count(key) },
		"Counting.Hash":     func() { c.AddHash(h1, h2); _ = c.RemoveHash(h1, h2); c.TestHash(h1, h2) },
		"Counting.Many":     func() { c.AddMany(keys); out = c.TestMany(keys, out) },
		"Counting.Absent":   func() { _ = c.RemoveHash(12345, 678) },
		"Stable.Add":        func() { st.Add(key); st.addString(skey); st.AddHash(h1, h2) },
		"Stable.Test":       func() { st.Test(key); st.testString(skey); st.TestAndAdd(key) },
	} {
		if n := testing.AllocsPerRun(200, fn); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
}
