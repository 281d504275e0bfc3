package cf

import (
	"strings"
	"testing"

	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/rediscuckoo"
)

const oomReply = commandtest.OOMReply

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
