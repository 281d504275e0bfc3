package cf

import (
	"strconv"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/rediscuckoo"
)

func (e *env) runReserve(replay bool, room uint64, args ...string) (reply string, asked uint64) {
	return commandtest.RunReserve(e.tab, e.store, e.cfg, replay, room, args...)
}

func (e *env) checkReserve(t *testing.T, want string, args ...string) {
	t.Helper()
	commandtest.CheckReserve(t, e.tab, e.store, e.cfg, e.log, want, args...)
}

// Every way of creating a filter reserves exactly its memory before
// allocating it, and changes nothing when refused.
func TestMaxMemoryReserve(t *testing.T) {
	e := newEnv(t)
	src, err := rediscuckoo.New(rediscuckoo.Params{Capacity: 20000, BucketSize: 2, MaxIterations: 20, Expansion: 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	e.checkReserve(t, "+OK\r\n", "CF.RESERVE", "r", "100000")
	e.checkReserve(t, "-ERR item exists\r\n", "CF.RESERVE", "r", "100000")
	e.checkReserve(t, "+OK\r\n", "CF.RESERVE", "b", "5000", "BUCKETSIZE", "4", "EXPANSION", "0")
	e.checkReserve(t, ":1\r\n", "CF.ADD", "a", "x")
	e.checkReserve(t, ":1\r\n", "CF.ADD", "a", "y") // existing: nothing to reserve
	e.checkReserve(t, ":1\r\n", "CF.ADDNX", "n", "x")
	e.checkReserve(t, "*1\r\n:1\r\n", "CF.INSERT", "i", "CAPACITY", "50000", "ITEMS", "x")
	e.checkReserve(t, "*1\r\n:1\r\n", "CF.INSERTNX", "j", "CAPACITY", "50000", "ITEMS", "x")
	e.checkReserve(t, "+OK\r\n", "CF.LOADCHUNK", "l", "1", string(src.Header()))
	e.checkReserve(t, "+OK\r\n", "_CF.LOADHEADER", "h", string(src.Header()))
	e.checkReserve(t, "+OK\r\n", "_CF.CREATE", "c", "1000", "2", "20", "1")
	if got, _ := e.runReserve(false, 0, "CF.LOADCHUNK", "g", "1", "garbage"); strings.Contains(got, "OOM") {
		t.Fatalf("bad header: %q", got)
	}
}

// Replayed records are not subject to maxmemory.
func TestMaxMemoryReplay(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{
		{"_CF.CREATE", "c", "100000", "2", "20", "1"},
		{"CF.RESERVE", "r", "100000"},
		{"CF.ADD", "m", "x"},
	} {
		if got, asked := e.runReserve(true, 0, args...); strings.HasPrefix(got, "-") || asked != 0 {
			t.Fatalf("replayed %q = %q (asked %d)", args, got, asked)
		}
	}
}

// A CF.ADD / CF.ADDNX that makes the filter grow reserves exactly the new
// sub-filter's memory before allocating it; refused (no room under
// maxmemory), it answers RedisBloom's "ERR Insufficient memory", as for a
// sub-filter over the budget, and changes and logs nothing. CF.INSERT
// answers it for each item that needs the growth.
func TestMaxMemoryReserveGrowth(t *testing.T) {
	e := newEnv(t)
	p := rediscuckoo.Params{Capacity: 8, BucketSize: 2, MaxIterations: 20, Expansion: 4}
	sim, err := rediscuckoo.New(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	// grows returns the first item from i on whose insert adds a
	// sub-filter (and that does not seem present), inserting the ones
	// before it into sim and key.
	grows := func(key string, i int) (int, string) {
		for ; ; i++ {
			item := "item-" + strconv.Itoa(i)
			probe := sim.CloneFilter()
			if err := probe.Insert([]byte(item)); err != nil {
				t.Fatal(err)
			}
			if probe.NumFilters() > sim.NumFilters() {
				if !sim.Exists([]byte(item)) {
					return i, item
				}
				continue // would grow, but CF.ADDNX would not add it
			}
			_ = sim.Insert([]byte(item))
			e.expect(2, ":1\r\n", "CF.ADD", key, item)
		}
	}
	e.expect(2, "+OK\r\n", "CF.RESERVE", "g", "8", "BUCKETSIZE", "2", "MAXITERATIONS", "20", "EXPANSION", "4")
	i, item := grows("g", 0)
	e.checkReserve(t, ":1\r\n", "CF.ADD", "g", item)
	_ = sim.Insert([]byte(item))
	if got := e.do(2, "CF.INFO", "g"); !strings.Contains(got, "+Number of filters\r\n:2\r\n") {
		t.Fatalf("CF.INFO = %q", got)
	}
	i, item = grows("g", i+1)
	e.checkReserve(t, ":1\r\n", "CF.ADDNX", "g", item)
	_ = sim.Insert([]byte(item))
	_, item = grows("g", i+1)
	got, asked := e.runReserve(false, 0, "CF.INSERT", "g", "ITEMS", item, item)
	if want := "*2\r\n" + commandtest.CFNoGrowthReply + commandtest.CFNoGrowthReply; got != want || asked == 0 {
		t.Fatalf("CF.INSERT under a full maxmemory = %q (asked %d), want %q", got, asked, want)
	}
	if got := e.do(2, "CF.INFO", "g"); !strings.Contains(got, "+Number of filters\r\n:3\r\n") {
		t.Fatalf("refused growth added a sub-filter: %q", got)
	}
	// Replayed records are never refused.
	if got, _ := e.runReserve(true, 0, "_CF.ADD", "g", item); got != "+OK\r\n" {
		t.Fatalf("replayed growth = %q", got)
	}
	if got := e.do(2, "CF.INFO", "g"); !strings.Contains(got, "+Number of filters\r\n:4\r\n") {
		t.Fatalf("replayed growth: %q", got)
	}
}
