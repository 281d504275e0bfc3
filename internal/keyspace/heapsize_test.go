package keyspace

import (
	"math"
	"runtime"
	"testing"
)

// HeapSize agrees with what the heap really spends: allocating many
// slices of n bytes grows HeapAlloc by HeapSize(n) each (within 2 %; below
// 16 bytes the runtime packs tiny objects together, so HeapSize is then
// an upper bound).
func TestHeapSizeMatchesHeap(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes how small objects are allocated")
	}
	for _, n := range []uint64{1, 8, 15, 16, 17, 72, 100, 1000, 1793, 5000, 32768, 32769, 40000, 100000} {
		count := 4000
		if n > 10000 {
			count = 400
		}
		hs := float64(HeapSize(n))
		// Other goroutines of the process (the runtime, tests of this
		// package running in parallel) allocate and free too, so one
		// measurement can be off: the size holds if any of three clean
		// measurements matches.
		var got []float64
		ok := false
		for range 3 {
			per := heapPer(n, count)
			got = append(got, per)
			if per <= hs*1.02+1 && (n < 16 || per >= hs*0.98) {
				ok = true
				break
			}
		}
		if !ok {
			t.Errorf("n=%d: %v heap bytes per allocation in three tries, HeapSize %v", n, got, hs)
		}
	}
}

// heapPer is the HeapAlloc growth per allocation of count n-byte slices.
func heapPer(n uint64, count int) float64 {
	keep := make([][]byte, count)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range keep {
		keep[i] = make([]byte, n)
	}
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(count)
}

func TestHeapSizeShape(t *testing.T) {
	if HeapSize(0) != 0 {
		t.Fatal("HeapSize(0) != 0")
	}
	prev := uint64(0)
	for n := uint64(1); n <= 70000; n++ {
		h := HeapSize(n)
		if h < n || h < prev || (n <= maxSmallAlloc && h > n+n/4+8) || (n > maxSmallAlloc && (h%pageSize != 0 || h >= n+pageSize)) {
			t.Fatalf("HeapSize(%d) = %d (previous %d)", n, h, prev)
		}
		prev = h
	}
	if HeapSize(math.MaxUint64) != math.MaxUint64 || HeapSize(math.MaxUint64-pageSize) != math.MaxUint64&^(pageSize-1) || HeapSize(math.MaxUint64&^(pageSize-1)+1) != math.MaxUint64 ||
		HeapSize(math.MaxUint64&^(pageSize-1)) != math.MaxUint64&^(pageSize-1) {
		t.Fatal("HeapSize does not saturate")
	}
}
