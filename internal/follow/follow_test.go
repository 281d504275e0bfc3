package follow_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/probly/probly/guard/natsstream"
	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/follow"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/persist"
	"github.com/probly/probly/internal/testutil"
)

func quiet() *slog.Logger {
	if os.Getenv("FOLLOW_DEBUG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// natsServer is a JetStream server owned by the test (the follower dials
// its URL), so it keeps running while followers stop and start.
type natsServer struct {
	url string
	js  jetstream.JetStream
}

func startNATS(t testing.TB) *natsServer {
	t.Helper()
	e, err := natsstream.StartEmbedded(natsstream.EmbeddedOptions{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	nc, js, err := e.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if err := natsstream.EnsureStream(context.Background(), js, "USERS",
		[]string{"users.created", "users.deleted", "sessions.opened", "sessions.closed", "noise"}); err != nil {
		t.Fatal(err)
	}
	return &natsServer{url: e.ClientURL(), js: js}
}

func (n *natsServer) publish(t testing.TB, subject, item string) uint64 {
	t.Helper()
	ack, err := n.js.Publish(context.Background(), subject, []byte(item))
	if err != nil {
		t.Fatal(err)
	}
	return ack.Sequence
}

const testConfig = `{
  "url": %q,
  "stream": "USERS",
  "batch": 64,
  "keys": [
    {"key": "users", "type": "bf", "add": ["users.created"], "delete": ["users.deleted"], "capacity": 100000, "error_rate": 0.001},
    {"key": "sessions", "type": "cf", "add": ["sessions.opened"], "delete": ["sessions.closed"]}
  ]
}`

// node is an in-process server without the network: key space, command
// table, AOF (appendfsync always) and follower.
type node struct {
	t     testing.TB
	dir   string
	table *command.Table
	cfg   *config.Registry
	store *keyspace.Store
	db    *persist.DB
	f     *follow.Follower
}

func openNode(t testing.TB, dir, cfgJSON string) *node {
	t.Helper()
	return openNodeLog(t, dir, cfgJSON, quiet())
}

// openNodeLog is openNode with the follower logging to log.
func openNodeLog(t testing.TB, dir, cfgJSON string, log *slog.Logger) *node {
	t.Helper()
	n := &node{t: t, dir: dir}
	n.table, n.cfg = app.Tables()
	n.store = keyspace.New(nil)
	replay := app.Replayer(n.table, n.cfg, n.store)
	db, err := persist.Open(persist.Options{Dir: dir, Fsync: "always"}, app.Decode,
		func(key string, v keyspace.Value) error {
			n.store.Update([]byte(key), func(tx *keyspace.Txn) { tx.Set(v) })
			return nil
		}, replay)
	if err != nil {
		t.Fatal(err)
	}
	n.db = db
	n.store.SetLogger(db)
	c, err := follow.ParseConfig([]byte(cfgJSON), dir)
	if err != nil {
		t.Fatal(err)
	}
	n.f, err = follow.New(c, follow.Deps{Table: n.table, Config: n.cfg, Store: n.store, Wait: db.Wait, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	n.f.WrapReads(n.table)
	return n
}

func (n *node) start() {
	n.t.Helper()
	if err := n.f.Start(context.Background()); err != nil {
		n.t.Fatal(err)
	}
}

func (n *node) close() {
	n.f.Close()
	if err := n.db.Close(); err != nil {
		n.t.Fatal(err)
	}
}

// do runs a command through the table and returns its RESP2 reply.
func (n *node) do(args ...string) string {
	reply, _ := commandtest.Run(n.table, n.store, n.cfg, 2, commandtest.Argv(args...))
	return reply
}

func (n *node) info() map[string]string {
	m := map[string]string{}
	n.f.Info(func(k string, v any) {
		if b, ok := v.(bool); ok {
			v = map[bool]int{false: 0, true: 1}[b]
		}
		m[k] = fmt.Sprint(v)
	})
	return m
}

// waitApplied waits until the follower applied seq and is caught up.
func (n *node) waitApplied(seq uint64) {
	n.t.Helper()
	if !testutil.Eventually(n.t, 30*time.Second, func() bool { return n.f.Applied() >= seq && n.f.CaughtUp() }) {
		n.t.Fatalf("not caught up to %d: %v", seq, n.info())
	}
}

func existsAll(n *node, cmd, key string, items []string) bool {
	args := append([]string{cmd, key}, items...)
	return n.do(args...) == "*"+fmt.Sprint(len(items))+"\r\n"+strings.Repeat(":1\r\n", len(items))
}

// TestFollowAndResume: adds and deletes are applied to a BF and a CF key;
// the follower is stopped mid-stream while publishing continues, then
// reopened from its data directory: it resumes from its position, with no
// message lost and none applied twice.
func TestFollowAndResume(t *testing.T) {
	ns := startNATS(t)
	dir := t.TempDir()
	cfgJSON := fmt.Sprintf(testConfig, ns.url)
	n := openNode(t, dir, cfgJSON)
	n.start()

	var users, sessions, closed []string
	var last uint64
	pub := func(from, to int) {
		for i := from; i < to; i++ {
			u := fmt.Sprintf("user-%d", i)
			users = append(users, u)
			last = ns.publish(t, "users.created", u)
			ns.publish(t, "noise", "x")
			s := fmt.Sprintf("session-%d", i)
			last = ns.publish(t, "sessions.opened", s)
			if i%3 == 0 {
				last = ns.publish(t, "sessions.closed", s)
				closed = append(closed, s)
			} else {
				sessions = append(sessions, s)
			}
			if i%10 == 0 {
				last = ns.publish(t, "users.deleted", u) // ignored by a Bloom filter
			}
		}
	}
	pub(0, 300)
	n.waitApplied(last)
	if !existsAll(n, "BF.MEXISTS", "users", users) || !existsAll(n, "CF.MEXISTS", "sessions", sessions) {
		t.Fatal("an applied item is missing")
	}
	info := n.info()
	if info["follow_caught_up"] != "1" || info["follow_applied_seq"] != fmt.Sprint(last) || info["follow_key_1"] !=
		fmt.Sprintf("name=sessions,type=cf,caught_up=1,adds=300,deletes=%d,ignored_deletes=0", len(closed)) {
		t.Fatalf("INFO %v", info)
	}
	if got := n.do("GET", "probly:follow:USERS:probly"); got != fmt.Sprintf("$%d\r\n%d\r\n", len(fmt.Sprint(last)), last) {
		t.Fatalf("position key %q, last %d", got, last)
	}

	// Stop mid-stream: publishing goes on while the follower is down.
	pub(300, 400)
	n.close()
	pub(400, 600)
	n = openNode(t, dir, cfgJSON)
	if n.f.CaughtUp() || n.do("BF.EXISTS", "users", "nobody") != ":1\r\n" {
		t.Fatal("a follower that has not caught up must answer maybe")
	}
	n.start()
	pub(600, 700)
	n.waitApplied(last)
	defer n.close()
	if !existsAll(n, "BF.MEXISTS", "users", users) || !existsAll(n, "CF.MEXISTS", "sessions", sessions) {
		t.Fatal("an item is missing after the restart")
	}
	// Each kept session was applied exactly once, each closed one deleted.
	for _, s := range sessions {
		if got := n.do("CF.COUNT", "sessions", s); got != ":1\r\n" {
			t.Fatalf("CF.COUNT %s = %q after the restart", s, got)
		}
	}
	zero := 0
	for _, s := range closed {
		if n.do("CF.COUNT", "sessions", s) == ":0\r\n" {
			zero++
		}
	}
	if zero < len(closed)*9/10 {
		t.Fatalf("only %d of %d closed sessions are gone", zero, len(closed))
	}
	if n.do("BF.EXISTS", "users", "nobody-at-all") != ":0\r\n" {
		t.Fatal("a caught-up Bloom key answers maybe for an absent item")
	}
	t.Logf("applied %d messages, INFO %v", last, n.info())
}

// TestHaltedAnswersMaybe: an add that fails (a budget too small) halts the
// follower without skipping the message: the keys answer maybe and INFO
// says why; raising the budget resumes it.
func TestHaltedAnswersMaybe(t *testing.T) {
	ns := startNATS(t)
	cfgJSON := fmt.Sprintf(`{"url": %q, "stream": "USERS", "keys": [{"key": "users", "type": "bf", "add": ["users.created"]}]}`, ns.url)
	n := openNode(t, t.TempDir(), cfgJSON)
	defer n.close()
	if err := n.cfg.Set("bf-max-filter-bytes", "1024"); err != nil {
		t.Fatal(err)
	}
	if err := n.cfg.Set("bf-initial-size", "100"); err != nil {
		t.Fatal(err)
	}
	n.do("BF.RESERVE", "users", "0.01", "100", "NONSCALING")
	n.start()
	var last uint64
	for i := range 300 {
		last = ns.publish(t, "users.created", fmt.Sprintf("user-%d", i))
	}
	if !testutil.Eventually(t, 20*time.Second, func() bool { return n.f.State() == follow.StateHalted }) {
		t.Fatalf("not halted: %v", n.info())
	}
	if n.f.CaughtUp() || n.do("BF.EXISTS", "users", "nobody") != ":1\r\n" || n.do("BF.MEXISTS", "users", "a", "b") != "*2\r\n:1\r\n:1\r\n" {
		t.Fatal("a halted follower's key must answer maybe")
	}
	if n.do("BF.EXISTS", "other", "x") != ":0\r\n" {
		t.Fatal("a key that is not followed answers as usual")
	}
	info := n.info()
	if info["follow_state"] != "halted" || !strings.Contains(info["follow_last_error"], "adding to keys[0]") {
		t.Fatalf("INFO %v", info)
	}
	if !strings.Contains(n.f.Readyz(), "follow_caught_up: 0") || n.f.Ready() {
		t.Fatalf("readyz %q", n.f.Readyz())
	}
	// Recreate the key as scaling with room: the follower resumes from the
	// message that failed.
	n.do("DEL", "users")
	n.do("BF.RESERVE", "users", "0.01", "1000")
	n.cfg.Set("bf-max-filter-bytes", "134217728")
	n.waitApplied(last)
	items := make([]string, 300)
	for i := range items {
		items[i] = fmt.Sprintf("user-%d", i)
	}
	if !existsAll(n, "BF.MEXISTS", "users", items) {
		t.Fatal("items missing after the follower resumed")
	}
}

// TestReplayAfterFlush: FLUSHALL removes the followed keys and the
// position; the follower notices and replays the stream from the start.
func TestReplayAfterFlush(t *testing.T) {
	ns := startNATS(t)
	n := openNode(t, t.TempDir(), fmt.Sprintf(testConfig, ns.url))
	defer n.close()
	n.start()
	var items []string
	var last uint64
	for i := range 100 {
		items = append(items, fmt.Sprint("u", i))
		last = ns.publish(t, "users.created", items[i])
	}
	n.waitApplied(last)
	n.store.Flush(nil)
	if !testutil.Eventually(t, 20*time.Second, func() bool { return n.info()["follow_replays"] != "0" }) {
		t.Fatal("no replay after FLUSHALL")
	}
	last = ns.publish(t, "users.created", "after")
	n.waitApplied(last)
	if !existsAll(n, "BF.MEXISTS", "users", append(items, "after")) {
		t.Fatal("items missing after the replay")
	}
}

// TestGapHalts: when retention removed messages after the applied position
// the follower halts instead of following with a hole.
func TestGapHalts(t *testing.T) {
	ns := startNATS(t)
	for i := range 20 {
		ns.publish(t, "users.created", fmt.Sprint("u", i))
	}
	st, err := ns.js.Stream(context.Background(), "USERS")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(context.Background(), jetstream.WithPurgeSequence(10)); err != nil {
		t.Fatal(err)
	}
	n := openNode(t, t.TempDir(), fmt.Sprintf(testConfig, ns.url))
	defer n.close()
	n.start()
	if !testutil.Eventually(t, 20*time.Second, func() bool { return strings.Contains(n.info()["follow_last_error"], "retention") }) {
		t.Fatalf("no gap reported: %v", n.info())
	}
	if n.f.CaughtUp() || n.do("BF.EXISTS", "users", "u0") != ":1\r\n" {
		t.Fatal("a follower with a gap must answer maybe")
	}
}

// TestEmbeddedDefault: without "url" the follower runs its own JetStream
// in <dir>/nats, and writers publish to its client port.
func TestEmbeddedDefault(t *testing.T) {
	dir := t.TempDir()
	cfgJSON := `{"stream": "USERS", "embedded": {"listen": "127.0.0.1:0"},
	  "keys": [{"key": "users", "type": "bf", "add": ["users.created"]}]}`
	n := openNode(t, dir, cfgJSON)
	n.start()
	nc, js, err := natsstream.Connect(n.f.EmbeddedURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var last uint64
	for i := range 50 {
		ack, err := js.Publish(context.Background(), "users.created", []byte(fmt.Sprint("u", i)))
		if err != nil {
			t.Fatal(err)
		}
		last = ack.Sequence
	}
	n.waitApplied(last)
	nc.Close()
	n.close()
	if _, err := os.Stat(dir + "/nats/jetstream"); err != nil {
		t.Fatal("JetStream did not store in the data directory:", err)
	}
	// Restart: the stream and the position survive.
	n = openNode(t, dir, cfgJSON)
	n.start()
	defer n.close()
	n.waitApplied(last)
	if n.do("BF.EXISTS", "users", "u49") != ":1\r\n" || n.info()["follow_applied_seq"] != "50" {
		t.Fatalf("after restart: %v", n.info())
	}
}

func TestConfig(t *testing.T) {
	good := `{"stream": "S", "keys": [{"key": "k", "type": "BF", "add": ["a.b"], "delete": ["a.c"], "capacity": 10}]}`
	c, err := follow.ParseConfig([]byte(good), "/data")
	if err != nil {
		t.Fatal(err)
	}
	if c.Consumer != "probly" || c.PositionKey != "probly:follow:S:probly" || c.Batch != 256 || !*c.CreateStream ||
		c.Embedded.Dir != "/data/nats" || c.Embedded.Listen != "127.0.0.1:4222" || c.Keys[0].Type != "bf" || c.Keys[0].ErrorRate != 0.01 {
		t.Fatalf("defaults: %+v", c)
	}
	for _, bad := range []string{
		`{"keys": [{"key": "k", "type": "bf", "add": ["a"]}]}`,
		`{"stream": "S"}`,
		`{"stream": "S", "keys": [{"key": "k", "type": "hll", "add": ["a"]}]}`,
		`{"stream": "S", "keys": [{"key": "k", "type": "bf"}]}`,
		`{"stream": "S", "keys": [{"key": "k", "type": "bf", "add": ["a.*"]}]}`,
		`{"stream": "S", "keys": [{"key": "k", "type": "bf", "add": ["a"]}, {"key": "k2", "type": "cf", "add": ["a"]}]}`,
		`{"stream": "S", "keys": [{"key": "k", "type": "bf", "add": ["a"]}, {"key": "k", "type": "cf", "add": ["b"]}]}`,
		`{"stream": "S", "keys": [{"key": "a b", "type": "bf", "add": ["a"]}]}`,
		`{"stream": "S", "keys": [{"key": "k", "type": "bf", "add": ["a"], "error_rate": 2, "capacity": 1}]}`,
		`{"stream": "S", "keys": [{"key": "k", "type": "cf", "add": ["a"], "error_rate": 0.1}]}`,
		`{"stream": "S", "bogus": 1, "keys": [{"key": "k", "type": "bf", "add": ["a"]}]}`,
		`{"stream": "S", "url": "nats://x", "embedded": {"listen": "off"}, "keys": [{"key": "k", "type": "bf", "add": ["a"]}]}`,
		`{"stream": "S", "batch": -1, "keys": [{"key": "k", "type": "bf", "add": ["a"]}]}`,
		`{"stream": "S.x", "keys": [{"key": "k", "type": "bf", "add": ["a"]}]}`,
		`{"stream": "S", "keys": [{"key": "probly:follow:S:probly", "type": "bf", "add": ["a"]}]}`,
		`{"stream": "S", "keys": [{"key": "k", "type": "bf", "add": ["a"]}]} {}`,
	} {
		if _, err := follow.ParseConfig([]byte(bad), "/data"); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
