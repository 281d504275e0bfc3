package generic_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/rdb"
)

// ttlScript exercises how the key and string commands carry, copy, set
// and clear TTLs. PTTL and TTL replies are compared within a tolerance.
func ttlScript() [][]string {
	p := string(rdb.DumpString([]byte("v")))
	return [][]string{
		{"SET", "a", "1"}, {"PEXPIRE", "a", "100000"}, {"SET", "b", "2"}, {"PEXPIRE", "b", "500000"},
		{"RENAME", "a", "b"}, {"PTTL", "b"}, {"PTTL", "a"},
		{"SET", "a", "1"}, {"RENAME", "a", "b"}, {"PTTL", "b"},
		{"SET", "a", "1"}, {"PEXPIRE", "a", "100000"}, {"RENAMENX", "a", "n"}, {"PTTL", "n"},
		{"COPY", "n", "c"}, {"PTTL", "c"}, {"PTTL", "n"}, {"PEXPIRE", "c", "300000"}, {"SET", "n", "9"},
		{"COPY", "n", "c", "REPLACE"}, {"PTTL", "c"},
		{"SET", "x", "1"}, {"PEXPIRE", "x", "100000"}, {"INCRBYFLOAT", "x", "1.5"}, {"PTTL", "x"},
		{"INCR", "x"}, {"INCRBYFLOAT", "x", "1"}, {"PTTL", "x"}, {"SET", "x", "1"}, {"PEXPIRE", "x", "100000"},
		{"INCR", "x"}, {"DECRBY", "x", "3"}, {"PTTL", "x"}, {"GETSET", "x", "3"}, {"PTTL", "x"},
		{"PEXPIRE", "x", "100000"}, {"MSET", "x", "1", "y", "2"}, {"PTTL", "x"},
		{"PEXPIRE", "x", "100000"}, {"MSETNX", "x", "1"}, {"PTTL", "x"}, {"SETNX", "x", "2"}, {"PTTL", "x"},
		{"RESTORE", "r1", "100000", p}, {"PTTL", "r1"}, {"TTL", "r1"},
		{"RESTORE", "r2", "1", p, "ABSTTL"}, {"EXISTS", "r2"},
		{"RESTORE", "r1", "1", p, "ABSTTL", "REPLACE"}, {"EXISTS", "r1"},
		{"SET", "r3", "old"}, {"PEXPIRE", "r3", "100000"}, {"RESTORE", "r3", "0", p, "REPLACE"}, {"PTTL", "r3"},
		{"RESTORE", "r4", "9223372036854775807", p}, {"PTTL", "r4"},
		{"RESTORE", "r5", "99999999999999", p, "ABSTTL"}, {"PTTL", "r5"},
		{"RESTORE", "r6", "-1", p, "ABSTTL"}, {"DUMP", "r5"}, {"DBSIZE"},
	}
}

// sameTTL reports whether two integer replies of PTTL/TTL agree within a
// second.
func sameTTL(a, b string) bool {
	x, err1 := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(a, ":")), 10, 64)
	y, err2 := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(b, ":")), 10, 64)
	if err1 != nil || err2 != nil || (x < 0) != (y < 0) {
		return a == b
	}
	if x < 0 {
		return x == y
	}
	return x-y <= 1000 && y-x <= 1000
}

func TestKeyTTLDifferentialRedis(t *testing.T) {
	addr := commandtest.StartRedis(t)
	rc := commandtest.DialRaw(t, addr, 2)
	e := newKenv(t)
	for _, cmd := range ttlScript() {
		want, err := rc.Do(commandtest.Argv(cmd...))
		if err != nil {
			t.Fatal(err)
		}
		got := e.do(2, cmd...)
		if cmd[0] == "PTTL" || cmd[0] == "TTL" {
			if !sameTTL(got, want) {
				t.Errorf("%q: probly %q, redis %q", cmd, got, want)
			}
			continue
		}
		if got != want {
			t.Errorf("%q:\n probly %q\n redis  %q", cmd, got, want)
		}
	}
	if e.store.Used() != e.store.MemoryUsage() {
		t.Fatalf("Used %d != MemoryUsage %d", e.store.Used(), e.store.MemoryUsage())
	}
}

// TestTTLMovesWithFakeClock: with a fake clock, a renamed or copied key
// expires when its source would have, a restored key when its TTL says,
// and the AOF records replay to the same expire times.
func TestTTLMovesWithFakeClock(t *testing.T) {
	e := newKenv(t)
	now := int64(1_000_000_000_000)
	e.store.SetClock(func() int64 { return now })
	p := string(rdb.DumpString([]byte("v")))
	for _, cmd := range [][]string{
		{"SET", "a", "1"}, {"PEXPIRE", "a", "1000"}, {"RENAME", "a", "b"}, {"COPY", "b", "c"},
		{"RESTORE", "r", "2000", p}, {"RESTORE", "s", strconv.FormatInt(now+3000, 10), p, "ABSTTL"},
		{"BF.ADD", "f", "x"}, {"PEXPIRE", "f", "1500"}, {"RENAME", "f", "g"},
	} {
		if got := e.do(2, cmd...); strings.HasPrefix(got, "-") {
			t.Fatalf("%q: %q", cmd, got)
		}
	}
	pttl := func(s *keyspace.Store, k string) int64 {
		ms, ok := s.ExpireOf([]byte(k))
		if !ok {
			return -2
		}
		return ms - now
	}
	want := map[string]int64{"a": -2, "b": 1000, "c": 1000, "r": 2000, "s": 3000, "f": -2, "g": 1500}
	for k, w := range want {
		if got := pttl(e.store, k); got != w {
			t.Errorf("%s: TTL %d, want %d", k, got, w)
		}
	}
	// Replay the log into a fresh store on the same clock.
	tab, cfg := app.Tables()
	replayed := keyspace.New(nil)
	replayed.SetClock(func() int64 { return now })
	replay := app.Replayer(tab, cfg, replayed)
	for _, rec := range e.log.Records() {
		if err := replay(rec); err != nil {
			t.Fatalf("replay %q: %v", rec, err)
		}
	}
	for k, w := range want {
		if got := pttl(replayed, k); got != w {
			t.Errorf("replayed %s: TTL %d, want %d", k, got, w)
		}
	}
	now += 1001
	if e.do(2, "EXISTS", "b", "c", "g", "r") != ":2\r\n" || e.do(2, "RANDOMKEY") == "$1\r\nb\r\n" {
		t.Fatal("b and c should have expired, g and r not")
	}
	if got := e.do(2, "MGET", "b", "r"); got != "*2\r\n$-1\r\n$1\r\nv\r\n" {
		t.Fatalf("MGET: %q", got)
	}
	// RENAME of an expired source: no such key; an expired destination is
	// simply replaced.
	e.expect("-ERR no such key\r\n", "RENAME", "b", "z")
	e.expect("+OK\r\n", "RENAME", "r", "c")
	if got := pttl(e.store, "c"); got != 999 {
		t.Fatalf("c: TTL %d after the rename", got)
	}
	if e.store.Used() != e.store.MemoryUsage() {
		t.Fatalf("Used %d != MemoryUsage %d", e.store.Used(), e.store.MemoryUsage())
	}
}
