package cf

import (
	"fmt"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/rediscuckoo"
)

const oomReply = "-" + command.ErrOOM + "\r\n"

// runReserve runs one command with a Ctx.ReserveMem that admits
// reservations while their sum stays within room, and returns the reply
// and the bytes asked for.
func (e *env) runReserve(replay bool, room uint64, args ...string) (reply string, asked uint64) {
	reply, _ = commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv(args...), commandtest.Replay(replay),
		commandtest.ReserveMem(func(n uint64) bool { asked += n; return asked <= room }))
	return reply, asked
}

// state describes key's value for before/after comparisons.
func (e *env) state(key string) string {
	out := "<missing>"
	e.store.View([]byte(key), func(v keyspace.Value) {
		if v != nil {
			out = fmt.Sprintf("%s/%d", v.TypeName(), v.MemoryUsage())
		}
	})
	return out
}

// checkReserve runs args first with every reservation refused: a command
// that creates a filter must answer OOM and change and log nothing. Then
// (or if it reserved nothing) it must succeed with want, and what it
// reserved must be exactly the growth of Store.Used.
func (e *env) checkReserve(t *testing.T, want string, args ...string) {
	t.Helper()
	used, recs, st := e.store.Used(), len(e.log.Records()), e.state(args[1])
	got, asked := e.runReserve(false, 0, args...)
	if got == oomReply {
		if e.store.Used() != used || len(e.log.Records()) != recs || e.state(args[1]) != st {
			t.Fatalf("%s refused but changed something", args[0])
		}
		got, asked = e.runReserve(false, ^uint64(0), args...)
	} else if asked != 0 {
		t.Fatalf("%s asked for %d bytes, was refused, and answered %q", args[0], asked, got)
	}
	if got != want {
		t.Fatalf("%s = %q, want %q", args[0], got, want)
	}
	grew := int64(e.store.Used() - used)
	if grew > 0 && uint64(grew) != asked || grew <= 0 && asked != 0 {
		t.Fatalf("%s reserved %d bytes, Used grew by %d", args[0], asked, grew)
	}
	if got, want := e.store.Used(), e.store.MemoryUsage(); got != want {
		t.Fatalf("Used %d, MemoryUsage %d", got, want)
	}
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
