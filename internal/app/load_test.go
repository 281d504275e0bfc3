package app

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestLoad is issue 5's load test: 200 clients against a `probly serve`
// child process for 2 minutes, twice over the same key set. It checks that
// used_memory stays below maxmemory, that memory after the second run is
// about what it was after the first (same data: nothing leaks), and reports
// throughput and latency percentiles (docs/BENCHMARKS.md, "Server under
// load"). It takes about 5 minutes, so it runs only on request:
//
//	PROBLY_LOAD=1 go test -run TestLoad -v -timeout 30m ./internal/app/
//
// PROBLY_LOAD_DURATION (default 2m), PROBLY_LOAD_CLIENTS (default 200),
// PROBLY_LOAD_RUNS (default 2) and PROBLY_LOAD_BGSAVE (a BGSAVE this often,
// default 20s, on top of the default save rules) change the shape.
func TestLoad(t *testing.T) {
	if os.Getenv("PROBLY_LOAD") == "" {
		t.Skip("set PROBLY_LOAD=1 to run the 200-client load test (about 5 minutes)")
	}
	dur := envDuration("PROBLY_LOAD_DURATION", 2*time.Minute)
	clients := envInt("PROBLY_LOAD_CLIENTS", 200)
	runs := envInt("PROBLY_LOAD_RUNS", 2)
	bgsaveEvery := envDuration("PROBLY_LOAD_BGSAVE", 20*time.Second)
	const (
		bfKeys, cfKeys, pfKeys = 1000, 500, 1000
		universe               = 100 // items per key: the data converges to a fixed size
		maxmemory              = 256 << 20
	)
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx := context.Background()

	// The server: a child process (RSS is its own), everysec, Redis's
	// default save rules and AOF rewrite settings, maxmemory 256 MiB.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+addr+"|"+dir+"|everysec|maxmemory=256mb")
	stall := &stallScanner{}
	cmd.Stderr = stall
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, PoolSize: clients + 4, MinIdleConns: clients})
	defer c.Close()
	for deadline := time.Now().Add(30 * time.Second); c.Ping(ctx).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("server did not start")
		}
	}

	// Fixed key set: Bloom filters of 100k items at 1% (~117 KiB each),
	// cuckoo filters of 100k (~64 KiB), HyperLogLogs (sparse).
	for i := range bfKeys {
		if err := c.Do(ctx, "BF.RESERVE", fmt.Sprintf("bf:%d", i), "0.01", "100000").Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range cfKeys {
		if err := c.Do(ctx, "CF.RESERVE", fmt.Sprintf("cf:%d", i), "100000").Err(); err != nil {
			t.Fatal(err)
		}
	}
	mem0 := sampleMemory(t, c, cmd.Process.Pid)
	t.Logf("after creating the keys: %s", mem0)

	type result struct {
		ops, errs uint64
		lat       []time.Duration
		peak      memSample
		after     memSample
	}
	var results []result
	for run := range runs {
		var ops, errs atomic.Uint64
		lats := make([][]time.Duration, clients)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(run), uint64(w)))
				lat := make([]time.Duration, 0, 1<<14)
				for {
					select {
					case <-stop:
						lats[w] = lat
						return
					default:
					}
					item := "item-" + strconv.Itoa(r.IntN(universe))
					var args []any
					switch op := r.IntN(100); {
					case op < 35:
						args = []any{"BF.ADD", "bf:" + strconv.Itoa(r.IntN(bfKeys)), item}
					case op < 55:
						args = []any{"BF.EXISTS", "bf:" + strconv.Itoa(r.IntN(bfKeys)), item}
					case op < 70:
						args = []any{"CF.ADDNX", "cf:" + strconv.Itoa(r.IntN(cfKeys)), item}
					case op < 80:
						args = []any{"CF.EXISTS", "cf:" + strconv.Itoa(r.IntN(cfKeys)), item}
					case op < 95:
						args = []any{"PFADD", "hll:" + strconv.Itoa(r.IntN(pfKeys)), item}
					default:
						args = []any{"PFCOUNT", "hll:" + strconv.Itoa(r.IntN(pfKeys))}
					}
					t0 := time.Now()
					err := c.Do(ctx, args...).Err()
					lat = append(lat, time.Since(t0))
					ops.Add(1)
					if err != nil && err != redis.Nil {
						if errs.Add(1) <= 3 {
							t.Logf("run %d: %v: %v", run+1, args, err)
						}
					}
				}
			}()
		}
		var peak memSample
		var peakAt time.Duration
		runStart := time.Now()
		tick := time.NewTicker(2 * time.Second)
		save := time.NewTicker(bgsaveEvery)
		end := time.After(dur)
	loop:
		for {
			select {
			case <-save.C: // snapshots while serving, beyond the save rules
				if err := c.BgSave(ctx).Err(); err != nil {
					t.Logf("BGSAVE: %v", err)
				}
			case <-tick.C:
				m := sampleMemory(t, c, cmd.Process.Pid)
				if m.rss > peak.rss {
					peakAt = time.Since(runStart).Round(time.Second)
				}
				peak.used, peak.rss, peak.heap = max(peak.used, m.used), max(peak.rss, m.rss), max(peak.heap, m.heap)
				if m.used > maxmemory {
					t.Errorf("used_memory %d over maxmemory %d", m.used, maxmemory)
				}
			case <-end:
				break loop
			}
		}
		tick.Stop()
		save.Stop()
		close(stop)
		wg.Wait()
		time.Sleep(5 * time.Second) // let the Go runtime return idle memory
		var all []time.Duration
		for _, l := range lats {
			all = append(all, l...)
		}
		slices.Sort(all)
		res := result{ops: ops.Load(), errs: errs.Load(), lat: all, peak: peak, after: sampleMemory(t, c, cmd.Process.Pid)}
		results = append(results, res)
		t.Logf("run %d: %d clients, %v: %d ops (%.0f ops/s), %d errors; latency p50 %v p99 %v p99.9 %v max %v; peak %s (RSS peak %v into the run); after %s",
			run+1, clients, dur, res.ops, float64(res.ops)/dur.Seconds(), res.errs,
			pct(all, 50), pct(all, 99), pct(all, 99.9), all[len(all)-1].Round(time.Microsecond), peak, peakAt, res.after)
		if res.errs > 0 {
			t.Errorf("run %d: %d commands failed", run+1, res.errs)
		}
	}
	snaps, maxStall, maxDur := stall.stats()
	t.Logf("snapshots during the runs: %d; worst cut stall %v; longest snapshot %v", snaps, maxStall, maxDur)
	stall.mu.Lock()
	for _, l := range stall.lines {
		t.Log(l)
	}
	stall.mu.Unlock()
	info, _ := c.Info(ctx, "persistence").Result()
	for _, l := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(l, "aof_current_size") || strings.HasPrefix(l, "rdb_changes") {
			t.Log(l)
		}
	}
	if len(results) >= 2 {
		a, b := results[len(results)-2].after, results[len(results)-1].after
		if b.used > a.used+a.used/100 {
			t.Errorf("used_memory grew from %d to %d over a run that wrote the same data", a.used, b.used)
		}
		if b.rss > a.rss+a.rss/4 {
			t.Errorf("RSS grew from %d to %d over a run that wrote the same data", a.rss, b.rss)
		}
	}
}

type memSample struct{ used, rss, heap uint64 }

func (m memSample) String() string {
	return fmt.Sprintf("used_memory %.1f MiB, RSS %.1f MiB, heap %.1f MiB",
		float64(m.used)/(1<<20), float64(m.rss)/(1<<20), float64(m.heap)/(1<<20))
}

// sampleMemory reads used_memory and used_memory_heap from INFO and VmRSS
// of pid from /proc.
func sampleMemory(t *testing.T, c *redis.Client, pid int) memSample {
	t.Helper()
	var m memSample
	info, err := c.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(info, "\r\n") {
		k, v, _ := strings.Cut(l, ":")
		n, _ := strconv.ParseUint(v, 10, 64)
		switch k {
		case "used_memory":
			m.used = n
		case "used_memory_heap":
			m.heap = n
		}
	}
	if runtime.GOOS == "linux" {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
					kb, _ := strconv.ParseUint(f[1], 10, 64)
					m.rss = kb << 10
				}
			}
		}
	}
	return m
}

func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i].Round(time.Microsecond)
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil && d > 0 {
		return d
	}
	return def
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// stallScanner reads the child's log and keeps the snapshot statistics.
type stallScanner struct {
	mu       sync.Mutex
	buf      []byte
	n        int
	maxStall time.Duration
	maxDur   time.Duration
	lines    []string
}

var snapLine = regexp.MustCompile(`snapshot saved.* trigger=(\S+) .*bytes=(\d+) duration=(\S+) stall=(\S+)`)

func (s *stallScanner) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	sc := bufio.NewScanner(strings.NewReader(string(s.buf)))
	consumed := 0
	for sc.Scan() {
		line := sc.Text()
		if consumed+len(line)+1 > len(s.buf) {
			break // partial line
		}
		consumed += len(line) + 1
		if m := snapLine.FindStringSubmatch(line); m != nil {
			s.n++
			d, _ := time.ParseDuration(m[3])
			st, _ := time.ParseDuration(m[4])
			s.maxDur, s.maxStall = max(s.maxDur, d), max(s.maxStall, st)
			s.lines = append(s.lines, fmt.Sprintf("%s snapshot (trigger %s): %s bytes in %v, cut %v",
				time.Now().Format("15:04:05"), m[1], m[2], d.Round(time.Millisecond), st))
		}
	}
	s.buf = s.buf[consumed:]
	return len(p), nil
}

func (s *stallScanner) stats() (int, time.Duration, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, s.maxStall, s.maxDur
}
