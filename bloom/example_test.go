package bloom_test

import (
	"bytes"
	"fmt"

	"github.com/probly/probly/bloom"
)

// Build a filter for 1,000 keys at a 1% false-positive rate, add keys and
// test them.
func Example() {
	f, err := bloom.New(1000, 0.01)
	if err != nil {
		panic(err)
	}
	f.Add([]byte("alice"))
	f.Add([]byte("bob"))
	fmt.Println(f.Test([]byte("alice")), f.Test([]byte("bob")))
	st := f.Stats()
	fmt.Println("bits:", st.M, "hashes:", st.K, "items:", st.N)
	// Output:
	// true true
	// bits: 9586 hashes: 7 items: 2
}

// Merge two filters built with the same parameters: the union tests
// positive for the keys of both.
func ExampleFilter_Merge() {
	a, _ := bloom.New(1000, 0.01)
	b, _ := bloom.New(1000, 0.01)
	a.Add([]byte("from-a"))
	b.Add([]byte("from-b"))
	if err := a.Merge(b); err != nil {
		panic(err)
	}
	fmt.Println(a.Test([]byte("from-a")), a.Test([]byte("from-b")))
	// Output: true true
}

// Save a filter and load it back: the bytes are the format of
// docs/FORMATS.md.
func ExampleFilter_MarshalBinary() {
	f, _ := bloom.New(1000, 0.01)
	f.Add([]byte("saved"))
	data, err := f.MarshalBinary()
	if err != nil {
		panic(err)
	}
	var g bloom.Filter
	if err := g.UnmarshalBinary(data); err != nil {
		panic(err)
	}
	again, _ := g.MarshalBinary()
	fmt.Println(g.Test([]byte("saved")), bytes.Equal(data, again))
	// Output: true true
}

// A Scalable grows by default: it keeps accepting keys past the capacity
// it was created with, and its false-positive bound holds.
func ExampleScalable() {
	s, err := bloom.NewScalable(100, 0.01)
	if err != nil {
		panic(err)
	}
	for i := range 1000 {
		if _, err := s.Add(fmt.Appendf(nil, "key-%d", i)); err != nil {
			panic(err)
		}
	}
	st := s.Stats()
	fmt.Println(s.Test([]byte("key-999")), st.Capacity >= 1000)
	// Output: true true
}

// A Counting filter removes keys.
func ExampleCounting_Remove() {
	c, _ := bloom.NewCounting(1000, 0.01)
	c.Add([]byte("temp"))
	fmt.Println(c.Test([]byte("temp")))
	if err := c.Remove([]byte("temp")); err != nil {
		panic(err)
	}
	fmt.Println(c.Test([]byte("temp")))
	// Output:
	// true
	// false
}
