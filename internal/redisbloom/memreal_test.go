package redisbloom

import (
	"encoding/binary"
	"math"
	"runtime"
	"strconv"
	"testing"
)

// linksHeader returns a valid SCANDUMP header of n empty links of 64 bits
// (8 bytes) each, error 0.5 and one hash: the cheapest link a header can
// declare.
func linksHeader(n int) []byte {
	le := binary.LittleEndian
	b := make([]byte, 0, headerFixed+headerLink*n)
	b = le.AppendUint64(b, 0)
	b = le.AppendUint32(b, uint32(n))
	b = le.AppendUint32(b, OptNoRound|OptForce64)
	b = le.AppendUint32(b, 2)
	for range n {
		b = le.AppendUint64(b, 8)
		b = le.AppendUint64(b, 64)
		b = le.AppendUint64(b, 0)
		b = le.AppendUint64(b, math.Float64bits(0.5))
		b = le.AppendUint64(b, math.Float64bits(1)) // ceil(0.693·1) = 1 hash
		b = le.AppendUint32(b, 1)
		b = le.AppendUint64(b, 1)
		b = append(b, 0)
	}
	return b
}

// heapGrowth returns how many bytes of live heap build's result holds.
func heapGrowth(build func() any) (uint64, any) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	if after.HeapAlloc < before.HeapAlloc {
		return 0, v
	}
	return after.HeapAlloc - before.HeapAlloc, v
}

// The issue-13 header: a million links (53 MB) of 8 bytes each. The
// budget counts their real memory, about 170 MB, so the default 128 MiB
// budget refuses it, before allocating anything per link.
func TestMillionLinkHeaderRefused(t *testing.T) {
	hdr := linksHeader(1_000_000)
	if n, ok := HeaderMemoryUsage(hdr, 0); ok {
		t.Fatalf("HeaderMemoryUsage admitted a million links at %d bytes", n)
	}
	if want := memoryUsage(8_000_000, 1_000_000); want <= DefaultBudget {
		t.Fatalf("a million links counted at %d bytes, within the default budget", want)
	}
	var c *Chain
	var err error
	grew, _ := heapGrowth(func() any {
		c, err = DecodeHeader(hdr, 0)
		return c
	})
	if err != ErrBadData || c != nil {
		t.Fatalf("DecodeHeader: %v", err)
	}
	if allocs := testing.AllocsPerRun(3, func() { _, _ = DecodeHeader(hdr, 0) }); allocs > 2 {
		t.Fatalf("refusing the header made %v allocations", allocs)
	}
	t.Logf("refused; live heap grew by %d bytes", grew)
	// The same links within a budget that holds them are admitted and
	// counted at what they hold.
	n, ok := HeaderMemoryUsage(hdr, 1<<30)
	if !ok || n < 1_000_000*(8+LinkOverhead) {
		t.Fatalf("HeaderMemoryUsage with a 1 GiB budget: %d %v", n, ok)
	}
}

// MemoryUsage never counts less than the live heap a chain holds, and not
// much more (the spare capacity of its slices is charged at its worst):
// for chains with one large link, many grown links, and a hundred
// thousand loaded tiny links.
func TestMemoryUsageMatchesHeap(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes how objects are allocated")
	}
	cases := map[string]func() *Chain{
		"one large link": func() *Chain {
			return mustNew(t, Params{ErrorRate: 0.01, Capacity: 1 << 20, Expansion: 2})
		},
		"grown to 1000 links": func() *Chain {
			c := mustNew(t, Params{ErrorRate: 0.01, Capacity: 1, Expansion: 1})
			for i := 0; c.NumFilters() < 1000; i++ {
				if _, err := c.Add([]byte(strconv.Itoa(i))); err != nil {
					t.Fatal(err)
				}
			}
			return c
		},
		"100000 loaded links": func() *Chain {
			c, err := DecodeHeader(linksHeader(100_000), 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
	}
	const copies = 4 // measured together, so that unrelated allocations weigh less
	for name, build := range cases {
		build() // warms the process-wide cache of logarithms (crlog.go)
		grew, v := heapGrowth(func() any {
			cs := make([]*Chain, copies)
			for i := range cs {
				cs[i] = build()
			}
			return cs
		})
		c := v.([]*Chain)[0]
		mu := c.MemoryUsage()
		per := grew / copies
		t.Logf("%s: %d links, MemoryUsage %d, live heap %d (%.2f×)", name, c.NumFilters(), mu, per, float64(mu)/float64(per))
		// 4 KiB of slack below: the heap growth also holds unrelated
		// allocations of the runtime and of tests running in parallel
		// (seen: 1,178 bytes per copy over a 1.45 MB filter).
		if mu+4096 < per || float64(mu) > 1.5*float64(per)+4096 {
			t.Errorf("%s: MemoryUsage %d, live heap %d", name, mu, per)
		}
	}
}

// AddReserve asks for exactly the growth of MemoryUsage, only when the
// chain grows, and a refusal changes nothing.
func TestAddReserve(t *testing.T) {
	c := mustNew(t, Params{ErrorRate: 0.01, Capacity: 10, Expansion: 4})
	var asked []uint64
	admit := true
	reserve := func(n uint64) bool { asked = append(asked, n); return admit }
	refused := 0
	for i := 0; c.NumFilters() < 5; i++ {
		item := []byte("item-" + strconv.Itoa(i))
		before, links, copyOf := c.MemoryUsage(), c.NumFilters(), c.CloneChain()
		// First with every reservation refused: an add that needs a link
		// gets ErrOOM and changes nothing.
		admit = false
		added, err := c.AddReserve(item, reserve)
		if err == ErrOOM {
			refused++
			if len(asked) != 1 || added || !c.Equal(copyOf) || c.MemoryUsage() != before || c.NumFilters() != links {
				t.Fatalf("refused growth changed the chain or asked %v", asked)
			}
			if n, err := c.GrowthSize(); err != nil || n != asked[0] {
				t.Fatalf("GrowthSize %d %v, asked %d", n, err, asked[0])
			}
			admit, asked = true, nil
			added, err = c.AddReserve(item, reserve)
			if err != nil || !added || c.NumFilters() != links+1 || len(asked) != 1 || asked[0] != c.MemoryUsage()-before {
				t.Fatalf("admitted growth: %v %v, %d links, asked %v, grew %d", added, err, c.NumFilters(), asked, c.MemoryUsage()-before)
			}
		} else if err != nil {
			t.Fatal(err)
		} else if len(asked) != 0 || c.NumFilters() != links || c.MemoryUsage() != before {
			t.Fatalf("add without growth asked %v, %d links", asked, c.NumFilters())
		}
		asked = nil
	}
	if refused != 4 {
		t.Fatalf("%d growths refused, want 4", refused)
	}
	// An item already present in a full chain grows nothing and asks
	// nothing; a non-scaling full chain answers ErrFull without asking.
	asked = nil
	if added, err := c.AddReserve([]byte("item-1"), reserve); err != nil || added || len(asked) != 0 {
		t.Fatalf("present item: %v %v, asked %v", added, err, asked)
	}
	ns := mustNew(t, Params{ErrorRate: 0.01, Capacity: 1, NonScaling: true})
	ns.Add([]byte("a"))
	if _, err := ns.AddReserve([]byte("b"), reserve); err != ErrFull || len(asked) != 0 {
		t.Fatalf("non-scaling: %v, asked %v", err, asked)
	}
	if ErrOOM.Error() != "OOM command not allowed when used memory > 'maxmemory'." {
		t.Fatal("ErrOOM is not Redis's reply")
	}
}
