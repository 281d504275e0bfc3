package topk_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/probly/probly/internal/app"
)

// startServe runs `probly serve` in process (app.Run on a loopback
// listener, a temporary data directory) until the test ends, and returns
// its address once it accepts connections.
func startServe(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- app.Run(ctx, app.Options{Listener: ln, Dir: t.TempDir(), MetricsAddr: "off",
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Ready: func(net.Addr) { close(ready) }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	return ln.Addr().String()
}

// python3WithRedis returns a python3 that imports redis (Debian's
// python3-redis), or skips; PROBLY_REQUIRE_REDISPY=1 makes it fail.
func python3WithRedis(t *testing.T) string {
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import redis").Run() == nil {
			return p
		}
	}
	if os.Getenv("PROBLY_REQUIRE_REDISPY") == "1" {
		t.Fatal("no python3 with the redis module (apt-get install python3-redis) and PROBLY_REQUIRE_REDISPY=1")
	}
	t.Skip("no python3 with the redis module (apt-get install python3-redis)")
	return ""
}

// TestRedisPy drives every method of redis-py's topk() API
// (testdata/redispy_topk.py) against an in-process server, RESP2 and (with
// a redis-py that speaks it) RESP3.
func TestRedisPy(t *testing.T) {
	py := python3WithRedis(t)
	for _, proto := range []string{"2", "3"} {
		t.Run("resp"+proto, func(t *testing.T) {
			addr := startServe(t)
			out, err := exec.Command(py, "testdata/redispy_topk.py", addr, proto).CombinedOutput()
			if e, ok := err.(*exec.ExitError); ok && e.ExitCode() == 3 {
				t.Skipf("%s", out) // redis-py < 5 speaks RESP2 only
			}
			if err != nil || string(out) != "ok\n" {
				t.Fatalf("redis-py: %v\n%s", err, out)
			}
		})
	}
}
