package app

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/probly/probly/internal/hashing"
	"github.com/probly/probly/internal/testutil"
)

// childConfig decodes the start-up CONFIG values of a child server,
// "name=value;name=value" (see TestMain).
func childConfig(s string) [][2]string {
	var out [][2]string
	for _, kv := range strings.Split(s, ";") {
		if name, value, ok := strings.Cut(kv, "="); ok {
			out = append(out, [2]string{name, value})
		}
	}
	return out
}

// startChildWith is startChild with start-up CONFIG values.
func startChildWith(t *testing.T, addr, dir, fsync string, cfg ...[2]string) *exec.Cmd {
	t.Helper()
	kv := make([]string, len(cfg))
	for i, c := range cfg {
		kv[i] = c[0] + "=" + c[1]
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+addr+"|"+dir+"|"+fsync+"|"+strings.Join(kv, ";"))
	cmd.Stderr = &prefixWriter{t: t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	up := false
	testutil.Eventually(t, 30*time.Second, func() bool {
		up = c.Ping(context.Background()).Err() == nil
		return up || cmd.ProcessState != nil
	})
	if up {
		return cmd
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatal("server child did not start")
	return nil
}

// hllElements returns n elements whose Redis HLL registers (the low 14 bits
// of MurmurHash64A with seed 0xadc83b19) are all different, so that
// PFCOUNT of any subset of them is exact in sparse mode (checked against
// redis-server for n ≤ 100).
func hllElements(prefix string, n int) []string {
	seen := map[uint64]bool{}
	out := make([]string, 0, n)
	for i := 0; len(out) < n; i++ {
		e := fmt.Sprintf("%s-%d", prefix, i)
		idx := hashing.MurmurHash64A([]byte(e), 0xadc83b19) & (1<<14 - 1)
		if !seen[idx] {
			seen[idx] = true
			out = append(out, e)
		}
	}
	return out
}

// acks records what the server acknowledged across rounds.
type acks struct {
	mu     sync.Mutex
	bf     map[string][]string // key → items acknowledged by BF.ADD (:1 or :0)
	cf     map[string][]string // key → items acknowledged by CF.ADD
	pfSent map[string]int      // HLL key → elements sent (each to a distinct register)
	pfAck  map[string]int      // HLL key → elements acknowledged (a prefix of the sent ones)
	pfSeen map[string]int64    // HLL key → PFCOUNT after the first restart; must not change
}

func newAcks() *acks {
	return &acks{bf: map[string][]string{}, cf: map[string][]string{},
		pfSent: map[string]int{}, pfAck: map[string]int{}, pfSeen: map[string]int64{}}
}

func (a *acks) total() (bf, cf, pf int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, v := range a.bf {
		bf += len(v)
	}
	for _, v := range a.cf {
		cf += len(v)
	}
	for _, n := range a.pfAck {
		pf += n
	}
	return
}

// verify checks that every acknowledged write is present: BF.MEXISTS and
// CF.MEXISTS answer 1 for every acknowledged item, and PFCOUNT of each
// round's HLL lies between the acknowledged and the sent element counts
// (exact, since the elements use distinct registers) and never changes
// after it was first observed. It returns the number of acknowledged
// writes that are missing.
func (a *acks) verify(t *testing.T, c *redis.Client, what string) (missing int) {
	t.Helper()
	ctx := context.Background()
	a.mu.Lock()
	defer a.mu.Unlock()
	check := func(cmd, key string, items []string) {
		for i := 0; i < len(items); i += 500 {
			chunk := items[i:min(i+500, len(items))]
			args := append([]any{cmd, key}, toAny(chunk)...)
			res, err := c.Do(ctx, args...).Int64Slice()
			if err != nil {
				t.Fatalf("%s: %s %s: %v", what, cmd, key, err)
			}
			for j, v := range res {
				if v != 1 {
					if missing < 5 {
						t.Errorf("%s: acknowledged item %s of %s is missing (%s = %d)", what, chunk[j], key, cmd, v)
					}
					missing++
				}
			}
		}
	}
	for key, items := range a.bf {
		check("BF.MEXISTS", key, items)
	}
	for key, items := range a.cf {
		check("CF.MEXISTS", key, items)
	}
	for key, sent := range a.pfSent {
		n, err := c.PFCount(ctx, key).Result()
		if err != nil {
			t.Fatalf("%s: PFCOUNT %s: %v", what, key, err)
		}
		if n < int64(a.pfAck[key]) || n > int64(sent) {
			t.Errorf("%s: PFCOUNT %s = %d, want between %d acknowledged and %d sent", what, key, n, a.pfAck[key], sent)
			missing += max(a.pfAck[key]-int(n), 0)
		}
		if seen, ok := a.pfSeen[key]; ok && seen != n {
			t.Errorf("%s: PFCOUNT %s changed from %d to %d across a restart", what, key, seen, n)
		} else {
			a.pfSeen[key] = n
		}
	}
	return missing
}

// writers drives pipelined BF.ADD, CF.ADD and PFADD against addr until the
// connections fail (the server was killed) and records what was
// acknowledged. The PFADD writer sends the round's HLL elements one
// PFADD each, spread over about half a second.
func writers(addr string, round int, a *acks, bgsave bool) (wait func()) {
	ctx := context.Background()
	var wg sync.WaitGroup
	client := func() *redis.Client {
		return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1, DialTimeout: time.Second, Protocol: 2})
	}
	// Bloom and cuckoo: two connections each, pipelines of 8.
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client()
			defer c.Close()
			cmd, key := "BF.ADD", fmt.Sprintf("bf-%d", w%2)
			if w >= 2 {
				cmd, key = "CF.ADD", "cf"
			}
			for i := 0; ; i++ {
				items := make([]string, 8)
				cmds := make([]*redis.Cmd, 8)
				pipe := c.Pipeline()
				for j := range items {
					items[j] = fmt.Sprintf("r%d-w%d-%d-%d", round, w, i, j)
					cmds[j] = pipe.Do(ctx, cmd, key, items[j])
				}
				if bgsave && w == 0 && i%40 == 20 {
					pipe.Do(ctx, "BGSAVE")
				}
				pipe.Exec(ctx)
				a.mu.Lock()
				failed := false
				for j, r := range cmds {
					if r.Err() != nil {
						failed = true
						continue
					}
					if w < 2 {
						a.bf[key] = append(a.bf[key], items[j])
					} else if v, _ := r.Int64(); v == 1 {
						a.cf[key] = append(a.cf[key], items[j])
					}
				}
				a.mu.Unlock()
				if failed {
					return
				}
			}
		}()
	}
	// HyperLogLog: one connection, pipelines of 4 PFADDs.
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := client()
		defer c.Close()
		key := fmt.Sprintf("hll-%d", round)
		elems := hllElements(key, 96)
		for i := 0; i < len(elems); i += 4 {
			batch := elems[i : i+4]
			pipe := c.Pipeline()
			cmds := make([]*redis.IntCmd, len(batch))
			for j, e := range batch {
				cmds[j] = pipe.PFAdd(ctx, key, e)
			}
			a.mu.Lock()
			a.pfSent[key] += len(batch)
			a.mu.Unlock()
			pipe.Exec(ctx)
			a.mu.Lock()
			for _, r := range cmds {
				if r.Err() != nil {
					a.mu.Unlock()
					return
				}
				a.pfAck[key]++
			}
			a.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return wg.Wait
}

// crashRounds runs rounds of: start the server, check everything
// acknowledged so far, write, kill -9 at a random moment. It returns the
// acknowledgements and the number of acknowledged writes found missing.
func crashRounds(t *testing.T, fsync string, rounds int, seed uint64) (*acks, int) {
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 5))
	a := newAcks()
	// Automatic snapshots and AOF rewrites happen during the rounds too,
	// so kills also land in them.
	cfg := [][2]string{{"save", "1 100"}, {"auto-aof-rewrite-percentage", "50"}, {"auto-aof-rewrite-min-size", "32kb"}}
	missing := 0
	for round := 0; round <= rounds; round++ {
		cmd := startChildWith(t, addr, dir, fsync, cfg...)
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, Protocol: 2})
		if round == 0 {
			if err := c.Do(ctx, "CF.RESERVE", "cf", "400000").Err(); err != nil {
				t.Fatal(err)
			}
		}
		missing += a.verify(t, c, fmt.Sprintf("after restart %d", round))
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatalf("round %d: the server does not answer: %v", round, err)
		}
		if round == rounds { // the last start only checks
			c.Close()
			cmd.Process.Signal(syscall.SIGTERM)
			if err := cmd.Wait(); err != nil {
				t.Errorf("exit after SIGTERM: %v", err)
			}
			break
		}
		wait := writers(addr, round, a, round%2 == 1)
		time.Sleep(time.Duration(100+rng.IntN(400)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		wait()
		c.Close()
		if missing > 0 {
			t.Fatalf("round %d: %d acknowledged writes lost", round, missing)
		}
	}
	return a, missing
}

// TestCrashAcceptance is issue 5's crash test: pipelined BF.ADD, CF.ADD and
// PFADD with appendfsync always, kill -9 at a random moment, 20 rounds;
// after every restart every acknowledged write is present and the server
// answers. Automatic snapshots, AOF rewrites and BGSAVE run meanwhile.
func TestCrashAcceptance(t *testing.T) {
	testutil.Full(t)
	if testing.Short() {
		t.Skip("short mode")
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	seed := uint64(time.Now().UnixNano())
	t0 := time.Now()
	a, missing := crashRounds(t, "always", 20, seed)
	bf, cf, pf := a.total()
	t.Logf("appendfsync always, 20 rounds of kill -9 (seed %d) in %v: %d BF.ADD, %d CF.ADD, %d PFADD acknowledged; %d missing",
		seed, time.Since(t0).Round(time.Millisecond), bf, cf, pf, missing)
	if bf == 0 || cf == 0 || pf == 0 {
		t.Fatal("a writer never got an acknowledgement: the test exercised nothing")
	}
}

// TestCrashEverySec: with everysec, kill -9 (a crash of the process, not of
// the machine) loses nothing either, because a reply is sent only after
// the record was written to the OS (write(2)); the OS keeps the page cache.
// The loss window of everysec concerns OS crashes and power loss; it is
// measured by persist's TestEverySecLossWindow.
func TestCrashEverySec(t *testing.T) {
	testutil.Full(t)
	if testing.Short() {
		t.Skip("short mode")
	}
	seed := uint64(time.Now().UnixNano())
	a, missing := crashRounds(t, "everysec", 5, seed)
	bf, cf, pf := a.total()
	t.Logf("appendfsync everysec, 5 rounds of kill -9 (seed %d): %d BF.ADD, %d CF.ADD, %d PFADD acknowledged; "+
		"acknowledged writes lost: %d", seed, bf, cf, pf, missing)
}

// TestSIGTERMFinishesInFlightBatch: SIGTERM while a large pipeline is
// being executed. Every command of the batch being executed gets its reply
// (nothing is cut in the middle of a batch), every replied write is durable
// after the restart, and the process exits 0.
func TestSIGTERMFinishesInFlightBatch(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	cmd := startChildWith(t, addr, dir, "everysec", [2]string{"save", ""})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	const n = 50000
	var req strings.Builder
	for i := range n {
		item := "item-" + strconv.Itoa(i)
		fmt.Fprintf(&req, "*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$%d\r\n%s\r\n", len(item), item)
	}
	go nc.Write([]byte(req.String()))
	rd := bufio.NewReader(nc)
	// The first reply shows that batches are being executed.
	first, err := rd.ReadString('\n')
	if err != nil || first != ":1\r\n" {
		t.Fatalf("first reply %q %v", first, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	replies := 1
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			break
		}
		if line != ":1\r\n" && line != ":0\r\n" {
			t.Fatalf("reply %d: %q", replies, line)
		}
		replies++
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	t.Logf("SIGTERM during a pipeline of %d BF.ADD: %d replied before the connection closed", n, replies)

	cmd = startChildWith(t, addr, dir, "everysec", [2]string{"save", ""})
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	items := make([]any, replies)
	for i := range items {
		items[i] = "item-" + strconv.Itoa(i)
	}
	res, err := c.BFMExists(context.Background(), "k", items...).Result()
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range res {
		if !ok {
			t.Fatalf("item-%d was acknowledged before SIGTERM but is missing after the restart", i)
		}
	}
}

// mountTmpfs mounts a tmpfs of size bytes and unmounts it at the end of
// the test; it skips where mounting is not possible.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the full-disk test needs Linux")
	}
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill up (%v): run as root (or with CAP_SYS_ADMIN) to test ENOSPC", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// TestDiskFullServer fills the data directory's file system through the
// server: the write that hits ENOSPC gets an error reply naming the cause,
// later writes are refused with an explanation while reads, the same
// connection and other clients keep working; once space is freed the
// server takes a snapshot on its own and accepts writes again; after a
// restart every acknowledged write is present and the files are valid.
func TestDiskFullServer(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	dir := mountTmpfs(t, 512<<10)
	addr := freeAddr(t)
	ctx := context.Background()
	cmd := startChildWith(t, addr, dir, "always", [2]string{"save", ""})
	defer func() {
		if cmd != nil {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		}
	}()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1})
	defer c.Close()
	other := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer other.Close()
	var acked []string
	big := strings.Repeat("v", 2000)
	var werr error
	for i := 0; ; i++ {
		if i > 100000 {
			t.Fatal("the disk never filled up")
		}
		item := fmt.Sprintf("item-%d-%s", i, big) // large items fill the AOF quickly
		if werr = c.BFAdd(ctx, "f", item).Err(); werr != nil {
			break
		}
		acked = append(acked, item)
	}
	if !strings.Contains(werr.Error(), "no space left on device") {
		t.Fatalf("the write that hit the full disk: %v", werr)
	}
	err := c.BFAdd(ctx, "f", "another").Err()
	if err == nil || !strings.Contains(err.Error(), "writes refused since an AOF write failed") {
		t.Fatalf("next write: %v", err)
	}
	if err := other.Set(ctx, "s", "x", 0).Err(); err == nil {
		t.Fatal("a write from another client was accepted")
	}
	if ok, err := c.BFExists(ctx, "f", acked[0]).Result(); err != nil || !ok {
		t.Fatalf("read on the same connection: %v %v", ok, err)
	}
	if err := other.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d writes acknowledged before ENOSPC: %v; then: %v", len(acked), werr, err)
	// Every write command answers, with the refusal, and changes nothing.
	for _, args := range [][]any{
		{"SET", "s", "v"}, {"APPEND", "s", "v"}, {"SETRANGE", "s", "1", "v"}, {"DEL", "f"}, {"UNLINK", "f"},
		{"BF.RESERVE", "b2", "0.01", "100"}, {"BF.ADD", "f", "new"}, {"BF.MADD", "f", "n1", "n2"},
		{"BF.INSERT", "f", "ITEMS", "n3"}, {"CF.RESERVE", "c2", "1000"}, {"CF.ADD", "c", "x"},
		{"CF.ADDNX", "c", "x"}, {"CF.INSERT", "c", "ITEMS", "x"}, {"PFADD", "h", "a"},
		{"PFMERGE", "h2", "h"}, {"FLUSHALL"}, {"FLUSHDB"},
	} {
		err := other.Do(ctx, args...).Err()
		if err == nil || !strings.Contains(err.Error(), "writes refused") {
			t.Errorf("%v while writes are refused: %v", args, err)
		}
	}
	if n, err := other.DBSize(ctx).Result(); err != nil || n != 1 {
		t.Fatalf("DBSIZE after refused writes: %d %v", n, err)
	}

	// Free space: the server snapshots by itself (retried every 5 s) and
	// writes resume.
	if out, err := exec.Command("mount", "-o", "remount,size=16m", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	t0 := time.Now()
	var rerr error
	if !testutil.Eventually(t, 20*time.Second, func() bool {
		rerr = c.BFAdd(ctx, "f", "after-space").Err()
		return rerr == nil
	}) {
		t.Fatalf("writes did not resume after space was freed: %v", rerr)
	}
	t.Logf("writes resumed %v after space was freed", time.Since(t0).Round(time.Millisecond))
	acked = append(acked, "after-space")
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	cmd = nil

	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	cmd = startChildWith(t, addr, dir, "always", [2]string{"save", ""})
	c2 := redis.NewClient(&redis.Options{Addr: addr})
	defer c2.Close()
	res, err := c2.BFMExists(ctx, "f", toAny(acked)...).Result()
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range res {
		if !ok {
			t.Fatalf("acknowledged item %d lost", i)
		}
	}
	t.Logf("after restart: %d acknowledged items present; files %v", len(acked), names)
}
