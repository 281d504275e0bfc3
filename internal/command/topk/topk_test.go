package topk_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	topkcmd "github.com/probly/probly/internal/command/topk"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
)

type env struct {
	t     *testing.T
	tab   *command.Table
	cfg   *config.Registry
	store *keyspace.Store
	log   *commandtest.Logger
}

func newEnv(t *testing.T) *env {
	tab, cfg := app.Tables()
	log := &commandtest.Logger{}
	return &env{t: t, tab: tab, cfg: cfg, store: keyspace.New(log), log: log}
}

func (e *env) do(proto int, args ...string) string {
	r, _ := commandtest.Run(e.tab, e.store, e.cfg, proto, commandtest.Argv(args...))
	return r
}

// Expected replies: nil, string (bulk), int, bool, errS, []any; rendered
// for one protocol.
type errS string

func render(v any, proto int) string {
	switch x := v.(type) {
	case nil:
		if proto == 3 {
			return "_\r\n"
		}
		return "$-1\r\n"
	case string:
		return fmt.Sprintf("$%d\r\n%s\r\n", len(x), x)
	case int:
		return fmt.Sprintf(":%d\r\n", x)
	case bool:
		if proto == 3 {
			if x {
				return "#t\r\n"
			}
			return "#f\r\n"
		}
		if x {
			return ":1\r\n"
		}
		return ":0\r\n"
	case errS:
		return "-" + string(x) + "\r\n"
	case []any:
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(x))
		for _, e := range x {
			b.WriteString(render(e, proto))
		}
		return b.String()
	}
	panic(fmt.Sprintf("render %T", v))
}

// want runs args in both protocols and compares with the rendered v. The
// command runs twice, so only read commands may use it; writes use wantW.
func (e *env) want(v any, args ...string) {
	e.t.Helper()
	for _, p := range []int{2, 3} {
		if got, w := e.do(p, args...), render(v, p); got != w {
			e.t.Errorf("RESP%d %q = %q, want %q", p, args, got, w)
		}
	}
}

// wantW runs a write once (RESP2; its replies have no RESP3-specific type).
func (e *env) wantW(v any, args ...string) {
	e.t.Helper()
	if got, w := e.do(2, args...), render(v, 2); got != w {
		e.t.Errorf("%q = %q, want %q", args, got, w)
	}
}

func fields(s string) []string {
	f := strings.Fields(s)
	for i, x := range f {
		if x == `""` {
			f[i] = ""
		}
	}
	return f
}

func cmd(name, key, items string) []string { return append([]string{name, key}, fields(items)...) }

func arr(s string) []any {
	var out []any
	for _, x := range fields(s) {
		switch {
		case x == "nil":
			out = append(out, nil)
		default:
			out = append(out, x)
		}
	}
	return out
}

func ints(v ...int) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}

func bools(v ...int) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x == 1
	}
	return out
}

const errIncr = "TopK: increment must be an integer greater or equal to 0                            and smaller or equal to 100,000"

// The vectors of spec redis-sketches.md §4.3.
func TestVectors(t *testing.T) {
	e := newEnv(t)
	okReply := "+OK\r\n"
	res := func(args ...string) {
		t.Helper()
		if got := e.do(2, args...); got != okReply {
			t.Fatalf("%q = %q", args, got)
		}
	}
	// P:test_topk
	res("TOPK.RESERVE", "topk", "3", "50", "4", "0.9")
	e.wantW(arr("nil nil nil A C D nil nil E nil B C nil nil nil D nil"), cmd("TOPK.ADD", "topk", "A B C D E A A B C G D B D A E E 1")...)
	e.want(bools(1, 1, 0, 0, 1, 0, 0), cmd("TOPK.QUERY", "topk", "A B C D E F G")...)
	e.want(ints(4, 3, 2, 3, 3, 0, 1), cmd("TOPK.COUNT", "topk", "A B C D E F G")...)
	res("TOPK.RESERVE", "topklist", "3", "50", "3", "0.9")
	e.wantW(arr("nil nil nil A C D nil nil E nil B C nil nil nil D"), cmd("TOPK.ADD", "topklist", "A B C D E A A B C G D B D A E E")...)
	e.want(arr("A B E"), "TOPK.LIST", "topklist")
	e.want([]any{"A", 4, "B", 3, "E", 3}, "TOPK.LIST", "topklist", "WITHCOUNT")

	// T:test_incrby
	res("TOPK.RESERVE", "inc", "3", "10", "3", "1")
	e.wantW(arr("nil nil nil"), "TOPK.INCRBY", "inc", "bar", "3", "baz", "6", "42", "2")
	e.wantW(arr("nil bar"), "TOPK.INCRBY", "inc", "42", "8", "xyzzy", "4")
	e.want(ints(3, 6, 10, 4, 0), cmd("TOPK.COUNT", "inc", "bar baz 42 xyzzy 4")...)
	e.wantW([]any{errS(errIncr)}, "TOPK.INCRBY", "inc", "foo", "-5")
	e.wantW([]any{errS(errIncr)}, "TOPK.INCRBY", "inc", "foo", "123456")

	// T:test_list_info + test_resp3
	res("TOPK.RESERVE", "li", "2", "50", "5", "0.9")
	e.wantW(arr("nil nil foo bar baz 42 foo"), cmd("TOPK.ADD", "li", "foo bar baz 42 foo bar baz")...)
	e.wantW(arr("bar nil nil nil nil"), cmd("TOPK.ADD", "li", "foo baz 42 foo baz")...)
	e.wantW(arr("nil nil nil nil nil"), cmd("TOPK.ADD", "li", "foo bar baz foo baz")...)
	e.want(arr("foo baz"), "TOPK.LIST", "li")
	e.want(bools(1, 0, 1, 0), cmd("TOPK.QUERY", "li", "foo bar baz dan")...)
	if got, w := e.do(3, "TOPK.INFO", "li"), "%4\r\n+k\r\n:2\r\n+width\r\n:50\r\n+depth\r\n:5\r\n+decay\r\n,0.9\r\n"; got != w {
		t.Errorf("RESP3 INFO = %q, want %q", got, w)
	}
	if got, w := e.do(2, "TOPK.INFO", "li"), "*8\r\n+k\r\n:2\r\n+width\r\n:50\r\n+depth\r\n:5\r\n+decay\r\n$3\r\n0.9\r\n"; got != w {
		t.Errorf("RESP2 INFO = %q, want %q", got, w)
	}
	e.wantW(arr("nil nil foo nil nil"), cmd("TOPK.ADD", "li", "bar bar bar bar bar")...)
	e.want(arr("bar baz"), "TOPK.LIST", "li")
	e.want(errS("WITHCOUNT keyword expected"), "TOPK.LIST", "li", "_topk_")
	e.wantW(errS("TopK: key already exists"), "TOPK.RESERVE", "li", "3")

	// T:test_no_init_params
	res("TOPK.RESERVE", "ni", "3")
	e.wantW(arr("nil nil nil foo baz nil 42 nil nil nil nil"), cmd("TOPK.ADD", "ni", "foo bar baz 42 foo bar baz foo foo foo foo")...)
	e.wantW(arr("nil nil bar nil nil nil nil nil nil nil"), cmd("TOPK.ADD", "ni", "foo baz 42 foo baz foo foo foo foo foo")...)
	e.wantW(arr("nil 42 nil nil nil nil nil nil"), cmd("TOPK.ADD", "ni", "foo bar baz foo baz baz baz baz")...)
	e.want([]any{"foo", 15, "baz", 9, "bar", 3}, "TOPK.LIST", "ni", "WITHCOUNT")
	if got, w := e.do(2, "TOPK.INFO", "ni"), "*8\r\n+k\r\n:3\r\n+width\r\n:8\r\n+depth\r\n:7\r\n+decay\r\n$3\r\n0.9\r\n"; got != w {
		t.Errorf("RESP2 INFO = %q, want %q", got, w)
	}

	// T:test_empty_string
	res("TOPK.RESERVE", "es", "3")
	e.wantW(arr("nil"), "TOPK.ADD", "es", "")
	e.want([]any{""}, "TOPK.LIST", "es")
	e.want([]any{"", 1}, "TOPK.LIST", "es", "withcount")
	e.want(bools(1), "TOPK.QUERY", "es", "")
	e.want(ints(1), "TOPK.COUNT", "es", "")
	e.wantW(arr("nil"), "TOPK.INCRBY", "es", "", "100")
	e.want([]any{"", 101}, "TOPK.LIST", "es", "WITHCOUNT")
	e.wantW(arr("nil nil foo"), cmd("TOPK.ADD", "es", "foo bar baz")...)
	e.wantW(arr("bar baz foo nil"), cmd("TOPK.ADD", "es", `foo bar baz ""`)...)
	e.wantW(arr("bar baz nil"), cmd("TOPK.ADD", "es", `foo bar ""`)...)
	e.wantW(arr("nil nil"), cmd("TOPK.ADD", "es", `foo ""`)...)
	e.want([]any{"", 104, "foo", 4, "bar", 3}, "TOPK.LIST", "es", "WITHCOUNT")
	e.want(bools(0, 1, 1), cmd("TOPK.QUERY", "es", `bla foo ""`)...)
	e.wantW([]any{nil, nil, ""}, "TOPK.INCRBY", "es", "foo", "500", "bar", "500", "baz", "500")
	e.want([]any{"foo", 504, "bar", 503, "baz", 502}, "TOPK.LIST", "es", "WITHCOUNT")

	// T:test_lookup_table
	res("TOPK.RESERVE", "lt", "1", "3", "3", ".9")
	e.wantW(arr("nil bar nil"), "TOPK.INCRBY", "lt", "bar", "300", "baz", "600", "42", "200")
	e.wantW(arr("nil nil"), "TOPK.INCRBY", "lt", "42", "80", "xyzzy", "400")
	e.want([]any{"baz", 600}, "TOPK.LIST", "lt", "WITHCOUNT")

	// T:test_simple, test_add_query_count
	res("TOPK.RESERVE", "s", "20", "50", "5", "0.9")
	e.wantW(arr("nil"), "TOPK.ADD", "s", "a")
	e.wantW(arr("nil nil"), "TOPK.ADD", "s", "a", "b")
	e.want(bools(1), "TOPK.QUERY", "s", "a")
	e.want(bools(0), "TOPK.QUERY", "s", "c")
	res("TOPK.RESERVE", "aqc", "20", "50", "5", "0.9")
	e.wantW(arr("nil nil nil"), "TOPK.ADD", "aqc", "bar", "baz", "42")
	e.want(bools(0, 1, 1), "TOPK.QUERY", "aqc", "foo", "bar", "baz")
	e.want(ints(0, 1, 1), "TOPK.COUNT", "aqc", "foo", "bar", "baz")
	e.wantW(arr("nil nil"), "TOPK.ADD", "aqc", "bar", "baz")
	e.want(ints(0, 2, 2, 1), "TOPK.COUNT", "aqc", "foo", "bar", "baz", "42")

	// T:test_overflow_k_width_depth, test_validation
	e.wantW(errS("TopK: invalid k"), "TOPK.RESERVE", "poc", "4294967296", "1", "1", "0.1")
	e.wantW(errS("TopK: invalid width"), "TOPK.RESERVE", "poc", "1", "4294967296", "1", "0.1")
	e.wantW(errS("TopK: invalid depth"), "TOPK.RESERVE", "poc", "1", "1", "4294967296", "0.1")
	for _, c := range []struct{ args, err string }{
		{"bar 50 5 0.9", "TopK: invalid k"}, {"20 bar 5 0.9", "TopK: invalid width"},
		{"20 50 bar 0.9", "TopK: invalid depth"}, {"20 50 5 bar", "TopK: invalid decay value. must be '<= 1' & '> 0'"},
		{"0.9 50 5 0.9", "TopK: invalid k"}, {"20 0.9 5 0.9", "TopK: invalid width"},
		{"20 50 0.9 0.9", "TopK: invalid depth"}, {"20 50 5 42", "TopK: invalid decay value. must be '<= 1' & '> 0'"},
		{"0", "TopK: invalid k"}, {"20 50 5 0", "TopK: invalid decay value. must be '<= 1' & '> 0'"},
		{"20 50 5 nan", "TopK: invalid decay value. must be '<= 1' & '> 0'"},
	} {
		e.wantW(errS(c.err), cmd("TOPK.RESERVE", "foo", c.args)...)
	}
	e.wantW(errS("ERR wrong number of arguments for 'topk.reserve' command"), "TOPK.RESERVE", "foo", "1", "2")
	e.wantW(errS("ERR wrong number of arguments for 'topk.reserve' command"), "topk.RESERVE", "foo")
	e.wantW(errS("ERR Insufficient memory to create topk data structure"), "TOPK.RESERVE", "foo", "3", "2000000000", "200000000", "1")
	res("SET", "king", "x")
	e.wantW(errS("WRONGTYPE Operation against a key holding the wrong kind of value"), "TOPK.ADD", "king", "kong")
	e.wantW(errS("TopK: key already exists"), "TOPK.RESERVE", "king", "3")
	e.wantW(errS("TopK: key does not exist"), "TOPK.ADD", "kong", "kong")
	for _, c := range []string{"TOPK.QUERY kong a", "TOPK.COUNT kong a", "TOPK.LIST kong", "TOPK.INFO kong", "TOPK.INCRBY kong a 1"} {
		e.want(errS("TopK: key does not exist"), fields(c)...)
	}
	for _, c := range []string{"TOPK.QUERY king a", "TOPK.COUNT king a", "TOPK.LIST king", "TOPK.INFO king", "TOPK.INCRBY king a 1"} {
		e.want(errS("WRONGTYPE Operation against a key holding the wrong kind of value"), fields(c)...)
	}
	e.want(errS("WITHCOUNT keyword expected"), "TOPK.LIST", "kong", "x") // before the key check
	e.want(errS("ERR wrong number of arguments for 'topk.list' command"), "TOPK.LIST", "li", "WITHCOUNT", "x")
	e.want(errS("ERR wrong number of arguments for 'topk.incrby' command"), "TOPK.INCRBY", "li", "a", "1", "b")
}

func TestType(t *testing.T) {
	e := newEnv(t)
	e.do(2, "TOPK.RESERVE", "t", "3")
	if got := e.do(2, "TYPE", "t"); got != "+TopK-TYPE\r\n" {
		t.Fatalf("TYPE = %q", got)
	}
}

// G: go-redis's vectors (defaults 8×7, decay 0.9), and the L quirks.
func TestGoRedisAndQuirks(t *testing.T) {
	e := newEnv(t)
	e.do(2, "TOPK.RESERVE", "topk1", "3")
	e.wantW(arr("nil nil nil nil"), "TOPK.ADD", "topk1", "item1", "item2", "3", "item1")
	e.want(bools(1, 1, 0, 1), "TOPK.QUERY", "topk1", "item1", "item2", "4", "3")
	e.want(ints(2, 1, 0), "TOPK.COUNT", "topk1", "item1", "item2", "item3")
	e.wantW(arr("nil nil"), "TOPK.INCRBY", "topk1", "item1", "5", "item2", "10")
	e.want(ints(7, 11, 0), "TOPK.COUNT", "topk1", "item1", "item2", "item3")
	e.want(arr("item2 item1 3"), "TOPK.LIST", "topk1")
	e.want([]any{"item2", 11, "item1", 7, "3", 1}, "TOPK.LIST", "topk1", "WITHCOUNT")
	e.do(2, "TOPK.RESERVE", "topk2", "3", "1500", "8", "0.5")
	if got := e.do(3, "TOPK.INFO", "topk2"); !strings.HasSuffix(got, "+decay\r\n,0.5\r\n") {
		t.Errorf("INFO decay: %q", got)
	}

	e.do(2, "TOPK.RESERVE", "t", "3")
	e.wantW(arr("nil"), "TOPK.ADD", "t", "a\x00b")
	e.want([]any{"a", 1}, "TOPK.LIST", "t", "WITHCOUNT")
	e.want(bools(1), "TOPK.QUERY", "t", "a\x00b")
	e.want(bools(0), "TOPK.QUERY", "t", "a")

	e.do(2, "TOPK.RESERVE", "t3", "3")
	e.wantW(arr("nil"), "TOPK.INCRBY", "t3", "zero", "0")
	e.want([]any{}, "TOPK.LIST", "t3", "WITHCOUNT")
	e.want(bools(1), "TOPK.QUERY", "t3", "zero")
	e.want(ints(0), "TOPK.COUNT", "t3", "zero")
	e.wantW(arr("nil zero nil a"), "TOPK.ADD", "t3", "a", "b", "c", "d")
	e.want([]any{"c", 1, "d", 1, "b", 1}, "TOPK.LIST", "t3", "WITHCOUNT")
	for _, w := range []string{"with", "w", "", "WiThCoUnT"} {
		e.want([]any{"c", 1, "d", 1, "b", 1}, "TOPK.LIST", "t3", w)
	}
	e.want(errS("WITHCOUNT keyword expected"), "TOPK.LIST", "t3", "withcountx")
}

// INCRBY with an invalid increment in the middle: the pairs before it are
// applied and logged; the array is completed with the error (package doc,
// the deliberate difference from RedisBloom's truncated array).
func TestIncrByInvalidMidway(t *testing.T) {
	e := newEnv(t)
	e.do(2, "TOPK.RESERVE", "t2", "3", "8", "7", "1")
	e.log.Take()
	e.wantW([]any{nil, errS(errIncr), errS(errIncr)}, "TOPK.INCRBY", "t2", "foo", "1", "bar", "x", "baz", "1")
	e.want(ints(1, 0, 0), "TOPK.COUNT", "t2", "foo", "bar", "baz")
	recs := e.log.Take()
	if len(recs) != 1 || string(bytes.Join(recs[0], []byte(" "))) != "TOPK.INCRBY t2 foo 1" {
		t.Fatalf("records %q", recs)
	}
	e.wantW([]any{errS(errIncr)}, "TOPK.INCRBY", "t2", "foo", "+1")
	if recs := e.log.Take(); len(recs) != 0 {
		t.Fatalf("a command that applied nothing logged %q", recs)
	}
}

// Memory: an absurd RESERVE gets the spec's allocation error; a refused
// reservation changes and logs nothing; the reservation is the growth of
// Used, and MemoryUsage tracks the heap's items.
func TestMemory(t *testing.T) {
	e := newEnv(t)
	used := e.store.Used()
	got, asked := commandtest.RunReserve(e.tab, e.store, e.cfg, false, 1000, "TOPK.RESERVE", "m", "100", "1000", "10", "0.9")
	if got != "-ERR Insufficient memory to create topk data structure\r\n" || asked == 0 {
		t.Fatalf("refused reserve: %q (asked %d)", got, asked)
	}
	if e.store.Used() != used || len(e.log.Records()) != 0 {
		t.Fatal("a refused RESERVE changed something")
	}
	got, asked = commandtest.RunReserve(e.tab, e.store, e.cfg, false, ^uint64(0), "TOPK.RESERVE", "m", "100", "1000", "10", "0.9")
	if got != "+OK\r\n" || e.store.Used()-used != asked {
		t.Fatalf("reserve %q: asked %d, Used grew %d", got, asked, e.store.Used()-used)
	}
	// A sketch larger than the process can have is refused, live and
	// replayed alike, before anything is allocated (k 2^32−1: 128 GiB of
	// heap slots).
	old := command.AllocLimit()
	command.SetAllocLimit(1 << 30)
	for _, replay := range []bool{false, true} {
		if got, _ := commandtest.RunReserve(e.tab, e.store, e.cfg, replay, ^uint64(0), "TOPK.RESERVE", "huge", "4294967295"); got != "-ERR Insufficient memory to create topk data structure\r\n" {
			t.Errorf("replay %v: RESERVE k 2^32-1 = %q", replay, got)
		}
	}
	command.SetAllocLimit(old)
	// A replayed record is admitted whatever the budget.
	if got, _ := commandtest.RunReserve(e.tab, e.store, e.cfg, true, 0, "TOPK.RESERVE", "m2", "3"); got != "+OK\r\n" {
		t.Fatalf("replayed reserve: %q", got)
	}
	before := e.store.Used()
	e.do(2, "TOPK.ADD", "m", strings.Repeat("x", 1000))
	if grew := e.store.Used() - before; grew != 1000 {
		t.Fatalf("a 1000-byte item in the heap grew Used by %d", grew)
	}
	if e.store.Used() != e.store.MemoryUsage() {
		t.Fatalf("Used %d, MemoryUsage %d", e.store.Used(), e.store.MemoryUsage())
	}
}

// workload runs random writes and reads with collisions and decay < 1
// (the generator decides) and returns the replies.
func workload(e *env, seed int64, n int) []string {
	r := rand.New(rand.NewSource(seed))
	var out []string
	e.do(2, "TOPK.RESERVE", "a", "5", "6", "3", "0.8")
	e.do(2, "TOPK.RESERVE", "b", "4")
	e.do(2, "TOPK.RESERVE", "c", "3", "20", "2", "1")
	keys := []string{"a", "b", "c"}
	for range n {
		k := keys[r.Intn(3)]
		item := func() string { return "i" + strconv.Itoa(r.Intn(30)) }
		var args []string
		switch r.Intn(6) {
		case 0, 1:
			args = []string{"TOPK.ADD", k, item(), item(), item()}
		case 2:
			args = []string{"TOPK.INCRBY", k, item(), strconv.Itoa(r.Intn(300)), item(), strconv.Itoa(r.Intn(5))}
		case 3:
			args = []string{"TOPK.LIST", k, "WITHCOUNT"}
		case 4:
			args = []string{"TOPK.COUNT", k, item(), item()}
		default:
			args = []string{"TOPK.QUERY", k, item()}
		}
		out = append(out, e.do(2, args...))
	}
	return out
}

func snapshot(t *testing.T, s *keyspace.Store, keys ...string) map[string][]byte {
	out := map[string][]byte{}
	for _, k := range keys {
		s.View([]byte(k), func(v keyspace.Value) {
			if v == nil {
				t.Fatalf("key %s missing", k)
			}
			b, err := v.(*topkcmd.Sketch).MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			out[k] = b
		})
	}
	return out
}

// Replaying the AOF records reproduces every sketch bit for bit, generator
// state included; so does a snapshot (app.Decode), and both continue the
// same way as the original.
func TestReplayAndSnapshot(t *testing.T) {
	e := newEnv(t)
	workload(e, 1, 2000)
	orig := snapshot(t, e.store, "a", "b", "c")

	r := newEnv(t)
	for _, rec := range e.log.Records() {
		if got, _ := commandtest.Run(r.tab, r.store, r.cfg, 2, rec, commandtest.Replay(true)); strings.HasPrefix(got, "-") {
			t.Fatalf("replay of %q: %q", rec, got)
		}
	}
	replayed := snapshot(t, r.store, "a", "b", "c")
	for k := range orig {
		if !bytes.Equal(orig[k], replayed[k]) {
			t.Errorf("key %s differs after AOF replay", k)
		}
		v, err := app.Decode(topkcmd.TypeName, orig[k])
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := v.(*topkcmd.Sketch).MarshalBinary(); !bytes.Equal(b, orig[k]) {
			t.Errorf("key %s differs after snapshot decode", k)
		}
		if c, _ := v.Clone().(*topkcmd.Sketch).MarshalBinary(); !bytes.Equal(c, orig[k]) {
			t.Errorf("key %s: Clone differs", k)
		}
	}
	if got, want := strings.Join(workload(r, 2, 500)[0:], ""), strings.Join(workload(e, 2, 500), ""); got != want {
		t.Error("the replayed store answers the same commands differently")
	}
	if _, err := app.Decode(topkcmd.TypeName, []byte("PRBL\x01\x08junk")); err == nil {
		t.Error("a corrupt snapshot record decoded")
	}
}

// RESERVE logs explicit sizes; ADD logs as received; reads log nothing.
func TestRecords(t *testing.T) {
	e := newEnv(t)
	e.do(2, "topk.reserve", "k", "3")
	e.do(2, "topk.add", "k", "a", "b")
	e.do(2, "TOPK.LIST", "k")
	e.do(2, "TOPK.ADD", "missing", "a")
	var got []string
	for _, r := range e.log.Take() {
		got = append(got, string(bytes.Join(r, []byte(" "))))
	}
	if want := []string{"TOPK.RESERVE k 3 8 7 0.9", "TOPK.ADD k a b"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records %q, want %q", got, want)
	}
}

// COMMAND INFO metadata: flags and ACL categories of spec "Conventions".
func TestSpecsMetadata(t *testing.T) {
	tab, _ := app.Tables()
	want := map[string]string{
		"topk.reserve": "@write @fast @topk", "topk.add": "@write @slow @topk", "topk.incrby": "@write @slow @topk",
		"topk.query": "@read @slow @topk", "topk.count": "@read @slow @topk", "topk.list": "@read @slow @topk",
		"topk.info": "@read @fast @topk",
	}
	for name, acl := range want {
		s := tab.Lookup([]byte(name))
		if s == nil {
			t.Fatalf("%s not registered", name)
		}
		if got := strings.Join(s.ACLCategories().Names(), " "); got != acl {
			t.Errorf("%s ACL %q, want %q", name, got, acl)
		}
		if s.FirstKey != 1 || s.LastKey != 1 || s.Step != 1 {
			t.Errorf("%s keys %d,%d,%d", name, s.FirstKey, s.LastKey, s.Step)
		}
	}
}
