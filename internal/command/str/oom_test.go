package str

import (
	"strings"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
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

// short renders args for messages, long ones abbreviated.
func short(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if len(a) > 20 {
			a = a[:8] + "…"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// checkReserve runs args first with every reservation refused: a command
// that grows the key space must answer OOM and change and log nothing.
// Then (or if it reserved nothing) it must succeed with want, and what it
// reserved must be exactly the growth of Store.Used.
func (e *env) checkReserve(t *testing.T, want string, args ...string) {
	t.Helper()
	used, recs, val := e.store.Used(), len(e.log.Records()), e.value(args[1])
	got, asked := e.runReserve(false, 0, args...)
	if got == oomReply {
		if e.store.Used() != used || len(e.log.Records()) != recs || e.value(args[1]) != val {
			t.Fatalf("%s refused but changed something", short(args))
		}
		got, asked = e.runReserve(false, ^uint64(0), args...)
	} else if asked != 0 {
		t.Fatalf("%s asked for %d bytes, was refused, and answered %q", short(args), asked, got)
	}
	if got != want {
		t.Fatalf("%s = %q, want %q", short(args), got, want)
	}
	grew := int64(e.store.Used() - used)
	if grew > 0 && uint64(grew) != asked || grew <= 0 && asked != 0 {
		t.Fatalf("%s reserved %d bytes, Used grew by %d", short(args), asked, grew)
	}
	if got, want := e.store.Used(), e.store.MemoryUsage(); got != want {
		t.Fatalf("Used %d, MemoryUsage %d", got, want)
	}
}

// SET, APPEND and SETRANGE reserve exactly the memory they add before
// adding it, and change nothing when refused.
func TestReserveStrings(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("x", 5000)
	e.checkReserve(t, "+OK\r\n", "SET", "k", big)
	e.checkReserve(t, ":10000\r\n", "APPEND", "k", big)
	e.checkReserve(t, ":5000\r\n", "APPEND", "a", big)
	e.checkReserve(t, ":100001\r\n", "SETRANGE", "k", "100000", "y")
	e.checkReserve(t, ":100002\r\n", "APPEND", "k", "z") // within the preallocated room
	e.checkReserve(t, ":70001\r\n", "SETRANGE", "r", "70000", "y")
	e.checkReserve(t, ":70001\r\n", "SETRANGE", "r", "5", "y")
	e.checkReserve(t, "+OK\r\n", "SET", "k", "small") // shrinks
	e.checkReserve(t, "+OK\r\n", "SET", "k", big)
	e.checkReserve(t, "$-1\r\n", "SET", "k", big+big, "NX") // not set
	e.checkReserve(t, "$-1\r\n", "SET", "new", big, "XX")   // not set
	e.checkReserve(t, "$-1\r\n", "GET", "new")
}

// Replayed records are not subject to maxmemory: they were accepted when
// they were written.
func TestReserveReplay(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"SET", "a", "v"}, {"APPEND", "b", "v"}, {"APPEND", "a", "vv"}, {"SETRANGE", "c", "100000", "v"}} {
		if got, asked := e.runReserve(true, 0, args...); strings.HasPrefix(got, "-") || asked != 0 {
			t.Fatalf("replayed %q = %q (asked %d)", args, got, asked)
		}
	}
	if got := e.value("c"); len(got) != 100001 {
		t.Fatalf("c has %d bytes", len(got))
	}
}
