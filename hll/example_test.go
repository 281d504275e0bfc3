package hll_test

import (
	"fmt"
	"math"

	"github.com/probly/probly/hll"
)

// Count distinct elements: 100,000 distinct users, each seen three times.
func ExampleNew() {
	s, err := hll.New(hll.DefaultPrecision)
	if err != nil {
		panic(err)
	}
	for round := 0; round < 3; round++ {
		for i := 0; i < 100_000; i++ {
			s.Add([]byte(fmt.Sprint("user-", i)))
		}
	}
	n := s.Count()
	rel := math.Abs(float64(n)-100_000) / 100_000
	fmt.Println(rel < 3*hll.StandardError(hll.DefaultPrecision))
	// Output: true
}

// Merge two sketches: the union counts each element once.
func ExampleSketch_Merge() {
	monday, _ := hll.New(14)
	tuesday, _ := hll.New(14)
	for _, u := range []string{"ann", "bob", "cy"} {
		monday.Add([]byte(u))
	}
	for _, u := range []string{"bob", "cy", "dee", "eve"} {
		tuesday.Add([]byte(u))
	}
	if err := monday.Merge(tuesday); err != nil {
		panic(err)
	}
	fmt.Println(monday.Count())
	// Output: 5
}

// Save a sketch and load it back. At precision 14 the bytes are exactly
// the string Redis keeps for the same PFADDs.
func ExampleSketch_MarshalBinary() {
	s, _ := hll.New(14)
	s.Add([]byte("a"))
	s.Add([]byte("b"))
	s.Add([]byte("c"))
	data, err := s.MarshalBinary()
	if err != nil {
		panic(err)
	}
	var t hll.Sketch
	if err := t.UnmarshalBinary(data); err != nil {
		panic(err)
	}
	fmt.Println(len(data), string(data[:4]), t.Count())
	// Output: 27 HYLL 3
}

// NewWithConfig sets a precision and the sparse limit; Stats reports the
// size and the estimate.
func ExampleNewWithConfig() {
	s, err := hll.NewWithConfig(hll.Config{Precision: 10})
	if err != nil {
		panic(err)
	}
	for i := 0; i < 10; i++ {
		s.Add([]byte{byte(i)})
	}
	st := s.Stats()
	fmt.Println(st.M, st.Sparse, st.Cardinality)
	s.Reset()
	fmt.Println(s.Count())
	// Output:
	// 1024 true 10
	// 0
}
