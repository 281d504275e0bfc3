package tdigest_test

import (
	"fmt"

	"github.com/probly/probly/tdigest"
)

// Latency percentiles of a stream: the p50 and p99 of 1 … 10000 ms.
func ExampleNew() {
	d, err := tdigest.New(tdigest.DefaultCompression)
	if err != nil {
		panic(err)
	}
	for ms := 1; ms <= 10000; ms++ {
		if err := d.Add(float64(ms)); err != nil {
			panic(err)
		}
	}
	fmt.Printf("p50 %.0f ms, p99 %.0f ms, max %.0f ms\n", d.Quantile(0.5), d.Quantile(0.99), d.Max())
	// Output: p50 5000 ms, p99 9900 ms, max 10000 ms
}

// Ranks and the CDF of a small digest (exact while every value is its own
// centroid).
func ExampleDigest_Rank() {
	d, _ := tdigest.New(1000)
	for _, v := range []float64{1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5} {
		d.Add(v)
	}
	fmt.Println(d.Rank(3), d.RevRank(3), d.CDF(3), d.ByRank(0), d.ByRevRank(0))
	fmt.Println(d.Quantiles(nil, 0.1, 0.5, 0.9))
	fmt.Println(d.TrimmedMean(0.1, 0.9))
	// Output:
	// 4 10 0.3 1 5
	// [2 4 5]
	// 3.769230769230769
}

// Merge the digests of two shards into one, at a chosen compression.
func ExampleMergeAll() {
	a, _ := tdigest.New(100)
	b, _ := tdigest.New(200)
	for i := 0; i < 1000; i++ {
		a.Add(float64(i))
		b.Add(float64(1000 + i))
	}
	all, err := tdigest.MergeAll(0, a, b) // 0: the largest compression, 200
	if err != nil {
		panic(err)
	}
	fmt.Println(all.Compression(), all.Count(), all.Min(), all.Max())
	fmt.Printf("median ≈ %.0f\n", all.Quantile(0.5))
	// Output:
	// 200 2000 0 1999
	// median ≈ 1000
}

// Persist a digest and restore it: the copy answers bit-identically.
func ExampleDigest_MarshalBinary() {
	d, _ := tdigest.New(100)
	for i := 0; i < 5000; i++ {
		d.Add(float64(i % 97))
	}
	enc, _ := d.MarshalBinary()
	var restored tdigest.Digest
	if err := restored.UnmarshalBinary(enc); err != nil {
		panic(err)
	}
	fmt.Println(restored.Quantile(0.9) == d.Quantile(0.9), restored.Stats().N)
	// Output: true 5000
}
