package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/generic"
	"github.com/probly/probly/internal/command/str"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/testutil"
)

// The memory tests measure the resident set of a server in a child
// process (this test binary, re-executed with childEnv set to the
// password), so that the figure is the server's alone.
const childEnv = "PROBLY_SERVER_TEST_CHILD"

func TestMain(m *testing.M) {
	if pass, ok := os.LookupEnv(childEnv); ok {
		os.Exit(runChild(pass))
	}
	os.Exit(m.Run())
}

// runChild serves on a free loopback port with the generic and string
// commands, prints "ADDR <addr>" and serves until stdin closes (the
// parent ended).
func runChild(pass string) int {
	cfg := config.New()
	table := command.NewTable()
	generic.Register(table, cfg)
	str.Register(table, cfg)
	srv, err := New(Options{Store: keyspace.New(nil), Config: cfg, Table: table, RequirePass: pass,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("ADDR %s\n", ln.Addr())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, ErrServerClosed) {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// child is a server process started by startChild.
type child struct {
	pid  int
	addr string
}

func startChild(t *testing.T, pass string) *child {
	t.Helper()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read the resident set size")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+pass)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR ")
	if err != nil || !ok {
		t.Fatalf("child: %q %v", line, err)
	}
	return &child{pid: cmd.Process.Pid, addr: addr}
}

// rss returns the child's resident set size in bytes.
func (c *child) rss(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(c.pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q", v)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// sampleRSS records the child's largest RSS every 10 ms until stop.
func (c *child) sampleRSS(t *testing.T) (peak *atomic.Int64, stop func()) {
	peak = &atomic.Int64{}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(c.pid) + "/status")
			if err == nil {
				for _, l := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
						kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
						if kb<<10 > peak.Load() {
							peak.Store(kb << 10)
						}
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return peak, func() { close(done); wg.Wait() }
}

// do sends one command on a plain connection and returns its reply line.
func dial(t *testing.T, addr string) *raw {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &raw{t: t, c: c, br: bufio.NewReader(c)}
}

// flood sends `*3 $3 SET $1 k $<size>` on n connections (after AUTH if
// pass is set) and streams the body in 1 MiB writes until the server
// stops reading. It returns, per connection, the bytes the server sent
// back and whether the connection ended (EOF or reset), and the body
// bytes written.
func flood(t *testing.T, addr, pass string, n int, size int64) (replies []string, closed []bool, written []int64) {
	t.Helper()
	replies, closed, written = make([]string, n), make([]bool, n), make([]int64, n)
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = 'x'
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		r := dial(t, addr)
		if pass != "" {
			if got := r.do("AUTH", pass); got != "+OK\r\n" {
				t.Fatalf("AUTH: %q", got)
			}
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			_ = r.c.SetWriteDeadline(time.Now().Add(60 * time.Second))
			if _, err := r.c.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + strconv.FormatInt(size, 10) + "\r\n")); err != nil {
				return
			}
			for written[i] < size {
				m, err := r.c.Write(chunk[:min(int64(len(chunk)), size-written[i])])
				written[i] += int64(m)
				if err != nil {
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			_ = r.c.SetReadDeadline(time.Now().Add(60 * time.Second))
			got, err := io.ReadAll(r.br)
			replies[i] = string(got)
			var ne net.Error
			closed[i] = err == nil || !(errors.As(err, &ne) && ne.Timeout())
			r.c.Close() // stops the writer too
		}()
	}
	wg.Wait()
	return replies, closed, written
}

// warm stores 32 × 1 MB strings through an authenticated connection and
// returns the child's RSS once it is steady: the starting point of the
// memory tests is a server holding data (the started at 68 MB),
// not an empty process whose few MB any runtime bookkeeping outgrows.
func (c *child) warm(t *testing.T, r *raw) int64 {
	t.Helper()
	v := strings.Repeat("w", 1<<20)
	for i := 0; i < 32; i++ {
		if got := r.do("SET", "warm"+strconv.Itoa(i), v); got != "+OK\r\n" {
			t.Fatalf("warm-up SET: %q", got)
		}
	}
	prev := c.rss(t)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		now := c.rss(t)
		if d := now - prev; d < int64(float64(prev)*0.02) && -d < int64(float64(prev)*0.02) {
			return now
		}
		prev = now
	}
	return prev
}

// settleRSS waits up to d for the child's RSS to come within 20 % of
// base and returns the last reading.
func (c *child) settleRSS(t *testing.T, base int64, d time.Duration) (int64, bool) {
	t.Helper()
	var now int64
	ok := testutil.Eventually(t, d, func() bool {
		now = c.rss(t)
		return float64(now) <= 1.2*float64(base)
	})
	return now, ok
}

// Issue 13: 8 clients that have not authenticated each send
// `*3 $3 SET $1 k $314572800` and stream the 300 MB body. Each connection
// is closed at the header (Redis's unauthenticated bulk limit), the
// server's RSS stays under 200 MB and is back within 20 % of its start
// within 10 s.
func TestUnauthenticatedFloodRSS(t *testing.T) {
	c := startChild(t, "pw")
	warm := dial(t, c.addr)
	warm.do("AUTH", "pw")
	base := c.warm(t, warm)
	other := dial(t, c.addr)
	peak, stop := c.sampleRSS(t)
	replies, closed, written := flood(t, c.addr, "", 8, 314572800)
	stop()
	for i := range replies {
		if !closed[i] {
			t.Errorf("connection %d not closed", i)
		}
		// The reply precedes the close; a reset (the server closed with
		// the client's bytes unread) can discard it on the client side.
		if want := "-ERR Protocol error: unauthenticated bulk length\r\n"; replies[i] != want && replies[i] != "" {
			t.Errorf("connection %d: %q, want %q", i, replies[i], want)
		}
		if written[i] >= 314572800 {
			t.Errorf("connection %d: the server took the whole 300 MB body", i)
		}
	}
	t.Logf("RSS: start %d MB, peak %d MB; body bytes written per connection %v", base>>20, peak.Load()>>20, written)
	if peak.Load() >= 200<<20 && !raceEnabled {
		t.Errorf("peak RSS %d MB ≥ 200 MB", peak.Load()>>20)
	}
	if now, ok := c.settleRSS(t, base, 10*time.Second); !ok && !raceEnabled {
		t.Errorf("RSS %d MB 10 s later, start %d MB", now>>20, base>>20)
	}
	if got := other.do("PING"); got != "-NOAUTH Authentication required.\r\n" {
		t.Fatalf("server after the flood: %q", got)
	}
}

// The same flood from authenticated clients, which may send 300 MB bulks,
// under maxmemory-clients 16mb: the clients with the largest input
// buffers are closed as the total passes 16 MiB, the RSS stays bounded
// and the buffers' memory goes back to the OS within 10 s.
func TestClientEvictionRSS(t *testing.T) {
	c := startChild(t, "pw")
	admin := dial(t, c.addr)
	admin.do("AUTH", "pw")
	if got := admin.do("CONFIG", "SET", "maxmemory-clients", "16mb"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	base := c.warm(t, admin)
	peak, stop := c.sampleRSS(t)
	replies, closed, written := flood(t, c.addr, "pw", 8, 314572800)
	stop()
	for i := range replies {
		if !closed[i] || replies[i] != "" {
			t.Errorf("connection %d: closed %v, reply %q (want a silent close)", i, closed[i], replies[i])
		}
	}
	t.Logf("RSS: start %d MB, peak %d MB; body bytes written per connection %v", base>>20, peak.Load()>>20, written)
	// 16 MiB of counted buffers, the doubling that takes a buffer over
	// the limit before its connection is closed, the copies the parser makes
	// when it grows a buffer and garbage awaiting collection: measured
	// 150-180 MB over the start; without the limit, 8 × 512 MiB.
	if limit := base + 250<<20; !raceEnabled && peak.Load() >= limit {
		t.Errorf("peak RSS %d MB ≥ %d MB", peak.Load()>>20, limit>>20)
	}
	if got := admin.do("INFO", "stats"); !strings.Contains(got, "evicted_clients:8\r\n") {
		t.Errorf("INFO stats: %q", got)
	}
	if now, ok := c.settleRSS(t, base, 10*time.Second); !ok && !raceEnabled {
		t.Errorf("RSS %d MB 10 s later, start %d MB", now>>20, base>>20)
	} else {
		t.Logf("RSS %d MB after the flood (not asserted under the race detector, whose shadow memory stays)", now>>20)
	}
}

// TestProcessRSS: the resident set grows by what a touched allocation
// adds (within the kernel's accounting granularity) and INFO reports it.
func TestProcessRSS(t *testing.T) {
	before, ok := processRSS()
	if !ok {
		t.Skip("no /proc/self/statm")
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = 1
	}
	after, _ := processRSS()
	if after < before+48<<20 {
		t.Fatalf("RSS %d -> %d after touching 64 MiB", before, after)
	}
	_ = buf[len(buf)-1]
}
