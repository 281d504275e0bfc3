package rediscuckoo

import (
	"encoding/binary"
	"runtime"
	"strconv"
	"testing"
)

// growingItem returns, for a filter built like f, the index of the first
// item "item-<i>" (i ≥ from) whose insert adds a sub-filter, inserting the
// ones before it into f.
func growingItem(t testing.TB, f *Filter, from int) int {
	t.Helper()
	for i := from; ; i++ {
		probe := f.CloneFilter()
		item := []byte("item-" + strconv.Itoa(i))
		if err := probe.Insert(item); err != nil {
			t.Fatal(err)
		}
		if probe.NumFilters() > f.NumFilters() {
			return i
		}
		if err := f.Insert(item); err != nil {
			t.Fatal(err)
		}
	}
}

// InsertReserve asks for exactly the growth of MemoryUsage, only when the
// filter grows, and a refusal changes nothing; the admitted retry gives
// the same filter as a plain insert.
func TestInsertReserve(t *testing.T) {
	p := Params{Capacity: 8, BucketSize: 2, MaxIterations: 20, Expansion: 2}
	f, err := New(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := New(p, 0)
	var asked []uint64
	admit := false
	reserve := func(n uint64) bool { asked = append(asked, n); return admit }
	next := 0
	for f.NumFilters() < 5 {
		// Inserts that fit ask nothing.
		g := growingItem(t, plain, next)
		for i := next; i < g; i++ {
			if err := f.InsertReserve([]byte("item-"+strconv.Itoa(i)), reserve); err != nil || len(asked) != 0 {
				t.Fatalf("item %d: %v, asked %v", i, err, asked)
			}
		}
		item := []byte("item-" + strconv.Itoa(g))
		before, copyOf := f.MemoryUsage(), f.CloneFilter()
		admit = false
		if err := f.InsertReserve(item, reserve); err != ErrOOM || len(asked) != 1 || !f.Equal(copyOf) || f.MemoryUsage() != before {
			t.Fatalf("refused growth: %v, asked %v, changed %v", err, asked, !f.Equal(copyOf))
		}
		if n, err := f.GrowthSize(); err != nil || n != asked[0] {
			t.Fatalf("GrowthSize %d %v, asked %d", n, err, asked[0])
		}
		admit, asked = true, nil
		if err := f.InsertReserve(item, reserve); err != nil || len(asked) != 1 || f.MemoryUsage()-before != asked[0] {
			t.Fatalf("admitted growth: %v, asked %v, grew %d", err, asked, f.MemoryUsage()-before)
		}
		if err := plain.Insert(item); err != nil || !f.Equal(plain) {
			t.Fatalf("the reserved insert differs from a plain one: %v", err)
		}
		asked, next = nil, g+1
	}
	// NX of a present item asks nothing; a filter that never grows
	// answers ErrFull without asking.
	if ok, err := f.InsertNXReserve([]byte("item-0"), reserve); ok || err != nil || len(asked) != 0 {
		t.Fatalf("NX of a present item: %v %v, asked %v", ok, err, asked)
	}
	ng, _ := New(Params{Capacity: 2, BucketSize: 1, MaxIterations: 5, Expansion: 0}, 0)
	var ferr error
	for i := 0; ferr == nil && i < 100; i++ {
		ferr = ng.InsertReserve([]byte(strconv.Itoa(i)), reserve)
	}
	if ferr != ErrFull || len(asked) != 0 {
		t.Fatalf("non-growing filter: %v, asked %v", ferr, asked)
	}
	// Compaction that releases sub-filters lowers MemoryUsage to what a
	// recount gives.
	f.Compact()
	if got, want := f.MemoryUsage(), wrap(f.Cuckoo().Clone(), 0).MemoryUsage(); got != want {
		t.Fatalf("after Compact: MemoryUsage %d, recount %d", got, want)
	}
}

// Growth past the budget (on MemoryUsage, not only the tables) fails with
// ErrInsufficientMemory and leaves the filter as it was.
func TestGrowthBudget(t *testing.T) {
	p := Params{Capacity: 64, BucketSize: 2, MaxIterations: 20, Expansion: 1}
	first, ok := NewMemoryUsage(p, 0)
	if !ok {
		t.Fatal("NewMemoryUsage failed")
	}
	// Room for the first sub-filter and less than a second one, although
	// the tables of two (2·64 bytes) would fit.
	budget := first + 64
	f, err := New(p, budget)
	if err != nil {
		t.Fatal(err)
	}
	var gerr error
	for i := 0; gerr == nil && i < 1000; i++ {
		copyOf := f.CloneFilter()
		if gerr = f.Insert([]byte(strconv.Itoa(i))); gerr != nil && !f.Equal(copyOf) {
			t.Fatal("failed growth changed the filter")
		}
	}
	if gerr != ErrInsufficientMemory || f.NumFilters() != 1 || f.MemoryUsage() > budget {
		t.Fatalf("growth: %v, %d sub-filters, MemoryUsage %d budget %d", gerr, f.NumFilters(), f.MemoryUsage(), budget)
	}
}

// A header declaring more sub-filters than the budget holds is refused,
// and MemoryUsage never counts less than the live heap a filter holds,
// nor more than twice it (65536 one-byte sub-filters, the worst case: each
// sub-filter's slot is charged twice for append's spare capacity, and a
// 1-byte table at its 8-byte size class).
func TestMemoryUsageMatchesHeap(t *testing.T) {
	le := binary.LittleEndian
	hdr := make([]byte, HeaderSize)
	le.PutUint64(hdr[8:], 1)      // one bucket per sub-filter
	le.PutUint64(hdr[24:], 65536) // sub-filters
	le.PutUint16(hdr[32:], 1)     // bucket size
	le.PutUint16(hdr[34:], 20)
	le.PutUint16(hdr[36:], 1) // expansion 1: all equal
	if n, ok := HeaderMemoryUsage(hdr, MaxMaxExpansions, 65536*8); ok {
		t.Fatalf("65536 one-byte sub-filters admitted in a budget of 512 KiB at %d bytes", n)
	}
	if _, err := DecodeHeader(hdr, MaxMaxExpansions, 65536*8); err != ErrBadHeader {
		t.Fatalf("DecodeHeader: %v", err)
	}
	if raceEnabled {
		t.Skip("the race detector changes how objects are allocated")
	}
	cases := map[string]func() *Filter{
		"one large table": func() *Filter {
			f, err := New(Params{Capacity: 1 << 20, BucketSize: 2, MaxIterations: 20, Expansion: 1}, 0)
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
		"65536 loaded sub-filters": func() *Filter {
			f, err := DecodeHeader(hdr, MaxMaxExpansions, 0)
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
		"grown to 32 sub-filters": func() *Filter {
			f, _ := New(Params{Capacity: 4, BucketSize: 2, MaxIterations: 20, Expansion: 1}, 0)
			for i := 0; f.NumFilters() < 32; i++ {
				if err := f.Insert([]byte(strconv.Itoa(i))); err != nil {
					t.Fatal(err)
				}
			}
			return f
		},
	}
	for name, build := range cases {
		copies := 4 // measured together, so that unrelated allocations weigh less
		if name == "grown to 32 sub-filters" {
			copies = 256
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		fs := make([]*Filter, copies)
		for i := range fs {
			fs[i] = build()
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(fs)
		per := (after.HeapAlloc - before.HeapAlloc) / uint64(copies)
		mu := fs[0].MemoryUsage()
		t.Logf("%s: %d sub-filters, MemoryUsage %d, live heap %d (%.2f×)", name, fs[0].NumFilters(), mu, per, float64(mu)/float64(per))
		if mu+4096 < per || // 4 KiB of slack: unrelated allocations in the heap growth
			float64(mu) > 2*float64(per)+4096 {
			t.Errorf("%s: MemoryUsage %d, live heap %d", name, mu, per)
		}
	}
}
