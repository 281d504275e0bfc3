package cf

import (
	"encoding/binary"
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
	"github.com/probly/probly/internal/rediscuckoo"
)

func TestRegistration(t *testing.T) {
	e := newEnv(t)
	w := command.FlagWrite | command.FlagDenyOOM | command.FlagModule
	r := command.FlagReadonly | command.FlagFast | command.FlagModule
	for name, v := range map[string]struct {
		arity int
		flags command.Flags
	}{
		"cf.reserve": {-3, w}, "cf.add": {3, w}, "cf.addnx": {3, w}, "cf.insert": {-4, w}, "cf.insertnx": {-4, w},
		"cf.exists": {3, r}, "cf.mexists": {-3, r}, "cf.count": {3, r}, "cf.del": {3, command.FlagWrite | command.FlagFast | command.FlagModule},
		"cf.compact": {2, r}, "cf.info": {2, r}, "cf.debug": {2, r}, "cf.scandump": {3, r}, "cf.loadchunk": {4, w},
		"_cf.create": {6, w}, "_cf.add": {-3, w}, "_cf.loadheader": {3, w},
	} {
		s := e.tab.Lookup([]byte(strings.ToUpper(name)))
		if s == nil || s.Arity != v.arity || s.Flags != v.flags || s.FirstKey != 1 || s.LastKey != 1 || s.Step != 1 {
			t.Errorf("%s: %+v", name, s)
		}
	}
	for _, p := range [][2]string{
		{"cf-bucket-size", "2"}, {"cf-initial-size", "1024"}, {"cf-max-iterations", "20"},
		{"cf-expansion-factor", "1"}, {"cf-max-expansions", "32"}, {"cf-max-filter-bytes", fmt.Sprint(DefaultFilterBytes)},
	} {
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
		{"cf.add", []string{"CF.ADD", "k"}},
		{"cf.add", []string{"cf.add", "k", "a", "b"}},
		{"cf.addnx", []string{"CF.ADDNX", "k"}},
		{"cf.exists", []string{"CF.EXISTS", "k"}},
		{"cf.count", []string{"CF.COUNT", "k", "a", "b"}},
		{"cf.del", []string{"CF.DEL", "k"}},
		{"cf.mexists", []string{"CF.MEXISTS", "k"}},
		{"cf.info", []string{"CF.INFO", "k", "size"}},
		{"cf.debug", []string{"CF.DEBUG"}},
		{"cf.compact", []string{"CF.COMPACT", "k", "x"}},
		{"cf.scandump", []string{"CF.SCANDUMP", "k"}},
		{"cf.loadchunk", []string{"CF.LOADCHUNK", "k", "1"}},
		{"cf.reserve", []string{"CF.RESERVE", "k"}},
		{"cf.reserve", []string{"CF.RESERVE", "k", "100", "BUCKETSIZE"}},
		{"cf.reserve", []string{"CF.RESERVE", "k", "100", "BUCKETSIZE", "4", "EXPANSION"}},
		{"cf.insert", []string{"CF.INSERT", "k", "ITEMS"}},
		{"cf.insert", []string{"CF.INSERT", "k", "NOCREATE", "ITEMS"}},
		{"cf.insert", []string{"CF.INSERT", "k", "CAPACITY", "100"}},
		{"cf.insert", []string{"CF.INSERT", "k", "NOCREATE", "CAPACITY"}},
		{"cf.insert", []string{"CF.INSERT", "k", "c"}},
		{"cf.insertnx", []string{"CF.INSERTNX", "k", "ITEMS"}},
		{"cf.insertnx", []string{"CF.INSERTNX", "k", "NOCREATE", "NOCREATE"}},
		{"_cf.create", []string{"_CF.CREATE", "k", "4", "2", "20"}},
		{"_cf.add", []string{"_CF.ADD", "k"}},
		{"_cf.loadheader", []string{"_CF.LOADHEADER", "k"}},
	} {
		e.expect23(arity(v.name), v.args...)
	}
	if n := len(e.log.Records()); n != 0 {
		t.Fatalf("%d records logged by failing commands", n)
	}
}

func TestReserve(t *testing.T) {
	e := newEnv(t)
	e.setString("s")
	// The 1 GiB filters below must be refused by the cap, not allocated.
	e.set("cf-max-filter-bytes", "134217728")
	for _, v := range []struct {
		want string
		args []string
	}{
		{ok, []string{"CF.RESERVE", "cf", "1000"}},
		{"-ERR item exists\r\n", []string{"CF.RESERVE", "cf", "1000"}},
		{wrongType, []string{"CF.RESERVE", "s", "1000"}},
		{errReply("Bad capacity"), []string{"CF.RESERVE", "x", "abc"}},
		{errReply("Bad capacity"), []string{"CF.RESERVE", "x", "007"}},
		{errReply("Bad capacity"), []string{"CF.RESERVE", "x", "1.5", "BUCKETSIZE", "x"}},
		{errReply("Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"), []string{"CF.RESERVE", "x", "3"}},
		{errReply("Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"), []string{"CF.RESERVE", "x", "-5"}},
		{errReply("Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"), []string{"CF.RESERVE", "x", "1073741825"}},
		{errReply("Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"), []string{"CF.RESERVE", "x", "7", "BUCKETSIZE", "4"}},
		{errReply("Couldn't parse BUCKETSIZE"), []string{"CF.RESERVE", "x", "100", "BUCKETSIZE", "x"}},
		{errReply("BUCKETSIZE: value must be in the range [1, 255]"), []string{"CF.RESERVE", "x", "100", "BUCKETSIZE", "0"}},
		{errReply("BUCKETSIZE: value must be in the range [1, 255]"), []string{"CF.RESERVE", "x", "100", "bucketsize", "256"}},
		{errReply("Couldn't parse MAXITERATIONS"), []string{"CF.RESERVE", "x", "100", "MAXITERATIONS", "1e3"}},
		{errReply("MAXITERATIONS: value must be in the range [1, 65535]"), []string{"CF.RESERVE", "x", "100", "MAXITERATIONS", "0"}},
		{errReply("MAXITERATIONS: value must be in the range [1, 65535]"), []string{"CF.RESERVE", "x", "100", "MaxIterations", "65536"}},
		{errReply("Couldn't parse EXPANSION"), []string{"CF.RESERVE", "x", "100", "EXPANSION", "two"}},
		{errReply("EXPANSION: value must be in the range [0, 32768]"), []string{"CF.RESERVE", "x", "100", "EXPANSION", "-1"}},
		{errReply("EXPANSION: value must be in the range [0, 32768]"), []string{"CF.RESERVE", "x", "100", "EXPANSION", "32769"}},
		// Order of checks: MAXITERATIONS, BUCKETSIZE, EXPANSION, capacity range.
		{errReply("MAXITERATIONS: value must be in the range [1, 65535]"), []string{"CF.RESERVE", "x", "100", "BUCKETSIZE", "0", "MAXITERATIONS", "0"}},
		{errReply("BUCKETSIZE: value must be in the range [1, 255]"), []string{"CF.RESERVE", "x", "1", "EXPANSION", "x", "BUCKETSIZE", "0"}},
		{errReply("EXPANSION: value must be in the range [0, 32768]"), []string{"CF.RESERVE", "x", "1", "EXPANSION", "-1"}},
		// A trailing option token without its value.
		{errReply("Couldn't parse BUCKETSIZE"), []string{"CF.RESERVE", "x", "100", "4", "BUCKETSIZE"}},
		// Over the per-filter budget.
		{"-ERR Insufficient memory to create filter\r\n", []string{"CF.RESERVE", "x", "1073741824", "BUCKETSIZE", "1"}},
		{ok, []string{"CF.RESERVE", "EXPANSION", "100"}},       // key found as the option: expansion 100 → 128
		{ok, []string{"CF.RESERVE", "b", "100", "foo", "bar"}}, // unknown pairs ignored
		{ok, []string{"CF.RESERVE", "full", "2048", "BUCKETSIZE", "3", "MAXITERATIONS", "15", "EXPANSION", "2"}},
		{ok, []string{"CF.RESERVE", "e0", "64", "EXPANSION", "0"}},
		{ok, []string{"cf.reserve", "e3", "64", "expansion", "3"}},
		{ok, []string{"CF.RESERVE", "min", "2", "BUCKETSIZE", "1"}},
		{ok, []string{"CF.RESERVE", "max", "1024", "BUCKETSIZE", "255", "EXPANSION", "32768", "MAXITERATIONS", "65535"}},
		{"-ERR Insufficient memory to create filter\r\n", []string{"CF.RESERVE", "max2", "1073741824", "BUCKETSIZE", "255"}},
	} {
		e.expect(2, v.want, v.args...)
	}
	for key, want := range map[string]string{
		"cf":        "bktsize:2 buckets:512 items:0 deletes:0 filters:1 max_iterations:20 expansion:1",
		"EXPANSION": "bktsize:2 buckets:64 items:0 deletes:0 filters:1 max_iterations:20 expansion:128",
		"b":         "bktsize:2 buckets:64 items:0 deletes:0 filters:1 max_iterations:20 expansion:1",
		"full":      "bktsize:3 buckets:1024 items:0 deletes:0 filters:1 max_iterations:15 expansion:2",
		"e0":        "bktsize:2 buckets:32 items:0 deletes:0 filters:1 max_iterations:20 expansion:0",
		"e3":        "bktsize:2 buckets:32 items:0 deletes:0 filters:1 max_iterations:20 expansion:4",
		"min":       "bktsize:1 buckets:2 items:0 deletes:0 filters:1 max_iterations:20 expansion:1",
		"max":       "bktsize:255 buckets:4 items:0 deletes:0 filters:1 max_iterations:65535 expansion:32768",
	} {
		e.expect23(bulk(want), "CF.DEBUG", key)
	}
	// RESERVE takes the cf-* configuration for options it is not given.
	e.set("cf-bucket-size", "4")
	e.set("cf-max-iterations", "7")
	e.set("cf-expansion-factor", "0")
	e.expect(2, ok, "CF.RESERVE", "conf", "100")
	e.expect(2, bulk("bktsize:4 buckets:32 items:0 deletes:0 filters:1 max_iterations:7 expansion:0"), "CF.DEBUG", "conf")
	e.expect(2, errReply("Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"), "CF.RESERVE", "conf2", "7")
}

func TestAddExistsCount(t *testing.T) {
	e := newEnv(t)
	e.setString("s")
	e.expect(2, one, "CF.ADD", "k", "a")
	e.expect(2, one, "CF.ADD", "k", "a") // a second copy
	e.expect(3, "#t\r\n", "CF.ADD", "k", "b")
	e.expect(2, zero, "CF.ADDNX", "k", "a")
	e.expect(3, "#f\r\n", "CF.ADDNX", "k", "b")
	e.expect(2, one, "CF.ADDNX", "k", "c")
	e.expect(3, "#t\r\n", "CF.ADDNX", "k", "d")
	e.expect(2, wrongType, "CF.ADD", "s", "a")
	e.expect(3, wrongType, "CF.ADDNX", "s", "a")
	e.expect(2, one, "CF.EXISTS", "k", "a")
	e.expect(3, "#t\r\n", "CF.EXISTS", "k", "a")
	e.expect(2, zero, "CF.EXISTS", "k", "zz")
	e.expect(3, "#f\r\n", "CF.EXISTS", "k", "zz")
	e.expect(2, zero, "CF.EXISTS", "missing", "a")
	e.expect(3, "#f\r\n", "CF.EXISTS", "s", "a")
	e.expect(2, "*4\r\n:1\r\n:0\r\n:1\r\n:1\r\n", "CF.MEXISTS", "k", "a", "zz", "c", "d")
	e.expect(3, "*4\r\n#t\r\n#f\r\n#t\r\n#t\r\n", "CF.MEXISTS", "k", "a", "zz", "c", "d")
	e.expect(2, "*2\r\n:0\r\n:0\r\n", "CF.MEXISTS", "s", "a", "b")
	e.expect(3, "*1\r\n#f\r\n", "CF.MEXISTS", "missing", "a")
	e.expect23(":2\r\n", "CF.COUNT", "k", "a")
	e.expect23(":1\r\n", "CF.COUNT", "k", "b")
	e.expect23(":0\r\n", "CF.COUNT", "k", "zz")
	e.expect23(":0\r\n", "CF.COUNT", "missing", "a")
	e.expect23(":0\r\n", "CF.COUNT", "s", "a")
	r2, r3 := info(1080, 512, 1, 5, 0, 2, 1, 20)
	e.expect(2, r2, "CF.INFO", "k")
	e.expect(3, r3, "CF.INFO", "k")
	// Autocreate follows the configuration of the moment.
	e.set("cf-initial-size", "64")
	e.set("cf-bucket-size", "4")
	e.set("cf-max-iterations", "9")
	e.set("cf-expansion-factor", "3")
	e.expect(3, "#t\r\n", "CF.ADDNX", "k2", "x")
	e.expect(2, bulk("bktsize:4 buckets:16 items:1 deletes:0 filters:1 max_iterations:9 expansion:4"), "CF.DEBUG", "k2")
}

func TestInsert(t *testing.T) {
	e := newEnv(t)
	e.setString("s")
	for _, v := range []struct {
		want string
		args []string
	}{
		{"*2\r\n:1\r\n:1\r\n", []string{"CF.INSERT", "x", "c", "100", "i", "a", "b"}},
		{"*2\r\n:1\r\n:1\r\n", []string{"CF.INSERT", "x", "CAPACITY", "9999", "ITEMS", "a", "c"}}, // options ignored: exists
		{"*3\r\n:1\r\n:0\r\n:0\r\n", []string{"CF.INSERTNX", "x", "ITEMS", "d", "d", "a"}},
		{errReply("Unknown argument received"), []string{"CF.INSERT", "y", "FOO", "ITEMS", "a"}},
		{errReply("Unknown argument received"), []string{"CF.INSERT", "y", "", "ITEMS", "a"}},
		{errReply("Unknown argument received"), []string{"CF.INSERT", "y", "BUCKETSIZE", "4", "ITEMS", "a"}},
		{errReply("Bad capacity"), []string{"CF.INSERT", "y", "CAPACITY", "abc", "ITEMS", "a"}},
		{errReply("Capacity must be in the range [cf-bucket-size * 2, 1073741824]"), []string{"CF.INSERT", "y", "CAPACITY", "0", "ITEMS", "a"}},
		{errReply("Capacity must be in the range [cf-bucket-size * 2, 1073741824]"), []string{"CF.INSERT", "y", "CAPACITY", "3", "ITEMS", "a"}},
		{errReply("Capacity must be in the range [cf-bucket-size * 2, 1073741824]"), []string{"CF.INSERTNX", "y", "cap", "1073741825", "ITEMS", "a"}},
		{notFound, []string{"CF.INSERT", "y", "NOCREATE", "ITEMS", "a"}},
		{notFound, []string{"CF.INSERTNX", "y", "n", "ITEMS", "a"}},
		{wrongType, []string{"CF.INSERT", "s", "ITEMS", "a"}},
		{wrongType, []string{"CF.INSERTNX", "s", "NOCREATE", "ITEMS", "a"}},
		{"*1\r\n:1\r\n", []string{"CF.INSERT", "items", "ITEMS", "ITEMS"}},
		{"*1\r\n:1\r\n", []string{"CF.INSERT", "small", "CAPACITY", "4", "ITEMS", "a"}},
	} {
		e.expect(2, v.want, v.args...)
	}
	e.expect(3, "*3\r\n#t\r\n#t\r\n#t\r\n", "CF.INSERT", "x", "ITEMS", "a", "a", "q")
	e.expect(3, "*3\r\n:0\r\n:1\r\n:0\r\n", "CF.INSERTNX", "x", "ITEMS", "a", "r", "r")
	e.expect(2, bulk("bktsize:2 buckets:2 items:1 deletes:0 filters:1 max_iterations:20 expansion:1"), "CF.DEBUG", "small")
	e.expect(2, bulk("bktsize:2 buckets:64 items:9 deletes:0 filters:1 max_iterations:20 expansion:1"), "CF.DEBUG", "x")

	// No space (expansion 0): -1 in RESP2, #f for CF.INSERT in RESP3,
	// -1 for CF.INSERTNX in both; CF.ADD answers "Filter is full".
	e.expect(2, ok, "CF.RESERVE", "full", "4", "EXPANSION", "0")
	for i := 0; i < 30; i++ {
		e.do(2, "CF.ADD", "full", strconv.Itoa(i))
	}
	if f := e.filter("full"); f.Items() != 4 {
		t.Fatalf("4 slots, %s", f.Debug())
	}
	// "0".."30" filled all 4 slots; "30" is not in the filter.
	e.expect(2, zero, "CF.EXISTS", "full", "30")
	e.expect(2, "-Filter is full\r\n", "CF.ADD", "full", "30")
	e.expect(3, "-Filter is full\r\n", "CF.ADD", "full", "30")
	e.expect(2, "-Filter is full\r\n", "CF.ADDNX", "full", "30")
	e.expect(2, "*2\r\n:-1\r\n:0\r\n", "CF.INSERTNX", "full", "ITEMS", "30", "0")
	e.expect(3, "*2\r\n:-1\r\n:0\r\n", "CF.INSERTNX", "full", "ITEMS", "30", "0")
	e.expect(2, "*2\r\n:-1\r\n:-1\r\n", "CF.INSERT", "full", "ITEMS", "0", "30")
	e.expect(3, "*2\r\n#f\r\n#f\r\n", "CF.INSERT", "full", "ITEMS", "0", "30")
	if f := e.filter("full"); f.Items() != 4 {
		t.Fatalf("failed inserts changed the filter: %s", f.Debug())
	}
}

// TestExpansionLimits: spec vectors of "Maximum expansions reached", and
// memory-bounded duplicate growth.
func TestExpansionLimits(t *testing.T) {
	e := newEnv(t)
	e.expect(2, ok, "CF.RESERVE", "k", "4")
	n := 0
	for ; ; n++ {
		out := e.do(2, "CF.ADD", "k", strconv.Itoa(n))
		if out != one {
			if out != "-Maximum expansions reached\r\n" {
				t.Fatalf("item %d: %q", n, out)
			}
			break
		}
	}
	if n != 124 {
		t.Errorf("CF.RESERVE k 4 accepted %d distinct items, want 124", n)
	}
	e.expect23("-Maximum expansions reached\r\n", "CF.ADDNX", "k", "0")
	e.expect23("-Maximum expansions reached\r\n", "CF.INSERT", "k", "ITEMS", "a", "b")
	e.expect23("-Maximum expansions reached\r\n", "CF.INSERTNX", "k", "ITEMS", "a")
	e.expect(2, one, "CF.EXISTS", "k", "5")
	// The same item: 125 copies in a default filter.
	for n = 0; e.do(2, "CF.ADD", "dup", "item") == one; n++ {
	}
	if n != 125 {
		t.Errorf("%d copies of one item in a default filter, want 125", n)
	}
	e.expect(2, ":125\r\n", "CF.COUNT", "dup", "item")
	// A higher cf-max-expansions lets the same filter grow further.
	e.set("cf-max-expansions", "33")
	e.expect(2, one, "CF.ADD", "dup", "item")
	e.set("cf-max-expansions", "32")

	// Duplicate-driven growth with EXPANSION 2 stops at the byte budget
	// with RedisBloom's out-of-memory error, not by exhausting memory.
	e.set("cf-max-filter-bytes", "1048576")
	e.expect(2, ok, "CF.RESERVE", "g", "1024", "EXPANSION", "2")
	for n = 0; ; n++ {
		out := e.do(2, "CF.ADD", "g", "same")
		if out != one {
			if out != "-ERR Insufficient memory\r\n" {
				t.Fatalf("copy %d: %q", n, out)
			}
			break
		}
	}
	f := e.filter("g")
	if f.SizeBytes() > 1<<20 || f.NumFilters() != 10 {
		t.Fatalf("%s, %d bytes", f.Debug(), f.SizeBytes())
	}
	e.expect(2, "*2\r\n-ERR Insufficient memory\r\n:1\r\n", "CF.INSERT", "g", "ITEMS", "same", "other")
	e.expect(3, "*2\r\n-ERR Insufficient memory\r\n#t\r\n", "CF.INSERT", "g", "ITEMS", "same", "other2")
	e.expect(3, "*1\r\n:0\r\n", "CF.INSERTNX", "g", "ITEMS", "same")
	e.expect(2, "-ERR Insufficient memory to create filter\r\n", "CF.INSERT", "big", "CAPACITY", "4194304", "ITEMS", "a")
	e.set("cf-initial-size", "4194304")
	e.expect(2, "-ERR Insufficient memory to create filter\r\n", "CF.ADD", "big", "a")
	e.expect(2, zero, "CF.EXISTS", "big", "a")

	// cf-max-expansions 1: the key is created, then refused (RedisBloom).
	e2 := newEnv(t)
	e2.set("cf-max-expansions", "1")
	e2.expect(2, "-Maximum expansions reached\r\n", "CF.ADD", "one", "a")
	e2.expect(2, bulk("bktsize:2 buckets:512 items:0 deletes:0 filters:1 max_iterations:20 expansion:1"), "CF.DEBUG", "one")
	if got := logStrings(e2.log); fmt.Sprint(got) != "[_CF.CREATE one 1024 2 20 1]" {
		t.Fatalf("records %q", got)
	}
}

func TestDelCompact(t *testing.T) {
	e := newEnv(t)
	e.setString("s")
	e.expect(2, one, "CF.ADD", "k", "a")
	e.expect(2, one, "CF.ADD", "k", "a")
	e.expect(2, one, "CF.DEL", "k", "a")
	e.expect(3, "#t\r\n", "CF.DEL", "k", "a")
	e.expect(2, zero, "CF.DEL", "k", "a")
	e.expect(3, "#f\r\n", "CF.DEL", "k", "a")
	e.expect23(errReply("Not found"), "CF.DEL", "missing", "a")
	e.expect23(errReply("Not found"), "CF.DEL", "s", "a")
	e.expect(2, bulk("bktsize:2 buckets:512 items:0 deletes:2 filters:1 max_iterations:20 expansion:1"), "CF.DEBUG", "k")
	e.expect23(ok, "CF.COMPACT", "k")
	e.expect(2, bulk("bktsize:2 buckets:512 items:0 deletes:0 filters:1 max_iterations:20 expansion:1"), "CF.DEBUG", "k")
	e.expect23(errReply("Cuckoo filter was not found"), "CF.COMPACT", "missing")
	e.expect23(errReply("Cuckoo filter was not found"), "CF.COMPACT", "s")

	// Spec vector: CF.RESERVE k 4 EXPANSION 2, add and delete "0".."999".
	e.expect(2, ok, "CF.RESERVE", "v", "4", "EXPANSION", "2")
	for i := 0; i < 1000; i++ {
		if out := e.do(2, "CF.ADD", "v", strconv.Itoa(i)); out != one {
			t.Fatalf("add %d: %q", i, out)
		}
	}
	for i := 0; i < 1000; i++ {
		if out := e.do(2, "CF.DEL", "v", strconv.Itoa(i)); out != one {
			t.Fatalf("del %d: %q", i, out)
		}
	}
	e.expect(2, "*16\r\n+Size\r\n:60\r\n+Number of buckets\r\n:2\r\n+Number of filters\r\n:1\r\n+Number of items inserted\r\n:0\r\n+Number of items deleted\r\n:4\r\n+Bucket size\r\n:2\r\n+Expansion rate\r\n:2\r\n+Max iterations\r\n:20\r\n", "CF.INFO", "v")

	// CF.COMPACT frees what emptied sub-filters it can.
	e.expect(2, ok, "CF.RESERVE", "c", "8", "EXPANSION", "1")
	for i := 0; i < 60; i++ {
		e.do(2, "CF.ADD", "c", strconv.Itoa(i))
	}
	before := e.filter("c").NumFilters()
	for i := 0; i < 50; i += 2 {
		e.do(2, "CF.DEL", "c", strconv.Itoa(i))
	}
	e.expect(2, ok, "CF.COMPACT", "c")
	after := e.filter("c")
	if after.NumFilters() >= before || after.Deletes() != 0 {
		t.Fatalf("compaction: %d → %s", before, after.Debug())
	}
	for i := 1; i < 60; i += 2 {
		e.expect(2, one, "CF.EXISTS", "c", strconv.Itoa(i))
	}
}

func TestInfoDebug(t *testing.T) {
	e := newEnv(t)
	e.setString("s")
	for capacity, size := range map[string]int{"1000": 1080, "100": 184} {
		e.expect(2, ok, "CF.RESERVE", "r"+capacity, capacity)
		e.expectPrefix(2, "*16\r\n+Size\r\n:"+strconv.Itoa(size)+"\r\n", "CF.INFO", "r"+capacity)
	}
	r2, r3 := info(184, 64, 1, 0, 0, 2, 1, 20)
	e.expect(2, r2, "CF.INFO", "r100")
	e.expect(3, r3, "CF.INFO", "r100")
	e.expect(2, ok, "CF.RESERVE", "e3", "100", "EXPANSION", "3", "BUCKETSIZE", "4", "MAXITERATIONS", "50")
	r2, r3 = info(40+16+32*4, 32, 1, 0, 0, 4, 4, 50)
	e.expect(2, r2, "CF.INFO", "e3")
	e.expect(3, r3, "CF.INFO", "e3")
	e.expect23(notFound, "CF.INFO", "missing")
	e.expect23(wrongType, "CF.INFO", "s")
	e.expect23(notFound, "CF.DEBUG", "missing")
	e.expect23(wrongType, "CF.DEBUG", "s")
	e.expect23(bulk("bktsize:4 buckets:32 items:0 deletes:0 filters:1 max_iterations:50 expansion:4"), "CF.DEBUG", "e3")
}

func (e *env) expectPrefix(proto int, prefix string, args ...string) {
	e.t.Helper()
	if got := e.do(proto, args...); !strings.HasPrefix(got, prefix) {
		e.t.Errorf("RESP%d %q: %q does not start with %q", proto, args, got, prefix)
	}
}

func TestScanDumpLoadChunk(t *testing.T) {
	e := newEnv(t)
	e.setString("s")
	e.expect(2, ok, "CF.RESERVE", "empty", "100")
	e.expect(2, "*2\r\n:0\r\n$-1\r\n", "CF.SCANDUMP", "empty", "0")
	e.expect(3, "*2\r\n:0\r\n_\r\n", "CF.SCANDUMP", "empty", "0")
	e.expect(2, "*2\r\n:0\r\n$-1\r\n", "CF.SCANDUMP", "empty", "1")
	e.expect23(errReply("Invalid position"), "CF.SCANDUMP", "empty", "abc")
	e.expect23(errReply("Invalid position"), "CF.SCANDUMP", "empty", "-1")
	e.expect23(errReply("Invalid position"), "CF.SCANDUMP", "missing", "x")
	e.expect23(notFound, "CF.SCANDUMP", "missing", "0")
	e.expect23(wrongType, "CF.SCANDUMP", "s", "0")

	e.expect(2, ok, "CF.RESERVE", "sd", "8", "EXPANSION", "2")
	for i := 0; i < 40; i++ {
		e.do(2, "CF.ADD", "sd", strconv.Itoa(i))
	}
	f := e.filter("sd")
	if f.NumFilters() != 3 {
		t.Fatal(f.Debug())
	}
	hdr := f.Header()
	pos, data := chunks(t, e, "sd")
	if len(pos) != 4 || len(hdr) != 38 || pos[0] != "1" || len(data[1]) != 8 || pos[1] != "9" || pos[2] != "25" || pos[3] != "57" {
		t.Fatalf("chunks %v", pos)
	}
	for _, p := range []int{2, 3} {
		e.expect(p, "*2\r\n:1\r\n"+bulk(string(hdr)), "CF.SCANDUMP", "sd", "0")
		e.expect(p, "*2\r\n:9\r\n"+bulk(string(data[1])), "CF.SCANDUMP", "sd", "1")
		e.expect(p, "*2\r\n:25\r\n"+bulk(string(data[2])), "CF.SCANDUMP", "sd", "9")
		e.expect(p, "*2\r\n:57\r\n"+bulk(string(data[3])), "CF.SCANDUMP", "sd", "25")
	}
	e.expect(2, "*2\r\n:0\r\n$-1\r\n", "CF.SCANDUMP", "sd", "57")
	e.expect(3, "*2\r\n:0\r\n_\r\n", "CF.SCANDUMP", "sd", "57")
	e.expect(2, "*2\r\n:0\r\n$-1\r\n", "CF.SCANDUMP", "sd", "9223372036854775807")
	e.expect(2, "*2\r\n:13\r\n"+bulk(string(data[1])), "CF.SCANDUMP", "sd", "5") // whole sub-filter, next = pos + 8

	// LOADCHUNK errors.
	e.expect23(errReply("Invalid position"), "CF.LOADCHUNK", "new", "abc", "x")
	e.expect23(errReply("Invalid position"), "CF.LOADCHUNK", "new", "0", "x")
	e.expect23(errReply("Invalid position"), "CF.LOADCHUNK", "s", "0", "x")
	e.expect23("-ERR item exists\r\n", "CF.LOADCHUNK", "sd", "1", string(hdr))
	e.expect23(wrongType, "CF.LOADCHUNK", "s", "1", string(hdr))
	e.expect23(errReply("Invalid header"), "CF.LOADCHUNK", "new", "1", "short")
	e.expect23(errReply("Invalid header"), "CF.LOADCHUNK", "new", "1", string(hdr)+"x")
	huge := []byte(string(hdr))
	binary.LittleEndian.PutUint64(huge[8:], 1<<48)
	e.expect23(errReply("Couldn't create filter!"), "CF.LOADCHUNK", "new", "1", string(huge))
	bad := []byte(string(hdr))
	binary.LittleEndian.PutUint64(bad[24:], 33) // more sub-filters than cf-max-expansions
	e.expect23(errReply("Couldn't create filter!"), "CF.LOADCHUNK", "new", "1", string(bad))
	e.expect23(notFound, "CF.LOADCHUNK", "new", "9", "12345678")
	e.expect23(wrongType, "CF.LOADCHUNK", "s", "9", "12345678")
	e.expect(2, errReply("Couldn't load chunk!"), "CF.LOADCHUNK", "sd", "100", "x")
	e.expect(2, errReply("Couldn't load chunk!"), "CF.LOADCHUNK", "sd", "10", "123456789")
	e.expect(2, errReply("Couldn't load chunk!"), "CF.LOADCHUNK", "sd", "5", "")
	e.expect(2, errReply("Couldn't load chunk!"), "CF.LOADCHUNK", "sd", "-7", "x")
	if !e.filter("sd").Equal(f) {
		t.Fatal("failed loads changed the filter")
	}
	if n := len(e.log.Records()); n != 2+40 {
		// two creates, then one _CF.ADD per CF.ADD
		t.Fatalf("%d records", n)
	}

	// A copy through CF.LOADCHUNK answers and dumps the same.
	for i := range pos {
		e.expect(2, ok, "CF.LOADCHUNK", "copy", pos[i], string(data[i]))
	}
	if !e.filter("copy").Equal(f) {
		t.Fatal("copy differs")
	}
	r2, _ := info(40+16*3+8+16+32, 4, 3, 40, 0, 2, 2, 20)
	e.expect(2, r2, "CF.INFO", "copy")
	if dumpKey(t, e.tab, e.store, "copy") != dumpKey(t, e.tab, e.store, "sd") {
		t.Fatal("dumps differ")
	}
	for i := 0; i < 40; i++ {
		e.expect(2, one, "CF.EXISTS", "copy", strconv.Itoa(i))
	}
}

func TestReplayReproducesState(t *testing.T) {
	e := newEnv(t)
	e.setString("s")
	script := [][]string{
		{"CF.RESERVE", "r", "16", "EXPANSION", "2", "BUCKETSIZE", "3", "MAXITERATIONS", "7"},
		{"CF.RESERVE", "EXPANSION", "100"},
		{"CF.RESERVE", "BUCKETSIZE", "8"},
		{"CF.RESERVE", "bad", "3"}, // fails: logs nothing
		{"CF.ADD", "auto1", "x"},
		{"CONFIG", "cf-initial-size", "64"},
		{"CONFIG", "cf-bucket-size", "4"},
		{"CONFIG", "cf-expansion-factor", "0"},
		{"CF.INSERT", "ins", "ITEMS", "a", "b", "c"},
		{"CF.INSERTNX", "insnx", "CAPACITY", "8", "ITEMS", "a", "a", "b"},
		{"CONFIG", "cf-expansion-factor", "4"},
		{"CONFIG", "cf-max-iterations", "3"},
		{"CF.ADDNX", "auto2", "q"},
		{"CF.ADD", "s", "x"}, // WRONGTYPE
		{"CONFIG", "cf-max-expansions", "64"},
	}
	for i := 0; i < 300; i++ {
		script = append(script, []string{"CF.ADD", "r", "i" + strconv.Itoa(i)})
		script = append(script, []string{"CF.ADDNX", "auto2", "j" + strconv.Itoa(i%40)})
		if i%3 == 0 {
			script = append(script, []string{"CF.DEL", "r", "i" + strconv.Itoa(i/2)})
		}
		if i%50 == 49 {
			script = append(script, []string{"CF.COMPACT", "r"})
		}
		script = append(script, []string{"CF.INSERT", "insnx", "ITEMS", "k" + strconv.Itoa(i)})
	}
	for i := 0; i < 40; i++ {
		script = append(script, []string{"CF.DEL", "auto2", "j" + strconv.Itoa(i)}, []string{"CF.DEL", "r", "nonexistent"})
	}
	script = append(script, []string{"CONFIG", "cf-max-expansions", "5"})
	for _, cmd := range script {
		if cmd[0] == "CONFIG" {
			e.set(cmd[1], cmd[2])
			continue
		}
		e.do(2, cmd...)
	}
	if e.filter("r").NumFilters() < 4 {
		t.Fatalf("r did not grow: %s", e.filter("r").Debug())
	}
	// Copy r via SCANDUMP/LOADCHUNK: the header (more sub-filters than
	// cf-max-expansions allows now would be refused by a client's
	// CF.LOADCHUNK, so load it before lowering the limit) and chunks.
	e.set("cf-max-expansions", "64")
	pos, data := chunks(t, e, "r")
	for i := range pos {
		if got := e.do(2, "CF.LOADCHUNK", "rcopy", pos[i], string(data[i])); got != ok {
			t.Fatalf("LOADCHUNK: %q", got)
		}
	}
	e.set("cf-max-expansions", "2")

	recs := e.log.Records()
	for _, r := range recs {
		switch string(r[0]) {
		case "_CF.CREATE", "_CF.ADD", "CF.DEL", "CF.COMPACT", "_CF.LOADHEADER", "CF.LOADCHUNK":
		default:
			t.Fatalf("non-canonical record %q", r)
		}
	}
	// Replay into a fresh store whose configuration differs on purpose.
	tab2, cfg2 := command.NewTable(), config.New()
	Register(tab2, cfg2)
	for _, kv := range [][2]string{{"cf-initial-size", "8"}, {"cf-bucket-size", "1"}, {"cf-expansion-factor", "0"},
		{"cf-max-iterations", "1"}, {"cf-max-expansions", "1"}} {
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
		var a, b *rediscuckoo.Filter
		e.store.View([]byte(k), func(v keyspace.Value) { a = v.(*rediscuckoo.Filter).CloneFilter() })
		st2.View([]byte(k), func(v keyspace.Value) { b = v.(*rediscuckoo.Filter).CloneFilter() })
		if !a.Equal(b) {
			t.Errorf("key %q differs after replay: %s vs %s", k, a.Debug(), b.Debug())
		}
		if dumpKey(t, e.tab, e.store, k) != dumpKey(t, tab2, st2, k) {
			t.Errorf("key %q: SCANDUMP differs after replay", k)
		}
	}
	if !e.filter("rcopy").Equal(e.filter("r")) {
		t.Error("rcopy is not a copy of r")
	}
}

func TestRecordForms(t *testing.T) {
	e := newEnv(t)
	e.do(2, "CF.RESERVE", "EXPANSION", "100")
	e.do(2, "CF.ADD", "a", "x")
	e.do(2, "CF.ADDNX", "a", "x") // exists: not logged
	e.do(2, "CF.INSERTNX", "a", "ITEMS", "x", "y", "y", "z")
	e.set("cf-expansion-factor", "0")
	e.do(2, "CF.INSERT", "b", "CAPACITY", "4", "ITEMS", "p", "p", "p", "p", "p", "q") // some find no room
	e.do(2, "CF.DEL", "a", "y")
	e.do(2, "CF.DEL", "a", "nothing") // nothing deleted: not logged
	e.do(2, "CF.COMPACT", "a")
	e.do(2, "CF.RESERVE", "c", "100", "BUCKETSIZE", "5", "MAXITERATIONS", "6", "EXPANSION", "7")
	hdr := e.filter("c").Header()
	e.do(2, "CF.ADD", "c", "v")
	pos, data := chunks(t, e, "c")
	e.do(2, "CF.LOADCHUNK", "d", pos[0], string(data[0]))
	e.do(2, "CF.LOADCHUNK", "d", pos[1], string(data[1]))
	got := logStrings(e.log)
	want := []string{
		"_CF.CREATE EXPANSION 100 2 20 100",
		"_CF.CREATE a 1024 2 20 1",
		"_CF.ADD a x",
		"_CF.ADD a y z",
		"_CF.CREATE b 4 2 20 0",
		"_CF.ADD b p p p p", // 4 copies fit: 2 buckets of 2
		"CF.DEL a y",
		"CF.COMPACT a",
		"_CF.CREATE c 100 5 6 7",
		"_CF.ADD c v",
		"_CF.LOADHEADER d " + string(e.filter("c").Header()),
		"CF.LOADCHUNK d " + pos[1] + " " + string(data[1]),
	}
	if len(hdr) != 38 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records:\n got %q\nwant %q", got, want)
	}
	if e.do(2, "CF.COUNT", "b", "q") != zero {
		t.Fatal("q should not have fit")
	}
	// The internal commands validate their arguments.
	for _, args := range [][]string{
		{"_CF.CREATE", "z", "3", "2", "20", "1"},
		{"_CF.CREATE", "z", "100", "0", "20", "1"},
		{"_CF.CREATE", "z", "100", "256", "20", "1"},
		{"_CF.CREATE", "z", "100", "2", "0", "1"},
		{"_CF.CREATE", "z", "100", "2", "65536", "1"},
		{"_CF.CREATE", "z", "100", "2", "20", "-1"},
		{"_CF.CREATE", "z", "100", "2", "20", "32769"},
		{"_CF.CREATE", "z", "1073741825", "2", "20", "1"},
		{"_CF.CREATE", "z", "x", "2", "20", "1"},
	} {
		e.expect(2, "-ERR invalid _cf.create arguments\r\n", args...)
	}
	e.expect(2, "-ERR item exists\r\n", "_CF.CREATE", "a", "100", "2", "20", "1")
	e.expect(2, notFound, "_CF.ADD", "zz", "a")
	e.expect(2, ok, "_CF.ADD", "a", "m", "n")
	e.expect(2, "-ERR item exists\r\n", "_CF.LOADHEADER", "a", string(hdr))
	e.expect(2, errReply("Invalid header"), "_CF.LOADHEADER", "new", "x")
	e.expect(2, "-Filter is full\r\n", "_CF.ADD", "b", "p", "p") // stops at the first failure
	// _CF.LOADHEADER accepts more sub-filters than cf-max-expansions.
	many := append([]byte(nil), hdr...)
	binary.LittleEndian.PutUint64(many[24:], 40)
	binary.LittleEndian.PutUint16(many[36:], 1)
	e.expect(2, errReply("Couldn't create filter!"), "CF.LOADCHUNK", "m1", "1", string(many))
	e.expect(2, ok, "_CF.LOADHEADER", "m2", string(many))
}

func TestLogFailure(t *testing.T) {
	e := newEnv(t)
	e.log.SetFail(errors.New("disk full"))
	e.expect(2, "-ERR disk full\r\n", "CF.ADD", "k", "a")
	e.expect(2, one, "CF.EXISTS", "k", "a") // the in-memory change stays
	e.expect(2, "-ERR disk full\r\n", "CF.RESERVE", "r", "100")
	e.expect(2, "-ERR item exists\r\n", "CF.RESERVE", "r", "100")
	e.expect(2, "-ERR disk full\r\n", "CF.DEL", "k", "a")
	e.expect(2, "-ERR disk full\r\n", "CF.COMPACT", "k")
	e.expect(2, zero, "CF.DEL", "k", "a") // nothing to log
}

func TestSeq(t *testing.T) {
	e := newEnv(t)
	if _, seq := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv("CF.ADD", "k", "a")); seq != 2 {
		t.Fatalf("seq %d after create+add", seq)
	}
	if _, seq := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv("CF.ADDNX", "k", "a")); seq != 0 {
		t.Fatalf("seq %d for a no-op", seq)
	}
	if _, seq := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv("CF.DEL", "k", "a")); seq != 3 {
		t.Fatalf("seq %d for a delete", seq)
	}
}

func TestConfig(t *testing.T) {
	e := newEnv(t)
	for _, bad := range [][2]string{
		{"cf-bucket-size", "0"}, {"cf-bucket-size", "256"}, {"cf-bucket-size", "x"},
		{"cf-initial-size", "3"}, {"cf-initial-size", "1073741825"},
		{"cf-max-iterations", "0"}, {"cf-max-iterations", "65536"},
		{"cf-expansion-factor", "-1"}, {"cf-expansion-factor", "32769"},
		{"cf-max-expansions", "0"}, {"cf-max-expansions", "65537"},
		{"cf-max-filter-bytes", "63"}, {"cf-max-filter-bytes", fmt.Sprint(rediscuckoo.MaxBudget + 1)},
	} {
		if err := e.cfg.Set(bad[0], bad[1]); err == nil {
			t.Errorf("CONFIG SET %s %s accepted", bad[0], bad[1])
		}
	}
	// cf-bucket-size and cf-initial-size bound each other.
	e.set("cf-initial-size", "4")
	if err := e.cfg.Set("cf-bucket-size", "3"); err == nil || err.Error() != "Value for `cf-bucket-size` must be in the range [1, 2]" {
		t.Errorf("bucket size above initial/2: %v", err)
	}
	e.set("cf-initial-size", "600")
	e.set("cf-bucket-size", "255")
	if err := e.cfg.Set("cf-initial-size", "509"); err == nil || err.Error() != "Value for `cf-initial-size` must be in the range [510, 1073741824]" {
		t.Errorf("initial size below 2·bucket: %v", err)
	}
	e.set("cf-initial-size", "510")
	if v, _ := e.cfg.Get("cf-initial-size"); v != "510" {
		t.Fatal(v)
	}
	e.expect(2, one, "CF.ADD", "k", "a")
	e.expect(2, bulk("bktsize:255 buckets:2 items:1 deletes:0 filters:1 max_iterations:20 expansion:1"), "CF.DEBUG", "k")
	e.expect(2, errReply("Capacity must be in the range [cf-bucket-size * 2, 1073741824]"), "CF.INSERT", "k2", "CAPACITY", "509", "ITEMS", "a")
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
				e.do(2+g%2, "CF.ADD", key, item)
				if out := e.do(2, "CF.EXISTS", key, item); out != one {
					t.Errorf("false negative %s %s: %q", key, item, out)
					return
				}
				if i%7 == 0 {
					e.do(2, "CF.DEL", key, item)
				}
				e.do(3, "CF.INFO", key)
			}
		}(g)
	}
	wg.Wait()
	creates := 0
	for _, r := range e.log.Records() {
		if string(r[0]) == "_CF.CREATE" {
			creates++
		}
	}
	if creates != 4 {
		t.Fatalf("%d create records", creates)
	}
}

func BenchmarkCFAdd(b *testing.B) {
	e := newEnv(b)
	e.store = keyspace.New(nil)
	e.set("cf-initial-size", "1048576")
	benchCmd(b, e, "CF.ADD")
}

func BenchmarkCFExists(b *testing.B) {
	e := newEnv(b)
	e.store = keyspace.New(nil)
	e.do(2, "CF.ADD", "key", "x")
	benchCmd(b, e, "CF.EXISTS")
}

func benchCmd(b *testing.B, e *env, name string) {
	args := commandtest.Argv(name, "key", "")
	i := 0
	for b.Loop() {
		args[2] = strconv.AppendInt(args[2][:0], int64(i%500_000), 10)
		commandtest.Run(e.tab, e.store, e.cfg, 2, args)
		i++
	}
}
