package cms_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/cms"
	"github.com/probly/probly/internal/command/commandtest"
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
	e.t.Helper()
	got, _ := commandtest.Run(e.tab, e.store, e.cfg, proto, commandtest.Argv(args...))
	return got
}

// step is one command and its expected reply, written compactly: "OK",
// "(err …)", an integer, or a list of those in [ ] separated by spaces.
type step struct {
	cmd  string
	want string
}

// wire renders a compact reply as RESP2 bytes.
func wire(s string) string {
	switch {
	case s == "OK":
		return "+OK\r\n"
	case strings.HasPrefix(s, "(err "):
		return "-" + strings.TrimSuffix(strings.TrimPrefix(s, "(err "), ")") + "\r\n"
	case strings.HasPrefix(s, "["):
		var elems []string
		for _, part := range splitList(s[1 : len(s)-1]) {
			elems = append(elems, wire(part))
		}
		return fmt.Sprintf("*%d\r\n%s", len(elems), strings.Join(elems, ""))
	case strings.HasPrefix(s, "+"):
		return s + "\r\n"
	}
	return ":" + s + "\r\n"
}

// splitList splits on spaces outside "(err …)".
func splitList(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		switch {
		case i == len(s) || (s[i] == ' ' && depth == 0):
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		case s[i] == '(':
			depth++
		case s[i] == ')':
			depth--
		}
	}
	return out
}

func (e *env) run(steps []step) {
	e.t.Helper()
	for _, s := range steps {
		if got := e.do(2, strings.Fields(s.cmd)...); got != wire(s.want) {
			e.t.Fatalf("%s = %q, want %q", s.cmd, got, wire(s.want))
		}
	}
}

func info(w, d, c string) string { return "[+width " + w + " +depth " + d + " +count " + c + "]" }

// The CMS vectors of spec redis-sketches.md §4.2 (T, P, G and L).
func TestSpecVectors(t *testing.T) {
	const L = "2147483647"
	ov := "(err CMS: INCRBY overflow)"
	incr := "CMS.INCRBY cms a " + L + " b 10 c 7 d 5"
	newEnv(t).run([]step{
		{"CMS.INITBYDIM cms1 20 5", "OK"}, {"CMS.INCRBY cms1 a 5", "[5]"}, {"CMS.QUERY cms1 a", "[5]"},
		{"CMS.INFO cms1", info("20", "5", "5")},
		{"CMS.INITBYPROB cms2 0.001 0.01", "OK"}, {"CMS.INCRBY cms2 a 5", "[5]"}, {"CMS.INFO cms2", info("2000", "7", "5")},
		// test_overflow and the L vectors.
		{"CMS.INITBYDIM cms 5 2", "OK"},
		{incr, "[" + L + " 10 17 5]"}, {"CMS.QUERY cms a b c d", "[" + L + " 17 17 5]"},
		{incr, "[4294967294 27 34 10]"},
		{incr, "[" + ov + " 44 51 15]"}, {"CMS.QUERY cms a b c d", "[4294967295 51 51 15]"},
		{"CMS.INFO cms", info("5", "2", "6442451007")},
		{"CMS.INCRBY cms a 0", "[" + ov + "]"},
		{"CMS.INCRBY cms z 9223372036854775807", "[" + ov + "]"},
		{"CMS.INFO cms", info("5", "2", "-9223372030412324802")},
		{"CMS.INCRBY cms z 9223372036854775807", "[" + ov + "]"},
		{"CMS.INFO cms", info("5", "2", "6442451005")},
		// test_smallset, test_incrby_query.
		{"CMS.INITBYDIM s 2 2", "OK"}, {"CMS.INCRBY s foo 10 bar 42", "[10 42]"}, {"CMS.QUERY s foo bar", "[10 42]"},
		{"CMS.INFO s", info("2", "2", "52")}, {"CMS.INCRBY s foo 0 bar 0", "[10 42]"},
		{"CMS.INITBYDIM q 1000 5", "OK"}, {"CMS.INCRBY q bar 5 baz 42", "[5 42]"}, {"CMS.QUERY q foo bar baz", "[0 5 42]"},
		{"CMS.INITBYDIM test 1000 5", "OK"}, {"CMS.INCRBY test foo 1", "[1]"}, {"CMS.INCRBY test foo 1 bar 1", "[2 1]"},
		// test_merge.
		{"CMS.INITBYDIM small_1 20 5", "OK"}, {"CMS.INITBYDIM small_2 20 5", "OK"}, {"CMS.INITBYDIM small_3 20 5", "OK"},
		{"CMS.INCRBY small_1 a 21", "[21]"}, {"CMS.INCRBY small_2 a 21", "[21]"},
		{"CMS.MERGE small_3 2 small_1 small_2", "OK"}, {"CMS.QUERY small_3 a", "[42]"},
		{"CMS.INITBYDIM e1 20 5", "OK"}, {"CMS.INITBYDIM e2 20 5", "OK"}, {"CMS.MERGE small_3 2 e1 e2", "OK"},
		{"CMS.INFO small_3", info("20", "5", "0")},
		{"CMS.INITBYDIM big 2000 10", "OK"}, {"CMS.MERGE big 2 small_1 small_2", "(err CMS: width/depth is not equal)"},
		{"CMS.MERGE small_3 2 small_1 nokey", "(err CMS: key does not exist)"},
		{"CMS.MERGE small_3 2 big nokey", "(err CMS: width/depth is not equal)"},
		{"CMS.MERGE small_3 2 nokey big", "(err CMS: key does not exist)"},
		// P:test_cms_merge.
		{"CMS.INITBYDIM A 1000 5", "OK"}, {"CMS.INITBYDIM B 1000 5", "OK"}, {"CMS.INITBYDIM C 1000 5", "OK"},
		{"CMS.INCRBY A foo 5 bar 3 baz 9", "[5 3 9]"}, {"CMS.INCRBY B foo 2 bar 3 baz 1", "[2 3 1]"},
		{"CMS.MERGE C 2 A B", "OK"}, {"CMS.QUERY C foo bar baz", "[7 6 10]"},
		{"CMS.MERGE C 2 A B WEIGHTS 1 2", "OK"}, {"CMS.QUERY C foo bar baz", "[9 9 11]"},
		{"CMS.MERGE C 2 A B weights 2 3", "OK"}, {"CMS.QUERY C foo bar baz", "[16 15 21]"},
		// G.
		{"CMS.MERGE destCms1 2 testcms2 testcms3", "(err CMS: key does not exist)"},
		{"CMS.INITBYDIM g1 5 10", "OK"}, {"CMS.INITBYDIM g2 5 10", "OK"}, {"CMS.INITBYDIM g3 5 10", "OK"},
		{"CMS.INCRBY g1 item1 1 item2 2", "[1 2]"}, {"CMS.INCRBY g2 item2 2 item3 3", "[2 3]"},
		{"CMS.MERGE g3 2 g1 g2", "OK"}, {"CMS.QUERY g3 item1 item2 item3", "[1 4 3]"},
		{"CMS.MERGE g3 2 g1 g2 WEIGHTS 1 2", "OK"}, {"CMS.QUERY g3 item1 item2 item3", "[1 6 6]"},
		{"CMS.INITBYDIM g4 2 20", "OK"}, {"CMS.INITBYDIM g5 3 20", "OK"}, {"CMS.MERGE g4 2 g4 g5", "(err CMS: width/depth is not equal)"},
	})
}

// test_merge_success, _large, and the overflow vectors of §4.2.
func TestMergeVectors(t *testing.T) {
	e := newEnv(t)
	var steps []step
	for _, k := range []string{"cms1", "cms2", "cms3", "cms5", "cms6"} {
		steps = append(steps, step{"CMS.INITBYDIM " + k + " 1000 5", "OK"})
	}
	for i := range 100 {
		for j, p := range []string{"foo", "bar", "baz"} {
			steps = append(steps, step{fmt.Sprintf("CMS.INCRBY cms%d %s%d 1", j+1, p, i), "[1]"})
		}
	}
	e.run(append(steps,
		step{"CMS.MERGE cms5 3 cms1 cms2 cms3", "OK"},
		step{"CMS.MERGE cms6 2 cms5 cms3 WEIGHTS 1 -1", "OK"},
		step{"CMS.INFO cms6", info("1000", "5", "200")},
		step{"CMS.QUERY cms6 baz0 baz1 baz50 baz99", "[0 0 0 0]"},
		step{"CMS.MERGE cms6 2 cms6 cms3 WEIGHTS 1 -1", "(err CMS: MERGE overflow)"},
		step{"CMS.INFO cms6", info("1000", "5", "200")},
	))
	steps = []step{{"CMS.INITBYDIM l1 3000 30", "OK"}, {"CMS.INITBYDIM l2 3000 30", "OK"}}
	for i := range 1000 {
		steps = append(steps, step{fmt.Sprintf("CMS.INCRBY l1 foo%d 1", i), "[1]"}, step{fmt.Sprintf("CMS.INCRBY l2 foo%d 1", i), "[1]"})
	}
	e.run(append(steps,
		step{"CMS.MERGE l1 2 l1 l2 WEIGHTS 1 -1", "OK"}, step{"CMS.INFO l1", info("3000", "30", "0")},
		step{"CMS.MERGE l1 2 l1 l2 WEIGHTS 1 2", "OK"}, step{"CMS.INFO l1", info("3000", "30", "2000")},
		step{"CMS.QUERY l1 foo0 foo500 foo999", "[2 2 2]"},
		step{"CMS.MERGE l1 2 l1 l2 WEIGHTS 1 -1", "OK"}, step{"CMS.INFO l1", info("3000", "30", "1000")},
	))
	over := func(incr string, pairs []string, ok bool) {
		e.run([]step{{"DEL x y", "2"}, {"CMS.INITBYDIM x 2 2", "OK"}, {"CMS.INITBYDIM y 2 2", "OK"},
			{"CMS.INCRBY x foo " + incr, "[" + incr + "]"}, {"CMS.INCRBY y foo " + incr, "[" + incr + "]"}})
		for _, w := range pairs {
			if ok {
				e.run([]step{{"CMS.MERGE x 2 x y WEIGHTS " + w, "OK"}, {"CMS.INFO x", info("2", "2", "8")}, {"CMS.QUERY x foo", "[8]"}})
				continue
			}
			e.run([]step{{"CMS.MERGE x 2 x y WEIGHTS " + w, "(err CMS: MERGE overflow)"},
				{"CMS.QUERY x foo", "[" + incr + "]"}, {"CMS.QUERY y foo", "[" + incr + "]"}, {"CMS.INFO x", info("2", "2", incr)}})
		}
	}
	e.run([]step{{"SET x 1", "+OK"}, {"SET y 1", "+OK"}})
	over("4000000000", []string{"1 -2", "-2 -2", "-2 1", "2 0", "0 2", "-1 -1"}, false)
	over("4", []string{"9223372036854775807 -4000000000", "8000000000 -4000000000", "-8000000000 4000000000",
		"-800000000000 8000000000", "-1 -1", "-5 -4"}, false)
	over("4", []string{"-922337203685477500 922337203685477502"}, true)
}

// Every error of test_errors / test_validation (§4.2) and of §1.1.
func TestErrors(t *testing.T) {
	arity := func(n string) string { return "(err ERR wrong number of arguments for '" + n + "' command)" }
	newEnv(t).run([]step{
		{"SET A x", "+OK"},
		{"CMS.INITBYDIM A 2000 10", "(err CMS: key already exists)"},
		{"CMS.INITBYPROB A 0.1 0.1", "(err CMS: key already exists)"},
		{"CMS.INITBYDIM foo 10 10", "OK"},
		{"CMS.INITBYDIM foo 10 10", "(err CMS: key already exists)"},
		{"CMS.INITBYDIM foo x y", "(err CMS: key already exists)"},
		{"CMS.INCRBY A foo", arity("cms.incrby")},
		{"CMS.INCRBY foo a 1 b", arity("cms.incrby")},
		{"CMS.INCRBY foo item foo", "(err CMS: Cannot parse number)"},
		{"CMS.INCRBY foo item -1", "(err CMS: Number cannot be negative)"},
		{"CMS.INCRBY foo a 1 item +5", "(err CMS: Cannot parse number)"},
		{"CMS.INCRBY foo a 1 item 18446744073709551616", "(err CMS: Cannot parse number)"},
		{"CMS.QUERY foo a", "[0]"}, // nothing applied by the failed INCRBYs
		{"CMS.INCRBY nokey a 1", "(err CMS: key does not exist)"},
		{"CMS.INCRBY A a x", "(err WRONGTYPE Operation against a key holding the wrong kind of value)"},
		{"CMS.QUERY nokey a", "(err CMS: key does not exist)"},
		{"CMS.QUERY A a", "(err WRONGTYPE Operation against a key holding the wrong kind of value)"},
		{"CMS.INFO nokey", "(err CMS: key does not exist)"},
		{"CMS.INFO A", "(err WRONGTYPE Operation against a key holding the wrong kind of value)"},
		{"CMS.INFO foo bar", arity("cms.info")},
		{"CMS.MERGE foo 2 foo", "(err CMS: wrong number of keys)"},
		{"CMS.MERGE foo B 3 foo", "(err CMS: invalid numkeys)"},
		{"CMS.MERGE foo 1 bar weights B", "(err CMS: invalid weight value)"},
		{"CMS.MERGE foo 1 foo weights 1.5", "(err CMS: invalid weight value)"},
		{"CMS.MERGE foo 0", arity("cms.merge")},
		{"CMS.MERGE foo 0 weights", "(err CMS: Number of keys must be positive)"},
		{"CMS.MERGE foo -1 weights", "(err CMS: Number of keys must be positive)"},
		{"CMS.MERGE foo 1 bar weights 1 2", "(err CMS: wrong number of keys/weights)"},
		{"CMS.MERGE foo 2 weights foo 1 1", "(err CMS: wrong number of keys/weights)"},
		{"CMS.MERGE nokey 1 foo", "(err CMS: key does not exist)"},
		{"CMS.MERGE A 1 foo", "(err WRONGTYPE Operation against a key holding the wrong kind of value)"},
		{"CMS.MERGE foo 1 A", "(err WRONGTYPE Operation against a key holding the wrong kind of value)"},
		{"CMS.MERGE foo 1 bar", "(err CMS: key does not exist)"},
		{"CMS.INITBYDIM n 0 10", "(err CMS: invalid width)"},
		{"CMS.INITBYDIM n 10 0", "(err CMS: invalid depth)"},
		{"CMS.INITBYDIM n 05 10", "(err CMS: invalid width)"},
		{"CMS.INITBYDIM n 10 x", "(err CMS: invalid depth)"},
		{"CMS.INITBYDIM n 10", arity("cms.initbydim")},
		{"CMS.INITBYPROB n 0 0.5", "(err CMS: invalid overestimation value)"},
		{"CMS.INITBYPROB n inf 0.5", "(err CMS: invalid overestimation value)"},
		{"CMS.INITBYPROB n nan 0.5", "(err CMS: invalid overestimation value)"},
		{"CMS.INITBYPROB n 0.1 1", "(err CMS: invalid prob value)"},
		{"CMS.INITBYPROB n 0.1 0.9999999999999999", "(err CMS: invalid init arguments)"},
		{"CMS.INITBYPROB n 0.9 0.99999999", "(err CMS: invalid init arguments)"},
		{"CMS.INITBYPROB n 1e-19 0.9", "(err CMS: invalid init arguments)"},
		{"CMS.INITBYDIM n 8589934592 8589934592", "(err CMS: invalid init arguments)"},
		{"CMS.INITBYDIM n 100000000000000 100000000000000", "(err CMS: invalid init arguments)"},
		{"CMS.INITBYDIM n 1000000000 1000000000", "(err CMS: Insufficient memory to create the key)"},
		{"CMS.INITBYDIM n 2294967296 2294967296", "(err CMS: Insufficient memory to create the key)"},
		{"CMS.INITBYPROB n 1e-16 1e-16", "(err CMS: Insufficient memory to create the key)"},
		{"CMS.INITBYPROB n 0.1 0.5", "OK"},
		{"CMS.INFO n", info("20", "1", "0")},
		{"EXISTS n2", "0"},
		{"TYPE n", "+CMSk-TYPE"},
		{"_CMS.LOAD n garbage", "(err ERR invalid _cms.load payload)"}, // internal records run here as replay runs them
	})
}

// The INITBYPROB depths of §1.2 (single-precision log10f).
func TestInitByProbDims(t *testing.T) {
	e := newEnv(t)
	for i, c := range []struct{ eps, delta, w, d string }{
		{"0.001", "0.01", "2000", "7"}, {"0.1", "0.5", "20", "1"}, {"0.002", "0.01", "1000", "7"},
		{"0.1", "0.1", "20", "4"}, {"0.1", "0.25", "20", "2"}, {"0.1", "0.125", "20", "3"},
		{"0.1", "0.001", "20", "10"}, {"0.1", "0.0001", "20", "14"}, {"0.3", "0.01", "7", "7"},
		{"0x1p-3", "1e-16", "16", "54"},
	} {
		k := fmt.Sprint("p", i)
		e.run([]step{{"CMS.INITBYPROB " + k + " " + c.eps + " " + c.delta, "OK"}, {"CMS.INFO " + k, info(c.w, c.d, "0")}})
	}
}

func TestRESP3(t *testing.T) {
	e := newEnv(t)
	e.do(3, "CMS.INITBYPROB", "cms2", "0.001", "0.01")
	e.do(3, "CMS.INCRBY", "cms2", "a", "5")
	if got, want := e.do(3, "CMS.INFO", "cms2"), "%3\r\n+width\r\n:2000\r\n+depth\r\n:7\r\n+count\r\n:5\r\n"; got != want {
		t.Fatalf("RESP3 INFO %q, want %q", got, want)
	}
	if got, want := e.do(3, "CMS.QUERY", "cms2", "a", "b"), "*2\r\n:5\r\n:0\r\n"; got != want {
		t.Fatalf("RESP3 QUERY %q", got)
	}
}

// state renders every key's type and snapshot payload.
func state(t *testing.T, tab *command.Table, store *keyspace.Store, cfg *config.Registry, keys ...string) string {
	var b strings.Builder
	for _, k := range keys {
		store.View([]byte(k), func(v keyspace.Value) {
			if v == nil {
				fmt.Fprintf(&b, "%s: missing\n", k)
				return
			}
			if c, ok := v.(*cms.Value); ok {
				enc, err := c.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "%s: %x\n", k, enc)
				return
			}
			fmt.Fprintf(&b, "%s: %s\n", k, v.TypeName())
		})
	}
	return b.String()
}

// TestAOFReplay: the records logged by a workload replay (through
// app.Replayer, as recovery does) to exactly the same sketches, and
// failed commands log nothing; snapshots round-trip through app.Decode.
func TestAOFReplay(t *testing.T) {
	e := newEnv(t)
	e.run([]step{
		{"CMS.INITBYDIM a 5 2", "OK"}, {"CMS.INITBYPROB b 0.2 0.1", "OK"}, {"CMS.INITBYDIM c 5 2", "OK"},
		{"CMS.INCRBY a x 2147483647 y 3 x 2147483647", "[2147483647 3 4294967294]"},
		{"CMS.INCRBY a x 5", "[(err CMS: INCRBY overflow)]"},
		{"CMS.INCRBY a x -5", "(err CMS: Number cannot be negative)"},
		{"CMS.INCRBY b q 9 r 1", "[9 1]"},
		{"CMS.INCRBY c y 7 z 1", "[7 1]"},
		{"CMS.MERGE c 2 c a WEIGHTS 2 -1", "(err CMS: MERGE overflow)"},
		{"CMS.MERGE c 3 c c c", "OK"},
		{"CMS.INITBYDIM a 1 1", "(err CMS: key already exists)"},
	})
	recs := e.log.Take()
	names := map[string]int{}
	for _, r := range recs {
		names[string(r[0])]++
	}
	if len(recs) != 8 || names["CMS.INITBYDIM"] != 3 || names["_CMS.INCRBY"] != 4 || names["_CMS.LOAD"] != 1 {
		t.Fatalf("records %v", names)
	}
	want := state(t, e.tab, e.store, e.cfg, "a", "b", "c")
	tab, cfg := app.Tables()
	fresh := keyspace.New(nil)
	replay := app.Replayer(tab, cfg, fresh)
	for _, r := range recs {
		if err := replay(r); err != nil {
			t.Fatalf("replay %q: %v", r[0], err)
		}
	}
	if got := state(t, tab, fresh, cfg, "a", "b", "c"); got != want {
		t.Fatalf("replayed state\n%s\nwant\n%s", got, want)
	}
	// Snapshot payloads decode (app.Decode) to the same sketches.
	e.store.View([]byte("a"), func(v keyspace.Value) {
		enc, _ := v.(*cms.Value).MarshalBinary()
		d, err := app.Decode(cms.TypeName, enc)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := d.(*cms.Value).MarshalBinary(); !bytes.Equal(again, enc) || d.MemoryUsage() != v.MemoryUsage() {
			t.Fatal("snapshot round trip differs")
		}
		if c := v.Clone().(*cms.Value); c.S == v.(*cms.Value).S {
			t.Fatal("Clone shares the sketch")
		}
		if _, err := app.Decode(cms.TypeName, enc[:len(enc)-1]); err == nil {
			t.Fatal("a truncated payload decoded")
		}
	})
}

// TestMemoryLimit: a create refused by the maxmemory reservation answers
// RedisBloom's allocation error, and creates and logs nothing; an admitted
// one reserves exactly what the key space then uses.
func TestMemoryLimit(t *testing.T) {
	e := newEnv(t)
	args := commandtest.Argv("CMS.INITBYDIM", "m", "1000", "10")
	got, _ := commandtest.Run(e.tab, e.store, e.cfg, 2, args, commandtest.ReserveMem(func(uint64) bool { return false }))
	if got != "-CMS: Insufficient memory to create the key\r\n" || e.store.Len() != 0 || len(e.log.Records()) != 0 {
		t.Fatalf("refused create: %q, %d keys", got, e.store.Len())
	}
	var asked uint64
	got, _ = commandtest.Run(e.tab, e.store, e.cfg, 2, args, commandtest.ReserveMem(func(n uint64) bool { asked += n; return true }))
	if got != "+OK\r\n" || asked != e.store.Used() || e.store.Used() != e.store.MemoryUsage() || asked < 40000 {
		t.Fatalf("admitted create: %q, asked %d, used %d", got, asked, e.store.Used())
	}
}

// TestMergeReserve: CMS.MERGE reserves its transient sums (12 bytes a
// counter); refused, it answers OOM and changes nothing.
func TestMergeReserve(t *testing.T) {
	e := newEnv(t)
	e.run([]step{{"CMS.INITBYDIM d 100 10", "OK"}, {"CMS.INITBYDIM s 100 10", "OK"}, {"CMS.INCRBY s a 5", "[5]"}})
	recs := len(e.log.Records())
	var asked []uint64
	got, _ := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv("CMS.MERGE", "d", "1", "s"),
		commandtest.ReserveMem(func(n uint64) bool { asked = append(asked, n); return false }))
	if got != commandtest.OOMReply || len(asked) != 1 || asked[0] != 12*1000 || len(e.log.Records()) != recs {
		t.Fatalf("refused merge: %q, asked %v", got, asked)
	}
	e.run([]step{{"CMS.QUERY d a", "[0]"}, {"CMS.MERGE d 1 nokey", "(err CMS: key does not exist)"}, {"CMS.MERGE d 1 s", "OK"}, {"CMS.QUERY d a", "[5]"}})
}

// TestMergeConcurrentDest: increments of the destination while it is
// merged with itself are never lost (the merge starts over when its
// destination changed after it was read as a source).
func TestMergeConcurrentDest(t *testing.T) {
	e := newEnv(t)
	e.run([]step{{"CMS.INITBYDIM d 100 5", "OK"}, {"CMS.INITBYDIM s 100 5", "OK"}})
	const incrs = 2000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range incrs {
			commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv("CMS.INCRBY", "d", "x", "1"))
		}
	}()
	merges := 0
	for running := true; running; merges++ {
		select {
		case <-done:
			running = false
		default:
		}
		got, _ := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv("CMS.MERGE", "d", "2", "d", "s"))
		if got != "+OK\r\n" && !strings.Contains(got, "kept changing") {
			t.Fatalf("MERGE: %q", got)
		}
	}
	e.run([]step{{"CMS.QUERY d x", fmt.Sprintf("[%d]", incrs)}, {"CMS.INFO d", info("100", "5", fmt.Sprint(incrs))}})
	t.Logf("%d merges ran alongside %d increments", merges, incrs)
}

// The ACL categories and flags of spec "Conventions".
func TestSpecMeta(t *testing.T) {
	tab, _ := app.Tables()
	for name, want := range map[string]string{
		"cms.initbydim": "@write @fast @cms", "cms.initbyprob": "@write @fast @cms", "cms.incrby": "@write @slow @cms",
		"cms.merge": "@write @slow @cms", "cms.query": "@read @slow @cms", "cms.info": "@read @fast @cms",
	} {
		s := tab.Lookup([]byte(name))
		if s == nil {
			t.Fatalf("%s not registered", name)
		}
		if got := strings.Join(s.ACLCategories().Names(), " "); got != want {
			t.Errorf("%s: ACL %q, want %q", name, got, want)
		}
		if s.FirstKey != 1 || s.LastKey != 1 || s.Step != 1 {
			t.Errorf("%s: keys %d %d %d", name, s.FirstKey, s.LastKey, s.Step)
		}
		flags := strings.Join(s.Flags.Names(), " ")
		if want := map[bool]string{true: "write denyoom module", false: "readonly module"}[s.Flags&command.FlagWrite != 0]; flags != want {
			t.Errorf("%s: flags %q, want %q", name, flags, want)
		}
	}
}
