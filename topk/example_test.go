package topk_test

import (
	"fmt"

	"github.com/probly/probly/topk"
)

// The three heaviest words of a stream, with their estimated counts.
func ExampleNew() {
	s, err := topk.New(3)
	if err != nil {
		panic(err)
	}
	for _, w := range []string{"to", "be", "or", "not", "to", "be", "that", "is", "the", "question", "to"} {
		s.Add([]byte(w))
	}
	for _, it := range s.List() {
		fmt.Println(string(it.Value), it.Count)
	}
	// Output:
	// to 3
	// be 2
	// question 1
}

// RedisBloom's sizing and decay 1: deterministic, as TOPK.RESERVE k 10 3 1.
func ExampleNewWithConfig() {
	s, err := topk.NewWithConfig(topk.Config{K: 3, Width: 10, Depth: 3, Decay: 1})
	if err != nil {
		panic(err)
	}
	s.AddN([]byte("bar"), 3)
	s.AddN([]byte("baz"), 6)
	s.AddN([]byte("42"), 2)
	s.AddN([]byte("42"), 8)
	expelled, ok := s.AddN([]byte("xyzzy"), 4)
	fmt.Println(string(expelled), ok)
	fmt.Println(s.Query([]byte("xyzzy")), s.Count([]byte("42")))
	// Output:
	// bar true
	// true 10
}

// A sketch survives an encode/decode round trip, generator state included.
func ExampleSketch_MarshalBinary() {
	s, _ := topk.New(2)
	for _, w := range []string{"a", "b", "a", "c", "a", "b"} {
		s.Add([]byte(w))
	}
	b, _ := s.MarshalBinary()
	var t topk.Sketch
	if err := t.UnmarshalBinary(b); err != nil {
		panic(err)
	}
	fmt.Println(t.List())
	// Output: [{[97] 3} {[98] 2}]
}

// Stats reports sizes and the units added.
func ExampleSketch_Stats() {
	s, _ := topk.NewWithConfig(topk.Config{K: 2, Width: 50, Depth: 4, Decay: 0.9})
	s.AddN([]byte("x"), 5)
	st := s.Stats()
	fmt.Println(st.M, st.K, st.Capacity, st.N, st.Heap)
	// Output: 200 4 2 5 1
}
