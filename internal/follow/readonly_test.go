package follow_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// TestOwns: the follower owns its followed keys and its position key, and
// nothing else, without allocating.
func TestOwns(t *testing.T) {
	ns := startNATS(t)
	n := openNode(t, t.TempDir(), fmt.Sprintf(testConfig, ns.url))
	defer n.close()
	pos := n.info()["follow_position_key"]
	if pos == "" {
		t.Fatal("no position key")
	}
	for _, c := range []struct {
		key  string
		want bool
	}{{"users", true}, {"sessions", true}, {pos, true}, {"other", false}, {"", false}, {"users ", false}, {pos + "x", false}} {
		if got := n.f.Owns([]byte(c.key)); got != c.want {
			t.Errorf("Owns(%q) = %v", c.key, got)
		}
	}
	users, other := []byte("users"), []byte("other")
	if a := testing.AllocsPerRun(100, func() { n.f.Owns(users); n.f.Owns(other) }); a != 0 {
		t.Fatalf("Owns allocates %v", a)
	}
}

const readOnlyErr = "READONLY You can't write against a read only replica."

// TestFollowedKeysReadOnly runs `serve --follow` (app.Run): client writes
// of the followed keys and of the position key (BF.ADD, CF.DEL, DEL,
// SET …) and FLUSHALL get READONLY and change nothing, while the follower
// keeps applying the stream to those keys; reads of them and writes of
// other keys work.
func TestFollowedKeysReadOnly(t *testing.T) {
	ns := startNATS(t)
	var last uint64
	for i := range 50 {
		ns.publish(t, "users.created", fmt.Sprint("user-", i))
		last = ns.publish(t, "sessions.opened", fmt.Sprint("session-", i))
	}
	s := serveFollow(t, fmt.Sprintf(testConfig, ns.url))
	c := s.c
	waitApplied := func(seq uint64) map[string]string {
		t.Helper()
		var info map[string]string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			info = infoFollow(c)
			if info["follow_caught_up"] == "1" && info["follow_applied_seq"] == strconv.FormatUint(seq, 10) {
				return info
			}
		}
		t.Fatalf("not caught up to %d: %v", seq, info)
		return nil
	}
	pos := waitApplied(last)["follow_position_key"]
	bg := context.Background()
	do := func(args ...any) (any, error) { return c.Do(bg, args...).Result() }

	refused := [][]any{
		{"BF.ADD", "users", "intruder"},
		{"BF.MADD", "users", "intruder", "x"},
		{"BF.INSERT", "users", "ITEMS", "intruder"},
		{"BF.RESERVE", "users", "0.01", "100"},
		{"CF.ADD", "sessions", "intruder"},
		{"CF.DEL", "sessions", "session-0"},
		{"CF.RESERVE", "sessions", "100"},
		{"CF.COMPACT", "sessions"},
		{"DEL", "users"},
		{"DEL", "other", "sessions"},
		{"UNLINK", "sessions"},
		{"SET", pos, "0"},
		{"DEL", pos},
		{"FLUSHALL"},
		{"FLUSHDB"},
		{"EXPIRE", "users", "100"},
		{"PEXPIREAT", "sessions", "1"},
		{"SET", pos, "0", "KEEPTTL"},
		{"GETEX", pos, "EX", "10"},
		{"GETDEL", pos},
	}
	check := func() {
		t.Helper()
		for _, args := range refused {
			if _, err := do(args...); err == nil || err.Error() != readOnlyErr {
				t.Errorf("%v: %v, want READONLY", args, err)
			}
		}
	}
	check()

	// Reads of followed keys work; the refused writes changed nothing.
	for _, r := range []struct {
		args []any
		want any
	}{
		{[]any{"BF.EXISTS", "users", "user-0"}, int64(1)},
		{[]any{"BF.EXISTS", "users", "intruder"}, int64(0)},
		{[]any{"CF.COUNT", "sessions", "session-0"}, int64(1)},
		{[]any{"CF.EXISTS", "sessions", "intruder"}, int64(0)},
		{[]any{"EXISTS", "users", "sessions", pos}, int64(3)},
		{[]any{"TYPE", "users"}, "MBbloom--"},
		{[]any{"GET", pos}, strconv.FormatUint(last, 10)},
		// Other keys stay writable.
		{[]any{"BF.ADD", "other", "x"}, int64(1)},
		{[]any{"DEL", "other"}, int64(1)},
	} {
		if got, err := do(r.args...); err != nil || got != r.want {
			t.Errorf("%v = %v, %v; want %v", r.args, got, err, r.want)
		}
	}

	// The follower keeps applying the stream (adds and deletes) to the
	// keys clients may not write, while clients keep trying.
	for i := 50; i < 100; i++ {
		ns.publish(t, "users.created", fmt.Sprint("user-", i))
		ns.publish(t, "sessions.opened", fmt.Sprint("session-", i))
		if i%10 == 0 {
			check()
		}
	}
	last = ns.publish(t, "sessions.closed", "session-0")
	waitApplied(last)
	check()
	for _, r := range []struct {
		args []any
		want any
	}{
		{[]any{"BF.EXISTS", "users", "user-99"}, int64(1)},
		{[]any{"BF.EXISTS", "users", "intruder"}, int64(0)},
		{[]any{"CF.COUNT", "sessions", "session-99"}, int64(1)},
		{[]any{"CF.COUNT", "sessions", "session-0"}, int64(0)},
		{[]any{"GET", pos}, strconv.FormatUint(last, 10)},
		{[]any{"DBSIZE"}, int64(3)},
	} {
		if got, err := do(r.args...); err != nil || got != r.want {
			t.Errorf("%v = %v, %v; want %v", r.args, got, err, r.want)
		}
	}
}
