package app

import (
	"strings"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/keyspace"
)

func args(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, a := range s {
		out[i] = []byte(a)
	}
	return out
}

// TestReplayRefusesUnloggedCommands: a hand-made log record naming a
// command probly never logs (CONFIG, whose subcommands carry the handlers;
// SAVE, an admin command) is a recovery error, not a panic.
func TestReplayRefusesUnloggedCommands(t *testing.T) {
	table, cfg := Tables()
	replay := Replayer(table, cfg, keyspace.New(nil))
	for _, rec := range [][][]byte{
		args("CONFIG", "SET", "dir", "/etc"),
		args("config", "get", "maxmemory"),
		args("SAVE"),
		args("BGSAVE"),
	} {
		err := replay(rec)
		if err == nil || !strings.Contains(err.Error(), "never logged") {
			t.Errorf("replay %q: %v, want a never-logged error", rec, err)
		}
	}
	if err := replay(args("_BF.CREATE", "k", "0.01", "100", "2", "SCALING")); err != nil {
		t.Fatalf("a logged record: %v", err)
	}
}

// TestReplayAllocLimit: a logged filter larger than the memory the process
// can have is a recovery error naming it, where allocating it would be a
// fatal out-of-memory error. Live commands get an error reply the same way
// (command.Ctx.Reserve).
func TestReplayAllocLimit(t *testing.T) {
	old := command.AllocLimit()
	command.SetAllocLimit(1 << 30)
	t.Cleanup(func() { command.SetAllocLimit(old) })
	table, cfg := Tables()
	replay := Replayer(table, cfg, keyspace.New(nil))
	// 1e-155 at 2^30 items: about 100 GB of bits.
	err := replay(args("_BF.CREATE", "k", "1e-155", "1073741824", "0", "NONSCALING"))
	if err == nil || !strings.Contains(err.Error(), "needs more memory than this process can have") {
		t.Fatalf("replay of a 100 GB filter: %v", err)
	}
	c := &command.Ctx{Replay: true}
	if c.Reserve(2<<30) || !c.Reserve(1<<20) {
		t.Fatal("Reserve ignores the allocation limit during replay")
	}
}

// TestReplayErrorInsideArray: a logged record that now fails only in an
// element of its array reply (BF.MADD into a full non-scaling filter: the
// array ends with the error) aborts recovery with that error, as does a
// plain error reply; a record that succeeds does not.
func TestReplayErrorInsideArray(t *testing.T) {
	table, cfg := Tables()
	replay := Replayer(table, cfg, keyspace.New(nil))
	if err := replay(args("_BF.CREATE", "k", "0.01", "2", "0", "NONSCALING")); err != nil {
		t.Fatal(err)
	}
	if err := replay(args("BF.MADD", "k", "a")); err != nil {
		t.Fatalf("a record that fits: %v", err)
	}
	err := replay(args("BF.MADD", "k", "b", "c", "d", "e"))
	if err == nil || !strings.Contains(err.Error(), "non scaling filter is full") {
		t.Fatalf("a record failing inside its array reply: %v", err)
	}
	err = replay(args("PFADD", "k", "x"))
	if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("a record failing with a plain error: %v", err)
	}
	if err := replay(args("nosuch", "k")); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("a record of an unknown command: %v", err)
	}
	if err := replay(args("BF.ADD", "k")); err == nil || !strings.Contains(err.Error(), "wrong number of arguments") {
		t.Fatalf("a record with a wrong argument count: %v", err)
	}
}
