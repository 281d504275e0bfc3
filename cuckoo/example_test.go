package cuckoo_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/probly/probly/cuckoo"
)

// Build a filter for 10,000 keys at a 1% false-positive rate, add keys and
// test them.
func ExampleNew() {
	f, err := cuckoo.New(10_000, 0.01)
	if err != nil {
		panic(err)
	}
	for _, k := range []string{"alice", "bob", "carol"} {
		if err := f.Add([]byte(k)); err != nil {
			panic(err)
		}
	}
	fmt.Println(f.Test([]byte("alice")), f.Test([]byte("bob")), f.Test([]byte("mallory")))
	st := f.Stats()
	fmt.Println(st.N, st.Capacity, st.P)
	// Output:
	// true true false
	// 3 10000 0.01
}

// Unlike a Bloom filter, a cuckoo filter removes keys and counts copies.
func ExampleFilter_Remove() {
	f, _ := cuckoo.New(1000, 0.001)
	f.Add([]byte("session-42"))
	f.Add([]byte("session-42"))
	fmt.Println(f.Count([]byte("session-42")))
	fmt.Println(f.Remove([]byte("session-42")), f.Test([]byte("session-42")))
	fmt.Println(f.Remove([]byte("session-42")), f.Test([]byte("session-42")))
	fmt.Println(f.Remove([]byte("session-42")))
	// Output:
	// 2
	// true true
	// true false
	// false
}

// TestAndAdd adds a key only if it is not (maybe) there already.
func ExampleFilter_TestAndAdd() {
	f, _ := cuckoo.New(1000, 0.001)
	for _, k := range []string{"a", "b", "a"} {
		seen, err := f.TestAndAdd([]byte(k))
		if err != nil {
			panic(err)
		}
		fmt.Println(k, seen)
	}
	fmt.Println(f.Stats().N)
	// Output:
	// a false
	// b false
	// a true
	// 2
}

// A filter grows by default; with Expansion NoGrowth a full filter refuses
// the key with ErrFull instead, and loses no other key.
func ExampleNewWithConfig() {
	growing, _ := cuckoo.NewWithConfig(cuckoo.Config{Capacity: 64})
	fixed, _ := cuckoo.NewWithConfig(cuckoo.Config{Capacity: 64, Expansion: cuckoo.NoGrowth})
	var full error
	for i := 0; i < 200; i++ {
		k := []byte(fmt.Sprint("key-", i))
		if err := growing.Add(k); err != nil {
			panic(err)
		}
		if err := fixed.Add(k); err != nil && full == nil {
			full = err
		}
	}
	fmt.Println(growing.Stats().N, growing.Stats().SubFilters > 1)
	fmt.Println(errors.Is(full, cuckoo.ErrFull))
	// Output:
	// 200 true
	// true
}

// Save a filter and load it back; the bytes are specified in
// docs/FORMATS.md.
func ExampleFilter_MarshalBinary() {
	f, _ := cuckoo.New(1000, 0.01)
	f.Add([]byte("saved"))

	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		panic(err)
	}
	var g cuckoo.Filter
	if _, err := g.ReadFrom(&buf); err != nil {
		panic(err)
	}
	fmt.Println(g.Test([]byte("saved")), g.Stats().N)
	// Output: true 1
}
