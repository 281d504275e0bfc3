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
		if err := s.Add(fmt.Appendf(nil, "key-%d", i)); err != nil {
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
	fmt.Println(c.Remove([]byte("temp")), c.Test([]byte("temp")))
	fmt.Println(c.Remove([]byte("temp"))) // no copy left: nothing changes
	// Output:
	// true
	// true false
	// false
}

// TestAndAdd answers "seen before?" and adds in one step: false means the
// key was certainly new.
func ExampleFilter_TestAndAdd() {
	f, _ := bloom.New(1000, 0.01)
	for _, k := range []string{"a", "b", "a"} {
		seen, _ := f.TestAndAdd([]byte(k)) // the error is always nil for a Filter
		fmt.Println(k, seen)
	}
	// Output:
	// a false
	// b false
	// a true
}

// Build a filter from raw parameters with a secret seed, fill it, and
// empty it again with Reset.
func ExampleNewWithConfig() {
	f, err := bloom.NewWithConfig(bloom.Config{M: 1 << 16, K: 5, Seed: 0x5eed})
	if err != nil {
		panic(err)
	}
	_ = f.Add([]byte("x"))
	fmt.Println(f.Test([]byte("x")), f.Stats().N)
	f.Reset()
	st := f.Stats()
	fmt.Println(f.Test([]byte("x")), st.N, st.M, st.K)
	// Output:
	// true 1
	// false 0 65536 5
}

// A Stable filter detects recent duplicates in an unbounded stream: here a
// window of 1,000 adds at 1%. Every key comes twice, 500 adds apart: the
// second copies are reported (all but about 1%), first copies only as
// false positives (about 1%). Old keys are forgotten to keep the memory
// fixed.
func ExampleNewStable() {
	s, err := bloom.NewStable(1000, 0.01)
	if err != nil {
		panic(err)
	}
	var repeats, found, fresh, falsePos int
	for t := range 20_000 {
		id, repeat := t, t/500%2 == 1
		if repeat {
			id = t - 500
		}
		seen, _ := s.TestAndAdd(fmt.Appendf(nil, "event-%d", id))
		switch {
		case repeat:
			repeats++
			if seen {
				found++
			}
		default:
			fresh++
			if seen {
				falsePos++
			}
		}
	}
	fmt.Println(float64(found)/float64(repeats) > 0.97, float64(falsePos)/float64(fresh) < 0.03, s.Stats().P)
	// Output: true true 0.01
}
