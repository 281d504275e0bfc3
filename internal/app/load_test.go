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

	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/testutil"
)

// loadConfig is the shape of a load test (see TestLoad, TestLoadShort).
type loadConfig struct {
	clients     int
	runs        int           // steady runs over the same data
	dur         time.Duration // of each steady run
	overflowDur time.Duration // of the run that creates keys past maxmemory
	bgsaveEvery time.Duration // a BGSAVE this often, on top of the save rules
	sample      time.Duration // INFO memory this often
	settle      time.Duration // wait after a run before sampling memory
	maxmemory   uint64        // bytes, passed as maxmemory=<n>
	bfKeys      int           // BF.RESERVE … 0.01 bfCap
	cfKeys      int           // CF.RESERVE … cfCap
	pfKeys      int
	bfCap       int
	cfCap       int
	checkRSS    bool // fail if RSS grows by > 25 % between steady runs
}

// TestLoad is issue 5's load test: 200 clients against a `probly serve`
// child process for 2 minutes, twice over the same data, then 30 s of the
// same load plus clients creating keys until maxmemory refuses them (see
// runLoad for what is checked). It reports throughput and latency
// percentiles (docs/BENCHMARKS.md, "Server under load"). It takes about 5
// minutes, so it runs only on request:
//
//	PROBLY_LOAD=1 go test -run 'TestLoad$' -v -timeout 30m ./internal/app/
//
// PROBLY_LOAD_DURATION (default 2m), PROBLY_LOAD_CLIENTS (default 200),
// PROBLY_LOAD_RUNS (default 2), PROBLY_LOAD_OVERFLOW (default 30s) and
// PROBLY_LOAD_BGSAVE (a BGSAVE this often, default 20s, on top of the
// default save rules) change the shape. TestLoadShort is the same test at
// a small scale, run by default.
func TestLoad(t *testing.T) {
	if os.Getenv("PROBLY_LOAD") == "" {
		t.Skip("set PROBLY_LOAD=1 to run the 200-client load test (about 5 minutes); TestLoadShort is the short version")
	}
	runLoad(t, loadConfig{
		clients:     envInt("PROBLY_LOAD_CLIENTS", 200),
		runs:        envInt("PROBLY_LOAD_RUNS", 2),
		dur:         envDuration("PROBLY_LOAD_DURATION", 2*time.Minute),
		overflowDur: envDuration("PROBLY_LOAD_OVERFLOW", 30*time.Second),
		bgsaveEvery: envDuration("PROBLY_LOAD_BGSAVE", 20*time.Second),
		sample:      2 * time.Second,
		settle:      5 * time.Second, // let the Go runtime return idle memory
		maxmemory:   256 << 20,
		bfKeys:      1000, cfKeys: 500, pfKeys: 1000,
		bfCap: 100000, cfCap: 100000, // ~117 KiB and ~64 KiB
		checkRSS: true,
	})
}

// TestLoadShort is TestLoad at a small scale, run by every `go test`
// (also under -race): 200 clients, two steady runs of 3 s and an overflow
// run of 4 s, maxmemory 8 MiB (about 4 MiB of steady data), a BGSAVE
// every second. It checks the same invariants, never timings: no error
// replies over the steady data, OOM replies and nothing else once clients
// create keys past maxmemory, used_memory ≤ maxmemory in every sample,
// used_memory back to its steady value (±1 %) after the runs and after
// the created keys are deleted, every connection closed afterwards.
func TestLoadShort(t *testing.T) {
	testutil.Full(t)
	if testing.Short() {
		t.Skip("-short")
	}
	runLoad(t, loadConfig{
		clients:     200,
		runs:        2,
		dur:         3 * time.Second,
		overflowDur: 4 * time.Second,
		bgsaveEvery: time.Second,
		sample:      100 * time.Millisecond,
		settle:      200 * time.Millisecond,
		maxmemory:   8 << 20,
		bfKeys:      200, cfKeys: 100, pfKeys: 200,
		bfCap: 10000, cfCap: 10000, // ~12 KiB and ~8 KiB
	})
}

// runLoad runs the load test lc against a `probly serve` child process
// (so RSS is the server's own) with appendfsync everysec, Redis's default
// save rules and AOF rewrite settings, and maxmemory lc.maxmemory:
//
//   - The key set is created and filled with its whole universe of items
//     first, so every steady run writes the same data: used_memory after
//     each run must not exceed what it was before by more than 1 %, and
//     with lc.checkRSS RSS after the last run must be within 25 % of RSS
//     after the first (nothing leaks). used_memory is exact but counts a
//     string's capacity, so it can shrink a little for the same data (a
//     copy-on-write clone or a PFADD rewrite trims the HLL strings'
//     spare capacity).
//   - Steady runs: no command fails; used_memory ≤ maxmemory throughout.
//   - Overflow run: the same load plus clients creating keys (filters,
//     strings, HLLs) without end, so the data would exceed maxmemory: OOM
//     replies appear, no other error does, used_memory ≤ maxmemory in every
//     sample and at the end, reads keep working.
//   - Deleting the created keys brings used_memory back to the steady
//     value (within 1 %: refused commands leaked nothing), and writes
//     pass again.
//   - After the clients disconnect, connected_clients drops back to the
//     probe connection.
func runLoad(t *testing.T, lc loadConfig) {
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx := context.Background()
	universe := 100 // items per key

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+addr+"|"+dir+"|everysec|maxmemory="+strconv.FormatUint(lc.maxmemory, 10))
	stall := &stallScanner{}
	cmd.Stderr = stall
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	// Generous timeouts: a loaded 2-core machine under -race is slow, and
	// this test checks invariants, not latency.
	probe := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, PoolSize: 1, ReadTimeout: time.Minute, MaxRetries: -1})
	defer probe.Close()
	if !testutil.Eventually(t, 60*time.Second, func() bool { return probe.Ping(ctx).Err() == nil }) {
		t.Fatal("server did not start")
	}
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, PoolSize: lc.clients + 4, MinIdleConns: lc.clients,
		ReadTimeout: time.Minute, WriteTimeout: time.Minute, PoolTimeout: time.Minute, MaxRetries: -1})
	defer c.Close()

	// The key set, filled with every item it will ever see.
	items := make([]any, universe)
	for i := range items {
		items[i] = "item-" + strconv.Itoa(i)
	}
	setup := func(args ...[]any) {
		t.Helper()
		pipe := probe.Pipeline()
		for _, a := range args {
			pipe.Do(ctx, a...)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	for i := range lc.bfKeys {
		k := "bf:" + strconv.Itoa(i)
		setup([]any{"BF.RESERVE", k, "0.01", lc.bfCap}, append([]any{"BF.MADD", k}, items...))
	}
	for i := range lc.cfKeys {
		k := "cf:" + strconv.Itoa(i)
		setup([]any{"CF.RESERVE", k, lc.cfCap}, append([]any{"CF.INSERTNX", k, "ITEMS"}, items...))
	}
	for i := range lc.pfKeys {
		setup(append([]any{"PFADD", "hll:" + strconv.Itoa(i)}, items...))
	}
	mem0 := sampleMemory(t, probe, cmd.Process.Pid)
	t.Logf("after creating and filling the keys: %s (maxmemory %.1f MiB)", mem0, float64(lc.maxmemory)/(1<<20))
	if mem0.used > lc.maxmemory/10*9 {
		t.Fatalf("the steady data (%d bytes) leaves too little room under maxmemory %d", mem0.used, lc.maxmemory)
	}

	// steadyOp is one command of the steady mix; createOp creates a key.
	steadyOp := func(r *rand.Rand) []any {
		item := "item-" + strconv.Itoa(r.IntN(universe))
		switch op := r.IntN(100); {
		case op < 35:
			return []any{"BF.ADD", "bf:" + strconv.Itoa(r.IntN(lc.bfKeys)), item}
		case op < 55:
			return []any{"BF.EXISTS", "bf:" + strconv.Itoa(r.IntN(lc.bfKeys)), item}
		case op < 70:
			return []any{"CF.ADDNX", "cf:" + strconv.Itoa(r.IntN(lc.cfKeys)), item}
		case op < 80:
			return []any{"CF.EXISTS", "cf:" + strconv.Itoa(r.IntN(lc.cfKeys)), item}
		case op < 95:
			return []any{"PFADD", "hll:" + strconv.Itoa(r.IntN(lc.pfKeys)), item}
		default:
			return []any{"PFCOUNT", "hll:" + strconv.Itoa(r.IntN(lc.pfKeys))}
		}
	}
	var created atomic.Uint64
	createOp := func(r *rand.Rand, w int) []any {
		k := "g:" + strconv.Itoa(w) + ":" + strconv.FormatUint(created.Add(1), 10)
		switch r.IntN(5) {
		case 0, 1:
			return []any{"BF.RESERVE", k, "0.01", lc.bfCap}
		case 2:
			return []any{"CF.RESERVE", k, lc.cfCap}
		case 3:
			return []any{"SET", k, strings.Repeat("v", 4096)}
		default:
			return []any{"PFADD", k, "a", "b", "c"}
		}
	}

	type result struct {
		ops, ooms, errs uint64
		lat             []time.Duration
		peak, after     memSample
	}
	// run drives lc.clients clients for d; with overflow half their
	// commands create keys.
	run := func(name string, seed int, d time.Duration, overflow bool) result {
		var ops, ooms, errs atomic.Uint64
		lats := make([][]time.Duration, lc.clients)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := range lc.clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(seed), uint64(w)))
				lat := make([]time.Duration, 0, 1<<12)
				defer func() { lats[w] = lat }()
				for {
					select {
					case <-stop:
						return
					default:
					}
					args := steadyOp(r)
					if overflow && r.IntN(2) == 0 {
						args = createOp(r, w)
					}
					t0 := time.Now()
					err := c.Do(ctx, args...).Err()
					lat = append(lat, time.Since(t0))
					ops.Add(1)
					switch {
					case err == nil || err == redis.Nil:
					case overflow && commandtest.Refusal(err.Error()):
						ooms.Add(1)
					default:
						if errs.Add(1) <= 3 {
							t.Errorf("%s: %v: %v", name, args[:2], err)
						}
					}
				}
			}()
		}
		var peak memSample
		tick := time.NewTicker(lc.sample)
		save := time.NewTicker(lc.bgsaveEvery)
		end := time.After(d)
		var samples int
	loop:
		for {
			select {
			case <-save.C: // snapshots while serving, beyond the save rules
				if err := probe.BgSave(ctx).Err(); err != nil && !strings.Contains(err.Error(), "in progress") {
					t.Errorf("%s: BGSAVE: %v", name, err)
				}
			case <-tick.C:
				m := sampleMemory(t, probe, cmd.Process.Pid)
				samples++
				peak.used, peak.rss, peak.heap = max(peak.used, m.used), max(peak.rss, m.rss), max(peak.heap, m.heap)
				if m.used > lc.maxmemory {
					t.Errorf("%s: used_memory %d over maxmemory %d", name, m.used, lc.maxmemory)
				}
			case <-end:
				break loop
			}
		}
		tick.Stop()
		save.Stop()
		close(stop)
		wg.Wait()
		time.Sleep(lc.settle)
		var all []time.Duration
		for _, l := range lats {
			all = append(all, l...)
		}
		slices.Sort(all)
		res := result{ops: ops.Load(), ooms: ooms.Load(), errs: errs.Load(), lat: all, peak: peak,
			after: sampleMemory(t, probe, cmd.Process.Pid)}
		if res.after.used > lc.maxmemory {
			t.Errorf("%s: used_memory %d over maxmemory %d after the run", name, res.after.used, lc.maxmemory)
		}
		t.Logf("%s: %d clients, %v: %d commands (%.0f/s), %d OOM replies, %d other errors; latency p50 %v p99 %v p99.9 %v max %v; "+
			"%d samples, peak %s; after %s (RSS/used_memory %.2f)",
			name, lc.clients, d, res.ops, float64(res.ops)/d.Seconds(), res.ooms, res.errs,
			pct(all, 50), pct(all, 99), pct(all, 99.9), pct(all, 100), samples, peak, res.after,
			float64(res.after.rss)/float64(max(res.after.used, 1)))
		if res.ops == 0 {
			t.Errorf("%s: no command completed", name)
		}
		return res
	}

	var results []result
	for i := range lc.runs {
		res := run(fmt.Sprintf("run %d", i+1), i, lc.dur, false)
		results = append(results, res)
		if res.errs > 0 {
			t.Errorf("run %d: %d commands failed", i+1, res.errs)
		}
		// The same data: used_memory did not grow.
		if res.after.used > mem0.used+mem0.used/100 {
			t.Errorf("run %d: used_memory %d after the run, %d before the runs, for the same data", i+1, res.after.used, mem0.used)
		}
	}
	if lc.checkRSS && len(results) >= 2 {
		a, b := results[0].after, results[len(results)-1].after
		if b.rss > a.rss+a.rss/4 {
			t.Errorf("RSS grew from %d to %d over runs that wrote the same data", a.rss, b.rss)
		}
	}

	// Past maxmemory.
	over := run("overflow run", lc.runs, lc.overflowDur, true)
	if over.ooms == 0 {
		t.Errorf("no OOM reply although %d keys were created against maxmemory %d (used_memory peak %d)",
			created.Load(), lc.maxmemory, over.peak.used)
	}
	if over.errs > 0 {
		t.Errorf("overflow run: %d commands failed with something else than OOM", over.errs)
	}
	if ok, err := probe.BFExists(ctx, "bf:0", "item-7").Result(); err != nil || !ok {
		t.Errorf("read over maxmemory: %v %v", ok, err)
	}
	// Delete what the overflow run created: back to the steady data.
	keys, err := probe.Keys(ctx, "g:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := probe.Del(ctx, keys[:n]...).Err(); err != nil {
			t.Fatal(err)
		}
		keys = keys[n:]
	}
	final := sampleMemory(t, probe, cmd.Process.Pid)
	steady := results[len(results)-1].after.used
	if final.used > steady+steady/100 {
		t.Errorf("used_memory %d after deleting the created keys, %d before the overflow run", final.used, steady)
	}
	if err := probe.Do(ctx, "BF.RESERVE", "g:after", "0.01", lc.bfCap).Err(); err != nil {
		t.Errorf("a write after freeing memory: %v", err)
	}
	t.Logf("created %d keys in the overflow run; after deleting them: %s", created.Load(), final)

	// Every load connection goes away.
	c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := probe.Info(ctx, "clients").Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(info, "connected_clients:1\r\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("connections left after the clients closed:\n%s", info)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	snaps, maxStall, maxDur := stall.stats()
	t.Logf("snapshots during the runs: %d; worst cut stall %v; longest snapshot %v", snaps, maxStall, maxDur)
	if snaps == 0 {
		t.Error("no snapshot ran during the load")
	}
	if testing.Verbose() {
		stall.mu.Lock()
		for _, l := range stall.lines {
			t.Log(l)
		}
		stall.mu.Unlock()
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
