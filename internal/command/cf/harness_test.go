package cf

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/rediscuckoo"
)

// logStrings renders l's records, arguments joined by spaces.
func logStrings(l *commandtest.Logger) []string {
	var out []string
	for _, r := range l.Records() {
		out = append(out, string(bytes.Join(r, []byte(" "))))
	}
	return out
}

// strVal stands in for a value of another type (a Redis string).
type strVal string

func (s strVal) TypeName() string      { return "string" }
func (s strVal) MemoryUsage() uint64   { return uint64(len(s)) }
func (s strVal) Clone() keyspace.Value { return s }

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

// expect23 checks the same reply in both protocols.
func (e *env) expect23(want string, args ...string) {
	e.t.Helper()
	e.expect(2, want, args...)
	e.expect(3, want, args...)
}

func (e *env) setString(key string) {
	e.store.Update([]byte(key), func(tx *keyspace.Txn) { tx.Set(strVal("v")) })
}

func (e *env) set(name, value string) {
	e.t.Helper()
	if err := e.cfg.Set(name, value); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) filter(key string) *rediscuckoo.Filter {
	var f *rediscuckoo.Filter
	e.store.View([]byte(key), func(v keyspace.Value) {
		if c, ok := v.(*rediscuckoo.Filter); ok {
			f = c.CloneFilter()
		}
	})
	return f
}

const (
	wrongType = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	notFound  = "-ERR not found\r\n"
	ok        = "+OK\r\n"
	one       = ":1\r\n"
	zero      = ":0\r\n"
)

func arity(name string) string {
	return "-ERR wrong number of arguments for '" + name + "' command\r\n"
}

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

func errReply(s string) string { return "-" + s + "\r\n" }

func info(size, buckets, filters, items, deletes, bs, exp, iters int) (resp2, resp3 string) {
	var b strings.Builder
	for i, name := range infoFields {
		v := []int{size, buckets, filters, items, deletes, bs, exp, iters}[i]
		b.WriteString("+" + name + "\r\n:" + strconv.Itoa(v) + "\r\n")
	}
	return "*16\r\n" + b.String(), "%8\r\n" + b.String()
}

// dumpKey returns every CF.SCANDUMP reply of key, through the command.
func dumpKey(t testing.TB, tab *command.Table, st *keyspace.Store, key string) string {
	var sb strings.Builder
	pos := "0"
	for i := 0; i < 10000; i++ {
		out, _ := commandtest.Run(tab, st, nil, 2, commandtest.Argv("CF.SCANDUMP", key, pos))
		sb.WriteString(out)
		rest := strings.TrimPrefix(out, "*2\r\n:")
		next := rest[:strings.Index(rest, "\r\n")]
		if next == "0" {
			return sb.String()
		}
		pos = next
	}
	t.Fatal("CF.SCANDUMP does not terminate")
	return ""
}

// chunks returns the (pos, data) pairs of a full CF.SCANDUMP of key.
func chunks(t testing.TB, e *env, key string) (pos []string, data [][]byte) {
	f := e.filter(key)
	p := int64(0)
	for {
		next, d := f.DumpChunk(p)
		if d == nil {
			return
		}
		pos = append(pos, strconv.FormatInt(next, 10))
		data = append(data, d)
		p = next
	}
}
