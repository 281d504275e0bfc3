package keyspace

import (
	"math"
	"sort"
	"sync"
)

// HeapSize returns the bytes the Go heap takes for one allocation of n
// bytes of pointer-free memory (a []byte or []uint64 of that size): n
// rounded up to the runtime's size class for n ≤ 32 KiB, or to whole
// 8 KiB pages above that. Values use it in MemoryUsage so that a value
// made of many small allocations (a Bloom chain of a million tiny links)
// is counted at what it really holds, not at the sum of what it asked for.
// HeapSize(0) is 0; n above the last page multiple below 2^64 saturates
// at math.MaxUint64.
//
// The size classes are those of the running Go version, probed once (on
// first use) by letting append round small slices to their class.
// Cost: a binary search over about 70 classes. Safe for concurrent use.
func HeapSize(n uint64) uint64 {
	switch {
	case n == 0:
		return 0
	case n > maxSmallAlloc:
		if n > math.MaxUint64&^(pageSize-1) { // no page multiple ≥ n fits
			return math.MaxUint64
		}
		return (n + pageSize - 1) &^ (pageSize - 1)
	}
	classes := sizeClasses()
	i := sort.Search(len(classes), func(i int) bool { return uint64(classes[i]) >= n })
	if i == len(classes) { // cannot happen: the last class is maxSmallAlloc
		return (n + pageSize - 1) &^ (pageSize - 1)
	}
	return uint64(classes[i])
}

const (
	maxSmallAlloc = 32 << 10 // the runtime's largest size class
	pageSize      = 8 << 10  // the runtime's page size
)

// sizeClasses returns the runtime's size classes up to maxSmallAlloc, in
// increasing order.
var sizeClasses = sync.OnceValue(func() []uint32 {
	var classes []uint32
	for n := 1; n <= maxSmallAlloc; {
		// append to a nil slice allocates exactly the size class of n.
		c := cap(append([]byte(nil), make([]byte, n)...))
		if c < n { // impossible; keep the loop finite regardless
			c = n
		}
		classes = append(classes, uint32(c))
		n = c + 1
	}
	if classes[len(classes)-1] < maxSmallAlloc {
		classes = append(classes, maxSmallAlloc)
	}
	return classes
})
