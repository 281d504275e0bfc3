package cuckoo

import (
	"bytes"
	"testing"
)

// Every method of the zero Filter that needs the tables panics with a
// message naming the constructors; the counters and parameters return
// zeros; decoding into a zero Filter works.
func TestZeroFilter(t *testing.T) {
	key := []byte("k")
	ok, err := New(1000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(f *Filter){
		"Insert": func(f *Filter) { _ = f.Insert(key) }, "InsertString": func(f *Filter) { _ = f.InsertString("k") },
		"InsertHash": func(f *Filter) { _ = f.InsertHash(1) }, "InsertUnique": func(f *Filter) { _, _ = f.InsertUnique(key) },
		"InsertUniqueHash": func(f *Filter) { _, _ = f.InsertUniqueHash(1) },
		"Lookup":           func(f *Filter) { f.Lookup(key) }, "LookupString": func(f *Filter) { f.LookupString("k") },
		"LookupHash": func(f *Filter) { f.LookupHash(1) }, "LookupMany": func(f *Filter) { f.LookupMany([][]byte{key}, nil) },
		"Count": func(f *Filter) { f.Count(key) }, "CountHash": func(f *Filter) { f.CountHash(1) },
		"Delete": func(f *Filter) { f.Delete(key) }, "DeleteString": func(f *Filter) { f.DeleteString("k") },
		"DeleteHash": func(f *Filter) { f.DeleteHash(1) }, "Compact": func(f *Filter) { f.Compact() },
		"CompactNewest": func(f *Filter) { f.CompactNewest() }, "SubFilters": func(f *Filter) { f.SubFilters() },
		"SubFilterBuckets": func(f *Filter) { f.SubFilterBuckets(0) }, "TableBytes": func(f *Filter) { f.TableBytes(0) },
		"Stats":        func(f *Filter) { f.Stats() },
		"ReadTableAt":  func(f *Filter) { f.ReadTableAt(0, make([]byte, 1), 0) },
		"WriteTableAt": func(f *Filter) { _ = f.WriteTableAt(0, []byte{1}, 0) },
		"Clone":        func(f *Filter) { f.Clone() }, "Equal": func(f *Filter) { f.Equal(new(Filter)) },
		"MarshalBinary": func(f *Filter) { _, _ = f.MarshalBinary() },
		"AppendBinary":  func(f *Filter) { _, _ = f.AppendBinary(nil) },
		"WriteTo":       func(f *Filter) { _, _ = f.WriteTo(&bytes.Buffer{}) },
	}
	for name, c := range cases {
		func() {
			defer func() {
				if r := recover(); r != zeroFilter {
					t.Errorf("%s on the zero Filter: panic %v, want %q", name, r, zeroFilter)
				}
			}()
			c(new(Filter))
		}()
	}
	var z Filter
	if z.Items() != 0 || z.Deletes() != 0 || z.SizeBytes() != 0 || z.Config() != (Config{}) || z.HashID() != 0 {
		t.Fatal("zero Filter getters")
	}
	if ok.Equal(&z) || z.Equal(ok) {
		t.Fatal("a zero Filter equals a real one")
	}
	if err := ok.Insert(key); err != nil {
		t.Fatal(err)
	}
	data, _ := ok.MarshalBinary()
	if err := z.UnmarshalBinary(data); err != nil || !z.Lookup(key) {
		t.Fatalf("UnmarshalBinary into a zero Filter: %v", err)
	}
}
