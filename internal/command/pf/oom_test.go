package pf

import (
	"bytes"
	"fmt"
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

// checkReserve runs args first with every reservation refused: a command
// that grows the key space must answer OOM and change and log nothing.
// Then (or if it reserved nothing) it must succeed with want, and what it
// reserved must be exactly the growth of Store.Used.
func (e *env) checkReserve(t *testing.T, want string, key string, args ...string) {
	t.Helper()
	used, val := e.store.Used(), e.value(key)
	take(e.log)
	got, asked := e.runReserve(false, 0, args...)
	if got == oomReply {
		if e.store.Used() != used || len(take(e.log)) != 0 || !bytes.Equal(e.value(key), val) {
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

func elems(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// PFADD, PFMERGE and PFDEBUG TODENSE reserve the memory a new or promoted
// HLL adds (a sparse→dense promotion: about 12 KiB) and change nothing
// when refused.
func TestMaxMemoryReserve(t *testing.T) {
	e := newEnv(t)
	e.checkReserve(t, ":1\r\n", "h", "PFADD", "h", "a", "b", "c")
	e.checkReserve(t, ":1\r\n", "h", append([]string{"PFADD", "h"}, elems("x", 5000)...)...) // promotes
	if enc := e.do(2, "PFDEBUG", "ENCODING", "h"); enc != "+dense\r\n" {
		t.Fatalf("encoding %q", enc)
	}
	e.checkReserve(t, ":0\r\n", "h", "PFADD", "h", "a") // dense, unchanged
	e.checkReserve(t, ":1\r\n", "s", "PFADD", "s", "a")
	e.checkReserve(t, "+OK\r\n", "d", "PFMERGE", "d", "h", "s")
	e.checkReserve(t, "+OK\r\n", "s", "PFMERGE", "s", "h") // promotes s in place
	e.checkReserve(t, ":1\r\n", "t", "PFADD", "t", "a")
	e.checkReserve(t, ":1\r\n", "t", "PFDEBUG", "TODENSE", "t")
}

// Replayed records are not subject to maxmemory.
func TestMaxMemoryReplay(t *testing.T) {
	e := newEnv(t)
	args := append([]string{"PFADD", "h"}, elems("x", 5000)...)
	if got, asked := e.runReserve(true, 0, args...); strings.HasPrefix(got, "-") || asked != 0 {
		t.Fatalf("replayed PFADD = %q (asked %d)", got, asked)
	}
}
