package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/probly/probly/internal/testutil"
)

// The test binary re-executes itself as the server when this variable is
// set, so a real process can be killed with SIGKILL.
const childEnv = "PROBLY_APP_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		parts := strings.SplitN(spec, "|", 4)
		o := Options{Addr: parts[0], Dir: parts[1], AppendFsync: parts[2]}
		if len(parts) == 4 { // start-up CONFIG values (crash_test.go)
			o.Config = childConfig(parts[3])
		}
		err := Run(context.Background(), o)
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

// startChild runs the server in a child process and waits until it answers.
func startChild(t *testing.T, addr, dir, fsync string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+addr+"|"+dir+"|"+fsync)
	log := &prefixWriter{t: t}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Without -v the child's log is otherwise lost; on failure it says
		// what the server was doing.
		if t.Failed() && !testing.Verbose() {
			out := log.String()
			if len(out) > 8<<10 {
				out = "…" + out[len(out)-8<<10:]
			}
			t.Logf("server child %d log:\n%s", cmd.Process.Pid, out)
		}
	})
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(60 * time.Second) // recovering ~300 MB under -race takes > 20 s
	if testutil.Eventually(t, time.Until(deadline), func() bool { return c.Ping(context.Background()).Err() == nil }) {
		return cmd
	}
	cmd.Process.Kill()
	t.Fatal("server child did not start")
	return nil
}

type prefixWriter struct {
	mu  sync.Mutex
	t   *testing.T
	out []byte // everything written, for tests that read the log
}

// String returns everything written so far.
func (w *prefixWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.out)
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.out = append(w.out, p...)
	if testing.Verbose() {
		w.t.Logf("server: %s", strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

// TestKill9Always drives pipelined BF.ADD and BF.MADD writes with
// appendfsync always, kills the server with SIGKILL at a random moment and
// restarts it, several rounds, with SAVE/BGSAVE mixed in. After every
// restart each acknowledged item is present and BF.CARD covers them.
func TestKill9Always(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx := context.Background()
	acked := map[string][]string{} // key → items acknowledged with :1 or :0
	rounds := 5
	for round := 0; round < rounds; round++ {
		cmd := startChild(t, addr, dir, "always")
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 8})

		// Everything acknowledged before is still there.
		checkAcked(t, c, fmt.Sprintf("round %d", round), acked)

		// Writers: 4 goroutines pipelining adds until the process dies.
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				key := fmt.Sprintf("bf-%d", w%2)
				for i := 0; ; i++ {
					items := make([]string, 16)
					for j := range items {
						items[j] = fmt.Sprintf("r%d-w%d-%d-%d", round, w, i, j)
					}
					pipe := c.Pipeline()
					add := pipe.BFAdd(ctx, key, items[0])
					madd := pipe.BFMAdd(ctx, key, toAny(items[1:])...)
					if w == 0 && i%50 == 25 {
						pipe.BgSave(ctx)
					}
					if _, err := pipe.Exec(ctx); err != nil && add.Err() != nil {
						return
					}
					mu.Lock()
					if add.Err() == nil {
						acked[key] = append(acked[key], items[0])
					}
					if madd.Err() == nil {
						acked[key] = append(acked[key], items[1:]...)
					}
					mu.Unlock()
					if add.Err() != nil || madd.Err() != nil {
						return
					}
				}
			}(w)
		}
		time.Sleep(time.Duration(200+rand.IntN(600)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		wg.Wait()
		c.Close()
	}
	// Final check after one more restart, including the item counts.
	cmd := startChild(t, addr, dir, "always")
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	total := checkAcked(t, c, "final", acked)
	t.Logf("%d rounds of kill -9, %d acknowledged items, all present", rounds, total)
	if total == 0 {
		t.Fatal("no write was acknowledged: the test did not exercise anything")
	}
}

// checkAcked fails the test unless BF.MEXISTS finds every item of acked
// (key → items) and returns how many it checked. It asks in chunks of
// 1,000 items: one BF.MEXISTS of the ~50,000 items a key collects over the
// rounds takes about a second under -race on an idle 2-core machine, and
// went past go-redis's 3 s read timeout on a loaded CI machine.
func checkAcked(t *testing.T, c *redis.Client, when string, acked map[string][]string) int {
	t.Helper()
	ctx := context.Background()
	total := 0
	for key, items := range acked {
		for len(items) > 0 {
			chunk := items[:min(len(items), 1000)]
			items = items[len(chunk):]
			res, err := c.BFMExists(ctx, key, toAny(chunk)...).Result()
			if err != nil {
				t.Fatalf("%s: BF.MEXISTS %s (%d items): %v", when, key, len(chunk), err)
			}
			if len(res) != len(chunk) {
				t.Fatalf("%s: BF.MEXISTS %s: %d replies for %d items", when, key, len(res), len(chunk))
			}
			for i, ok := range res {
				if !ok {
					t.Fatalf("%s: acknowledged item %s/%s lost after kill -9", when, key, chunk[i])
				}
			}
			total += len(chunk)
		}
	}
	return total
}

// TestSIGTERMKeepsEverything: with the default everysec policy, a graceful
// shutdown (SIGTERM) fsyncs, so every acknowledged filter and item survives.
func TestSIGTERMKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx := context.Background()
	cmd := startChild(t, addr, dir, "everysec")
	c := redis.NewClient(&redis.Options{Addr: addr})
	if err := c.BFReserve(ctx, "users", 0.01, 1000).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "BF.RESERVE", "ns", "0.001", "10", "NONSCALING").Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3000; i++ {
		if err := c.BFAdd(ctx, "users", fmt.Sprintf("user-%d", i)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	before, err := c.Do(ctx, "BF.DEBUG", "users").Result()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server exit after SIGTERM: %v", err)
	}

	cmd = startChild(t, addr, dir, "everysec")
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	c = redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	after, err := c.Do(ctx, "BF.DEBUG", "users").Result()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("BF.DEBUG changed across restart:\n%v\n%v", before, after)
	}
	for i := 0; i < 3000; i++ {
		ok, err := c.BFExists(ctx, "users", fmt.Sprintf("user-%d", i)).Result()
		if err != nil || !ok {
			t.Fatalf("user-%d lost after SIGTERM restart (%v)", i, err)
		}
	}
	info, err := c.BFInfoCapacity(ctx, "ns").Result()
	if err != nil || info.Capacity != 10 {
		t.Fatalf("non-scaling filter after restart: %v %v", info, err)
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// TestRestartKeepsFiltersOverStartupBudget: filters created after raising
// bf-max-filter-bytes above the budget the server starts with survive a
// restart, both from the snapshot and from the AOF, although the restarted
// server runs with the lower budget again (the budget limits live input,
// not recovery). The server starts with a 64 KiB budget so the filters stay
// small.
func TestRestartKeepsFiltersOverStartupBudget(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx := context.Background()
	budget := [2]string{"bf-max-filter-bytes", "65536"}
	cmd := startChildWith(t, addr, dir, "everysec", budget)
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	must := func(args ...any) any { t.Helper(); return doOK(t, c, args...) }
	// 100k items at 0.01 NONSCALING is about 120 KB: over the 64 KiB budget.
	if err := c.Do(ctx, "BF.RESERVE", "big1", "0.01", "100000", "NONSCALING").Err(); err == nil ||
		!strings.Contains(err.Error(), "Insufficient memory") {
		t.Fatalf("BF.RESERVE over the start-up budget: %v", err)
	}
	must("CONFIG", "SET", "bf-max-filter-bytes", "1000000")
	must("BF.RESERVE", "big1", "0.01", "100000", "NONSCALING")
	must("BF.MADD", "big1", "a", "b", "c")
	must("SAVE")
	must("BF.RESERVE", "big2", "0.01", "100000", "NONSCALING")
	must("BF.MADD", "big2", "x", "y")
	must("BF.MADD", "big1", "d")
	c.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server exit: %v", err)
	}

	cmd = startChildWith(t, addr, dir, "everysec", budget)
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	c = redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	if got := fmt.Sprint(must("BF.MEXISTS", "big1", "a", "b", "c", "d")); got != "[1 1 1 1]" {
		t.Fatalf("big1 after restart: %s", got)
	}
	if got := fmt.Sprint(must("BF.MEXISTS", "big2", "x", "y")); got != "[1 1]" {
		t.Fatalf("big2 after restart: %s", got)
	}
	if got := fmt.Sprint(must("BF.CARD", "big1")); got != "4" {
		t.Fatalf("BF.CARD big1 = %s", got)
	}
	// Live writes to the existing filter still work under the lower budget.
	if got := fmt.Sprint(must("BF.ADD", "big1", "e")); got != "1" {
		t.Fatalf("BF.ADD after restart = %s", got)
	}
	// New filters are held to it again.
	if err := c.Do(ctx, "BF.RESERVE", "big3", "0.01", "100000", "NONSCALING").Err(); err == nil {
		t.Fatal("BF.RESERVE over the start-up budget after restart succeeded")
	}
}
