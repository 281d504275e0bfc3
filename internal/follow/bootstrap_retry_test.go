package follow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// flakyJS fails the first fails Stream calls with err.
type flakyJS struct {
	jetstream.JetStream
	mu    sync.Mutex
	fails int
	err   error
	calls int
}

func (j *flakyJS) Stream(ctx context.Context, name string) (jetstream.Stream, error) {
	j.mu.Lock()
	j.calls++
	fail := j.calls <= j.fails
	j.mu.Unlock()
	if fail {
		return nil, j.err
	}
	return j.JetStream.Stream(ctx, name)
}

// TestBootstrapRetriesTransientStreamErrors: a fresh replica whose stream
// lookup fails transiently during bootstrap (timeouts, no responders, a
// call's own deadline) retries, more often than bootstrapAttempts, and
// then starts from the snapshot; a missing stream is refused at once, with
// ErrSnapshotStream, and nothing is loaded.
func TestBootstrapRetriesTransientStreamErrors(t *testing.T) {
	ctx := context.Background()
	js := startUsersJS(t, 5)
	sc := SnapshotConfig{Bucket: "snaps", Publish: true}
	if err := sc.normalize(); err != nil {
		t.Fatal(err)
	}
	pub, pn := snapFollower(t, js)
	pn.do(append([]string{"BF.MADD", "users"}, items("u", 5)...)...)
	pn.do("SET", pub.cfg.PositionKey, "5")
	if err := pub.publishSnapshot(ctx, &sc); err != nil {
		t.Fatal(err)
	}

	for _, e := range []error{nats.ErrNoResponders, nats.ErrTimeout, context.DeadlineExceeded, jetstream.ErrNoStreamResponse} {
		fj := &flakyJS{JetStream: js, fails: bootstrapAttempts + 2, err: e}
		f, n := snapFollower(t, fj)
		f.cfg.Snapshot = sc
		sleeps := 0
		f.start(ctx, func() bool { sleeps++; return true })
		if fj.calls != fj.fails+1 || sleeps != fj.fails {
			t.Errorf("%v: %d stream lookups and %d backoffs, want %d and %d", e, fj.calls, sleeps, fj.fails+1, fj.fails)
		}
		if p := f.applied.Load(); p != 5 {
			t.Errorf("%v: applied position %d after the retries, want the snapshot's 5", e, p)
		}
		for _, it := range items("u", 5) {
			if n.do("BF.EXISTS", "users", it) != ":1\r\n" {
				t.Fatalf("%v: %s missing after the bootstrap", e, it)
			}
		}
	}

	fj := &flakyJS{JetStream: js, fails: 100, err: fmt.Errorf("stream info: %w", jetstream.ErrStreamNotFound)}
	f, n := snapFollower(t, fj)
	f.cfg.Snapshot = sc
	sleeps := 0
	f.start(ctx, func() bool { sleeps++; return true })
	if fj.calls != 1 || sleeps != 0 {
		t.Errorf("missing stream: %d lookups and %d backoffs, want 1 and 0", fj.calls, sleeps)
	}
	if f.applied.Load() != 0 || n.do("DBSIZE") != ":0\r\n" {
		t.Errorf("missing stream: applied %d, DBSIZE %q", f.applied.Load(), n.do("DBSIZE"))
	}
	if le := f.lastErr.Load(); le == nil || !strings.Contains(*le, ErrSnapshotStream.Error()) {
		t.Errorf("missing stream: last error %v, want %v", le, ErrSnapshotStream)
	}
	_, _, err := f.bootstrap(ctx, &sc)
	if !errors.Is(err, ErrSnapshotStream) || transient(err) {
		t.Errorf("missing stream: bootstrap error %v", err)
	}
	fj = &flakyJS{JetStream: js, fails: 1, err: nats.ErrNoResponders}
	f, _ = snapFollower(t, fj)
	if _, _, err := f.bootstrap(ctx, &sc); errors.Is(err, ErrSnapshotStream) || !transient(err) {
		t.Errorf("no responders: bootstrap error %v, want a transient one", err)
	}
}
