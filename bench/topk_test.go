package bench

import (
	"math"
	"math/rand"
	"sort"
	"strconv"
	"sync"
	"testing"

	boom "github.com/tylertreat/BoomFilters"

	"github.com/probly/probly/topk"
)

// Top-k: probly's HeavyKeeper (topk.New(k), its default sizing) against
// BoomFilters' TopK (a count-min sketch plus a heap) at equal sketch
// memory: BoomFilters gets ε = e/width and δ = e^-depth, so its count-min
// sketch has probly's width·depth cells of 8 bytes (uint64 counters; probly:
// {fp, count uint32} buckets). Both keep k items in a heap.

const (
	topkStream   = 1 << 20 // items per stream
	topkUniverse = 1 << 20 // Zipf over 0 … 2^20
)

// zipfStream is a Zipf(s) stream of decimal strings, each its own slice
// (BoomFilters keeps the caller's slice in its heap without copying).
func zipfStream(s float64, seed int64) [][]byte {
	z := rand.NewZipf(rand.New(rand.NewSource(seed)), s, 1, topkUniverse)
	out := make([][]byte, topkStream)
	for i := range out {
		out[i] = strconv.AppendUint(nil, z.Uint64(), 10)
	}
	return out
}

var (
	zipfOnce sync.Once
	zipf11   [][]byte
)

func zipf11Stream() [][]byte {
	zipfOnce.Do(func() { zipf11 = zipfStream(1.1, 1) })
	return zipf11
}

type topkImpl struct {
	name string
	// new returns add and the reported top items.
	new func(b testing.TB, k int) (add func([]byte), top func() []string)
}

var topkImpls = []topkImpl{
	{"probly", func(b testing.TB, k int) (func([]byte), func() []string) {
		s, err := topk.New(k)
		if err != nil {
			b.Fatal(err)
		}
		return func(x []byte) { s.Add(x) }, func() []string {
			var out []string
			for _, it := range s.List() {
				out = append(out, string(it.Value))
			}
			return out
		}
	}},
	{"boom", func(b testing.TB, k int) (func([]byte), func() []string) {
		c := probSizing(b, k)
		return boomFuncs(boom.NewTopK(math.E/float64(c.Width), math.Exp(-float64(c.Depth)), uint(k)))
	}},
	// BoomFilters at ε = 0.001, δ = 0.01 (2719 × 5 cells, 108 KiB), more
	// memory than probly's default up to k ≈ 140.
	{"boom-e0.001", func(b testing.TB, k int) (func([]byte), func() []string) {
		return boomFuncs(boom.NewTopK(0.001, 0.01, uint(k)))
	}},
}

func boomFuncs(t *boom.TopK) (func([]byte), func() []string) {
	return func(x []byte) { t.Add(x) }, func() []string {
		var out []string
		for _, e := range t.Elements() {
			out = append(out, string(e.Data))
		}
		return out
	}
}

func probSizing(b testing.TB, k int) topk.Config {
	s, err := topk.New(k)
	if err != nil {
		b.Fatal(err)
	}
	return s.Config()
}

// BenchmarkTopKAdd: ns per Add of a Zipf(1.1) stream (made before the
// timer), k = 10 and 100, the libraries interleaved over rounds().
func BenchmarkTopKAdd(b *testing.B) {
	stream := zipf11Stream()
	for r := 0; r < rounds(); r++ {
		for _, k := range []int{10, 100} {
			for _, impl := range topkImpls {
				b.Run("k="+strconv.Itoa(k)+"/impl="+impl.name, func(b *testing.B) {
					add, _ := impl.new(b, k)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						add(stream[i%len(stream)])
					}
				})
			}
		}
	}
}

// recallOf returns the fraction of the true top k (items tied with the
// k-th true count all count) that top reports.
func recallOf(stream [][]byte, k int, top []string) float64 {
	truth := map[string]int{}
	for _, x := range stream {
		truth[string(x)]++
	}
	counts := make([]int, 0, len(truth))
	for _, c := range truth {
		counts = append(counts, c)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(counts)))
	kth := counts[k-1]
	hit := 0
	for _, v := range top {
		if truth[v] >= kth {
			hit++
		}
	}
	return float64(hit) / float64(k)
}

// TestTopKRecall logs each library's recall of the true top k on Zipf
// streams (1.1 and 1.5, three seeds each) at equal memory. It checks only
// probly's promise (≥ 0.95 on Zipf 1.1); the figures go into
// docs/BENCHMARKS.md.
func TestTopKRecall(t *testing.T) {
	for _, s := range []float64{1.1, 1.5} {
		for _, k := range []int{10, 100} {
			sum := map[string]float64{}
			worst := map[string]float64{}
			for _, impl := range topkImpls {
				worst[impl.name] = 1
			}
			for seed := int64(1); seed <= 3; seed++ {
				stream := zipfStream(s, seed)
				for _, impl := range topkImpls {
					add, top := impl.new(t, k)
					for _, x := range stream {
						add(x)
					}
					r := recallOf(stream, k, top())
					sum[impl.name] += r
					worst[impl.name] = min(worst[impl.name], r)
				}
			}
			for _, impl := range topkImpls {
				t.Logf("zipf %.1f k %3d %-12s recall mean %.3f min %.3f", s, k, impl.name, sum[impl.name]/3, worst[impl.name])
			}
			if s == 1.1 && worst["probly"] < 0.95 {
				t.Errorf("probly recall %.3f < 0.95 on zipf 1.1, k %d", worst["probly"], k)
			}
		}
	}
}
