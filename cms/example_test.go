package cms_test

import (
	"bytes"
	"fmt"

	"github.com/probly/probly/cms"
)

// Count page views approximately: within ε·N of the truth with
// probability 1 − δ, never below it.
func ExampleNew() {
	s, err := cms.New(0.001, 0.01) // 2719 × 5 counters
	if err != nil {
		panic(err)
	}
	for i := range 10_000 {
		s.Add([]byte(fmt.Sprint("/page/", i%100)))
	}
	s.AddN([]byte("/home"), 5000)
	st := s.Stats()
	fmt.Println(st.Width, st.Depth, st.N)
	est := s.Count([]byte("/home"))
	fmt.Println(est >= 5000, float64(est-5000) <= st.Epsilon*float64(st.N))
	// Output:
	// 2719 5 15000
	// true true
}

// RedisBloom's cells: the same counters as CMS.INITBYDIM k 5 2 followed
// by CMS.INCRBY k a 2147483647 b 10 c 7 d 5 (b and c share their cells).
func ExampleNewWithConfig() {
	s, err := cms.NewWithConfig(cms.Config{Width: 5, Depth: 2, Hash: cms.HashMurmur2})
	if err != nil {
		panic(err)
	}
	for _, kv := range []struct {
		k string
		n uint64
	}{{"a", 2147483647}, {"b", 10}, {"c", 7}, {"d", 5}} {
		fmt.Print(s.AddN([]byte(kv.k), kv.n), " ")
	}
	fmt.Println(s.Count([]byte("b")))
	// Output: 2147483647 10 17 5 17
}

// Subtract yesterday's sketch from a running total with weights 1, −1.
func ExampleSketch_MergeWeighted() {
	total, _ := cms.NewWithConfig(cms.Config{Width: 1000, Depth: 5})
	yesterday, _ := cms.NewWithConfig(cms.Config{Width: 1000, Depth: 5})
	total.AddN([]byte("foo"), 7)
	yesterday.AddN([]byte("foo"), 3)
	if err := total.Merge(yesterday); err != nil { // total = 10 foo
		panic(err)
	}
	if err := total.MergeWeighted([]*cms.Sketch{total, yesterday}, []int64{1, -1}); err != nil {
		panic(err)
	}
	fmt.Println(total.Count([]byte("foo")), total.Stats().N)
	// Output: 7 7
}

// Save a sketch and load it back.
func ExampleSketch_MarshalBinary() {
	s, _ := cms.New(0.01, 0.01)
	s.AddN([]byte("x"), 42)
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		panic(err)
	}
	var t cms.Sketch
	if _, err := t.ReadFrom(&buf); err != nil {
		panic(err)
	}
	fmt.Println(t.Count([]byte("x")))
	// Output: 42
}
