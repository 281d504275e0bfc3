package follow_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/follow"
	"github.com/probly/probly/internal/testutil"
)

func debugLogger(w *commandtest.LogSink) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// loopbackIP is a literal-address isLoopback for the test (the server's
// also resolves names).
func loopbackIP(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// TestCheckProtectedMode: the embedded NATS server (no authentication) may
// listen on loopback or not at all; an external server is its own
// business.
func TestCheckProtectedMode(t *testing.T) {
	dir := t.TempDir()
	keys := `"keys": [{"key": "k", "type": "bf", "add": ["a.b"]}]`
	for i, tc := range []struct {
		cfg     string
		refused bool
	}{
		{`{"stream": "S", ` + keys + `}`, false}, // default 127.0.0.1:4222
		{`{"stream": "S", "embedded": {"listen": "127.0.0.1:0"}, ` + keys + `}`, false},
		{`{"stream": "S", "embedded": {"listen": "[::1]:4222"}, ` + keys + `}`, false},
		{`{"stream": "S", "embedded": {"listen": "off"}, ` + keys + `}`, false},
		{`{"stream": "S", "url": "nats://10.0.0.1:4222", ` + keys + `}`, false},
		{`{"stream": "S", "embedded": {"listen": "0.0.0.0:4222"}, ` + keys + `}`, true},
		{`{"stream": "S", "embedded": {"listen": ":4222"}, ` + keys + `}`, true},
		{`{"stream": "S", "embedded": {"listen": "10.1.2.3:4222"}, ` + keys + `}`, true},
	} {
		path := filepath.Join(dir, fmt.Sprintf("c%d.json", i))
		if err := os.WriteFile(path, []byte(tc.cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		err := follow.CheckProtectedMode(path, dir, loopbackIP)
		if tc.refused != (err != nil) || tc.refused && (!errors.Is(err, follow.ErrProtectedMode) ||
			!strings.Contains(err.Error(), "--protected-mode=no")) {
			t.Errorf("%s: %v", tc.cfg, err)
		}
	}
	if err := follow.CheckProtectedMode("", dir, loopbackIP); err != nil {
		t.Fatal(err)
	}
	if err := follow.CheckProtectedMode(filepath.Join(dir, "missing.json"), dir, loopbackIP); err == nil || errors.Is(err, follow.ErrProtectedMode) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestUnreachableNATS: an external server that cannot be reached is not
// silent: INFO's follow_last_error says why and the log says so (once, not
// every retry), while the keys answer maybe; the URL's credentials appear
// in neither.
func TestUnreachableNATS(t *testing.T) {
	logs := &commandtest.LogSink{}
	n := openNodeLog(t, t.TempDir(), `{"url": "nats://probly:pw-Zq7SECRETx@127.0.0.1:1", "stream": "USERS",
	  "keys": [{"key": "users", "type": "bf", "add": ["users.created"]}]}`, debugLogger(logs))
	defer n.close()
	n.start()
	if !testutil.Eventually(t, 20*time.Second, func() bool { return n.info()["follow_last_error"] != "" }) {
		t.Fatalf("no error recorded: %v\n%s", n.info(), logs.String())
	}
	info := n.info()
	if !strings.Contains(info["follow_last_error"], "NATS") || (info["follow_state"] != follow.StateConnecting && info["follow_state"] != follow.StateBootstrapping) || info["follow_caught_up"] != "0" {
		t.Fatalf("INFO %v", info)
	}
	if n.f.Ready() || n.do("BF.EXISTS", "users", "nobody") != ":1\r\n" {
		t.Fatal("a follower without a connection must answer maybe")
	}
	if !testutil.Eventually(t, 10*time.Second, func() bool { return strings.Contains(logs.String(), "NATS connection problem") }) {
		t.Fatalf("nothing logged:\n%s", logs.String())
	}
	// The client retries every 2 s; the same error is logged once a minute.
	time.Sleep(5 * time.Second)
	if c := strings.Count(logs.String(), "NATS connection problem"); c != 1 {
		t.Fatalf("logged %d times:\n%s", c, logs.String())
	}
	// The URL's password shows nowhere.
	if info["follow_source"] != "nats://redacted@127.0.0.1:1" || strings.Contains(logs.String(), "SECRET") ||
		strings.Contains(info["follow_last_error"], "SECRET") {
		t.Fatalf("credentials leaked: INFO %v\n%s", info, logs.String())
	}
	t.Logf("follow_last_error: %s", info["follow_last_error"])
}

// TestNoKeyOrValueInFollowLogs: nothing of a followed key's name or of an
// item is logged (the server's rule, TestNoKeyOrValueInLogs in
// internal/app): the follower is driven, at debug level, through applying
// adds and deletes, a halt, a replay after a followed key was removed, a
// restart and an unreachable external NATS server, with key names,
// position key and items carrying a secret.
func TestNoKeyOrValueInFollowLogs(t *testing.T) {
	const secret = "Zq7SECRETx"
	logs := &commandtest.LogSink{}
	ns := startNATS(t)
	dir := t.TempDir()
	cfgJSON := fmt.Sprintf(`{"url": %q, "stream": "USERS", "position_key": "pos-%[2]s",
	  "keys": [
	    {"key": "users-%[2]s", "type": "bf", "add": ["users.created"], "delete": ["users.deleted"], "capacity": 1000},
	    {"key": "sessions-%[2]s", "type": "cf", "add": ["sessions.opened"], "delete": ["sessions.closed"], "capacity": 1000}
	  ]}`, ns.url, secret)
	n := openNodeLog(t, dir, cfgJSON, debugLogger(logs))
	n.start()
	users, sessions := "users-"+secret, "sessions-"+secret
	var last uint64
	for i := range 50 {
		ns.publish(t, "users.created", fmt.Sprintf("u-%s-%d", secret, i))
		last = ns.publish(t, "sessions.opened", fmt.Sprintf("s-%s-%d", secret, i))
		if i%5 == 0 {
			ns.publish(t, "users.deleted", fmt.Sprintf("u-%s-%d", secret, i))
			last = ns.publish(t, "sessions.closed", fmt.Sprintf("s-%s-%d", secret, i))
		}
	}
	n.waitApplied(last)

	// The CF key becomes a string: a delete finds no filter ("Not found",
	// skipped), then an add fails (halted).
	if got := n.do("SET", sessions, "v-"+secret); got != "+OK\r\n" {
		t.Fatalf("SET: %q", got)
	}
	ns.publish(t, "sessions.closed", "s-"+secret+"-1")
	ns.publish(t, "sessions.opened", "s-"+secret+"-x")
	if !testutil.Eventually(t, 20*time.Second, func() bool { return n.f.State() == follow.StateHalted }) {
		t.Fatalf("not halted: %v", n.info())
	}
	// Removing it makes the follower replay the stream from the start.
	n.do("DEL", sessions)
	if !testutil.Eventually(t, 20*time.Second, func() bool { return n.info()["follow_replays"] != "0" }) {
		t.Fatalf("no replay: %v", n.info())
	}
	last = ns.publish(t, "users.created", "after-"+secret)
	n.waitApplied(last)
	if n.do("BF.EXISTS", users, "after-"+secret) != ":1\r\n" || n.do("CF.EXISTS", sessions, "s-"+secret+"-x") != ":1\r\n" {
		t.Fatalf("after the replay: %v", n.info())
	}
	n.close()

	// A restart, then the external server becomes unreachable.
	n = openNodeLog(t, dir, strings.Replace(cfgJSON, ns.url, "nats://127.0.0.1:1", 1), debugLogger(logs))
	n.start()
	if !testutil.Eventually(t, 20*time.Second, func() bool { return n.info()["follow_last_error"] != "" }) {
		t.Fatalf("no connection error: %v", n.info())
	}
	n.close()

	out := logs.String()
	// (The "a delete failed and is skipped" warning needs a failing AOF:
	// CF.DEL answers "Not found" for a key of another type.)
	for _, want := range []string{"halted", "replaying the stream", "caught up", "NATS connection problem"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log did not capture %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, secret) {
			t.Errorf("log line holds key/value content: %s", line)
		}
	}
	if !strings.Contains(out, "keys[1]") {
		t.Errorf("the log does not name the key by its index:\n%s", out)
	}
}
