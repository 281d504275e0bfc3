package cuckoo

import (
	"bytes"
	"testing"
)

// Every method of the zero Filter that needs the tables panics with a
// message naming the constructors; Config returns the zero Config;
// decoding into a zero Filter works.
func TestZeroFilter(t *testing.T) {
	key := []byte("k")
	ok, err := New(1000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(f *Filter){
		"Insert": func(f *Filter) { _ = f.Add(key) }, "InsertString": func(f *Filter) { _ = f.Add([]byte("k")) },
		"InsertHash": func(f *Filter) { _ = f.AddHash(1) }, "InsertUnique": func(f *Filter) { _, _ = f.TestAndAdd(key) },
		"InsertUniqueHash": func(f *Filter) { _, _ = f.TestAndAddHash(1) },
		"Lookup":           func(f *Filter) { f.Test(key) }, "LookupString": func(f *Filter) { f.Test([]byte("k")) },
		"LookupHash": func(f *Filter) { f.TestHash(1) }, "LookupMany": func(f *Filter) { f.TestMany([][]byte{key}, nil) },
		"Count": func(f *Filter) { f.Count(key) }, "CountHash": func(f *Filter) { f.CountHash(1) },
		"Delete": func(f *Filter) { f.Remove(key) }, "DeleteString": func(f *Filter) { f.Remove([]byte("k")) },
		"DeleteHash": func(f *Filter) { f.RemoveHash(1) }, "Compact": func(f *Filter) { f.Compact() },
		"CompactNewest": func(f *Filter) { f.compact(true) }, "SubFilters": func(f *Filter) { f.subFilters() },
		"SubFilterBuckets": func(f *Filter) { f.subFilterBuckets(0) }, "TableBytes": func(f *Filter) { f.tableBytes(0) },
		"Stats":        func(f *Filter) { f.Stats() },
		"Reset":        func(f *Filter) { f.Reset() },
		"AddMany":      func(f *Filter) { _ = f.AddMany([][]byte{key}) },
		"ReadTableAt":  func(f *Filter) { f.readTableAt(0, make([]byte, 1), 0) },
		"WriteTableAt": func(f *Filter) { _ = f.writeTableAt(0, []byte{1}, 0) },
		"Clone":        func(f *Filter) { f.Clone() }, "Equal": func(f *Filter) { f.equal(new(Filter)) },
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
	if z.Config() != (Config{}) {
		t.Fatal("zero Filter getters")
	}
	if ok.equal(&z) || z.equal(ok) {
		t.Fatal("a zero Filter equals a real one")
	}
	if err := ok.Add(key); err != nil {
		t.Fatal(err)
	}
	data, _ := ok.MarshalBinary()
	if err := z.UnmarshalBinary(data); err != nil || !z.Test(key) {
		t.Fatalf("UnmarshalBinary into a zero Filter: %v", err)
	}
}
