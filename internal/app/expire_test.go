package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/probly/probly/internal/testutil"
)

var usedMemoryRE = regexp.MustCompile(`(?m)^used_memory:(\d+)\r?$`)

// usedMemory reads INFO used_memory (no key is accessed).
func usedMemory(t *testing.T, c *redis.Client) uint64 {
	t.Helper()
	info, err := c.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := usedMemoryRE.FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no used_memory in %q", info)
	}
	n, _ := strconv.ParseUint(m[1], 10, 64)
	return n
}

// TestExpiryMemoryFallsBack is the acceptance test of issue 15 (expiry):
// keys with random TTLs of 1–3 s are written on top of a baseline data set
// and never accessed again; within 10 s after the last TTL, used_memory is
// back within 10 % of its value before them (active expiry alone), and
// none of the keys reappears after a restart. 50k keys by default, 1M
// with PROBLY_FULL=1 unless the race detector is on: under it, writing 1M
// keys takes minutes, far longer than their TTLs (.ci/run runs the 1M form
// without it).
func TestExpiryMemoryFallsBack(t *testing.T) {
	n := 50_000
	if testutil.FullEnabled() && !raceEnabled {
		n = 1_000_000
	}
	ctx := context.Background()
	dir := t.TempDir()
	s := runApp(t, Options{Dir: dir}, true)
	c := newClient(t, s.addr, func(o *redis.Options) { o.ReadTimeout, o.WriteTimeout = time.Minute, time.Minute })
	// The baseline: a Bloom filter of about 1.8 MB and a few strings.
	if err := c.Do(ctx, "BF.RESERVE", "base", "0.001", "1000000").Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		c.Set(ctx, fmt.Sprint("keep-", i), "value", 0)
	}
	base := usedMemory(t, c)

	// Writers on 8 connections, pipelines of 5000 SET … PX 1000–3000; a
	// sampler records the highest used_memory meanwhile.
	const writers, batch = 8, 5000
	var mu sync.Mutex
	var lastTTL time.Time
	var peak atomic.Uint64
	began := time.Now()
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if m := usedMemoryRE.FindStringSubmatch(c.Info(ctx, "memory").Val()); m != nil {
				v, _ := strconv.ParseUint(m[1], 10, 64)
				peak.Store(max(peak.Load(), v))
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(15, uint64(w)))
			for i := w * batch; i < n; i += writers * batch {
				p := c.Pipeline()
				maxPX := 0
				for j := i; j < min(i+batch, n); j++ {
					px := 1000 + r.IntN(2001)
					maxPX = max(maxPX, px)
					p.Do(ctx, "SET", fmt.Sprint("ttl-", j), "some value of a key that expires", "PX", px)
				}
				if _, err := p.Exec(ctx); err != nil {
					errs <- err
					return
				}
				// Every key of the batch was set before now: it expires by now+maxPX.
				mu.Lock()
				if d := time.Now().Add(time.Duration(maxPX) * time.Millisecond); d.After(lastTTL) {
					lastTTL = d
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(done)
	<-sampled
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("wrote %d keys in %v", n, time.Since(began).Round(time.Millisecond))
	t.Logf("%d keys: used_memory %d before, at most %d while writing them", n, base, peak.Load())
	// At least a batch per writer was there at once (the first ones may
	// have expired meanwhile when writing is slow).
	if peak.Load() < base+writers*batch*40 {
		t.Fatalf("used_memory %d did not grow by the keys (base %d)", peak.Load(), base)
	}
	limit := base + base/10
	var used uint64
	ok := testutil.Eventually(t, time.Until(lastTTL.Add(10*time.Second)), func() bool {
		used = usedMemory(t, c)
		return used <= limit
	})
	back := time.Since(lastTTL)
	if !ok {
		t.Fatalf("used_memory %d, above %d, 10 s after the last TTL", used, limit)
	}
	t.Logf("used_memory %d (≤ %d) %v after the last TTL", used, limit, back.Round(time.Millisecond))
	clientsRE := regexp.MustCompile(`(?m)^mem_clients_normal:(\d+)\r?$`)
	if m := clientsRE.FindStringSubmatch(c.Info(ctx, "memory").Val()); m != nil {
		t.Logf("of which client input buffers: %s", m[1])
	}

	// Every key was reclaimed (all by the active cycle: none was accessed)
	// and counted: INFO stats expired_keys and the metrics agree.
	expiredRE := regexp.MustCompile(`(?m)^expired_keys:(\d+)\r?$`)
	var expired string
	if !testutil.Eventually(t, 20*time.Second, func() bool {
		m := expiredRE.FindStringSubmatch(c.Info(ctx, "stats").Val())
		expired = m[1]
		return expired == strconv.Itoa(n)
	}) {
		t.Fatalf("expired_keys %s, want %d", expired, n)
	}
	vals, _ := scrape(t, s)
	if vals["probly_expired_keys_total"] != float64(n) || vals["probly_keys_with_expiry"] != 0 {
		t.Fatalf("metrics: expired %v, with expiry %v", vals["probly_expired_keys_total"], vals["probly_keys_with_expiry"])
	}

	// None reappears after a restart (the AOF replays the SETs and the
	// DELs active expiry logged).
	s.stop(t)
	s = runApp(t, Options{Dir: dir}, true)
	c = newClient(t, s.addr, nil)
	if got := c.DBSize(ctx).Val(); got != 101 {
		t.Fatalf("DBSIZE %d after the restart, want 101", got)
	}
	if ks, _, err := c.Scan(ctx, 0, "ttl-*", 1_000_000).Result(); err != nil || len(ks) != 0 {
		t.Fatalf("after the restart: %d ttl keys (%v)", len(ks), err)
	}
	if used := usedMemory(t, c); used > limit {
		t.Fatalf("used_memory %d after the restart, above %d", used, limit)
	}
}

// ttlState is what a key's expiry looks like from a client: its absolute
// expire time in ms (PEXPIRETIME: -2 missing, -1 none) and its value's
// type.
func ttlState(t *testing.T, c *redis.Client, keys []string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for _, k := range keys {
		at, err := c.Do(ctx, "PEXPIRETIME", k).Int64()
		if err != nil {
			t.Fatal(err)
		}
		out[k] = c.Type(ctx, k).Val() + "@" + strconv.FormatInt(at, 10)
	}
	return out
}

// TestExpiryRestart: after a restart from the AOF and after one from a
// snapshot, live keys of every type keep their absolute expire times,
// keys that expired before the stop, and keys whose time passed while the
// server was down, are gone, and keys without a time keep none.
func TestExpiryRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := runApp(t, Options{Dir: dir}, true)
	c := newClient(t, s.addr, nil)
	do := func(args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil && err != redis.Nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	keys := []string{"str", "bf", "cf", "hll", "plain", "short", "down", "persisted", "renewed"}
	do("SET", "str", "v", "EX", "1000")
	do("BF.ADD", "bf", "x")
	do("EXPIRE", "bf", "2000")
	do("BF.ADD", "bf", "y") // keeps it
	do("CF.ADD", "cf", "x")
	do("PEXPIREAT", "cf", time.Now().Add(time.Hour).UnixMilli())
	do("PFADD", "hll", "a")
	do("EXPIRE", "hll", "3000")
	do("PFADD", "hll", "b", "c") // sparse: logged as SET … KEEPTTL
	do("SET", "plain", "v")
	do("SET", "short", "v", "PX", "200")
	do("SETEX", "persisted", "100", "v")
	do("PERSIST", "persisted")
	do("SET", "renewed", "v", "EX", "1")
	do("SET", "renewed", "w") // clears it
	if !testutil.Eventually(t, 10*time.Second, func() bool { return c.Exists(ctx, "short").Val() == 0 }) {
		t.Fatal("short did not expire")
	}
	downAt := time.Now().Add(1500 * time.Millisecond)
	do("PEXPIREAT", "down", downAt.UnixMilli()) // no such key: nothing
	do("SET", "down", "v", "PXAT", downAt.UnixMilli())
	want := ttlState(t, c, keys)
	want["down"] = "none@-2"
	if want["short"] != "none@-2" || want["plain"] != "string@-1" || want["persisted"] != "string@-1" || want["renewed"] != "string@-1" {
		t.Fatalf("before the restart: %v", want)
	}

	for _, how := range []string{"AOF", "snapshot"} {
		s.stop(t)
		// Wait until down's time has passed, with the server stopped.
		testutil.Eventually(t, 10*time.Second, func() bool { return time.Now().After(downAt.Add(10 * time.Millisecond)) })
		s = runApp(t, Options{Dir: dir}, true)
		c = newClient(t, s.addr, nil)
		if got := ttlState(t, c, keys); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after a restart from the %s:\n got %v\nwant %v", how, got, want)
		}
		if how == "AOF" {
			// Next round: the same keys from dump.pdb alone, plus one
			// that expires while the server is down again.
			downAt = time.Now().Add(1500 * time.Millisecond)
			do("SET", "down", "v", "PXAT", downAt.UnixMilli())
			if err := c.Save(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	info := c.Info(ctx, "keyspace").Val()
	if !regexp.MustCompile(`db0:keys=7,expires=4,avg_ttl=\d+`).MatchString(info) {
		t.Fatalf("INFO keyspace: %q", info)
	}
}

// TestExpiryKill9: keys that expired before a kill -9 (whether or not the
// DEL of their expiry reached the AOF) do not come back; live keys keep
// their absolute times (appendfsync always: every acknowledged write is
// durable).
func TestExpiryKill9(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx := context.Background()
	for round := range 3 {
		cmd := startChild(t, addr, dir, "always")
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		for i := range 20 {
			k := fmt.Sprintf("live-%d-%d", round, i)
			if err := c.Do(ctx, "SET", k, "v", "PXAT", 4102444800000+int64(i)).Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.Do(ctx, "PFADD", fmt.Sprintf("short-%d-%d", round, i), "x").Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.Do(ctx, "PEXPIRE", fmt.Sprintf("short-%d-%d", round, i), 100+i).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if !testutil.Eventually(t, 10*time.Second, func() bool {
			return c.Exists(ctx, fmt.Sprintf("short-%d-19", round)).Val() == 0
		}) {
			t.Fatal("short keys did not expire")
		}
		cmd.Process.Kill()
		cmd.Wait()
		c.Close()
	}
	cmd := startChild(t, addr, dir, "always")
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	ks, _, err := c.Scan(ctx, 0, "*", 1000).Result()
	if err != nil || len(ks) != 60 {
		t.Fatalf("after kill -9: %d keys (%v), want the 60 live ones", len(ks), err)
	}
	for round := range 3 {
		for i := range 20 {
			at := c.Do(ctx, "PEXPIRETIME", fmt.Sprintf("live-%d-%d", round, i)).Val()
			if at != 4102444800000+int64(i) {
				t.Fatalf("live-%d-%d expires at %v", round, i, at)
			}
		}
	}
}
