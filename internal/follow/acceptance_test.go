package follow_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"

	"github.com/probly/probly/guard/natsstream"
	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/follow"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/testutil"
)

// served is `probly serve --follow` run in-process (app.Run) with a real
// listener, for tests that go through the server's dispatch.
type served struct {
	c       *redis.Client
	metrics string       // http://host:port
	stop    func() error // shuts the server down (as SIGTERM does) and returns app.Run's error
}

func serveFollow(t *testing.T, cfgJSON string) *served {
	t.Helper()
	cfgPath := filepath.Join(t.TempDir(), "follow.json")
	if err := os.WriteFile(cfgPath, []byte(cfgJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, app.Options{Listener: ln, MetricsListener: mln, Dir: t.TempDir(), Follow: cfgPath, Logger: quiet()})
	}()
	s := &served{c: redis.NewClient(&redis.Options{Addr: ln.Addr().String(), Protocol: 2, MaxRetries: -1}),
		metrics: "http://" + mln.Addr().String()}
	var once sync.Once
	var runErr error
	s.stop = func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() {
		s.c.Close()
		if err := s.stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// waitReady waits for /readyz 200.
func (s *served) waitReady(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if code, _ := httpGet(s.metrics + "/readyz"); code == 200 {
			return
		}
		if time.Now().After(deadline) {
			_, body := httpGet(s.metrics + "/readyz")
			t.Fatalf("never ready: %s", body)
		}
	}
}

// TestReadYourWrites: a client publishes a change, waits for its position
// with FOLLOW.WAIT, then reads: every read sees the change. Every 100
// rounds an item never published must answer 0, so the follower is really
// answering from the filter (not "maybe" because it is not caught up).
func TestReadYourWrites(t *testing.T) {
	ns := startNATS(t)
	s := serveFollow(t, fmt.Sprintf(testConfig, ns.url))
	s.waitReady(t)
	ctx := context.Background()
	rounds := 1000
	if testing.Short() {
		rounds = 200
	}
	maybe := 0
	for i := range rounds {
		item := fmt.Sprint("ryw-", i)
		seq := ns.publish(t, "users.created", item)
		got, err := s.c.Do(ctx, "FOLLOW.WAIT", seq, 5000).Uint64()
		if err != nil || got < seq {
			t.Fatalf("FOLLOW.WAIT %d = %d, %v", seq, got, err)
		}
		if ok, err := s.c.Do(ctx, "BF.EXISTS", "users", item).Bool(); err != nil {
			t.Fatal(err)
		} else if ok {
			maybe++
		}
		if i%100 == 0 {
			if ok, _ := s.c.Do(ctx, "BF.EXISTS", "users", "never-published").Bool(); ok {
				t.Fatal("an item never published answers maybe: the follower is not answering from its filter")
			}
		}
	}
	if maybe != rounds {
		t.Fatalf("%d of %d reads after FOLLOW.WAIT answered maybe", maybe, rounds)
	}
	// Errors and a timeout: the applied position is answered when the
	// position is not reached.
	if err := s.c.Do(ctx, "FOLLOW.WAIT", "x", 10).Err(); err == nil || !strings.Contains(err.Error(), "position is not an integer") {
		t.Fatalf("bad position: %v", err)
	}
	if err := s.c.Do(ctx, "FOLLOW.WAIT", 1, -1).Err(); err == nil || !strings.Contains(err.Error(), "timeout is not an integer") {
		t.Fatalf("bad timeout: %v", err)
	}
	start := time.Now()
	got, err := s.c.Do(ctx, "FOLLOW.WAIT", 1<<40, 100).Uint64()
	if err != nil || got >= 1<<40 || time.Since(start) < 100*time.Millisecond {
		t.Fatalf("FOLLOW.WAIT of a future position: %d %v after %v", got, err, time.Since(start))
	}
	t.Logf("%d of %d reads after FOLLOW.WAIT answered maybe", maybe, rounds)
}

// TestFollowWaitWithoutFollow: a server without --follow refuses it.
func TestFollowWaitWithoutFollow(t *testing.T) {
	n := &node{t: t, store: keyspace.New(nil)}
	n.table, n.cfg = app.Tables()
	if got := n.do("FOLLOW.WAIT", "1", "0"); !strings.HasPrefix(got, "-ERR this server does not follow a stream") {
		t.Fatalf("FOLLOW.WAIT without --follow: %q", got)
	}
}

// TestHLLFollow: an HLL key follows the stream; its bytes and PFCOUNT
// equal those of a reference key fed the same items by PFADD.
func TestHLLFollow(t *testing.T) {
	ns := startNATS(t)
	cfgJSON := fmt.Sprintf(`{"url": %q, "stream": "USERS", "keys": [
	  {"key": "visitors", "type": "pf", "add": ["users.created"], "delete": ["users.deleted"]}]}`, ns.url)
	n := openNode(t, t.TempDir(), cfgJSON)
	defer n.close()
	n.start()
	var last uint64
	ref := []string{"PFADD", "reference"}
	for i := range 20000 {
		item := fmt.Sprint("visitor-", i%15000) // repeats
		last = ns.publish(t, "users.created", item)
		ref = append(ref, item)
		if i%1000 == 0 {
			last = ns.publish(t, "users.deleted", item) // ignored: an HLL cannot delete
		}
	}
	n.waitApplied(last)
	n.do(ref...)
	got, want := n.do("PFCOUNT", "visitors"), n.do("PFCOUNT", "reference")
	if got != want {
		t.Fatalf("PFCOUNT follower %q, reference %q", got, want)
	}
	if n.do("GET", "visitors") != n.do("GET", "reference") {
		t.Fatal("the followed HLL's bytes differ from the reference's")
	}
	if info := n.info(); !strings.Contains(info["follow_key_0"], "type=pf") || !strings.Contains(info["follow_key_0"], "ignored_deletes=20") {
		t.Fatalf("INFO %v", info)
	}
	t.Logf("PFCOUNT %s", strings.TrimSpace(got))
}

// TestBootstrapFromSnapshot: after 100,000 changes a replica publishes a
// snapshot to the object store; the stream is truncated to its last 1,000
// messages; a fresh replica starts from the snapshot, becomes ready and
// answers maybe for all 100,000 keys. A fresh replica with bootstrap off
// refuses to become ready and says why.
func TestBootstrapFromSnapshot(t *testing.T) {
	total := 100000
	if testing.Short() {
		total = 20000
	}
	ns := startNATS(t)
	ctx := context.Background()
	cfg := func(extra string) string {
		return fmt.Sprintf(`{"url": %q, "stream": "USERS", "max_stale": "2s", %s "keys": [
		  {"key": "users", "type": "bf", "add": ["users.created"], "capacity": 200000, "error_rate": 0.001},
		  {"key": "sessions", "type": "cf", "add": ["sessions.opened"], "delete": ["sessions.closed"], "capacity": 200000}]}`, ns.url, extra)
	}
	a := openNode(t, t.TempDir(), cfg(`"snapshot": {"publish": true, "interval": "1s"},`))
	defer a.close()
	a.start()
	var futures []jetstream.PubAckFuture
	users := make([]string, total)
	for i := range total {
		if i%1000 == 999 {
			// Bound the outstanding publishes (PublishAsync fails with
			// "stalled with too many outstanding async published
			// messages" past its pending limit on a slow machine).
			select {
			case <-ns.js.PublishAsyncComplete():
			case <-time.After(30 * time.Second):
				t.Fatal("publish ack timeout")
			}
		}
		users[i] = fmt.Sprint("user-", i)
		f, err := ns.js.PublishAsync("users.created", []byte(users[i]))
		if err != nil {
			t.Fatal(err)
		}
		futures = append(futures, f)
		if i%10 == 0 {
			if f, err = ns.js.PublishAsync("sessions.opened", []byte(users[i])); err != nil {
				t.Fatal(err)
			}
			futures = append(futures, f)
		}
	}
	var last uint64
	for _, f := range futures {
		select {
		case ack := <-f.Ok():
			last = max(last, ack.Sequence)
		case err := <-f.Err():
			t.Fatal(err)
		case <-time.After(30 * time.Second):
			t.Fatal("publish ack timeout")
		}
	}
	a.waitApplied(last)
	// Wait until the stored snapshot's position (its object metadata)
	// covers last, or b would find a snapshot older than the purge. (Not
	// for follow_snapshots_published to move: the snapshot at last may
	// have been published before waitApplied returned, and no other
	// follows while the position stays.)
	if !testutil.Eventually(t, 30*time.Second, func() bool {
		obs, err := ns.js.ObjectStore(ctx, follow.DefaultSnapshotBucket)
		if err != nil {
			return false
		}
		info, err := obs.GetInfo(ctx, "probly/follow/USERS")
		if err != nil {
			return false
		}
		pos, err := strconv.ParseUint(info.Metadata["probly-position"], 10, 64)
		return err == nil && pos >= last
	}) {
		t.Fatalf("no snapshot at position %d published: %v", last, a.info())
	}
	if age, err := strconv.ParseFloat(a.info()["follow_snapshot_age_seconds"], 64); err != nil || age < 0 || age > 60 {
		t.Fatalf("follow_snapshot_age_seconds after a publication: %v", a.info())
	}
	st, err := ns.js.Stream(ctx, "USERS")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctx, jetstream.WithPurgeKeep(1000)); err != nil {
		t.Fatal(err)
	}
	// The changes after the purge are applied on top of the snapshot.
	late := ns.publish(t, "users.created", "late-user")

	b := openNode(t, t.TempDir(), cfg(""))
	defer b.close()
	b.start()
	b.waitApplied(late)
	if !b.f.Ready() {
		t.Fatalf("not ready: %v", b.info())
	}
	check := func(n *node, key string, items []string) {
		t.Helper()
		for i := 0; i < len(items); i += 500 {
			if !existsAll(n, "BF.MEXISTS", key, items[i:min(i+500, len(items))]) {
				t.Fatalf("an item of %s answers definitely absent after the bootstrap", key)
			}
		}
	}
	check(b, "users", append(users, "late-user"))
	if b.do("BF.EXISTS", "users", "never-published") != ":0\r\n" {
		t.Fatal("the bootstrapped filter answers maybe for everything")
	}
	if got, want := b.do("CF.COUNT", "sessions", "user-10"), ":1\r\n"; got != want {
		t.Fatalf("CF.COUNT after bootstrap %q, want %q (nothing applied twice)", got, want)
	}

	// Bootstrap off: the truncated stream cannot be followed.
	c := openNode(t, t.TempDir(), cfg(`"snapshot": {"bootstrap": false},`))
	defer c.close()
	c.start()
	if !testutil.Eventually(t, 20*time.Second, func() bool { return strings.Contains(c.info()["follow_not_ready_reason"], "retention") }) {
		t.Fatalf("no truncation reported: %v", c.info())
	}
	if c.f.Ready() || c.do("BF.EXISTS", "users", "user-1") != ":1\r\n" {
		t.Fatal("a replica that cannot read the truncated part must not be ready and must answer maybe")
	}
	t.Logf("bootstrapped at %s; %d keys answer maybe; not-ready reason without bootstrap: %s",
		b.info()["follow_applied_seq"], total+1, c.info()["follow_not_ready_reason"])
}

// natsChildEnv makes the test binary run a NATS JetStream server
// (dir|listen) until killed, so a test can stop it with SIGSTOP.
const natsChildEnv = "PROBLY_FOLLOW_TEST_NATS"

func runNATSChild(spec string) {
	dir, listen, _ := strings.Cut(spec, "|")
	e, err := natsstream.StartEmbedded(natsstream.EmbeddedOptions{Dir: dir, Listen: listen})
	if err != nil {
		fmt.Fprintln(os.Stderr, "nats child:", err)
		os.Exit(1)
	}
	_ = e
	select {}
}

// TestLagHonestyAndStall: at 100 events/s the reported lag stays within one
// second's worth of events of the true lag; when the NATS server stalls
// (SIGSTOP), /readyz turns 503 and the keys answer maybe within max_stale;
// after SIGCONT the follower is ready again.
func TestLagHonestyAndStall(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a NATS child process and a few seconds")
	}
	addr := freeAddr(t)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), natsChildEnv+"="+t.TempDir()+"|"+addr)
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		child.Process.Signal(syscall.SIGCONT)
		child.Process.Kill()
		child.Wait()
	})
	url := "nats://" + addr
	var nc *nats.Conn
	var err error
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if nc, err = nats.Connect(url); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := natsstream.EnsureStream(ctx, js, "USERS", []string{"users.created"}); err != nil {
		t.Fatal(err)
	}
	s := serveFollow(t, fmt.Sprintf(`{"url": %q, "stream": "USERS", "max_stale": "2s",
	  "keys": [{"key": "users", "type": "bf", "add": ["users.created"], "capacity": 100000}]}`, url))
	s.waitReady(t)
	info := func() map[string]string { return infoFollow(s.c) }

	// 100 events/s for 3 s, sampling the reported and the true lag.
	var last uint64
	var worst uint64
	tick := time.NewTicker(10 * time.Millisecond)
	for i := range 300 {
		<-tick.C
		ack, err := js.Publish(ctx, "users.created", []byte(fmt.Sprint("lag-", i)))
		if err != nil {
			t.Fatal(err)
		}
		last = ack.Sequence
		if i%10 == 0 {
			m := info()
			applied, _ := strconv.ParseUint(m["follow_applied_seq"], 10, 64)
			reported, _ := strconv.ParseUint(m["follow_lag"], 10, 64)
			truth := last - min(applied, last)
			diff := max(truth, reported) - min(truth, reported)
			worst = max(worst, diff)
		}
	}
	tick.Stop()
	if worst > 100 {
		t.Fatalf("reported lag differed from the true lag by %d messages (> 1 s at 100/s)", worst)
	}

	// Stall the NATS server: within max_stale (2 s) plus a poll, the
	// follower is not ready and answers maybe.
	if err := child.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stalled := time.Now()
	var took time.Duration
	for {
		code, _ := httpGet(s.metrics + "/readyz")
		ok, _ := s.c.Do(ctx, "BF.EXISTS", "users", "never-published").Bool()
		if code == 503 && ok {
			took = time.Since(stalled)
			break
		}
		if time.Since(stalled) > 10*time.Second {
			t.Fatalf("still ready %v after the stall: %v", time.Since(stalled), info())
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, body := httpGet(s.metrics + "/readyz")
	if !strings.Contains(body, "no contact with the stream") {
		t.Fatalf("/readyz gives no reason: %q", body)
	}
	if err := child.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	s.waitReady(t)
	t.Logf("lag: worst |reported - true| %d messages at 100 events/s; stall detected after %v (max_stale 2s)", worst, took.Round(10*time.Millisecond))
}

// percentile returns the q-quantile of d (sorted in place).
func percentile(d []time.Duration, q float64) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(q*float64(len(d))))]
}
