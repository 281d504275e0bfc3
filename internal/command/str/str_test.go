package str

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/resp"
	"github.com/probly/probly/internal/strval"
)

// otherVal stands in for a value of another type (a Bloom filter).
type otherVal struct{}

func (otherVal) TypeName() string      { return "MBbloom--" }
func (otherVal) MemoryUsage() uint64   { return 8 }
func (otherVal) Clone() keyspace.Value { return otherVal{} }

type env struct {
	t     testing.TB
	tab   *command.Table
	cfg   *config.Registry
	store *keyspace.Store
	log   *commandtest.Logger
}

func newEnv(t testing.TB) *env {
	e := &env{t: t, tab: command.NewTable(), cfg: config.New(), log: &commandtest.Logger{}}
	e.store = keyspace.New(e.log)
	Register(e.tab, e.cfg)
	return e
}

func (e *env) do(proto int, args ...string) string {
	s, _ := commandtest.Run(e.tab, e.store, e.cfg, proto, commandtest.Argv(args...))
	return s
}

// expect runs one command in protocol proto and checks the exact reply bytes.
func (e *env) expect(proto int, want string, args ...string) {
	e.t.Helper()
	if got := e.do(proto, args...); got != want {
		e.t.Errorf("RESP%d %q:\n got %q\nwant %q", proto, args, got, want)
	}
}

// expect23 checks a reply that is the same in RESP2 and RESP3.
func (e *env) expect23(want string, args ...string) {
	e.t.Helper()
	for _, p := range []int{2, 3} {
		e.expect(p, want, args...)
	}
}

func (e *env) setOther(key string) {
	e.store.Update([]byte(key), func(tx *keyspace.Txn) { tx.Set(otherVal{}) })
}

// value returns key's bytes, or "<missing>" / "<type>".
func (e *env) value(key string) string {
	var out string
	e.store.View([]byte(key), func(v keyspace.Value) {
		switch s := v.(type) {
		case nil:
			out = "<missing>"
		case *strval.String:
			out = string(s.B)
		default:
			out = "<" + v.TypeName() + ">"
		}
	})
	return out
}

const (
	wrongType = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	syntaxErr = "-ERR syntax error\r\n"
	notInt    = "-ERR value is not an integer or out of range\r\n"
	tooBig    = "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"
	badExpire = "-ERR invalid expire time in 'set' command\r\n"
	ok        = "+OK\r\n"
	empty     = "$0\r\n\r\n"
)

func null(proto int) string {
	if proto == 3 {
		return "_\r\n"
	}
	return "$-1\r\n"
}

func arity(name string) string {
	return "-ERR wrong number of arguments for '" + name + "' command\r\n"
}

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

func integer(n int) string { return ":" + strconv.Itoa(n) + "\r\n" }

func TestRegistration(t *testing.T) {
	e := newEnv(t)
	w := command.FlagWrite | command.FlagDenyOOM
	for name, v := range map[string]struct {
		arity int
		flags command.Flags
	}{
		"get":      {2, command.FlagReadonly | command.FlagFast},
		"set":      {-3, w},
		"append":   {3, w | command.FlagFast},
		"setrange": {4, w},
		"getrange": {4, command.FlagReadonly},
		"substr":   {4, command.FlagReadonly},
		"strlen":   {2, command.FlagReadonly | command.FlagFast},
		"setex":    {4, w},
		"psetex":   {4, w},
		"getex":    {-2, command.FlagWrite | command.FlagFast},
		"getdel":   {2, command.FlagWrite | command.FlagFast},
	} {
		s := e.tab.Lookup([]byte(strings.ToUpper(name)))
		if s == nil || s.Name != name || s.Arity != v.arity || s.Flags != v.flags || s.FirstKey != 1 || s.LastKey != 1 || s.Step != 1 {
			t.Errorf("%s: %+v", name, s)
		}
	}
	if n := len(e.tab.All()); n != 11+10 { // + counters.go
		t.Errorf("%d commands registered", n)
	}
}

func TestArity(t *testing.T) {
	e := newEnv(t)
	for _, v := range []struct {
		name string
		args []string
	}{
		{"get", []string{"GET"}},
		{"get", []string{"get", "a", "b"}},
		{"set", []string{"SET", "k"}},
		{"append", []string{"APPEND", "k"}},
		{"append", []string{"APPEND", "k", "a", "b"}},
		{"setrange", []string{"SETRANGE", "k", "0"}},
		{"setrange", []string{"SETRANGE", "k", "0", "a", "b"}},
		{"getrange", []string{"GETRANGE", "k", "0"}},
		{"substr", []string{"SUBSTR", "k", "0", "1", "2"}},
		{"strlen", []string{"STRLEN"}},
	} {
		e.expect23(arity(v.name), v.args...)
	}
	if n := len(e.log.Records()); n != 0 {
		t.Fatalf("%d records logged by failing commands", n)
	}
}

func TestGetSet(t *testing.T) {
	for _, p := range []int{2, 3} {
		e := newEnv(t)
		e.expect(p, null(p), "GET", "k")
		e.expect(p, ok, "SET", "k", "v1")
		e.expect(p, bulk("v1"), "GET", "k")
		e.expect(p, ok, "set", "k", "")
		e.expect(p, empty, "GET", "k")

		// NX / XX.
		e.expect(p, null(p), "SET", "k", "no", "NX")
		e.expect(p, null(p), "SET", "missing", "no", "xx")
		e.expect(p, null(p), "GET", "missing")
		e.expect(p, ok, "SET", "k", "v2", "XX")
		e.expect(p, ok, "SET", "n", "v", "nx")
		e.expect(p, bulk("v2"), "GET", "k")

		// GET option: the old value (or null), combined with NX/XX.
		e.expect(p, bulk("v2"), "SET", "k", "v3", "GET")
		e.expect(p, null(p), "SET", "g", "new", "GET")
		e.expect(p, bulk("new"), "GET", "g")
		e.expect(p, bulk("v3"), "SET", "k", "ignored", "NX", "GET")
		e.expect(p, bulk("v3"), "GET", "k")
		e.expect(p, null(p), "SET", "absent", "x", "GET", "XX")
		e.expect(p, null(p), "GET", "absent")
		e.expect(p, null(p), "SET", "nxget", "x", "NX", "GET")
		e.expect(p, bulk("x"), "GET", "nxget")
		e.expect(p, bulk("v3"), "SET", "k", "v4", "XX", "GET", "KEEPTTL")
		e.expect(p, ok, "SET", "k", "v5", "KEEPTTL")
		e.expect(p, bulk("v5"), "GET", "k")

		// Wrong types: SET replaces them, GET and SET…GET refuse them.
		e.setOther("bf")
		e.expect(p, wrongType, "GET", "bf")
		e.expect(p, wrongType, "SET", "bf", "x", "GET")
		e.expect(p, null(p), "SET", "bf", "x", "NX")
		if got := e.value("bf"); got != "<MBbloom-->" {
			t.Fatalf("bf replaced by a refused SET: %q", got)
		}
		e.expect(p, ok, "SET", "bf", "x", "XX")
		e.expect(p, bulk("x"), "GET", "bf")
		e.setOther("bf2")
		e.expect(p, ok, "SET", "bf2", "y")
		e.expect(p, bulk("y"), "GET", "bf2")
	}
}

func TestSetOptions(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{
		{"NX", "XX"}, {"XX", "NX"}, {"FOO"}, {"EX"}, {"PX"}, {"EXAT"}, {"PXAT"},
		{"EX", "10", "PX", "10"}, {"PX", "10", "EX", "10"}, {"EX", "10", "EXAT", "10"},
		{"PXAT", "10", "PX", "10"}, {"KEEPTTL", "EX", "10"}, {"EX", "10", "KEEPTTL"},
		{"EX", "10", "EX"}, {"NXX"}, {"GETX"}, {"N"}, {""}, {"NX", "NX", "XX"},
	} {
		e.expect23(syntaxErr, append([]string{"SET", "k", "v"}, args...)...)
	}
	// Option names are C strings: Redis stops comparing at a NUL byte.
	e.expect(2, ok, "SET", "k", "v", "nx\x00garbage")
	e.expect23(bulk("v"), "SET", "k", "w", "GET\x00", "NX")

	// Expiry: validated like Redis; a valid one is applied (expire_test.go
	// checks the times).
	for _, v := range []struct {
		want string
		args []string
	}{
		{ok, []string{"EX", "10"}},
		{ok, []string{"px", "10000"}},
		{ok, []string{"EXAT", "9999999999"}},
		{ok, []string{"PXAT", "9223372036854775807"}},
		{ok, []string{"EXAT", "9223372036854775"}},
		{"$-1\r\n", []string{"NX", "GET", "EX", "1", "EX", "2"}},
		{notInt, []string{"EX", "abc"}},
		{notInt, []string{"EX", "1.5"}},
		{notInt, []string{"PX", " 10"}},
		{notInt, []string{"EX", "+10"}},
		{notInt, []string{"EX", "010"}},
		{notInt, []string{"EX", "9223372036854775808"}},
		{badExpire, []string{"EX", "0"}},
		{badExpire, []string{"PX", "-1"}},
		{badExpire, []string{"EXAT", "-5"}},
		{badExpire, []string{"EX", "9223372036854776"}},
		{badExpire, []string{"EXAT", "9223372036854776"}},
		{badExpire, []string{"PX", "9223372036854775807"}},
	} {
		e.expect(2, v.want, append([]string{"SET", "x", "v"}, v.args...)...)
		if got := e.value("x"); (v.want == notInt || v.want == badExpire) != (got == "<missing>") {
			t.Fatalf("SET x v %q answered %q and left x = %q", v.args, v.want, got)
		}
		e.store.Update([]byte("x"), func(tx *keyspace.Txn) { tx.Delete() })
	}
	e.expect23(syntaxErr, "SET", "x", "v", "EX", "abc", "FOO") // syntax first
}

func TestAppend(t *testing.T) {
	e := newEnv(t)
	e.expect23(integer(0), "STRLEN", "k")
	e.expect(2, integer(5), "APPEND", "k", "hello")
	e.expect(3, integer(11), "APPEND", "k", " world")
	e.expect23(bulk("hello world"), "GET", "k")
	e.expect23(integer(11), "APPEND", "k", "")
	e.expect23(integer(11), "STRLEN", "k")
	// An empty APPEND on a missing key creates an empty string.
	e.expect23(integer(0), "APPEND", "e", "")
	if got := e.value("e"); got != "" {
		t.Fatalf("APPEND e \"\" left %q", got)
	}
	e.expect23(empty, "GET", "e")
	e.setOther("bf")
	e.expect23(wrongType, "APPEND", "bf", "x")
	e.expect23(wrongType, "APPEND", "bf", "")
	e.expect23(wrongType, "STRLEN", "bf")
	// Many appends: amortized growth, exact content.
	var want strings.Builder
	for i := 0; i < 2000; i++ {
		s := strconv.Itoa(i) + ","
		want.WriteString(s)
		e.expect(2, integer(want.Len()), "APPEND", "many", s)
	}
	if e.value("many") != want.String() {
		t.Fatal("APPEND content differs")
	}
}

func TestSetRange(t *testing.T) {
	e := newEnv(t)
	e.expect23(integer(0), "SETRANGE", "k", "5", "")
	if got := e.value("k"); got != "<missing>" {
		t.Fatalf("empty SETRANGE created k: %q", got)
	}
	e.expect23(integer(0), "SETRANGE", "k", "536870912", "") // nothing to set: no size check
	e.expect(2, integer(8), "SETRANGE", "k", "3", "abcde")
	e.expect23(bulk("\x00\x00\x00abcde"), "GET", "k")
	e.expect23(integer(8), "SETRANGE", "k", "0", "XY")
	e.expect23(bulk("XY\x00abcde"), "GET", "k")
	e.expect23(integer(10), "SETRANGE", "k", "7", "123")
	e.expect23(bulk("XY\x00abcd123"), "GET", "k")
	e.expect23(integer(10), "SETRANGE", "k", "12", "")
	e.expect23(integer(10), "SETRANGE", "k", "999999999999", "")
	e.expect(3, integer(12), "SETRANGE", "k", "11", "!")
	e.expect23(bulk("XY\x00abcd123\x00!"), "GET", "k")

	// Offsets.
	e.expect23("-ERR offset is out of range\r\n", "SETRANGE", "k", "-1", "x")
	e.expect23("-ERR offset is out of range\r\n", "SETRANGE", "k", "-1", "")
	for _, bad := range []string{"", "x", "1.0", "+1", "01", " 1", "9223372036854775808", "-0"} {
		e.expect23(notInt, "SETRANGE", "k", bad, "x")
	}
	e.expect23(tooBig, "SETRANGE", "k", "536870912", "x")
	e.expect23(tooBig, "SETRANGE", "k", "536870911", "xy")
	e.expect23(tooBig, "SETRANGE", "k", "9223372036854775807", "x")
	e.expect23(tooBig, "SETRANGE", "new", "536870912", "x")
	if got := e.value("new"); got != "<missing>" {
		t.Fatalf("refused SETRANGE created new: %q", got)
	}

	// Wrong type: the offset is checked first, then the type.
	e.setOther("bf")
	e.expect23(wrongType, "SETRANGE", "bf", "0", "x")
	e.expect23(wrongType, "SETRANGE", "bf", "0", "")
	e.expect23("-ERR offset is out of range\r\n", "SETRANGE", "bf", "-3", "x")
	e.expect23(notInt, "SETRANGE", "bf", "z", "x")
	e.expect23(wrongType, "SETRANGE", "bf", "536870912", "x")
}

// TestSizeLimitConfig: a lower proto-max-bulk-len bounds APPEND and
// SETRANGE as in Redis; SET is bounded only by strval.MaxLen.
func TestSizeLimitConfig(t *testing.T) {
	e := newEnv(t)
	e.cfg.Register(config.Param{Name: "proto-max-bulk-len", Default: "10", Set: func(string) error { return nil }})
	e.expect(3, integer(10), "APPEND", "k", "0123456789")
	e.expect23(tooBig, "APPEND", "k", "x")
	e.expect23(integer(10), "APPEND", "k", "")
	e.expect23(integer(10), "SETRANGE", "k", "9", "x")
	e.expect23(tooBig, "SETRANGE", "k", "9", "xy")
	e.expect23(tooBig, "SETRANGE", "k2", "10", "x")
	e.expect23(ok, "SET", "k3", "this is longer than ten bytes")
	e.expect23(bulk("012345678x"), "GET", "k")
}

func TestGetRange(t *testing.T) {
	e := newEnv(t)
	e.do(2, "SET", "s", "This is a string")
	e.do(2, "SET", "e", "")
	for _, v := range []struct {
		key, start, end, want string
	}{
		{"s", "0", "3", "This"},
		{"s", "-3", "-1", "ing"},
		{"s", "0", "-1", "This is a string"},
		{"s", "10", "100", "string"},
		{"s", "5", "3", ""},
		{"s", "-1", "-3", ""},
		{"s", "-100", "2", "Thi"},
		{"s", "-100", "-100", "T"}, // Redis 7: both clamp to 0
		{"s", "0", "-100", "T"},
		{"s", "16", "20", ""},
		{"s", "15", "15", "g"},
		{"s", "-9223372036854775808", "9223372036854775807", "This is a string"},
		{"s", "9223372036854775807", "-9223372036854775808", ""},
		{"s", "-1", "9223372036854775807", "g"},
		{"e", "0", "-1", ""},
		{"e", "0", "0", ""},
		{"e", "-1", "-1", ""},
		{"missing", "0", "-1", ""},
		{"missing", "5", "1", ""},
	} {
		for _, cmd := range []string{"GETRANGE", "substr"} {
			e.expect23(bulk(v.want), cmd, v.key, v.start, v.end)
		}
	}
	e.setOther("bf")
	e.expect23(wrongType, "GETRANGE", "bf", "0", "1")
	for _, args := range [][]string{{"x", "1"}, {"1", "x"}, {"1.0", "1"}, {"0", "9223372036854775808"}, {"-9223372036854775809", "0"}, {"", "0"}} {
		e.expect23(notInt, "GETRANGE", "s", args[0], args[1])
		e.expect23(notInt, "GETRANGE", "bf", args[0], args[1]) // integers first
		e.expect23(notInt, "GETRANGE", "missing", args[0], args[1])
	}
}

// TestBinarySafe: keys and values hold every byte value, NULs and CRLF.
func TestBinarySafe(t *testing.T) {
	e := newEnv(t)
	var all []byte
	for i := 0; i < 256; i++ {
		all = append(all, byte(i))
	}
	vals := map[string]string{
		"k\r\n":     "a\r\nb\x00c\r\n",
		"\x00":      "\x00\x00\x00",
		"crlf":      "\r\n",
		"*1\r\n$3":  "$-1\r\n",
		"all bytes": string(all),
		"":          "empty key",
	}
	for k, v := range vals {
		for _, p := range []int{2, 3} {
			e.expect(p, ok, "SET", k, v)
			e.expect(p, bulk(v), "GET", k)
			e.expect(p, integer(len(v)), "STRLEN", k)
			e.expect(p, bulk(v), "GETRANGE", k, "0", "-1")
		}
	}
	e.expect(3, integer(259), "APPEND", "all bytes", "\r\n\x00")
	e.expect23(bulk("\xfe\xff\r\n\x00"), "GETRANGE", "all bytes", "-5", "-1")
	e.expect(2, integer(259), "SETRANGE", "all bytes", "10", "\r\n\x00")
	e.expect23(bulk("\x09\r\n\x00\x0d"), "GETRANGE", "all bytes", "9", "13")
	// The stored value is a copy: mutating the request buffer changes nothing.
	args := commandtest.Argv("SET", "copy", "abc")
	commandtest.Run(e.tab, e.store, e.cfg, 2, args)
	args[2][0] = 'X'
	if e.value("copy") != "abc" {
		t.Fatal("SET kept a reference to the argument buffer")
	}
}

// TestHLLString: an HLL is a string; the string commands see and change its
// bytes (spec §4.2 vector for PFADD hll a b c).
func TestHLLString(t *testing.T) {
	e := newEnv(t)
	hll := "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x60\xf3\x80\x50\xb1\x84\x4b\xfb\x80\x42\x5a"
	e.expect23(ok, "SET", "hll", hll)
	e.expect23(integer(27), "STRLEN", "hll")
	e.expect23(bulk("HYLL"), "GETRANGE", "hll", "0", "3")
	e.expect23(bulk("\x01"), "GETRANGE", "hll", "4", "4")
	// Corrupt it: turn the first XZERO into a run past 16384.
	e.expect23(integer(27), "SETRANGE", "hll", "16", "\x7f\xff")
	e.expect23(bulk(hll[:16]+"\x7f\xff"+hll[18:]), "GET", "hll")
	e.expect(3, integer(29), "APPEND", "hll", "\x7f\xff")
}

func TestReplayReproducesState(t *testing.T) {
	e := newEnv(t)
	e.setOther("bf")
	script := [][]string{
		{"SET", "a", "1"},
		{"SET", "a", "2", "NX"}, // no effect
		{"SET", "a", "3", "XX", "GET"},
		{"SET", "b", "x", "GET"},
		{"SET", "bf", "replaced"},
		{"SET", "c", "v", "EX", "0"}, // refused
		{"SET", "x", "v", "PXAT", "99999999999999"},
		{"APPEND", "c", "hello"},
		{"APPEND", "c", ""}, // no change: not logged
		{"APPEND", "d", ""}, // creates an empty string: logged
		{"APPEND", "c", "\r\n\x00"},
		{"SETRANGE", "c", "20", "tail"},
		{"SETRANGE", "c", "1", "E"},
		{"SETRANGE", "e", "3", ""}, // nothing
		{"SETRANGE", "e", "3", "z"},
		{"SETRANGE", "c", "-1", "z"},        // refused
		{"SETRANGE", "c", "536870912", "z"}, // refused
		{"SET", "NX", "NX", "NX"},
		{"SET", "GET", "v", "GET"},
	}
	for i := 0; i < 300; i++ {
		script = append(script,
			[]string{"APPEND", "grow", strconv.Itoa(i)},
			[]string{"SETRANGE", "grow", strconv.Itoa(i * 3), "#"})
	}
	for _, cmd := range script {
		e.do(2, cmd...)
	}
	recs := e.log.Records()
	var lines []string
	for _, r := range recs {
		switch string(r[0]) {
		case "SET", "APPEND", "SETRANGE":
		default:
			t.Fatalf("non-canonical record %q", r)
		}
		if string(r[1]) != "grow" {
			lines = append(lines, fmt.Sprintf("%q", r))
		}
	}
	want := []string{
		`["SET" "a" "1"]`,
		`["SET" "a" "3"]`,
		`["SET" "b" "x"]`,
		`["SET" "bf" "replaced"]`,
		`["SET" "x" "v" "PXAT" "99999999999999"]`,
		`["APPEND" "c" "hello"]`,
		`["APPEND" "d" ""]`,
		`["APPEND" "c" "\r\n\x00"]`,
		`["SETRANGE" "c" "20" "tail"]`,
		`["SETRANGE" "c" "1" "E"]`,
		`["SETRANGE" "e" "3" "z"]`,
		`["SET" "NX" "NX"]`,
		`["SET" "GET" "v"]`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("records:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	tab2, cfg2 := command.NewTable(), config.New()
	Register(tab2, cfg2)
	st2 := keyspace.New(nil)
	st2.Update([]byte("bf"), func(tx *keyspace.Txn) { tx.Set(otherVal{}) })
	for _, r := range recs {
		if out, _ := commandtest.Run(tab2, st2, cfg2, 2, r); strings.HasPrefix(out, "-") {
			t.Fatalf("replay of %q failed: %q", r, out)
		}
	}
	keys := e.store.Keys("*")
	if fmt.Sprint(keys) != fmt.Sprint(st2.Keys("*")) {
		t.Fatalf("keys differ: %v vs %v", keys, st2.Keys("*"))
	}
	for _, k := range keys {
		a, _ := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv("GET", k))
		b, _ := commandtest.Run(tab2, st2, cfg2, 2, commandtest.Argv("GET", k))
		if a != b {
			t.Errorf("key %q differs after replay: %q vs %q", k, a, b)
		}
	}
	if got := e.value("c"); got != "hEllo\r\n\x00"+strings.Repeat("\x00", 12)+"tail" {
		t.Errorf("c = %q", got)
	}
	if got := e.value("e"); got != "\x00\x00\x00z" {
		t.Errorf("e = %q", got)
	}
}

func TestLogFailure(t *testing.T) {
	e := newEnv(t)
	e.do(2, "SET", "k", "old")
	e.log.SetFail(errors.New("disk full"))
	for _, args := range [][]string{
		{"SET", "k", "new"},
		{"SET", "k", "new", "GET"},
		{"SET", "n", "new"},
		{"APPEND", "k", "x"},
		{"APPEND", "n", ""},
		{"SETRANGE", "k", "0", "X"},
		{"SETRANGE", "n", "2", "X"},
	} {
		e.expect23("-ERR disk full\r\n", args...)
	}
	// Nothing changed: the change is applied only once it is logged.
	if e.value("k") != "old" || e.value("n") != "<missing>" {
		t.Fatalf("k=%q n=%q after failed logging", e.value("k"), e.value("n"))
	}
	// Commands that change nothing do not log, so they do not fail.
	e.expect(2, null(2), "SET", "k", "x", "NX")
	e.expect(3, null(3), "SET", "k", "x", "NX")
	e.expect23(integer(3), "APPEND", "k", "")
	e.expect23(integer(3), "SETRANGE", "k", "9", "")
	e.expect23(bulk("old"), "GET", "k")
}

func TestSeq(t *testing.T) {
	e := newEnv(t)
	for _, v := range []struct {
		seq  uint64
		args []string
	}{
		{1, []string{"SET", "k", "v"}},
		{0, []string{"SET", "k", "v", "NX"}},
		{0, []string{"GET", "k"}},
		{2, []string{"APPEND", "k", "w"}},
		{0, []string{"APPEND", "k", ""}},
		{3, []string{"SETRANGE", "k", "5", "z"}},
		{0, []string{"SETRANGE", "k", "5", ""}},
		{0, []string{"SETRANGE", "k", "-5", "z"}},
	} {
		if _, seq := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv(v.args...)); seq != v.seq {
			t.Errorf("%q: seq %d, want %d", v.args, seq, v.seq)
		}
	}
}

func TestGrow(t *testing.T) {
	b := grow([]byte("ab"), 5)
	if string(b) != "ab\x00\x00\x00" || cap(b) != 10 {
		t.Fatalf("grow small: %q cap %d", b, cap(b))
	}
	b = append(b[:2], 'x', 'y', 'z')[:2] // dirty spare capacity
	b = grow(b, 4)
	if string(b) != "ab\x00\x00" {
		t.Fatalf("grow within capacity kept stale bytes: %q", b)
	}
	big := grow(make([]byte, 0, 1), 3<<20)
	if len(big) != 3<<20 || cap(big) != 4<<20 {
		t.Fatalf("grow large: len %d cap %d", len(big), cap(big))
	}
	if c := cap(grow(nil, strval.MaxLen-10)); c != strval.MaxLen {
		t.Fatalf("grow near the limit reserved %d bytes", c)
	}
}

func TestConcurrentAppend(t *testing.T) {
	e := newEnv(t)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				e.do(2+g%2, "APPEND", "k", "ab")
				e.do(2, "GETRANGE", "k", "-2", "-1")
				e.do(3, "SETRANGE", "k"+strconv.Itoa(g), strconv.Itoa(i), "x")
			}
		}(g)
	}
	wg.Wait()
	if got := e.value("k"); got != strings.Repeat("ab", 2000) {
		t.Fatalf("len %d", len(got))
	}
	if n := len(e.log.Records()); n != 4000 {
		t.Fatalf("%d records", n)
	}
}

func BenchmarkGet(b *testing.B) {
	e := newEnv(b)
	e.store = keyspace.New(nil)
	e.do(2, "SET", "key", strings.Repeat("v", 64))
	spec := e.tab.Lookup([]byte("get"))
	var buf bytes.Buffer
	w := resp.NewWriter(&buf)
	ctx := &command.Ctx{R: resp.New(w, 2), Store: e.store, Config: e.cfg, Args: commandtest.Argv("GET", "key")}
	for b.Loop() {
		spec.Handler(ctx)
		w.Flush()
		buf.Reset()
	}
}

// gatedLogger refuses every write as a whole (a failed AOF).
type gatedLogger struct{ commandtest.Logger }

func (g *gatedLogger) WriteGate() error { return errors.New("persist: writes refused") }

// TestRefusedWritesAnswer: when the store refuses writes before running
// them (the log failed), every string write answers with the reason rather
// than leaving the client waiting.
func TestRefusedWritesAnswer(t *testing.T) {
	e := newEnv(t)
	e.store = keyspace.New(&gatedLogger{})
	for _, args := range [][]string{
		{"SET", "k", "v"},
		{"APPEND", "k", "v"},
		{"SETRANGE", "k", "0", "v"},
	} {
		e.expect(2, "-ERR persist: writes refused\r\n", args...)
	}
	e.expect(2, "$-1\r\n", "GET", "k")
}

// TestSetInPlace: SET over a string of about the new value's size reuses
// its buffer (no allocation, as TestPathAllocs checks) and is otherwise a
// SET: the new bytes whatever their length, the memory count exact, WATCH
// sees the change, and a snapshot's cut keeps the old bytes.
func TestSetInPlace(t *testing.T) {
	e := newEnv(t)
	ptr := func(k string) *strval.String {
		var p *strval.String
		e.store.View([]byte(k), func(v keyspace.Value) { p, _ = v.(*strval.String) })
		return p
	}
	checkUsed := func() {
		t.Helper()
		var sum uint64
		for _, k := range e.store.Keys("*") {
			e.store.View([]byte(k), func(v keyspace.Value) { sum += uint64(len(k)) + v.MemoryUsage() })
		}
		if got := e.store.Used(); got != sum {
			t.Fatalf("Used %d, keys sum to %d", got, sum)
		}
	}
	e.expect23(ok, "SET", "k", "aaaaaaaaaaaaaaaa")
	first := ptr("k")
	e.expect23(ok, "SET", "k", "bbbbbbbbbbbbbbbb")
	if ptr("k") != first {
		t.Fatal("SET of a same-size value did not reuse the string")
	}
	e.expect23(bulk("bbbbbbbbbbbbbbbb"), "GET", "k")
	checkUsed()
	e.expect23(ok, "SET", "k", "ab") // shorter, same buffer
	e.expect23(bulk("ab"), "GET", "k")
	e.expect23(integer(2), "STRLEN", "k")
	if ptr("k") != first {
		t.Fatal("SET of a shorter value did not reuse the string")
	}
	checkUsed()
	e.expect23(ok, "SET", "k", strings.Repeat("c", 1000)) // does not fit
	if ptr("k") == first {
		t.Fatal("SET of a longer value wrote past the buffer's capacity")
	}
	e.expect23(bulk(strings.Repeat("c", 1000)), "GET", "k")
	big := ptr("k")
	e.expect23(ok, "SET", "k", "x") // a 1000-byte buffer is not kept for 1 byte
	if p := ptr("k"); p == big || cap(p.B) > 64 {
		t.Fatalf("SET of 1 byte kept a buffer of %d bytes", cap(p.B))
	}
	checkUsed()
	// SET ... GET answers with the old bytes.
	e.expect23(ok, "SET", "k", "old")
	e.expect(2, bulk("old"), "SET", "k", "new", "GET")
	e.expect23(bulk("new"), "GET", "k")

	// WATCH sees an in-place SET.
	var w keyspace.Watcher
	e.store.Watch(&w, []byte("k"))
	e.expect23(ok, "SET", "k", "neu")
	if !w.Dirty() {
		t.Fatal("WATCH did not see an in-place SET")
	}
	e.store.Unwatch(&w)

	// A snapshot's cut keeps the bytes it was taken with.
	f, err := e.store.FreezeCOW(nil)
	if err != nil {
		t.Fatal(err)
	}
	e.expect23(ok, "SET", "k", "two")
	for _, en := range f.Entries() {
		if en.Key == "k" && string(en.Value.(*strval.String).B) != "neu" {
			t.Fatalf("the cut holds %q", en.Value.(*strval.String).B)
		}
	}
	f.Release()
	e.expect23(bulk("two"), "GET", "k")
	checkUsed()
}
