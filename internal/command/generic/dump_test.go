package generic_test

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/rdb"
)

// bulk decodes a RESP bulk-string reply ("$n\r\n…\r\n"); nil for a null.
func bulk(t testing.TB, reply string) []byte {
	t.Helper()
	if reply == "$-1\r\n" || reply == "_\r\n" {
		return nil
	}
	var out bytes.Buffer
	r := bufio.NewReader(strings.NewReader(reply))
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "$") {
		t.Fatalf("not a bulk string: %q", reply)
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		t.Fatalf("bulk length in %q", reply)
	}
	out.Write([]byte(reply[len(line) : len(line)+n]))
	return out.Bytes()
}

// interopValues are the strings and HyperLogLogs moved between Redis and
// probly: short, long, integer-encoded (int8, int16, int32), beyond
// 32 bits, LZF-compressible, incompressible, binary; a sparse and a dense
// HLL (created with PFADD on each side).
func interopValues() (strs map[string]string, hlls map[string][]string) {
	r := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 5000)
	for i := range random {
		random[i] = byte(r.IntN(256))
	}
	strs = map[string]string{
		"short": "hello", "empty": "", "int8": "-5", "int16": "300", "int32": "70000", "int64": "12345678901234",
		"lead0": "007", "long": strings.Repeat("probly ", 1000), "random": string(random),
		"binary": "a\r\nb\x00c", "edge20": strings.Repeat("x", 21), "big": strings.Repeat("ab", 300000),
	}
	dense := make([]string, 20000)
	for i := range dense {
		dense[i] = fmt.Sprint("e", i)
	}
	hlls = map[string][]string{"sparse": {"a", "b", "c"}, "dense": dense}
	return strs, hlls
}

// TestDumpRestoreInteropRedis moves strings and HLLs from redis-server to
// probly and back with DUMP and RESTORE: GET bytes and PFCOUNT agree.
func TestDumpRestoreInteropRedis(t *testing.T) {
	addr := commandtest.StartRedis(t)
	rc := commandtest.DialRaw(t, addr, 2)
	do := func(args ...string) string {
		t.Helper()
		s, err := rc.Do(commandtest.Argv(args...))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	e := newKenv(t)
	strs, hlls := interopValues()
	// Redis → probly.
	for k, v := range strs {
		do("SET", "r:"+k, v)
	}
	for k, items := range hlls {
		do(append([]string{"PFADD", "r:" + k}, items...)...)
	}
	check := func(from, to func(...string) string, key string, hll bool) {
		t.Helper()
		p := bulk(t, from("DUMP", key))
		if got := to("RESTORE", key, "0", string(p)); got != "+OK\r\n" {
			t.Fatalf("RESTORE %s: %q", key, got)
		}
		if a, b := from("GET", key), to("GET", key); a != b {
			t.Fatalf("%s: GET differs after the move (%d vs %d bytes)", key, len(a), len(b))
		}
		if hll {
			if a, b := from("PFCOUNT", key), to("PFCOUNT", key); a != b {
				t.Fatalf("%s: PFCOUNT %q vs %q", key, a, b)
			}
		}
	}
	pdo := func(args ...string) string { return e.do(2, args...) }
	for k := range strs {
		check(do, pdo, "r:"+k, false)
	}
	for k := range hlls {
		check(do, pdo, "r:"+k, true)
	}
	// probly → Redis.
	for k, v := range strs {
		pdo("SET", "p:"+k, v)
	}
	for k, items := range hlls {
		pdo(append([]string{"PFADD", "p:" + k}, items...)...)
	}
	for k := range strs {
		check(pdo, do, "p:"+k, false)
	}
	for k := range hlls {
		check(pdo, do, "p:"+k, true)
	}
	// The encodings Redis chose are all covered: int, LZF and raw.
	seen := map[byte]bool{}
	for _, k := range []string{"int8", "int16", "int32", "long", "short"} {
		p := bulk(t, do("DUMP", "r:"+k))
		seen[p[1]>>6] = true
	}
	if !seen[3] || !seen[0] {
		t.Fatalf("encodings covered: %v", seen)
	}
}

// badPayloads are refused by probly and Redis alike with the same error.
func badPayloads(t *testing.T, good []byte) map[string][]byte {
	out := map[string][]byte{"empty": {}, "short": []byte("123456789")}
	for _, n := range []int{1, 5, len(good) / 2, len(good) - 1} {
		out[fmt.Sprint("truncated-", n)] = good[:n]
	}
	for _, bit := range []int{0, 9, 8 * (len(good) - 11), 8*(len(good)-9) + 3, 8*len(good) - 1} {
		p := bytes.Clone(good)
		p[bit/8] ^= 1 << (bit % 8)
		out[fmt.Sprint("bitflip-", bit)] = p
	}
	// Well framed, badly encoded.
	out["lzf-lie"] = rdb.Frame([]byte{0, 0xc3, 0x02, 0x7f, 0x00, 0x00}, 10)
	out["huge-raw"] = rdb.Frame([]byte{0, 0x81, 0, 0, 0, 1, 0, 0, 0, 0, 'x'}, 10)
	out["huge-lzf"] = rdb.Frame([]byte{0, 0xc3, 0x01, 0x81, 0, 0, 1, 0, 0, 0, 0, 0, 0}, 10)
	out["bad-encoding"] = rdb.Frame([]byte{0, 0xc5}, 10)
	out["bad-type"] = rdb.Frame([]byte{200, 1, 'x'}, 10)
	// A RedisBloom payload: RDB_TYPE_MODULE_2 and the module type id of
	// "MBbloom--" (encoding version 4), which no Redis here loads.
	out["redisbloom"] = rdb.Frame(append([]byte{rdb.TypeModule, 0x81}, moduleID("MBbloom--", 4)...), 10)
	return out
}

// moduleID is a module type id as RDB writes it (54 bits of name in a
// 64-character alphabet, 10 bits of encoding version), big-endian.
func moduleID(name string, encver uint64) []byte {
	const charset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var id uint64
	for i := 0; i < 9; i++ {
		id = id<<6 | uint64(strings.IndexByte(charset, name[i]))
	}
	id = id<<10 | encver
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(id >> (56 - 8*i))
	}
	return b
}

// TestRestoreBadPayloadsDifferentialRedis: truncated, bit-flipped,
// oversized and unsupported payloads get Redis's error from both, and
// probly's key space is unchanged (keys, values, Used).
func TestRestoreBadPayloadsDifferentialRedis(t *testing.T) {
	addr := commandtest.StartRedis(t)
	rc := commandtest.DialRaw(t, addr, 2)
	e := newKenv(t)
	e.do(2, "SET", "keep", "value")
	e.do(2, "BF.ADD", "bf", "x")
	good := rdb.DumpString([]byte(strings.Repeat("probly ", 20)))
	used, n := e.store.Used(), e.store.Len()
	for name, p := range badPayloads(t, good) {
		for _, key := range []string{"new", "keep"} {
			args := commandtest.Argv("RESTORE", key, "0", string(p), "REPLACE")
			want, err := rc.Do(args)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := commandtest.Run(e.tab, e.store, e.cfg, 2, args)
			if got != want {
				t.Errorf("%s onto %s: probly %q, redis %q", name, key, got, want)
			}
			if !strings.HasPrefix(got, "-ERR ") {
				t.Errorf("%s onto %s: accepted: %q", name, key, got)
			}
		}
	}
	if e.store.Used() != used || e.store.Len() != n || e.do(2, "GET", "keep") != "$5\r\nvalue\r\n" || e.do(2, "BF.EXISTS", "bf", "x") != ":1\r\n" {
		t.Fatalf("key space changed: used %d→%d, keys %d→%d", used, e.store.Used(), n, e.store.Len())
	}
	// A Redis list: valid for Redis, refused by probly.
	rc.Do(commandtest.Argv("RPUSH", "list", "a", "b", "c"))
	reply, _ := rc.Do(commandtest.Argv("DUMP", "list"))
	if got := e.do(2, "RESTORE", "l", "0", string(bulk(t, reply))); got != "-ERR Bad data format\r\n" {
		t.Fatalf("Redis list payload: %q", got)
	}
	// probly's own payloads are refused by Redis.
	reply = e.do(2, "DUMP", "bf")
	if got, _ := rc.Do(commandtest.Argv("RESTORE", "bf", "0", string(bulk(t, reply)))); got != "-ERR Bad data format\r\n" {
		t.Fatalf("Redis on a probly BF payload: %q", got)
	}
	if e.store.Used() != used || e.store.Len() != n {
		t.Fatal("key space changed")
	}
}

func TestDumpRestoreFilters(t *testing.T) {
	e := newKenv(t)
	e.do(2, "BF.RESERVE", "bf", "0.01", "1000")
	e.do(2, "BF.MADD", "bf", "a", "b", "c")
	e.do(2, "CF.RESERVE", "cf", "1000")
	e.do(2, "CF.ADD", "cf", "a")
	for _, k := range []string{"bf", "cf"} {
		p := bulk(t, e.do(2, "DUMP", k))
		if p[0] != 'P' {
			t.Fatalf("%s payload type %q", k, p[0])
		}
		if got := e.do(2, "RESTORE", k, "0", string(p)); got != "-BUSYKEY Target key name already exists.\r\n" {
			t.Fatalf("%s: %q", k, got)
		}
		if got := e.do(2, "RESTORE", k+"2", "0", string(p)); got != "+OK\r\n" {
			t.Fatalf("%s: %q", k, got)
		}
		if a, b := e.do(2, "TYPE", k), e.do(2, "TYPE", k+"2"); a != b {
			t.Fatalf("TYPE %q vs %q", a, b)
		}
		if a, b := bulk(t, e.do(2, "DUMP", k)), bulk(t, e.do(2, "DUMP", k+"2")); !bytes.Equal(a, b) {
			t.Fatalf("%s: DUMP of the restored copy differs", k)
		}
		if e.do(2, "OBJECT", "ENCODING", k) != "$3\r\nraw\r\n" {
			t.Fatalf("OBJECT ENCODING %s", k)
		}
	}
	for _, item := range []string{"a", "b", "c"} {
		if got := e.do(2, "BF.EXISTS", "bf2", item); got != ":1\r\n" {
			t.Fatalf("BF.EXISTS bf2 %s: %q", item, got)
		}
	}
	if got := e.do(2, "CF.EXISTS", "cf2", "a"); got != ":1\r\n" {
		t.Fatalf("CF.EXISTS: %q", got)
	}
	// The per-filter budget applies to a restored filter.
	p := bulk(t, e.do(2, "DUMP", "bf"))
	if got := e.do(2, "CONFIG", "SET", "bf-max-filter-bytes", "64"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", got)
	}
	used := e.store.Used()
	if got := e.do(2, "RESTORE", "bf3", "0", string(p)); got != "-ERR Bad data format\r\n" {
		t.Fatalf("over budget: %q", got)
	}
	// maxmemory admission: nothing fits.
	reply, _ := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv("RESTORE", "s", "0", string(rdb.DumpString([]byte("xyz")))),
		commandtest.ReserveMem(func(uint64) bool { return false }))
	if reply != "-OOM command not allowed when used memory > 'maxmemory'.\r\n" {
		t.Fatalf("OOM: %q", reply)
	}
	if e.store.Used() != used {
		t.Fatal("refused RESTOREs changed memory")
	}
}

// TestRestoreRDBVersions: RDB versions up to 12 (Redis 7.4) are
// accepted, 13 is not.
func TestRestoreRDBVersions(t *testing.T) {
	e := newKenv(t)
	e.expect("+OK\r\n", "RESTORE", "k", "0", string(rdb.Frame([]byte{0, 1, 'a'}, 12)))
	e.expect("-ERR DUMP payload version or checksum are wrong\r\n", "RESTORE", "k2", "0", string(rdb.Frame([]byte{0, 1, 'a'}, 13)))
}

// TestCopyDB: only database 0 exists.
func TestCopyDB(t *testing.T) {
	e := newKenv(t)
	e.do(2, "SET", "a", "1")
	e.expect("-ERR DB index is out of range\r\n", "COPY", "a", "b", "DB", "1")
	e.expect("-ERR DB index is out of range\r\n", "COPY", "a", "b", "DB", "-1")
	e.expect(":1\r\n", "COPY", "a", "b", "DB", "0")
	if got := e.do(2, "RANDOMKEY"); got != "$1\r\na\r\n" && got != "$1\r\nb\r\n" {
		t.Fatalf("RANDOMKEY: %q", got)
	}
	e.do(2, "DEL", "a", "b")
	e.expect("$-1\r\n", "RANDOMKEY")
	e.expect("$-1\r\n", "OBJECT", "REFCOUNT", "x")
}

// TestReplayNewWriteCommands: every new write command's AOF records,
// replayed through recovery's path into an empty store, rebuild the same
// key space.
func TestReplayNewWriteCommands(t *testing.T) {
	e := newKenv(t)
	script := [][]string{
		{"SET", "a", "1"}, {"RENAME", "a", "b"}, {"RENAMENX", "b", "c"}, {"COPY", "c", "d"}, {"SET", "e", "x"},
		{"COPY", "c", "e", "REPLACE"}, {"MSET", "m1", "v1", "m2", "v2", "m1", "v3"}, {"MSETNX", "n1", "1", "n2", "2"},
		{"MSETNX", "n1", "9", "n3", "3"}, {"SETNX", "s", "1"}, {"SETNX", "s", "2"}, {"INCR", "s"}, {"INCRBY", "s", "10"},
		{"DECR", "s"}, {"DECRBY", "s", "-7"}, {"INCRBYFLOAT", "f", "1.1"}, {"INCRBYFLOAT", "f", "2.2"},
		{"GETSET", "g", "v"}, {"GETSET", "g", "w"}, {"BF.ADD", "bf", "x"}, {"RENAME", "bf", "bf2"},
		{"COPY", "bf2", "bf3"}, {"PFADD", "h", "a", "b"}, {"RESTORE", "r", "0", string(rdb.DumpString([]byte(strings.Repeat("z", 100))))},
		{"CF.ADD", "cf", "x"},
	}
	for _, cmd := range script {
		if got := e.do(2, cmd...); strings.HasPrefix(got, "-") {
			t.Fatalf("%q: %q", cmd, got)
		}
	}
	e.do(2, "RESTORE", "cf2", "0", string(bulk(t, e.do(2, "DUMP", "cf"))))
	tab, cfg := app.Tables()
	replayed := keyspace.New(nil)
	replay := app.Replayer(tab, cfg, replayed)
	for _, rec := range e.log.Records() {
		if err := replay(rec); err != nil {
			t.Fatalf("replay %q: %v", rec, err)
		}
	}
	want, got := e.store.Keys("*"), replayed.Keys("*")
	if strings.Join(want, ",") != strings.Join(got, ",") {
		t.Fatalf("keys after replay %v, want %v", got, want)
	}
	r := &kenv{t: t, tab: tab, cfg: cfg, store: replayed, log: &commandtest.Logger{}}
	for _, k := range want {
		// A cuckoo filter's snapshot records its growth budget, which
		// replay sets to the largest (cf.budgetFor): compare what clients
		// see of it instead.
		cmd := []string{"DUMP", k}
		if strings.HasPrefix(k, "cf") {
			cmd = []string{"CF.INFO", k}
			if a, b := e.do(2, "CF.EXISTS", k, "x"), r.do(2, "CF.EXISTS", k, "x"); a != ":1\r\n" || a != b {
				t.Errorf("%s: CF.EXISTS %q after replay, %q before", k, b, a)
			}
		}
		if a, b := e.do(2, cmd...), r.do(2, cmd...); a != b {
			t.Errorf("%s: %s after replay differs", k, cmd[0])
		}
	}
	for _, s := range []*keyspace.Store{e.store, replayed} {
		if s.Used() != s.MemoryUsage() {
			t.Errorf("Used %d != MemoryUsage %d", s.Used(), s.MemoryUsage())
		}
	}
}

// TestRenameAtomicUnderConcurrency: while RENAME replaces a Bloom filter
// over and over, readers of the destination always find a filter, and an
// item every version holds.
func TestRenameAtomicUnderConcurrency(t *testing.T) {
	e := newKenv(t)
	e.do(2, "BF.ADD", "f", "always")
	var stop atomic.Bool
	var bad atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if got, _ := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv("BF.EXISTS", "f", "always")); got != ":1\r\n" {
					bad.Add(1)
				}
				if got, _ := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv("EXISTS", "f")); got != ":1\r\n" {
					bad.Add(1)
				}
			}
		}()
	}
	for i := range 2000 {
		src := fmt.Sprint("f:new", i%3)
		for _, cmd := range [][]string{{"BF.ADD", src, "always"}, {"BF.ADD", src, fmt.Sprint(i)}, {"RENAME", src, "f"}} {
			if got, _ := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv(cmd...)); strings.HasPrefix(got, "-") {
				t.Fatalf("%q: %q", cmd, got)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d reads saw no filter (or one without the item) under the destination", bad.Load())
	}
	if e.store.Used() != e.store.MemoryUsage() {
		t.Fatalf("Used %d != MemoryUsage %d", e.store.Used(), e.store.MemoryUsage())
	}
}

// FuzzRestore: RESTORE of any payload never panics; a refused payload
// leaves the key space as it was, an accepted one dumps and restores to
// the same value.
func FuzzRestore(f *testing.F) {
	f.Add(rdb.DumpString([]byte("hello")))
	f.Add(rdb.DumpString([]byte(strings.Repeat("abc", 100))))
	f.Add(rdb.DumpString([]byte("-32768")))
	seed := newKenv(f)
	seed.do(2, "BF.ADD", "bf", "x")
	seed.do(2, "CF.ADD", "cf", "x")
	seed.do(2, "PFADD", "h", "x")
	for _, k := range []string{"bf", "cf", "h"} {
		f.Add([]byte(bulk(f, seed.do(2, "DUMP", k))))
	}
	e := newKenv(f)
	f.Fuzz(func(t *testing.T, p []byte) {
		e.do(2, "DEL", "k", "k2")
		e.do(2, "SET", "keep", "v")
		used := e.store.Used()
		got := e.do(2, "RESTORE", "k", "0", string(p))
		if got != "+OK\r\n" {
			if !strings.HasPrefix(got, "-") {
				t.Fatalf("reply %q", got)
			}
			if e.store.Used() != used || e.store.Len() != 1 {
				t.Fatalf("refused payload changed the key space: %q", got)
			}
			return
		}
		d := bulk(t, e.do(2, "DUMP", "k"))
		if got := e.do(2, "RESTORE", "k2", "0", string(d)); got != "+OK\r\n" {
			t.Fatalf("re-RESTORE of DUMP: %q", got)
		}
		if a, b := e.do(2, "DUMP", "k"), e.do(2, "DUMP", "k2"); a != b {
			t.Fatal("DUMP differs after a round trip")
		}
		if e.store.Used() != e.store.MemoryUsage() {
			t.Fatal("Used drifted")
		}
	})
}

// TestDumpTestVectors checks the test vectors of docs/FORMATS.md
// ("DUMP payload"), and that each restores to the value it came from.
func TestDumpTestVectors(t *testing.T) {
	e := newKenv(t)
	e.do(2, "SET", "hello", "hello")
	e.do(2, "SET", "300", "300")
	e.do(2, "SET", "a40", strings.Repeat("a", 40))
	// The cuckoo encoding does not record the per-filter budget (whose
	// default depends on the machine): an unusual one gives the
	// documented bytes too.
	if got := e.do(2, "CONFIG", "SET", "cf-max-filter-bytes", "1000000"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", got)
	}
	e.do(2, "CF.RESERVE", "cf", "2", "BUCKETSIZE", "1")
	for key, want := range map[string]string{
		"hello": "00 05 68656c6c6f 0a00 6372df766534200a",
		"300":   "00 c12c01 0a00 954261f265825c10",
		"a40":   "00 c3 05 28 0061e01e00 0a00 034b70b7f28ed6ed",
		"cf": "50 01 09 4d42626c6f6f6d4346" +
			"5052424c0103040008011400000000000000000000000000020000000000000001000000010000" +
			"0000000000000000000000000000000000000000000000000000000000724f38830000d27761f1" +
			"0a00 8e6ca261bf7a7568",
	} {
		p := bulk(t, e.do(2, "DUMP", key))
		if got := fmt.Sprintf("%x", p); got != strings.ReplaceAll(want, " ", "") {
			t.Errorf("DUMP %s = %s, documented %s", key, got, want)
		}
		if got := e.do(2, "RESTORE", key+"-copy", "0", string(p)); got != "+OK\r\n" {
			t.Errorf("RESTORE %s: %q", key, got)
		}
	}
}
