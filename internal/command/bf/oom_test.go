package bf

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/redisbloom"
)

func (e *env) runReserve(replay bool, room uint64, args ...string) (reply string, asked uint64) {
	return commandtest.RunReserve(e.tab, e.store, e.cfg, replay, room, args...)
}

func (e *env) checkReserve(t *testing.T, want string, args ...string) {
	t.Helper()
	commandtest.CheckReserve(t, e.tab, e.store, e.cfg, e.log, want, args...)
}

// Every way of creating a filter reserves exactly its memory before
// allocating it, and changes nothing when refused.
func TestMaxMemoryReserve(t *testing.T) {
	e := newEnv(t)
	src, err := redisbloom.New(redisbloom.Params{ErrorRate: 0.001, Capacity: 20000, Expansion: 2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	e.checkReserve(t, "+OK\r\n", "BF.RESERVE", "r", "0.01", "100000")
	e.checkReserve(t, "-ERR item exists\r\n", "BF.RESERVE", "r", "0.01", "100000")
	e.checkReserve(t, "+OK\r\n", "BF.RESERVE", "ns", "0.001", "5000", "NONSCALING")
	e.checkReserve(t, ":1\r\n", "BF.ADD", "a", "x")
	e.checkReserve(t, ":1\r\n", "BF.ADD", "a", "y") // existing: nothing to reserve
	e.checkReserve(t, "*2\r\n:1\r\n:1\r\n", "BF.MADD", "m", "x", "y")
	e.checkReserve(t, "*1\r\n:1\r\n", "BF.INSERT", "i", "CAPACITY", "50000", "ERROR", "0.001", "ITEMS", "x")
	e.checkReserve(t, "-ERR not found\r\n", "BF.INSERT", "n", "NOCREATE", "ITEMS", "x")
	e.checkReserve(t, "+OK\r\n", "BF.LOADCHUNK", "l", "1", string(src.Header()))
	e.checkReserve(t, "+OK\r\n", "_BF.CREATE", "c", "0.01", "1000", "2", "SCALING")
	// Bad parameters get their own error, not OOM.
	e.checkReserve(t, "-ERR bad capacity\r\n", "BF.RESERVE", "b", "0.01", "x")
	if got, _ := e.runReserve(false, 0, "BF.LOADCHUNK", "h", "1", "garbage"); strings.Contains(got, "OOM") {
		t.Fatalf("bad header: %q", got)
	}
}

// Replayed records are not subject to maxmemory.
func TestMaxMemoryReplay(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{
		{"_BF.CREATE", "c", "0.01", "100000", "2", "SCALING"},
		{"BF.RESERVE", "r", "0.01", "100000"},
		{"BF.MADD", "m", "x"},
	} {
		if got, asked := e.runReserve(true, 0, args...); strings.HasPrefix(got, "-") || asked != 0 {
			t.Fatalf("replayed %q = %q (asked %d)", args, got, asked)
		}
	}
}

// A BF.ADD that makes a scaling filter grow reserves exactly the new
// link's memory before allocating it; refused (no room under maxmemory),
// it answers RedisBloom's "ERR problem inserting into filter", as for a
// link over the budget, and changes and logs nothing. BF.MADD and
// BF.INSERT keep the items before the growing one and end their reply
// with that error.
func TestMaxMemoryReserveGrowth(t *testing.T) {
	e := newEnv(t)
	e.expect(2, ok, "BF.RESERVE", "g", "0.01", "2", "EXPANSION", "4")
	e.expect(2, ":1\r\n", "BF.ADD", "g", "a")
	e.expect(2, ":1\r\n", "BF.ADD", "g", "b")
	// The first link is full: c needs a second one.
	e.checkReserve(t, ":1\r\n", "BF.ADD", "g", "c")
	if got := e.do(2, "BF.INFO", "g", "FILTERS"); got != "*1\r\n:2\r\n" {
		t.Fatalf("BF.INFO FILTERS = %q", got)
	}
	// Present item on a full chain: nothing to reserve.
	for _, it := range []string{"d", "e", "f", "g", "h", "i", "j"} {
		e.checkReserve(t, ":1\r\n", "BF.ADD", "g", it)
	}
	e.checkReserve(t, ":0\r\n", "BF.ADD", "g", "a")

	// MADD: the link fills at the third new item of this call.
	e.expect(2, ok, "BF.RESERVE", "m", "0.01", "2", "EXPANSION", "4")
	recs := len(e.log.Records())
	got, asked := e.runReserve(false, 0, "BF.MADD", "m", "x", "y", "z", "w")
	if want := "*3\r\n:1\r\n:1\r\n" + commandtest.BFNoGrowthReply; got != want || asked == 0 {
		t.Fatalf("BF.MADD under a full maxmemory = %q (asked %d), want %q", got, asked, want)
	}
	if n := len(e.log.Records()); n != recs+1 {
		t.Fatalf("%d records logged, want the MADD of x y", n-recs)
	}
	if got := e.do(2, "BF.MEXISTS", "m", "x", "y", "z"); got != "*3\r\n:1\r\n:1\r\n:0\r\n" {
		t.Fatalf("after the refused growth: %q", got)
	}
	if got := e.do(2, "BF.INFO", "m", "FILTERS"); got != "*1\r\n:1\r\n" {
		t.Fatalf("refused growth added a link: %q", got)
	}
	got, _ = e.runReserve(false, 0, "BF.INSERT", "m", "ITEMS", "z")
	if want := "*1\r\n" + commandtest.BFNoGrowthReply; got != want {
		t.Fatalf("BF.INSERT = %q, want %q", got, want)
	}
	// Replayed records are never refused.
	if got, _ := e.runReserve(true, 0, "BF.MADD", "m", "z", "w"); got != "*2\r\n:1\r\n:1\r\n" {
		t.Fatalf("replayed growth = %q", got)
	}
}

// Issue 13: a 53 MB BF.LOADCHUNK header declaring 1,000,000 links of
// 8 bytes. Its real memory (~170 MB: each link's Filter and slots, not
// only its 8 bytes of bits) is over a 128 MiB bf-max-filter-bytes,
// so it is refused and nothing is created or logged. Within a budget that
// holds it, it is admitted and used_memory counts all of it.
func TestLoadChunkMillionLinks(t *testing.T) {
	const links = 1_000_000
	le := binary.LittleEndian
	hdr := make([]byte, 0, 20+53*links)
	hdr = le.AppendUint64(hdr, 0)
	hdr = le.AppendUint32(hdr, links)
	hdr = le.AppendUint32(hdr, redisbloom.OptNoRound|redisbloom.OptForce64)
	hdr = le.AppendUint32(hdr, 2)
	for range links {
		hdr = le.AppendUint64(hdr, 8)
		hdr = le.AppendUint64(hdr, 64)
		hdr = le.AppendUint64(hdr, 0)
		hdr = le.AppendUint64(hdr, math.Float64bits(0.5))
		hdr = le.AppendUint64(hdr, math.Float64bits(1))
		hdr = le.AppendUint32(hdr, 1)
		hdr = le.AppendUint64(hdr, 1)
		hdr = append(hdr, 0)
	}
	e := newEnv(t)
	if err := e.cfg.Set("bf-max-filter-bytes", "134217728"); err != nil {
		t.Fatal(err)
	}
	recs := len(e.log.Records())
	e.expect(2, "-ERR received bad data\r\n", "BF.LOADCHUNK", "big", "1", string(hdr))
	if e.store.Len() != 0 || e.store.Used() != 0 || len(e.log.Records()) != recs {
		t.Fatalf("refused header left %d keys, %d bytes used, %d records", e.store.Len(), e.store.Used(), len(e.log.Records())-recs)
	}
	if raceEnabled {
		return // building a million links under the race detector is slow
	}
	if err := e.cfg.Set("bf-max-filter-bytes", "1073741824"); err != nil {
		t.Fatal(err)
	}
	e.expect(2, ok, "BF.LOADCHUNK", "big", "1", string(hdr))
	if want := links * (8 + redisbloom.LinkOverhead); e.store.Used() < want {
		t.Fatalf("used memory %d for a million links, want at least %d", e.store.Used(), want)
	}
}
