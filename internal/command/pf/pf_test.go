package pf

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/probly/probly/hll"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/command/str"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/redishll"
	"github.com/probly/probly/internal/strval"
)

// take renders and forgets l's records (long arguments abbreviated).
func take(l *commandtest.Logger) []string {
	recs := l.Take()
	out := make([]string, len(recs))
	for i, r := range recs {
		parts := make([]string, len(r))
		for j, a := range r {
			if len(a) > 16 {
				parts[j] = fmt.Sprintf("<%d bytes>", len(a))
			} else {
				parts[j] = string(a)
			}
		}
		out[i] = strings.Join(parts, " ")
	}
	return out
}

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
	str.Register(e.tab, e.cfg)
	Register(e.tab, e.cfg)
	return e
}

func (e *env) do(proto int, args ...string) string {
	s, _ := commandtest.Run(e.tab, e.store, e.cfg, proto, commandtest.Argv(args...))
	return s
}

// expect checks the exact reply bytes in RESP2 and RESP3 (the PF replies
// are the same in both).
func (e *env) expect(want string, args ...string) {
	e.t.Helper()
	if got := e.do(2, args...); got != want {
		e.t.Errorf("RESP2 %q:\n got %q\nwant %q", args, got, want)
	}
}

func (e *env) value(key string) []byte {
	var b []byte
	e.store.View([]byte(key), func(v keyspace.Value) {
		if s, ok := v.(*strval.String); ok {
			b = append([]byte(nil), s.B...)
		}
	})
	return b
}

func (e *env) set(key string, v keyspace.Value) {
	e.store.Update([]byte(key), func(tx *keyspace.Txn) { tx.Set(v) })
}

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

const (
	wrongType = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	notHLL    = "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"
	invalid   = "-INVALIDOBJ Corrupted HLL object detected\r\n"
)

func arity(name string) string {
	return "-ERR wrong number of arguments for '" + name + "' command\r\n"
}

func TestRegistration(t *testing.T) {
	e := newEnv(t)
	for name, v := range map[string]struct {
		arity                 int
		flags                 command.Flags
		first, last, stepping int
	}{
		"pfadd":      {-2, command.FlagWrite | command.FlagDenyOOM | command.FlagFast, 1, 1, 1},
		"pfcount":    {-2, command.FlagReadonly, 1, -1, 1},
		"pfmerge":    {-2, command.FlagWrite | command.FlagDenyOOM, 1, -1, 1},
		"pfdebug":    {3, command.FlagWrite | command.FlagDenyOOM | command.FlagAdmin, 2, 2, 1},
		"pfselftest": {1, command.FlagAdmin, 0, 0, 0},
	} {
		s := e.tab.Lookup([]byte(strings.ToUpper(name)))
		if s == nil || s.Arity != v.arity || s.Flags != v.flags || s.FirstKey != v.first || s.LastKey != v.last || s.Step != v.stepping {
			t.Errorf("%s: %+v", name, s)
		}
	}
	if v, ok := e.cfg.Get("hll-sparse-max-bytes"); !ok || v != "3000" {
		t.Fatalf("hll-sparse-max-bytes = %q %v", v, ok)
	}
}

func TestArity(t *testing.T) {
	e := newEnv(t)
	for _, v := range [][]string{{"PFADD"}, {"PFCOUNT"}, {"PFMERGE"}, {"PFDEBUG", "GETREG"}, {"PFDEBUG", "GETREG", "k", "x"}, {"PFSELFTEST", "x"}} {
		for _, p := range []int{2, 3} {
			if got := e.do(p, v...); got != arity(strings.ToLower(v[0])) {
				t.Errorf("%q: %q", v, got)
			}
		}
	}
	if recs := take(e.log); len(recs) != 0 {
		t.Fatal(recs)
	}
}

// Spec §4.2 vectors through the commands, in RESP2 and RESP3.
func TestVectors(t *testing.T) {
	for _, proto := range []int{2, 3} {
		e := newEnv(t)
		want27, _ := hex.DecodeString("48594c4c01000000000000000000008060f38050b1844bfb80425a")
		steps := []struct{ want, args string }{
			{":1\r\n", "PFADD hll a b c"},
			{":0\r\n", "PFADD hll a b c"},
			{bulk(string(want27)), "GET hll"},
			{bulk("Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603"), "PFDEBUG DECODE hll"},
			{"+sparse\r\n", "PFDEBUG ENCODING hll"},
			{":3\r\n", "PFCOUNT hll"},
			{bulk("HYLL\x01\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00" + string(want27[16:])), "GET hll"},
			{":3\r\n", "PFCOUNT hll"},
			{"+OK\r\n", "PFMERGE nk"},
			{bulk("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"), "GET nk"},
			{":1\r\n", "PFADD k"},
			{":0\r\n", "PFADD k"},
			{":0\r\n", "PFCOUNT k"},
			{bulk("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"), "GET k"},
			{":0\r\n", "PFCOUNT missing"},
			{":3\r\n", "PFCOUNT hll missing nk"},
			{":1\r\n", "PFDEBUG TODENSE hll"},
			{":0\r\n", "PFDEBUG TODENSE hll"},
			{"+dense\r\n", "PFDEBUG ENCODING hll"},
			{"-ERR HLL encoding is not sparse\r\n", "PFDEBUG DECODE hll"},
			{":12304\r\n", "STRLEN hll"},
			{":3\r\n", "PFCOUNT hll"}, // the cache survived the conversion
			{"-ERR The specified key does not exist\r\n", "PFDEBUG GETREG nokey"},
			{"-ERR The specified key does not exist\r\n", "PFDEBUG foo nokey"},
			{"-ERR Unknown PFDEBUG subcommand 'foo'\r\n", "PFDEBUG foo hll"},
			{"+OK\r\n", "PFMERGE hll2 hll nk"},
			{"+dense\r\n", "PFDEBUG ENCODING hll2"},
			{":3\r\n", "PFCOUNT hll2"},
		}
		for _, s := range steps {
			if got := e.do(proto, strings.Fields(s.args)...); got != s.want {
				t.Errorf("RESP%d %s:\n got %q\nwant %q", proto, s.args, got, s.want)
			}
		}
		got := e.do(proto, "PFDEBUG", "GETREG", "hll")
		want := "*16384\r\n" + strings.Repeat(":0\r\n", 8436) + ":1\r\n" + strings.Repeat(":0\r\n", 12711-8437) + ":2\r\n" +
			strings.Repeat(":0\r\n", 15780-12712) + ":1\r\n" + strings.Repeat(":0\r\n", 16383-15780)
		if got != want {
			t.Errorf("RESP%d GETREG: %d bytes, want %d", proto, len(got), len(want))
		}
	}
}

func TestTypeErrors(t *testing.T) {
	e := newEnv(t)
	e.set("bf", otherVal{})
	e.expect(":1\r\n", "PFADD", "hll", "a")
	take(e.log)
	for _, args := range [][]string{
		{"PFADD", "bf", "a"}, {"PFADD", "bf"}, {"PFCOUNT", "bf"}, {"PFCOUNT", "hll", "bf"}, {"PFCOUNT", "bf", "hll"},
		{"PFMERGE", "bf"}, {"PFMERGE", "bf", "hll"}, {"PFMERGE", "hll", "bf"}, {"PFDEBUG", "GETREG", "bf"}, {"PFDEBUG", "foo", "bf"},
	} {
		e.expect(wrongType, args...)
	}
	for _, s := range []string{"", "123", "HYL", "HYLL", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
		"HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff", "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"} {
		e.set("s", strval.New([]byte(s)))
		for _, args := range [][]string{{"PFADD", "s", "a"}, {"PFCOUNT", "s"}, {"PFCOUNT", "s", "hll"}, {"PFMERGE", "s"},
			{"PFMERGE", "x", "hll", "s"}, {"PFDEBUG", "ENCODING", "s"}, {"PFDEBUG", "foo", "s"}} {
			e.expect(notHLL, args...)
		}
		if !bytes.Equal(e.value("s"), []byte(s)) {
			t.Fatalf("%q modified", s)
		}
	}
	// Corrupted sparse bodies.
	// XZERO:8000 covers registers 0…7999 only; "a" is register 12711.
	e.set("c", strval.New([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x5f\x3f")))
	for _, args := range [][]string{{"PFADD", "c", "a"}, {"PFCOUNT", "c"}, {"PFCOUNT", "c", "hll"}, {"PFCOUNT", "hll", "c"},
		{"PFMERGE", "c"}, {"PFMERGE", "hll", "c"}, {"PFDEBUG", "GETREG", "c"}, {"PFDEBUG", "TODENSE", "c"}} {
		e.expect(invalid, args...)
	}
	e.expect(bulk("Z:8000"), "PFDEBUG", "DECODE", "c")
	if recs := take(e.log); len(recs) != 0 {
		t.Fatalf("failed commands logged %q", recs)
	}
	if e.do(2, "PFCOUNT", "x") != ":0\r\n" || e.value("x") != nil {
		t.Fatal("a failed PFMERGE created its destination")
	}
	// A valid cache is trusted without reading the body (spec §4.2).
	e.set("t", strval.New([]byte("HYLL\x01\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x7f\xff\x99\x99")))
	e.expect(":7\r\n", "PFCOUNT", "t")
	e.expect(invalid, "PFCOUNT", "t", "hll")
	// A string holding every register at 63: the estimate overflows like
	// Redis's llroundl (verified against redis-server 7.0.15).
	e.set("max", strval.New(append([]byte("HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"), bytes.Repeat([]byte{0xff}, 12288)...)))
	e.expect(":-9223372036854775808\r\n", "PFCOUNT", "max")
}

// The canonical records of spec'd mutations, and nothing for the rest.
func TestRecords(t *testing.T) {
	e := newEnv(t)
	check := func(want ...string) {
		t.Helper()
		got := take(e.log)
		if strings.Join(got, " | ") != strings.Join(want, " | ") {
			t.Fatalf("records %q, want %q", got, want)
		}
	}
	e.expect(":1\r\n", "PFADD", "h", "a")
	check("SET h <21 bytes>")
	e.expect(":0\r\n", "PFADD", "h", "a")
	check()
	e.expect(":1\r\n", "PFCOUNT", "h")
	check("PFCOUNT h")
	e.expect(":1\r\n", "PFCOUNT", "h")
	check()
	e.expect(":1\r\n", "PFCOUNT", "h", "nokey")
	check()
	e.expect("+OK\r\n", "PFMERGE", "d", "h")
	check("SET d <21 bytes> KEEPTTL")
	e.expect(":1\r\n", "PFDEBUG", "TODENSE", "d")
	check("SET d <12304 bytes> KEEPTTL")
	e.expect(":0\r\n", "PFDEBUG", "TODENSE", "d")
	e.expect("+dense\r\n", "PFDEBUG", "ENCODING", "d")
	check()
	e.expect(":1\r\n", "PFADD", "d", "b", "c")
	check("PFADD d b c")
	e.expect(":0\r\n", "PFADD", "d", "b", "c")
	check()
	e.do(2, "PFDEBUG", "GETREG", "h")
	check("SET h <12304 bytes> KEEPTTL")
	e.do(2, "PFDEBUG", "GETREG", "h")
	check()
}

// Replaying the records reproduces the bytes whatever hll-sparse-max-bytes
// is at replay time.
func TestReplayIndependentOfConfig(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, pair := range [][2]string{{"200", "3000"}, {"3000", "0"}, {"20000", "50"}} {
		e := newEnv(t)
		if err := e.cfg.Set("hll-sparse-max-bytes", pair[0]); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3000; i++ {
			key := "k" + strconv.Itoa(rng.IntN(4))
			switch rng.IntN(6) {
			case 0, 1, 2:
				args := []string{"PFADD", key}
				for j := rng.IntN(8); j >= 0; j-- {
					args = append(args, "e"+strconv.Itoa(rng.IntN(100000)))
				}
				e.do(2, args...)
			case 3:
				e.do(2, "PFCOUNT", key)
			case 4:
				e.do(2, "PFMERGE", key, "k"+strconv.Itoa(rng.IntN(4)))
			case 5:
				if rng.IntN(20) == 0 {
					e.do(2, "PFDEBUG", "TODENSE", key)
				}
			}
		}
		recs := e.log.Records()
		f := newEnv(t)
		if err := f.cfg.Set("hll-sparse-max-bytes", pair[1]); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if got, _ := commandtest.Run(f.tab, f.store, f.cfg, 2, r); strings.HasPrefix(got, "-") {
				t.Fatalf("replay %q: %s", r[0], got)
			}
		}
		for k := 0; k < 4; k++ {
			key := "k" + strconv.Itoa(k)
			if !bytes.Equal(e.value(key), f.value(key)) {
				t.Fatalf("settings %v: %s differs after replay", pair, key)
			}
		}
	}
}

// A failed log append: copies (sparse) change nothing; in-place dense
// changes stay and the client gets the error.
func TestLogFailure(t *testing.T) {
	e := newEnv(t)
	e.expect(":1\r\n", "PFADD", "s", "a")
	e.expect("+OK\r\n", "PFMERGE", "d", "s")
	e.expect(":1\r\n", "PFDEBUG", "TODENSE", "d")
	sv, dv := e.value("s"), e.value("d")
	e.log.SetFail(errors.New("disk full"))
	for _, args := range [][]string{{"PFADD", "s", "b"}, {"PFADD", "new", "b"}, {"PFMERGE", "s", "d"}, {"PFDEBUG", "TODENSE", "s"}, {"PFDEBUG", "GETREG", "s"}} {
		e.expect("-ERR disk full\r\n", args...)
	}
	if !bytes.Equal(e.value("s"), sv) || e.value("new") != nil {
		t.Fatal("a failed log changed a sparse value")
	}
	e.expect("-ERR disk full\r\n", "PFADD", "d", "b")
	if bytes.Equal(e.value("d"), dv) {
		t.Fatal("the in-place dense change should stay")
	}
	e.expect("-ERR disk full\r\n", "PFCOUNT", "d")
	e.log.SetFail(nil)
	e.expect(":2\r\n", "PFCOUNT", "d")
}

func TestConfigParam(t *testing.T) {
	e := newEnv(t)
	for _, v := range []struct {
		in   string
		want int64 // documentation: the value in bytes
		err  string
	}{
		{"0", 0, ""}, {"", 0, ""}, {"1kb", 1024, ""}, {"1K", 1000, ""}, {"2Mb", 2 << 20, ""}, {"1g", 1e9, ""}, {"3gB", 3 << 30, ""}, {"7b", 7, ""},
		{"9223372036854775807", 1<<63 - 1, ""},
		{"-1", 0, "argument must be a memory value"}, {"abc", 0, "argument must be a memory value"}, {" 1", 0, "argument must be a memory value"},
		{"+1", 0, "argument must be a memory value"}, {"1.5", 0, "argument must be a memory value"}, {"1\u212a", 0, "argument must be a memory value"},
		{"9223372036854775808", 0, "argument must be between 0 and 9223372036854775807 inclusive"},
		{"99999999999999999999", 0, "argument must be between 0 and 9223372036854775807 inclusive"},
		{"20000000000gb", 3028092406290448384, ""}, // wraps like C
	} {
		err := e.cfg.Set("hll-sparse-max-bytes", v.in)
		switch {
		case v.err != "" && (err == nil || err.Error() != v.err):
			t.Errorf("%q: %v", v.in, err)
		case v.err == "" && err != nil:
			t.Errorf("%q: %v", v.in, err)
		}
	}
	e.cfg.Set("hll-sparse-max-bytes", "1kb")
	e.expect(":1\r\n", "PFADD", "x", "a")
	e.cfg.Set("hll-sparse-max-bytes", "0")
	e.expect(":1\r\n", "PFADD", "x", "b")
	e.expect("+dense\r\n", "PFDEBUG", "ENCODING", "x")
}

func TestMemToULL(t *testing.T) {
	for in, want := range map[string]uint64{"": 0, "0": 0, "12": 12, "1k": 1000, "1KB": 1024, "5m": 5e6, "5mb": 5 << 20, "2g": 2e9, "2gb": 2 << 30,
		"20000000000gb":        3028092406290448384, // 20000000000·2^30 mod 2^64, as C wraps
		"99999999999999999999": 1<<64 - 1,
	} {
		if got, ok := memToULL(in); !ok || got != want {
			t.Errorf("%q = %d %v, want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"-1", "x", "1x", "1 kb", "k1", "0x10", strings.Repeat("1", 130)} {
		if _, ok := memToULL(in); ok {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestSelfTest(t *testing.T) {
	old := selfTestElems
	selfTestElems = 20000
	defer func() { selfTestElems = old }()
	e := newEnv(t)
	e.expect("+OK\r\n", "PFSELFTEST")
}

// Concurrent PFADDs (run with -race): the registers end up as the union,
// whatever the interleaving.
func TestConcurrentPFADD(t *testing.T) {
	e := newEnv(t)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				e.do(2, "PFADD", "shared", "g"+strconv.Itoa(g)+"-"+strconv.Itoa(i))
				if i%100 == 0 {
					e.do(2, "PFCOUNT", "shared")
					e.do(2, "PFCOUNT", "shared", "other")
					e.do(2, "GET", "shared")
				}
			}
		}()
	}
	wg.Wait()
	want, _ := hll.New(14)
	for g := 0; g < 4; g++ {
		for i := 0; i < 2000; i++ {
			want.Add([]byte("g" + strconv.Itoa(g) + "-" + strconv.Itoa(i)))
		}
	}
	regs, _, err := redishll.GetReg(e.value("shared"))
	if err != nil || !bytes.Equal(regs, want.Registers()) {
		t.Fatalf("registers differ: %v", err)
	}
}

// FuzzServerCorruption: a valid HLL corrupted SETRANGE-style (bytes written
// at an offset, possibly extending the string), then PFADD, PFCOUNT,
// PFMERGE and PFDEBUG through the command table. Replies are values or the
// Redis errors; nothing panics.
func FuzzServerCorruption(f *testing.F) {
	f.Add(uint16(3), uint16(16), []byte{0x7f}, uint8(0))
	f.Add(uint16(3000), uint16(40), []byte{0x00, 0x00}, uint8(1))
	f.Add(uint16(0), uint16(4), []byte{0x00}, uint8(2))
	f.Add(uint16(20), uint16(15), []byte{0x00}, uint8(3))
	f.Add(uint16(50), uint16(17), []byte{0x40}, uint8(4))
	f.Fuzz(func(t *testing.T, n uint16, off uint16, data []byte, op uint8) {
		e := newEnv(t)
		args := []string{"PFADD", "c"}
		for i := 0; i < int(n%5000); i++ {
			args = append(args, strconv.Itoa(i))
		}
		e.do(2, args...)
		e.do(2, "PFADD", "ok", "a", "b")
		e.do(2, "SETRANGE", "c", strconv.Itoa(int(off%13000)), string(data))
		allowed := func(r string) bool {
			if r == "" {
				return false
			}
			switch r[0] {
			case ':', '+', '*', '$':
				return true
			}
			return r == invalid || r == notHLL || r == "-ERR HLL encoding is not sparse\r\n"
		}
		cmds := [][]string{{"PFADD", "c", "x", "y"}, {"PFCOUNT", "c"}, {"PFCOUNT", "c", "ok"}, {"PFMERGE", "c", "ok"},
			{"PFMERGE", "m", "ok", "c"}, {"PFDEBUG", "GETREG", "c"}, {"PFDEBUG", "DECODE", "c"}, {"PFDEBUG", "ENCODING", "c"}, {"PFDEBUG", "TODENSE", "c"}}
		for k := 0; k < 4; k++ {
			c := cmds[(int(op)+k*7)%len(cmds)]
			if r := e.do(2, c...); !allowed(r) {
				t.Fatalf("%q: %q", c, r)
			}
			e.do(2, "GET", "c")
		}
	})
}
