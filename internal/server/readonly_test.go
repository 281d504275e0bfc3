package server

import (
	"strings"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/keyspace"
)

// Keys of the write-guard tests: the guard owns these five ("absent" is
// owned but does not exist); every other key ("free", "dest") is writable.
var guardedKeys = []string{"bfk", "cfk", "hll", "str", "absent"}

func owns(key []byte) bool {
	for _, k := range guardedKeys {
		if string(key) == k {
			return true
		}
	}
	return false
}

// startGuarded runs a server with the real command families and the
// write guard owns, with bfk (BF), cfk (CF), hll (HLL) and str (string)
// and the writable free (BF) created through the table directly (as the
// follower writes).
func startGuarded(t *testing.T) *env {
	t.Helper()
	e := startFullWith(t, func(o *Options) { o.WriteGuard = owns })
	for _, args := range [][]string{
		{"BF.ADD", "bfk", "a"}, {"BF.ADD", "bfk", "b"},
		{"CF.ADD", "cfk", "a"}, {"CF.ADD", "cfk", "b"},
		{"PFADD", "hll", "a", "b", "c"},
		{"SET", "str", "value"},
		{"BF.ADD", "free", "a"},
	} {
		if r, _ := commandtest.Run(e.srv.Table(), e.store, e.cfg, 2, commandtest.Argv(args...)); r[0] == '-' {
			t.Fatalf("%v: %q", args, r)
		}
	}
	return e
}

// state describes the owned keys' values exactly (the whole filter dumps,
// the strings' bytes) and the number of keys.
func state(t *testing.T, r *raw) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(r.do("DBSIZE"))
	for _, k := range guardedKeys {
		typ := r.do("TYPE", k)
		b.WriteString(k + " " + typ)
		switch typ {
		case "+string\r\n":
			b.WriteString(r.do("GET", k))
		case "+MBbloom--\r\n", "+MBbloomCF\r\n":
			cmd := "BF.SCANDUMP"
			if typ == "+MBbloomCF\r\n" {
				cmd = "CF.SCANDUMP"
			}
			for it, n := "0", 0; ; n++ {
				d := r.do(cmd, k, it)
				b.WriteString(d)
				rest, ok := strings.CutPrefix(d, "*2\r\n:")
				if !ok || n > 1000 {
					t.Fatalf("%s %s %s = %q", cmd, k, it, d)
				}
				it, _, _ = strings.Cut(rest, "\r\n")
				if it == "0" {
					break
				}
			}
		}
	}
	return b.String()
}

const readOnlyReply = "-READONLY You can't write against a read only replica.\r\n"

// refused sends args and asserts the READONLY reply and that nothing was
// logged.
func refused(t *testing.T, e *env, r *raw, args ...string) {
	t.Helper()
	recs := len(e.log.records())
	if got := r.do(args...); got != readOnlyReply {
		t.Errorf("%q = %q, want READONLY", args, got)
	}
	if n := len(e.log.records()); n != recs {
		t.Errorf("%q logged %d records: %q", args, n-recs, e.log.records()[recs:])
	}
}

// TestWriteGuardRefusesWrites: every write command of every family, sent
// to an owned key, is answered READONLY and changes nothing (no log
// record, the owned keys' dumps unchanged); reads of owned keys and
// writes of other keys work.
func TestWriteGuardRefusesWrites(t *testing.T) {
	e := startGuarded(t)
	r := e.raw(t)
	before := state(t, r)

	for _, args := range [][]string{
		{"BF.ADD", "bfk", "x"},
		{"bf.add", "absent", "x"},
		{"BF.MADD", "bfk", "x", "y"},
		{"BF.INSERT", "bfk", "ITEMS", "x"},
		{"BF.INSERT", "absent", "CAPACITY", "10", "ITEMS", "x"},
		{"BF.RESERVE", "bfk", "0.01", "100"},
		{"BF.RESERVE", "absent", "0.01", "100"},
		{"BF.LOADCHUNK", "bfk", "1", "xxxx"},
		{"BF.LOADCHUNK", "absent", "1", "xxxx"},
		{"CF.ADD", "cfk", "x"},
		{"CF.ADDNX", "cfk", "x"},
		{"CF.INSERT", "cfk", "ITEMS", "x"},
		{"CF.INSERTNX", "cfk", "ITEMS", "x"},
		{"CF.DEL", "cfk", "a"},
		{"CF.RESERVE", "cfk", "100"},
		{"CF.RESERVE", "absent", "100"},
		{"CF.LOADCHUNK", "cfk", "1", "xxxx"},
		{"PFADD", "hll", "x"},
		{"PFADD", "absent"},
		{"PFMERGE", "hll", "free"},
		{"PFMERGE", "absent"},
		{"PFDEBUG", "TODENSE", "hll"},
		{"SET", "str", "other"},
		{"SET", "absent", "v", "NX"},
		{"APPEND", "str", "x"},
		{"SETRANGE", "str", "0", "x"},
		{"DEL", "bfk"},
		{"DEL", "free", "cfk"}, // any written key owned: refused whole
		{"UNLINK", "hll"},
		{"CF.COMPACT", "cfk"}, // flagged readonly (as RedisBloom does), but mutates
		{"UNLINK", "free", "str"},
		{"FLUSHALL"},
		{"FLUSHALL", "ASYNC"},
		{"FLUSHDB"},
		{"flushdb", "SYNC"},
	} {
		refused(t, e, r, args...)
	}

	// Every write command in the table, with an owned key in each
	// position it writes (or none, for commands that name no key), so that
	// a write command added later cannot slip through.
	n := 0
	for _, top := range e.srv.Table().Public() {
		specs := []*command.Spec{top}
		if len(top.Subcommands) > 0 {
			specs = top.Subcommands
		}
		for _, s := range specs {
			if !s.Writes() {
				continue
			}
			argc := s.Arity
			if argc < 0 {
				argc = -argc
			}
			args := strings.Split(s.Name, "|")
			for len(args) < argc {
				args = append(args, "x")
			}
			first, last, step := s.WriteRange(argc)
			for i := first; first > 0 && i <= last; i += step {
				args[i] = "str"
			}
			refused(t, e, r, args...)
			n++
		}
	}
	if n < 20 {
		t.Fatalf("only %d write commands in the table", n)
	}

	if after := state(t, r); after != before {
		t.Fatalf("owned keys changed:\nbefore %q\nafter  %q", before, after)
	}

	// Reads of owned keys work.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"BF.EXISTS", "bfk", "a"}, ":1\r\n"},
		{[]string{"BF.EXISTS", "bfk", "x"}, ":0\r\n"},
		{[]string{"BF.MEXISTS", "bfk", "a", "b", "x"}, "*3\r\n:1\r\n:1\r\n:0\r\n"},
		{[]string{"BF.CARD", "bfk"}, ":2\r\n"},
		{[]string{"CF.EXISTS", "cfk", "a"}, ":1\r\n"},
		{[]string{"CF.COUNT", "cfk", "a"}, ":1\r\n"},
		{[]string{"CF.COUNT", "cfk", "x"}, ":0\r\n"},
		{[]string{"PFCOUNT", "hll"}, ":3\r\n"},
		{[]string{"GET", "str"}, "$5\r\nvalue\r\n"},
		{[]string{"STRLEN", "str"}, ":5\r\n"},
		{[]string{"GETRANGE", "str", "0", "1"}, "$2\r\nva\r\n"},
		{[]string{"TYPE", "bfk"}, "+MBbloom--\r\n"},
		{[]string{"TYPE", "cfk"}, "+MBbloomCF\r\n"},
		{[]string{"TYPE", "absent"}, "+none\r\n"},
		{[]string{"EXISTS", "bfk", "cfk", "hll", "str", "absent"}, ":4\r\n"},
	} {
		if got := r.do(c.args...); got != c.want {
			t.Errorf("%q = %q, want %q", c.args, got, c.want)
		}
	}

	// Writes of other keys work, including PFMERGE of owned sources into
	// a free destination. (PFCOUNT above may have updated hll's cached
	// cardinality, as Redis's does: the state is taken again.)
	before = state(t, r)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"BF.ADD", "free", "b"}, ":1\r\n"},
		{[]string{"PFMERGE", "dest", "hll", "str"}, "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"},
		{[]string{"PFMERGE", "dest", "hll"}, "+OK\r\n"},
		{[]string{"PFCOUNT", "dest"}, ":3\r\n"},
		{[]string{"DEL", "free"}, ":1\r\n"},
	} {
		if got := r.do(c.args...); got != c.want {
			t.Errorf("%q = %q, want %q", c.args, got, c.want)
		}
	}
	if after := state(t, r); after != before {
		t.Fatalf("owned keys changed:\nbefore %q\nafter  %q", before, after)
	}
}

// TestWriteGuardOff: without a guard the same writes work.
func TestWriteGuardOff(t *testing.T) {
	e := startFullWith(t, func(*Options) {})
	r := e.raw(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"BF.ADD", "bfk", "x"}, ":1\r\n"},
		{[]string{"SET", "str", "v"}, "+OK\r\n"},
		{[]string{"DEL", "bfk", "str"}, ":2\r\n"},
		{[]string{"FLUSHALL"}, "+OK\r\n"},
	} {
		if got := r.do(c.args...); got != c.want {
			t.Errorf("%q = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestWriteGuardSetter: SetWriteGuard (the app's way, after New) installs
// the guard as Options.WriteGuard does.
func TestWriteGuardSetter(t *testing.T) {
	s, err := New(Options{Store: keyspace.New(nil), Table: command.NewTable()})
	if err != nil {
		t.Fatal(err)
	}
	if s.guard != nil {
		t.Fatal("a guard without one set")
	}
	s.SetWriteGuard(owns)
	if s.guard == nil || !s.guard([]byte("bfk")) {
		t.Fatal("SetWriteGuard did not install the guard")
	}
}

// TestWriteGuardAllocs: the check allocates nothing.
func TestWriteGuardAllocs(t *testing.T) {
	e := startFullWith(t, func(*Options) {})
	tab := e.srv.Table()
	merge, set, flush := tab.Lookup([]byte("pfmerge")), tab.Lookup([]byte("set")), tab.Lookup([]byte("flushall"))
	argsMerge := commandtest.Argv("PFMERGE", "dest", "hll", "str")
	argsSet := commandtest.Argv("SET", "free", "v")
	argsFlush := commandtest.Argv("FLUSHALL")
	var got [3]bool
	if a := testing.AllocsPerRun(100, func() {
		got[0] = writesGuarded(owns, merge, argsMerge)
		got[1] = writesGuarded(owns, set, argsSet)
		got[2] = writesGuarded(owns, flush, argsFlush)
	}); a != 0 {
		t.Fatalf("%v allocations", a)
	}
	if got != [3]bool{false, false, true} {
		t.Fatalf("writesGuarded = %v", got)
	}
}

// BenchmarkWriteGuard measures the check for BF.ADD with a guard of five
// keys (the no-guard case is one nil test in dispatch).
func BenchmarkWriteGuard(b *testing.B) {
	spec := &command.Spec{Name: "bf.add", Arity: 3, Flags: command.FlagWrite, FirstKey: 1, LastKey: 1, Step: 1}
	args := commandtest.Argv("BF.ADD", "key", "item")
	for b.Loop() {
		if writesGuarded(owns, spec, args) {
			b.Fatal("owned")
		}
	}
}
