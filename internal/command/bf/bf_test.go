package bf

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
	"github.com/probly/probly/internal/redisbloom"
	"github.com/probly/probly/internal/resp"
)

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

func (e *env) setString(key string) {
	e.store.Update([]byte(key), func(tx *keyspace.Txn) { tx.Set(strVal("v")) })
}

const (
	wrongType = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	notFound  = "-ERR not found\r\n"
	ok        = "+OK\r\n"
)

func arity(name string) string {
	return "-ERR wrong number of arguments for '" + name + "' command\r\n"
}

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

func TestRegistration(t *testing.T) {
	e := newEnv(t)
	w := command.FlagWrite | command.FlagDenyOOM | command.FlagModule
	r := command.FlagReadonly | command.FlagFast | command.FlagModule
	for name, v := range map[string]struct {
		arity int
		flags command.Flags
	}{
		"bf.reserve": {-4, w}, "bf.add": {3, w}, "bf.madd": {-3, w}, "bf.insert": {-4, w},
		"bf.exists": {3, r}, "bf.mexists": {-3, r}, "bf.info": {-2, r}, "bf.card": {2, r},
		"bf.debug": {2, r}, "bf.scandump": {3, r}, "bf.loadchunk": {4, w}, "_bf.create": {6, w},
	} {
		s := e.tab.Lookup([]byte(strings.ToUpper(name)))
		if s == nil || s.Arity != v.arity || s.Flags != v.flags || s.FirstKey != 1 || s.LastKey != 1 || s.Step != 1 {
			t.Errorf("%s: %+v", name, s)
		}
	}
	for _, p := range [][2]string{{"bf-error-rate", "0.01"}, {"bf-initial-size", "100"}, {"bf-expansion-factor", "2"}, {"bf-max-filter-bytes", fmt.Sprint(DefaultFilterBytes)}} {
		if v, ok := e.cfg.Get(p[0]); !ok || v != p[1] {
			t.Errorf("config %s = %q %v", p[0], v, ok)
		}
	}
}

func TestArity(t *testing.T) {
	e := newEnv(t)
	for _, v := range []struct {
		name string
		args []string
	}{
		{"bf.add", []string{"BF.ADD", "k"}},
		{"bf.add", []string{"bf.add", "k", "a", "b"}},
		{"bf.exists", []string{"BF.EXISTS", "k"}},
		{"bf.card", []string{"BF.CARD"}},
		{"bf.debug", []string{"BF.DEBUG", "k", "x"}},
		{"bf.scandump", []string{"BF.SCANDUMP", "k"}},
		{"bf.loadchunk", []string{"BF.LOADCHUNK", "k", "1"}},
		{"bf.info", []string{"BF.INFO"}},
		{"bf.info", []string{"BF.INFO", "k", "capacity", "x"}},
		{"bf.insert", []string{"BF.INSERT", "k", "ITEMS"}},
		{"bf.insert", []string{"BF.INSERT", "k", "NOCREATE", "ITEMS"}},
		{"bf.insert", []string{"BF.INSERT", "k", "CAPACITY", "10"}},
		{"bf.insert", []string{"BF.INSERT", "k", "CAPACITY", "10", "NONSCALING"}},
		{"bf.insert", []string{"BF.INSERT", "k", "CAPACITY"}},
		{"bf.insert", []string{"BF.INSERT", "k", "NONSCALING", "ERROR"}},
		{"bf.insert", []string{"BF.INSERT", "k", "c"}},
		{"bf.madd", []string{"BF.MADD", "k"}},
		{"bf.mexists", []string{"BF.MEXISTS", "k"}},
		{"bf.reserve", []string{"BF.RESERVE", "k", "0.01"}},
		{"bf.reserve", []string{"BF.RESERVE", "k", "0.01", "100", "a", "b", "c", "d"}},
	} {
		for _, p := range []int{2, 3} {
			e.expect(p, arity(v.name), v.args...)
		}
	}
	if n := len(e.log.Records()); n != 0 {
		t.Fatalf("%d records logged by failing commands", n)
	}
}

func TestReserve(t *testing.T) {
	e := newEnv(t)
	e.setString("s")
	// The 1.2 GB filter below must be refused by the cap, not allocated.
	if err := e.cfg.Set("bf-max-filter-bytes", "134217728"); err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct {
		want string
		args []string
	}{
		{ok, []string{"BF.RESERVE", "bf", "0.01", "100"}},
		{"-ERR item exists\r\n", []string{"BF.RESERVE", "bf", "0.01", "100"}},
		{wrongType, []string{"BF.RESERVE", "s", "0.01", "100"}},
		{"-ERR bad error rate\r\n", []string{"BF.RESERVE", "x", "abc", "100"}},
		{"-ERR bad error rate\r\n", []string{"BF.RESERVE", "x", "", "100"}},
		{"-ERR bad error rate\r\n", []string{"BF.RESERVE", "x", " 0.1", "100"}},
		{"-ERR bad error rate\r\n", []string{"BF.RESERVE", "x", "0.1x", "100"}},
		{"-ERR bad error rate\r\n", []string{"BF.RESERVE", "x", "nan", "100"}},
		{"-ERR bad error rate\r\n", []string{"BF.RESERVE", "x", "1e-400", "100"}},
		{"-ERR error rate must be in the range (0.000000, 1.000000)\r\n", []string{"BF.RESERVE", "x", "0", "100"}},
		{"-ERR error rate must be in the range (0.000000, 1.000000)\r\n", []string{"BF.RESERVE", "x", "1", "100"}},
		{"-ERR error rate must be in the range (0.000000, 1.000000)\r\n", []string{"BF.RESERVE", "x", "-0.5", "100"}},
		{"-ERR error rate must be in the range (0.000000, 1.000000)\r\n", []string{"BF.RESERVE", "x", "inf", "abc"}},
		{"-ERR bad capacity\r\n", []string{"BF.RESERVE", "x", "0.01", "abc"}},
		{"-ERR bad capacity\r\n", []string{"BF.RESERVE", "x", "0.01", "1.5"}},
		{"-ERR bad capacity\r\n", []string{"BF.RESERVE", "x", "0.01", "+5"}},
		{"-ERR capacity must be in the range [1, 1073741824]\r\n", []string{"BF.RESERVE", "x", "0.01", "0"}},
		{"-ERR capacity must be in the range [1, 1073741824]\r\n", []string{"BF.RESERVE", "x", "0.01", "-1"}},
		{"-ERR capacity must be in the range [1, 1073741824]\r\n", []string{"BF.RESERVE", "x", "0.01", "1073741825"}},
		{"-ERR no expansion\r\n", []string{"BF.RESERVE", "x", "0.01", "100", "EXPANSION"}},
		{"-ERR bad expansion\r\n", []string{"BF.RESERVE", "x", "0.01", "100", "expansion", "abc"}},
		{"-ERR bad expansion\r\n", []string{"BF.RESERVE", "x", "0.01", "100", "EXPANSION", "NONSCALING"}},
		{"-Nonscaling filters cannot expand\r\n", []string{"BF.RESERVE", "x", "0.01", "100", "EXPANSION", "2", "NONSCALING"}},
		{"-Nonscaling filters cannot expand\r\n", []string{"BF.RESERVE", "x", "0.01", "100", "nonscaling", "EXPANSION", "-1"}},
		{"-ERR expansion must be in the range [0, 32768]\r\n", []string{"BF.RESERVE", "x", "0.01", "100", "EXPANSION", "-1"}},
		{"-ERR expansion must be in the range [0, 32768]\r\n", []string{"BF.RESERVE", "x", "0.01", "100", "EXPANSION", "32769"}},
		{"-ERR bad expansion\r\n", []string{"BF.RESERVE", "EXPANSION", "0.01", "100"}}, // the key is found as the option
		{"-ERR Insufficient memory to create filter\r\n", []string{"BF.RESERVE", "x", "0.01", "1073741824"}},
		{ok, []string{"BF.RESERVE", "e0", "0.01", "100", "EXPANSION", "0"}},
		{ok, []string{"BF.RESERVE", "e0n", "0.01", "100", "NONSCALING", "EXPANSION", "0"}},
		{ok, []string{"BF.RESERVE", "NONSCALING", "0.01", "10"}},
		{ok, []string{"BF.RESERVE", "b", "0.01", "100", "foo", "bar"}},
		{ok, []string{"BF.RESERVE", "big", "0.5", "100", "EXPANSION", "32768"}},
		{ok, []string{"bf.reserve", "ns3", "0.01", "3", "NONSCALING"}},
	} {
		e.expect(2, v.want, v.args...)
	}
	e.expect(2, "*1\r\n$-1\r\n", "BF.INFO", "NONSCALING", "EXPANSION")
	e.expect(2, "*1\r\n$-1\r\n", "BF.INFO", "e0", "EXPANSION")
	e.expect(2, "*1\r\n$-1\r\n", "BF.INFO", "e0n", "EXPANSION")
	e.expect(2, "*1\r\n:2\r\n", "BF.INFO", "b", "EXPANSION")
	e.expect(2, "*1\r\n:32768\r\n", "BF.INFO", "big", "EXPANSION")
	e.expect(2, "*2\r\n"+bulk("size:0")+bulk("bytes:56 bits:448 hashes:4 hashwidth:64 capacity:100 size:0 ratio:0.125"), "BF.DEBUG", "big") // 0.5 capped to 0.25
	e.expect(2, "*2\r\n"+bulk("size:0")+bulk("bytes:16 bits:128 hashes:7 hashwidth:64 capacity:10 size:0 ratio:0.01"), "BF.DEBUG", "NONSCALING")
	e.expect(3, "%1\r\n+Size\r\n:104\r\n", "BF.INFO", "ns3", "size")
}

func TestAddMaddExists(t *testing.T) {
	e := newEnv(t)
	e.setString("s")
	e.expect(2, ":1\r\n", "BF.ADD", "k", "a")
	e.expect(2, ":0\r\n", "BF.ADD", "k", "a")
	e.expect(3, "#t\r\n", "BF.ADD", "k", "b")
	e.expect(3, "#f\r\n", "BF.ADD", "k", "b")
	e.expect(2, wrongType, "BF.ADD", "s", "a")
	e.expect(2, wrongType, "BF.MADD", "s", "a")
	e.expect(2, "*3\r\n:0\r\n:1\r\n:0\r\n", "BF.MADD", "k", "a", "c", "c")
	e.expect(3, "*2\r\n#f\r\n#t\r\n", "BF.MADD", "k", "a", "d")
	e.expect(2, ":1\r\n", "BF.EXISTS", "k", "a")
	e.expect(2, ":0\r\n", "BF.EXISTS", "k", "zz")
	e.expect(3, "#t\r\n", "BF.EXISTS", "k", "a")
	e.expect(3, "#f\r\n", "BF.EXISTS", "k", "zz")
	e.expect(2, ":0\r\n", "BF.EXISTS", "missing", "a")
	e.expect(2, ":0\r\n", "BF.EXISTS", "s", "a")
	e.expect(3, "#f\r\n", "BF.EXISTS", "s", "a")
	e.expect(2, "*3\r\n:1\r\n:0\r\n:1\r\n", "BF.MEXISTS", "k", "a", "zz", "d")
	e.expect(3, "*3\r\n#t\r\n#f\r\n#t\r\n", "BF.MEXISTS", "k", "a", "zz", "d")
	e.expect(2, "*2\r\n:0\r\n:0\r\n", "BF.MEXISTS", "s", "a", "b")
	e.expect(3, "*1\r\n#f\r\n", "BF.MEXISTS", "missing", "a")
	e.expect(2, ":4\r\n", "BF.CARD", "k")
	e.expect(3, ":4\r\n", "BF.CARD", "k")
	e.expect(2, ":0\r\n", "BF.CARD", "missing")
	e.expect(2, wrongType, "BF.CARD", "s")

	// Non-scaling capacity 2: MADD truncates at the first "full" error.
	e.expect(2, ok, "BF.RESERVE", "ns", "0.01", "2", "NONSCALING")
	e.expect(2, "*3\r\n:1\r\n:1\r\n-ERR non scaling filter is full\r\n", "BF.MADD", "ns", "a", "b", "c", "d")
	e.expect(3, "*2\r\n#f\r\n-ERR non scaling filter is full\r\n", "BF.MADD", "ns", "a", "c", "d")
	e.expect(2, "-ERR non scaling filter is full\r\n", "BF.ADD", "ns", "e")
	e.expect(3, "-ERR non scaling filter is full\r\n", "BF.ADD", "ns", "e")
	e.expect(2, ":0\r\n", "BF.ADD", "ns", "a")
	e.expect(2, "*3\r\n:1\r\n:1\r\n-ERR non scaling filter is full\r\n", "BF.INSERT", "ns2", "CAPACITY", "2", "NONSCALING", "ITEMS", "a", "b", "c", "d")

	// Growth beyond the per-filter budget.
	if err := e.cfg.Set("bf-max-filter-bytes", "1024"); err != nil {
		t.Fatal(err)
	}
	var last string
	for i := 0; i < 3000 && !strings.HasPrefix(last, "-"); i++ {
		last = e.do(2, "BF.ADD", "small", strconv.Itoa(i))
	}
	if last != "-ERR problem inserting into filter\r\n" {
		t.Fatalf("growth over budget: %q", last)
	}
	e.expect(2, "-ERR Insufficient memory to create filter\r\n", "BF.RESERVE", "big", "0.01", "1000")
	e.expect(2, "-ERR Insufficient memory to create filter\r\n", "BF.INSERT", "big", "CAPACITY", "1000", "ITEMS", "a")
	e.expect(2, ":0\r\n", "BF.EXISTS", "big", "a")
}

func TestInsert(t *testing.T) {
	e := newEnv(t)
	e.setString("s")
	for _, v := range []struct {
		want string
		args []string
	}{
		{"*2\r\n:1\r\n:1\r\n", []string{"BF.INSERT", "x", "c", "10", "i", "a", "b"}},
		{"*2\r\n:0\r\n:1\r\n", []string{"BF.INSERT", "x", "CAPACITY", "99", "ITEMS", "a", "c"}}, // options ignored: exists
		{"-Unknown argument received\r\n", []string{"BF.INSERT", "y", "FOO", "ITEMS", "a"}},
		{"-Unknown argument received\r\n", []string{"BF.INSERT", "y", "", "ITEMS", "a"}},
		{"-Bad error rate\r\n", []string{"BF.INSERT", "y", "ERROR", "abc", "ITEMS", "a"}},
		{"-Bad error rate\r\n", []string{"BF.INSERT", "y", "ERROR", "0", "ITEMS", "a"}},
		{"-Bad error rate\r\n", []string{"BF.INSERT", "y", "ERROR", "1", "ITEMS", "a"}},
		{"-Bad expansion\r\n", []string{"BF.INSERT", "y", "EXPANSION", "abc", "ITEMS", "a"}},
		{"-Bad expansion\r\n", []string{"BF.INSERT", "y", "EXPANSION", "-1", "ITEMS", "a"}},
		{"-Bad expansion\r\n", []string{"BF.INSERT", "y", "EXPANSION", "32769", "ITEMS", "a"}},
		{"-Bad capacity\r\n", []string{"BF.INSERT", "y", "CAPACITY", "0", "ITEMS", "a"}},
		{"-Bad capacity\r\n", []string{"BF.INSERT", "y", "CAPACITY", "1073741825", "ITEMS", "a"}},
		{"-Bad capacity\r\n", []string{"BF.INSERT", "y", "CAPACITY", "x", "ITEMS", "a"}},
		{"-ERR not found\r\n", []string{"BF.INSERT", "y", "NOCREATE", "ITEMS", "a"}},
		{"-ERR not found\r\n", []string{"BF.INSERT", "y", "noc", "ITEMS", "a"}},
		{wrongType, []string{"BF.INSERT", "s", "ITEMS", "a"}},
		{wrongType, []string{"BF.INSERT", "s", "NOCREATE", "ITEMS", "a"}},
		{"*1\r\n:1\r\n", []string{"BF.INSERT", "k", "ERROR", "0.001", "CAPACITY", "50000", "EXPANSION", "2", "ITEMS", "foo"}},
		{"*1\r\n:1\r\n", []string{"BF.INSERT", "ne", "NONSCALING", "EXPANSION", "4", "ITEMS", "a"}},
		{"*1\r\n:1\r\n", []string{"BF.INSERT", "e0", "EXPANSION", "0", "ITEMS", "a"}},
		{"*1\r\n:1\r\n", []string{"BF.INSERT", "lt", "er", "0.5", "ex", "3", "ca", "10", "Items", "a"}},
		{"*1\r\n:1\r\n", []string{"BF.INSERT", "e1", "e", "3", "ITEMS", "a"}},
		{"*1\r\n:1\r\n", []string{"BF.INSERT", "nx", "nonsc", "ITEMS", "a"}},
		{"*1\r\n:1\r\n", []string{"BF.INSERT", "items", "ITEMS", "ITEMS"}},
	} {
		e.expect(2, v.want, v.args...)
	}
	e.expect(3, "*2\r\n#t\r\n#f\r\n", "BF.INSERT", "x", "ITEMS", "d", "d")
	e.expect(2, "*2\r\n"+bulk("size:1")+bulk("bytes:98880 bits:791040 hashes:11 hashwidth:64 capacity:50000 size:1 ratio:0.0005"), "BF.DEBUG", "k")
	e.expect(2, "*2\r\n"+bulk("size:4")+bulk("bytes:16 bits:128 hashes:8 hashwidth:64 capacity:10 size:4 ratio:0.005"), "BF.DEBUG", "x")
	e.expect(2, "*1\r\n$-1\r\n", "BF.INFO", "ne", "expansion")
	e.expect(2, "*1\r\n$-1\r\n", "BF.INFO", "e0", "expansion")
	e.expect(2, "*1\r\n:3\r\n", "BF.INFO", "e1", "expansion")
	e.expect(2, "*1\r\n$-1\r\n", "BF.INFO", "nx", "expansion")
	e.expect(2, "*2\r\n"+bulk("size:1")+bulk("bytes:8 bits:64 hashes:4 hashwidth:64 capacity:10 size:1 ratio:0.125"), "BF.DEBUG", "lt")
	e.expect(2, "*1\r\n:3\r\n", "BF.INFO", "lt", "expansion")
}

func TestInfoDebugCard(t *testing.T) {
	e := newEnv(t)
	e.setString("s")
	e.expect(2, ":1\r\n", "BF.ADD", "d", "a")
	e.expect(2, "*10\r\n+Capacity\r\n:100\r\n+Size\r\n:240\r\n+Number of filters\r\n:1\r\n+Number of items inserted\r\n:1\r\n+Expansion rate\r\n:2\r\n", "BF.INFO", "d")
	e.expect(3, "%5\r\n+Capacity\r\n:100\r\n+Size\r\n:240\r\n+Number of filters\r\n:1\r\n+Number of items inserted\r\n:1\r\n+Expansion rate\r\n:2\r\n", "BF.INFO", "d")
	e.expect(2, ok, "BF.RESERVE", "ns", "0.01", "3", "NONSCALING")
	e.expect(2, "*10\r\n+Capacity\r\n:3\r\n+Size\r\n:104\r\n+Number of filters\r\n:1\r\n+Number of items inserted\r\n:0\r\n+Expansion rate\r\n$-1\r\n", "BF.INFO", "ns")
	e.expect(3, "%5\r\n+Capacity\r\n:3\r\n+Size\r\n:104\r\n+Number of filters\r\n:1\r\n+Number of items inserted\r\n:0\r\n+Expansion rate\r\n_\r\n", "BF.INFO", "ns")
	for _, f := range [][3]string{{"capacity", "Capacity", "100"}, {"SIZE", "Size", "240"}, {"Filters", "Number of filters", "1"}, {"items", "Number of items inserted", "1"}, {"expansion", "Expansion rate", "2"}} {
		e.expect(2, "*1\r\n:"+f[2]+"\r\n", "BF.INFO", "d", f[0])
		e.expect(3, "%1\r\n+"+f[1]+"\r\n:"+f[2]+"\r\n", "BF.INFO", "d", f[0])
	}
	e.expect(2, "*1\r\n$-1\r\n", "BF.INFO", "ns", "EXPANSION")
	e.expect(3, "%1\r\n+Expansion rate\r\n_\r\n", "BF.INFO", "ns", "EXPANSION")
	e.expect(2, "-Invalid information value\r\n", "BF.INFO", "d", "foo")
	e.expect(2, notFound, "BF.INFO", "missing")
	e.expect(2, wrongType, "BF.INFO", "s")
	e.expect(2, ok, "BF.RESERVE", "p", "0.001", "100")
	e.expect(2, "*1\r\n:296\r\n", "BF.INFO", "p", "size")
	e.expect(2, ok, "BF.RESERVE", "q", "0.001", "2000")
	e.expect(2, "*1\r\n:4056\r\n", "BF.INFO", "q", "size")

	// The worked vector of spec §1.3.
	e.expect(2, ok, "BF.RESERVE", "bf", "0.01", "10")
	items := []string{"BF.MADD", "bf"}
	for i := 0; i < 100; i++ {
		items = append(items, strconv.Itoa(i))
	}
	e.do(2, items...)
	want := "*5\r\n" + bulk("size:99") +
		bulk("bytes:16 bits:128 hashes:8 hashwidth:64 capacity:10 size:10 ratio:0.005") +
		bulk("bytes:32 bits:256 hashes:9 hashwidth:64 capacity:20 size:20 ratio:0.0025") +
		bulk("bytes:72 bits:576 hashes:10 hashwidth:64 capacity:40 size:40 ratio:0.00125") +
		bulk("bytes:160 bits:1280 hashes:11 hashwidth:64 capacity:80 size:29 ratio:0.000625")
	e.expect(2, want, "BF.DEBUG", "bf")
	e.expect(3, want, "BF.DEBUG", "bf")
	e.expect(2, ":99\r\n", "BF.CARD", "bf")
	e.expect(2, "*10\r\n+Capacity\r\n:150\r\n+Size\r\n:568\r\n+Number of filters\r\n:4\r\n+Number of items inserted\r\n:99\r\n+Expansion rate\r\n:2\r\n", "BF.INFO", "bf")
	e.expect(2, notFound, "BF.DEBUG", "missing")
	e.expect(2, wrongType, "BF.DEBUG", "s")
}

func TestScanDumpLoadChunk(t *testing.T) {
	e := newEnv(t)
	e.setString("s")
	e.expect(2, ok, "BF.RESERVE", "sd", "0.01", "2", "NONSCALING")
	e.expect(2, ":1\r\n", "BF.ADD", "sd", "x")
	var hdr, data []byte
	e.store.View([]byte("sd"), func(v keyspace.Value) {
		c := v.(*redisbloom.Chain)
		hdr = c.Header()
		_, data = c.DumpChunk(1)
	})
	if len(hdr) != 73 || len(data) != 8 {
		t.Fatalf("%d %d", len(hdr), len(data))
	}
	for _, p := range []int{2, 3} {
		e.expect(p, "*2\r\n:1\r\n"+bulk(string(hdr)), "BF.SCANDUMP", "sd", "0")
		e.expect(p, "*2\r\n:9\r\n"+bulk(string(data)), "BF.SCANDUMP", "sd", "1")
		e.expect(p, "*2\r\n:0\r\n$0\r\n\r\n", "BF.SCANDUMP", "sd", "9")
		e.expect(p, "*2\r\n:0\r\n$0\r\n\r\n", "BF.SCANDUMP", "sd", "-3")
	}
	e.expect(2, "-Second argument must be numeric\r\n", "BF.SCANDUMP", "sd", "abc")
	e.expect(2, notFound, "BF.SCANDUMP", "missing", "0")
	e.expect(2, wrongType, "BF.SCANDUMP", "s", "0")

	e.expect(2, "-ERR Second argument must be numeric\r\n", "BF.LOADCHUNK", "sd", "abc", "x")
	e.expect(2, notFound, "BF.LOADCHUNK", "new", "9", string(data))
	e.expect(2, "-ERR received bad data\r\n", "BF.LOADCHUNK", "new", "1", "garbage")
	e.expect(2, wrongType, "BF.LOADCHUNK", "s", "1", string(hdr))
	e.expect(2, "-ERR received bad data\r\n", "BF.LOADCHUNK", "sd", "1", string(hdr)) // existing: a data chunk
	e.expect(2, "-ERR received bad data\r\n", "BF.LOADCHUNK", "sd", "0", "")
	e.expect(2, "-ERR invalid offset - no link found\r\n", "BF.LOADCHUNK", "sd", "100", "x")
	e.expect(2, "-ERR invalid chunk - Too big for current filter\r\n", "BF.LOADCHUNK", "sd", "10", "123456789")
	// huge bytes in a crafted header: refused without allocating it
	bad := append([]byte(nil), hdr...)
	bad[20+7] = 0x7f
	bad[28+7] = 0x7f
	e.expect(2, "-ERR received bad data\r\n", "BF.LOADCHUNK", "new", "1", string(bad))

	e.expect(2, ok, "BF.LOADCHUNK", "copy", "1", string(hdr))
	e.expect(2, ":0\r\n", "BF.EXISTS", "copy", "x")
	e.expect(2, ok, "BF.LOADCHUNK", "copy", "9", string(data))
	e.expect(2, ":1\r\n", "BF.EXISTS", "copy", "x")
	e.expect(2, "*2\r\n:1\r\n"+bulk(string(hdr)), "BF.SCANDUMP", "copy", "0")
	e.expect(2, "*2\r\n:9\r\n"+bulk(string(data)), "BF.SCANDUMP", "copy", "1")
	e.expect(2, ":1\r\n", "BF.CARD", "copy")
}

// dumpKey returns every SCANDUMP chunk of key through the command.
func dumpKey(t testing.TB, tab *command.Table, st *keyspace.Store, key string) string {
	var sb strings.Builder
	iter := "0"
	for i := 0; i < 1000; i++ {
		out, _ := commandtest.Run(tab, st, nil, 2, commandtest.Argv("BF.SCANDUMP", key, iter))
		sb.WriteString(out)
		// *2\r\n:<next>\r\n…
		rest := strings.TrimPrefix(out, "*2\r\n:")
		next := rest[:strings.Index(rest, "\r\n")]
		if next == "0" {
			return sb.String()
		}
		iter = next
	}
	t.Fatal("SCANDUMP does not terminate")
	return ""
}

func TestReplayReproducesState(t *testing.T) {
	e := newEnv(t)
	e.setString("s")
	script := [][]string{
		{"BF.RESERVE", "r", "0.001", "50", "EXPANSION", "3"},
		{"BF.RESERVE", "NONSCALING", "0.01", "10"},
		{"BF.RESERVE", "EXPANSION", "0.01", "10"}, // fails: logs nothing
		{"BF.RESERVE", "ns", "0.3", "5", "NONSCALING"},
		{"BF.ADD", "auto1", "x"},
		{"CONFIG", "bf-error-rate", "0.02"},
		{"CONFIG", "bf-initial-size", "7"},
		{"BF.MADD", "auto2", "a", "b", "c"},
		{"CONFIG", "bf-expansion-factor", "0"},
		{"BF.ADD", "auto3", "q"},
		{"CONFIG", "bf-expansion-factor", "5"},
		{"CONFIG", "bf-error-rate", "0.9"},
		{"BF.INSERT", "ins", "ITEMS", "a", "b"},
		{"BF.INSERT", "ins2", "NONSCALING", "CAPACITY", "3", "ERROR", "0.1", "ITEMS", "a", "b", "c", "d", "e"},
		{"BF.INSERT", "EXPANSION", "EXPANSION", "0", "ITEMS", "k"},
		{"BF.ADD", "s", "x"}, // WRONGTYPE
		{"BF.ADD", "NONSCALING", "k"},
		{"BF.ADD", "ns", "a"},
		{"BF.ADD", "ns", "a"},
	}
	for i := 0; i < 400; i++ {
		script = append(script, []string{"BF.MADD", "r", "i" + strconv.Itoa(i), "j" + strconv.Itoa(i%50)})
	}
	for i := 0; i < 60; i++ {
		script = append(script, []string{"BF.ADD", "auto1", strconv.Itoa(i)}, []string{"BF.ADD", "auto3", strconv.Itoa(i)})
	}
	for _, cmd := range script {
		if cmd[0] == "CONFIG" {
			if err := e.cfg.Set(cmd[1], cmd[2]); err != nil {
				t.Fatal(err)
			}
			continue
		}
		e.do(2, cmd...)
	}
	// Copy r via SCANDUMP/LOADCHUNK: the LOADCHUNK records replay too.
	iter := int64(0)
	for {
		var next int64
		var chunk []byte
		e.store.View([]byte("r"), func(v keyspace.Value) { next, chunk = v.(*redisbloom.Chain).DumpChunk(iter) })
		if next == 0 {
			break
		}
		if got := e.do(2, "BF.LOADCHUNK", "rcopy", strconv.FormatInt(next, 10), string(chunk)); got != ok {
			t.Fatalf("LOADCHUNK: %q", got)
		}
		iter = next
	}

	recs := e.log.Records()
	for _, r := range recs {
		switch string(r[0]) {
		case "_BF.CREATE", "BF.MADD", "BF.LOADCHUNK":
		default:
			t.Fatalf("non-canonical record %q", r)
		}
	}
	// Replay into a fresh store whose configuration differs on purpose.
	tab2, cfg2 := command.NewTable(), config.New()
	Register(tab2, cfg2)
	for _, kv := range [][2]string{{"bf-error-rate", "0.2"}, {"bf-initial-size", "3"}, {"bf-expansion-factor", "1"}} {
		if err := cfg2.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	st2 := keyspace.New(nil)
	st2.Update([]byte("s"), func(tx *keyspace.Txn) { tx.Set(strVal("v")) })
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
		if k == "s" {
			continue
		}
		var a, b *redisbloom.Chain
		e.store.View([]byte(k), func(v keyspace.Value) { a = v.(*redisbloom.Chain).CloneChain() })
		st2.View([]byte(k), func(v keyspace.Value) { b = v.(*redisbloom.Chain).CloneChain() })
		if !a.Equal(b) {
			t.Errorf("key %q differs after replay", k)
		}
		if dumpKey(t, e.tab, e.store, k) != dumpKey(t, tab2, st2, k) {
			t.Errorf("key %q: SCANDUMP differs after replay", k)
		}
	}
	// Spot checks of the state that was replayed.
	want := map[string]string{
		"auto3":      "*1\r\n$-1\r\n", // created while bf-expansion-factor was 0
		"NONSCALING": "*1\r\n$-1\r\n",
		"EXPANSION":  "*1\r\n$-1\r\n",
		"ins":        "*1\r\n:5\r\n",
	}
	for k, w := range want {
		if out, _ := commandtest.Run(tab2, st2, cfg2, 2, commandtest.Argv("BF.INFO", k, "EXPANSION")); out != w {
			t.Errorf("replayed %s expansion %q, want %q", k, out, w)
		}
	}
	if out, _ := commandtest.Run(tab2, st2, cfg2, 2, commandtest.Argv("BF.DEBUG", "ins")); !strings.Contains(out, "capacity:7 ") || !strings.Contains(out, "ratio:0.125") {
		t.Errorf("ins created with capped error 0.25 and size 7: %q", out)
	}
}

func TestCreateRecordForms(t *testing.T) {
	e := newEnv(t)
	e.do(2, "BF.RESERVE", "NONSCALING", "0.01", "10")
	e.do(2, "BF.ADD", "a", "x")
	e.do(2, "BF.ADD", "a", "x") // no effect: not logged
	e.cfg.Set("bf-error-rate", "0.3")
	e.do(2, "BF.INSERT", "b", "EXPANSION", "0", "ITEMS", "p", "q")
	e.do(2, "BF.RESERVE", "c", "0.001", "100", "EXPANSION", "7")
	var got []string
	for _, r := range e.log.Records() {
		got = append(got, string(bytes.Join(r, []byte(" "))))
	}
	want := []string{
		"_BF.CREATE NONSCALING 0.01 10 2 NONSCALING",
		"_BF.CREATE a 0.01 100 2 SCALING",
		"BF.MADD a x",
		"_BF.CREATE b 0.25 100 0 NONSCALING",
		"BF.MADD b p q",
		"_BF.CREATE c 0.001 100 7 SCALING",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records:\n got %q\nwant %q", got, want)
	}
	// _BF.CREATE validates its arguments.
	for _, args := range [][]string{
		{"_BF.CREATE", "z", "0", "10", "2", "SCALING"},
		{"_BF.CREATE", "z", "0.1", "0", "2", "SCALING"},
		{"_BF.CREATE", "z", "0.1", "10", "0", "SCALING"},
		{"_BF.CREATE", "z", "0.1", "10", "2", "MAYBE"},
		{"_BF.CREATE", "z", "0.1", "10", "-1", "NONSCALING"},
	} {
		e.expect(2, "-ERR invalid _bf.create arguments\r\n", args...)
	}
	e.expect(2, "-ERR item exists\r\n", "_BF.CREATE", "a", "0.1", "10", "2", "SCALING")
}

func TestLogFailure(t *testing.T) {
	e := newEnv(t)
	e.log.SetFail(errors.New("disk full"))
	e.expect(2, "-ERR disk full\r\n", "BF.ADD", "k", "a")
	// The in-memory change stays.
	e.expect(2, ":1\r\n", "BF.EXISTS", "k", "a")
	e.expect(2, "-ERR disk full\r\n", "BF.RESERVE", "r", "0.01", "10")
	e.expect(2, "-ERR item exists\r\n", "BF.RESERVE", "r", "0.01", "10") // nothing logged: no failure
}

func TestSeq(t *testing.T) {
	e := newEnv(t)
	if _, seq := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv("BF.ADD", "k", "a")); seq != 2 {
		t.Fatalf("seq %d after create+add", seq)
	}
	if _, seq := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv("BF.ADD", "k", "a")); seq != 0 {
		t.Fatalf("seq %d for a no-op", seq)
	}
}

func TestConfig(t *testing.T) {
	e := newEnv(t)
	for _, bad := range [][2]string{
		{"bf-error-rate", "0"}, {"bf-error-rate", "1"}, {"bf-error-rate", "abc"},
		{"bf-initial-size", "0"}, {"bf-initial-size", "1073741825"}, {"bf-initial-size", "1.5"},
		{"bf-expansion-factor", "-1"}, {"bf-expansion-factor", "32769"},
		{"bf-max-filter-bytes", "1"},
	} {
		if err := e.cfg.Set(bad[0], bad[1]); err == nil {
			t.Errorf("CONFIG SET %s %s accepted", bad[0], bad[1])
		}
	}
	if err := e.cfg.Set("bf-error-rate", "0.5"); err != nil {
		t.Fatal(err)
	}
	// RedisBloom stores a rate over the 0.25 cap as the cap
	// (src/config.c: the value string becomes the double 0.25).
	if v, _ := e.cfg.Get("bf-error-rate"); v != "0.25" {
		t.Fatalf("CONFIG GET returns %q, want the cap 0.25", v)
	}
	e.cfg.Set("bf-initial-size", "10")
	e.cfg.Set("bf-expansion-factor", "0")
	e.do(2, "BF.ADD", "k", "a")
	e.expect(2, "*2\r\n"+bulk("size:1")+bulk("bytes:8 bits:64 hashes:3 hashwidth:64 capacity:10 size:1 ratio:0.25"), "BF.DEBUG", "k")
	e.expect(2, "*1\r\n$-1\r\n", "BF.INFO", "k", "expansion")
}

func TestConcurrent(t *testing.T) {
	e := newEnv(t)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				key := "k" + strconv.Itoa(i%4)
				item := strconv.Itoa(g*1000 + i)
				e.do(2+g%2, "BF.ADD", key, item)
				if out := e.do(2, "BF.EXISTS", key, item); out != ":1\r\n" {
					t.Errorf("false negative %s %s: %q", key, item, out)
					return
				}
				e.do(3, "BF.INFO", key)
			}
		}(g)
	}
	wg.Wait()
	// Exactly one create record per key, even with racing autocreates.
	creates := 0
	for _, r := range e.log.Records() {
		if string(r[0]) == "_BF.CREATE" {
			creates++
		}
	}
	if creates != 4 {
		t.Fatalf("%d create records", creates)
	}
}

func BenchmarkBFAdd(b *testing.B) {
	e := newEnv(b)
	e.store = keyspace.New(nil)
	spec := e.tab.Lookup([]byte("bf.add"))
	var buf bytes.Buffer
	w := resp.NewWriter(&buf)
	ctx := &command.Ctx{R: resp.New(w, 2), Store: e.store, Config: e.cfg}
	args := commandtest.Argv("BF.ADD", "key", "")
	i := 0
	for b.Loop() {
		args[2] = strconv.AppendInt(args[2][:0], int64(i), 10)
		ctx.Args = args
		spec.Handler(ctx)
		w.Flush()
		buf.Reset()
		i++
	}
}

func BenchmarkBFExists(b *testing.B) {
	e := newEnv(b)
	e.store = keyspace.New(nil)
	e.do(2, "BF.ADD", "key", "x")
	spec := e.tab.Lookup([]byte("bf.exists"))
	var buf bytes.Buffer
	w := resp.NewWriter(&buf)
	ctx := &command.Ctx{R: resp.New(w, 2), Store: e.store, Config: e.cfg}
	args := commandtest.Argv("BF.EXISTS", "key", "")
	i := 0
	for b.Loop() {
		args[2] = strconv.AppendInt(args[2][:0], int64(i), 10)
		ctx.Args = args
		spec.Handler(ctx)
		w.Flush()
		buf.Reset()
		i++
	}
}
