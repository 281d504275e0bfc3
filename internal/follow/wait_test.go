package follow_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWaitForeverEndsAtShutdown: FOLLOW.WAIT with no timeout for a future
// position answers the applied position when the server shuts down, and
// the shutdown does not wait for it.
func TestWaitForeverEndsAtShutdown(t *testing.T) {
	ns := startNATS(t)
	s := serveFollow(t, fmt.Sprintf(testConfig, ns.url))
	s.waitReady(t)
	seq := ns.publish(t, "users.created", "alice")
	ctx := context.Background()
	if got, err := s.c.Do(ctx, "FOLLOW.WAIT", seq, 5000).Uint64(); err != nil || got < seq {
		t.Fatalf("FOLLOW.WAIT %d = %d, %v", seq, got, err)
	}
	// The stream's last sequence INFO reports is never below the applied
	// position, although the stream is polled only once a second.
	info, err := s.c.Info(ctx, "follow").Result()
	if err != nil {
		t.Fatal(err)
	}
	if last, applied := infoField(info, "follow_stream_last_seq"), infoField(info, "follow_applied_seq"); last < applied || applied < seq {
		t.Errorf("follow_stream_last_seq %d, follow_applied_seq %d after FOLLOW.WAIT %d", last, applied, seq)
	}
	type reply struct {
		pos uint64
		err error
	}
	rc := make(chan reply, 1)
	go func() {
		pos, err := s.c.Do(ctx, "FOLLOW.WAIT", 1<<40, 0).Uint64()
		rc <- reply{pos, err}
	}()
	time.Sleep(100 * time.Millisecond) // let the wait block; the outcome does not depend on it
	start := time.Now()
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("shutdown with a waiting client took %v", d)
	}
	r := <-rc
	if r.err != nil || r.pos < seq || r.pos >= 1<<40 {
		t.Fatalf("FOLLOW.WAIT at shutdown = %d, %v; want the applied position ≥ %d", r.pos, r.err, seq)
	}
}

// infoField parses field of an INFO reply as an unsigned integer (0 if absent).
func infoField(info, field string) uint64 {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseUint(v, 10, 64)
			return n
		}
	}
	return 0
}
