package follow_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/probly/probly/internal/app"
)

// The test binary runs `probly serve --follow` (app.Run) when this
// variable is set (addr|dir|fsync|config), so a real process can be killed
// with SIGKILL.
const childEnv = "PROBLY_FOLLOW_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(natsChildEnv); spec != "" {
		runNATSChild(spec)
	}
	if spec := os.Getenv(childEnv); spec != "" {
		p := strings.SplitN(spec, "|", 4)
		err := app.Run(context.Background(), app.Options{Addr: p[0], Dir: p[1], AppendFsync: p[2], Follow: p[3], Logger: quiet()})
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startServeChild(t *testing.T, addr, dir, fsync, cfgPath string) *exec.Cmd {
	t.Helper()
	cmd, err := spawnServe(addr, dir, fsync, cfgPath, os.Stderr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

// spawnServe starts the test binary as `probly serve --follow cfgPath`
// (childEnv) with stderr to stderr and env added to the environment, and
// waits up to 60 s until it answers PING; on failure the child is killed.
// It does not use t, so any goroutine may call it.
func spawnServe(addr, dir, fsync, cfgPath string, stderr io.Writer, env []string) (*exec.Cmd, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env...), childEnv+"="+addr+"|"+dir+"|"+fsync+"|"+cfgPath)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if c.Ping(context.Background()).Err() == nil {
			return cmd, nil
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, fmt.Errorf("serve --follow child on %s did not answer PING within 60 s", addr)
}

func infoFollow(c *redis.Client) map[string]string {
	s, err := c.Info(context.Background(), "follow").Result()
	m := map[string]string{}
	if err != nil {
		return m
	}
	for _, line := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// TestKill9ResumesWithoutGaps is the restart acceptance test with a real
// process: `probly serve --follow` (appendfsync everysec, the default)
// follows a JetStream stream that a writer keeps publishing to; the server
// is killed with SIGKILL mid-stream three times and restarted. At the end
// it has applied every message up to the stream's last one: every added
// item is present (no gap), every session that was opened and not closed
// has CF.COUNT 1 or more (a kill between a CF add's record and the
// batch's position record re-applies that add: a second copy, a false
// positive only, never a lost item), and the durable consumer acknowledged
// exactly the applied position.
func TestKill9ResumesWithoutGaps(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	ns := startNATS(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "follow.json")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(testConfig, ns.url)), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)

	var mu sync.Mutex
	var users, kept []string
	var last atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			u, s := fmt.Sprintf("user-%d", i), fmt.Sprintf("session-%d", i)
			ack1, err1 := ns.js.Publish(context.Background(), "users.created", []byte(u))
			ack2, err2 := ns.js.Publish(context.Background(), "sessions.opened", []byte(s))
			if err1 != nil || err2 != nil {
				t.Error(err1, err2)
				return
			}
			seq := ack2.Sequence
			if i%3 == 0 {
				ack3, err := ns.js.Publish(context.Background(), "sessions.closed", []byte(s))
				if err != nil {
					t.Error(err)
					return
				}
				seq = ack3.Sequence
			}
			mu.Lock()
			users = append(users, u)
			if i%3 != 0 {
				kept = append(kept, s)
			}
			mu.Unlock()
			last.Store(max(ack1.Sequence, seq))
			if i%8 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	})
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()

	rng := rand.New(rand.NewPCG(1, 2))
	kills := 0
	for round := range 3 {
		cmd := startServeChild(t, addr, dir, "everysec", cfgPath)
		time.Sleep(time.Duration(300+rng.IntN(700)) * time.Millisecond)
		c := redis.NewClient(&redis.Options{Addr: addr})
		applied := infoFollow(c)["follow_applied_seq"]
		c.Close()
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		kills++
		t.Logf("round %d: killed at applied %s, stream at %d", round, applied, last.Load())
	}
	cmd := startServeChild(t, addr, dir, "everysec", cfgPath)
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	close(stop)
	wg.Wait()
	want := last.Load()

	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	var info map[string]string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info = infoFollow(c)
		if info["follow_applied_seq"] == strconv.FormatUint(want, 10) && info["follow_caught_up"] == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not caught up to %d: %v", want, info)
		}
	}
	ctx := context.Background()
	check := func(cmd, key string, items []string) {
		for len(items) > 0 {
			n := min(len(items), 1000)
			args := []any{cmd, key}
			for _, it := range items[:n] {
				args = append(args, it)
			}
			res, err := c.Do(ctx, args...).Int64Slice()
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res {
				if r != 1 {
					t.Fatalf("%s %s %s = %d after %d kills: a message was lost", cmd, key, items[i], r, kills)
				}
			}
			items = items[n:]
		}
	}
	check("BF.MEXISTS", "users", users)
	check("CF.MEXISTS", "sessions", kept)
	dups := 0
	for _, s := range kept {
		n, err := c.Do(ctx, "CF.COUNT", "sessions", s).Int64()
		if err != nil || n < 1 {
			t.Fatalf("CF.COUNT %s = %d %v", s, n, err)
		}
		if n > 1 {
			dups++
		}
	}
	t.Logf("%d kills; %d messages applied; %d users, %d open sessions present; %d sessions with a second copy (an add re-applied after a kill between its record and the position record)",
		kills, want, len(users), len(kept), dups)
}

// TestServeReadyzAndMetrics runs `serve --follow` in-process: /readyz says
// 503 with the follower's state until it has caught up, then 200 with the
// applied position and the lag; INFO follow and /metrics show the same.
func TestServeReadyzAndMetrics(t *testing.T) {
	ns := startNATS(t)
	var last uint64
	for i := range 200 {
		last = ns.publish(t, "users.created", fmt.Sprint("u", i))
	}
	s := serveFollow(t, fmt.Sprintf(testConfig, ns.url))
	base := s.metrics
	var body string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		code, b := httpGet(base + "/readyz")
		body = b
		if code == 200 && strings.Contains(b, "follow_applied_seq: "+strconv.FormatUint(last, 10)) {
			break
		}
		if code != 200 && code != 503 && code != 0 {
			t.Fatalf("/readyz %d %q", code, b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never ready at %d: %q", last, b)
		}
	}
	if !strings.Contains(body, "follow_caught_up: 1") || !strings.Contains(body, "follow_lag: 0") {
		t.Fatalf("/readyz body %q", body)
	}
	c := s.c
	info := infoFollow(c)
	if info["follow_caught_up"] != "1" || info["follow_applied_seq"] != strconv.FormatUint(last, 10) || info["follow_state"] != "following" {
		t.Fatalf("INFO follow %v", info)
	}
	all, _ := c.Info(context.Background()).Result()
	if !strings.Contains(all, "# Follow\r\n") {
		t.Fatal("INFO without arguments lacks the Follow section")
	}
	_, metrics := httpGet(base + "/metrics")
	for _, want := range []string{
		"probly_follow_applied_sequence " + strconv.FormatUint(last, 10),
		"probly_follow_caught_up 1",
		`probly_follow_events_total{key="users",op="add"} 200`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func httpGet(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
