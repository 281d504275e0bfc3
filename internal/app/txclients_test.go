package app

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Transactions through the other two clients' own APIs (issue 15.1):
// redis-py's default pipeline() and node-redis's multi().exec(), run as
// the scripts in scripts/txclients against a real server. .ci/run installs
// both clients (Debian python3-redis; npm redis into data/node) and sets
// PROBLY_REQUIRE_TX_CLIENTS=1, which turns a missing client into a failure;
// elsewhere the test is skipped and says why.

// requireClient skips (or, with PROBLY_REQUIRE_TX_CLIENTS=1, fails) the
// test when a client is missing.
func requireClient(t *testing.T, missing bool, why string) {
	t.Helper()
	if !missing {
		return
	}
	if os.Getenv("PROBLY_REQUIRE_TX_CLIENTS") == "1" {
		t.Fatal(why + " and PROBLY_REQUIRE_TX_CLIENTS=1")
	}
	t.Skip(why + ": skipping (.ci/run installs it)")
}

// runClientScript runs a client script against a fresh server and checks
// that it printed "ok".
func runClientScript(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	s := runApp(t, Options{}, true)
	host, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, append(args, host, port)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func TestTxRedisPy(t *testing.T) {
	// Debian's python3-redis belongs to the system interpreter, which may
	// not be the first python3 on PATH (pyenv).
	py := ""
	for _, name := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(name, "-c", "import redis").Run() == nil {
			py = name
			break
		}
	}
	requireClient(t, py == "", "python3-redis is not installed (apt-get install python3-redis)")
	runClientScript(t, nil, py, filepath.Join("..", "..", "scripts", "txclients", "redis_py_tx.py"))
}

func TestTxNodeRedis(t *testing.T) {
	modules, err := filepath.Abs(filepath.Join("..", "..", "data", "node", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	_, nerr := exec.LookPath("node")
	_, serr := os.Stat(filepath.Join(modules, "redis", "package.json"))
	requireClient(t, nerr != nil || serr != nil,
		"node or npm redis is missing (npm install --prefix data/node redis@4.7.1)")
	runClientScript(t, []string{"NODE_PATH=" + modules}, "node", filepath.Join("..", "..", "scripts", "txclients", "node_redis_tx.js"))
}
