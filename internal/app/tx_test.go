package app

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/probly/probly/internal/persist"
	"github.com/probly/probly/internal/testutil"
)

// Transactions through go-redis against the full server (issue 15.1).
// The Watch test's counter is a string updated with GET/SET inside the
// transaction (the optimistic-locking pattern of go-redis's Watch
// example), next to an INCR counter in the same transaction.

// TxPipelined (MULTI … EXEC) over a filter, a string and an HLL, then a
// transaction with a queued error (applies nothing) and one with a
// runtime error (the other commands apply).
func TestTxGoRedisTxPipelined(t *testing.T) {
	s := runApp(t, Options{}, true)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := newClient(t, s.addr, func(o *redis.Options) { o.Protocol = proto })
		p := fmt.Sprint(proto)
		cmds, err := c.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.BFAdd(ctx, "f"+p, "x")
			pipe.Set(ctx, "s"+p, "v", 0)
			pipe.PFAdd(ctx, "h"+p, "a", "b")
			pipe.Get(ctx, "s"+p)
			return nil
		})
		if err != nil || len(cmds) != 4 {
			t.Fatalf("RESP%d: TxPipelined: %v (%d replies)", proto, err, len(cmds))
		}
		if v := cmds[3].(*redis.StringCmd).Val(); v != "v" {
			t.Fatalf("RESP%d: GET inside the transaction = %q", proto, v)
		}
		if ok, _ := c.BFExists(ctx, "f"+p, "x").Result(); !ok {
			t.Fatalf("RESP%d: BF.ADD of the transaction not applied", proto)
		}

		// A command refused while queuing: EXECABORT, nothing applied.
		_, err = c.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.Set(ctx, "q"+p, "1", 0)
			pipe.Do(ctx, "BF.ADD", "qf"+p) // wrong arity
			pipe.Do(ctx, "NOSUCHCOMMAND")
			pipe.BFAdd(ctx, "qf"+p, "y")
			return nil
		})
		if err == nil || !strings.HasPrefix(err.Error(), "EXECABORT Transaction discarded because of previous errors.") {
			t.Fatalf("RESP%d: transaction with queued errors: %v, want EXECABORT", proto, err)
		}
		if n, _ := c.Exists(ctx, "q"+p, "qf"+p).Result(); n != 0 {
			t.Fatalf("RESP%d: a transaction with a queued error applied %d keys", proto, n)
		}

		// A runtime error is that command's reply; the others apply.
		cmds, err = c.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.Set(ctx, "r1"+p, "1", 0)
			pipe.BFAdd(ctx, "s"+p, "x") // WRONGTYPE: s is a string
			pipe.Set(ctx, "r2"+p, "2", 0)
			return nil
		})
		if err == nil || !strings.HasPrefix(cmds[1].Err().Error(), "WRONGTYPE") || cmds[0].Err() != nil || cmds[2].Err() != nil {
			t.Fatalf("RESP%d: runtime error: %v / %v %v %v", proto, err, cmds[0].Err(), cmds[1].Err(), cmds[2].Err())
		}
		if n, _ := c.Exists(ctx, "r1"+p, "r2"+p).Result(); n != 2 {
			t.Fatalf("RESP%d: commands around a runtime error: %d of 2 applied", proto, n)
		}
	}
}

// go-redis's Watch retry loop (optimistic locking) over a counter and a
// filter, from concurrent clients: every increment is counted once and
// every item is present; some transactions were retried.
func TestTxGoRedisWatch(t *testing.T) {
	s := runApp(t, Options{}, true)
	ctx := context.Background()
	c := newClient(t, s.addr, func(o *redis.Options) { o.PoolSize = 16 })
	const workers, each = 8, 25
	var retries atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				item := fmt.Sprintf("w%d-%d", w, i)
				for attempt := 0; ; attempt++ {
					err := c.Watch(ctx, func(tx *redis.Tx) error {
						n, err := tx.Get(ctx, "counter").Int()
						if err != nil && !errors.Is(err, redis.Nil) {
							return err
						}
						_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
							pipe.Set(ctx, "counter", n+1, 0)
							pipe.Incr(ctx, "incrs")
							pipe.BFAdd(ctx, "items", item)
							return nil
						})
						return err
					}, "counter", "items")
					if err == nil {
						break
					}
					if !errors.Is(err, redis.TxFailedErr) || attempt > 10000 {
						errs <- fmt.Errorf("worker %d: %v", w, err)
						return
					}
					retries.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n, err := c.Get(ctx, "counter").Int(); err != nil || n != workers*each {
		t.Fatalf("counter = %d, %v; want %d", n, err, workers*each)
	}
	if n, err := c.Get(ctx, "incrs").Int(); err != nil || n != workers*each {
		t.Fatalf("INCR counter = %d, %v; want %d (one INCR per committed transaction)", n, err, workers*each)
	}
	for w := range workers {
		for i := range each {
			if ok, _ := c.BFExists(ctx, "items", fmt.Sprintf("w%d-%d", w, i)).Result(); !ok {
				t.Fatalf("item w%d-%d missing", w, i)
			}
		}
	}
	t.Logf("%d increments, %d retried transactions", workers*each, retries.Load())
}

// Atomicity under concurrency: writers each commit transactions
// BF.ADD k x; INCR c:w; SET s:w n; PFADD h x, while readers read the
// whole state in read-only transactions and never see part of one: for
// every writer GET c:w equals s:w, that writer's first n items are in
// the filter, and PFCOUNT h (elements in distinct registers, so exact)
// equals the total number of committed transactions. 1 round; 20 with
// PROBLY_FULL=1.
func TestTxAtomicUnderConcurrency(t *testing.T) {
	s := runApp(t, Options{}, true)
	c := newClient(t, s.addr, func(o *redis.Options) { o.PoolSize = 16 })
	rounds := 1
	if testutil.FullEnabled() {
		rounds = 20
	}
	for round := range rounds {
		if err := c.FlushAll(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		atomicRound(t, c, round)
	}
}

// atomicRound is one round of TestTxAtomicUnderConcurrency on an empty
// key space.
func atomicRound(t *testing.T, c *redis.Client, round int) {
	ctx := context.Background()
	const writers, each = 4, 25 // 100 HLL elements: PFCOUNT is exact
	elems := hllElements(fmt.Sprintf("tx%d", round), writers*each)
	if err := c.BFReserve(ctx, "k", 0.001, 1000).Err(); err != nil {
		t.Fatal(err)
	}
	var done atomic.Bool
	var wg, rg sync.WaitGroup
	fail := make(chan error, writers+4)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				x := elems[w*each+j]
				_, err := c.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
					pipe.BFAdd(ctx, "k", x)
					pipe.Incr(ctx, fmt.Sprintf("c:%d", w))
					pipe.Set(ctx, fmt.Sprintf("s:%d", w), j+1, 0)
					pipe.PFAdd(ctx, "h", x)
					return nil
				})
				if err != nil {
					fail <- fmt.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	var reads atomic.Int64
	for range 3 {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for !done.Load() {
				var lens, sets []*redis.StringCmd
				var pf *redis.IntCmd
				var ex *redis.BoolSliceCmd
				_, err := c.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
					for w := range writers {
						lens = append(lens, pipe.Get(ctx, fmt.Sprintf("c:%d", w)))
						sets = append(sets, pipe.Get(ctx, fmt.Sprintf("s:%d", w)))
					}
					pf = pipe.PFCount(ctx, "h")
					args := make([]any, len(elems))
					for i, e := range elems {
						args[i] = e
					}
					ex = pipe.BFMExists(ctx, "k", args...)
					return nil
				})
				if err != nil && !errors.Is(err, redis.Nil) {
					fail <- fmt.Errorf("reader: %v", err)
					return
				}
				total := int64(0)
				for w := range writers {
					n, _ := strconv.ParseInt(lens[w].Val(), 10, 64)  // "" (nil) → 0
					sv, _ := strconv.ParseInt(sets[w].Val(), 10, 64) // "" (nil) → 0
					if n != sv {
						fail <- fmt.Errorf("reader saw half a transaction of writer %d: GET c = %d, s = %d", w, n, sv)
						return
					}
					for j := range n {
						if !ex.Val()[w*each+int(j)] {
							fail <- fmt.Errorf("reader: writer %d committed %d transactions, item %d missing from the filter", w, n, j)
							return
						}
					}
					total += n
				}
				if pf.Val() != total {
					fail <- fmt.Errorf("reader: PFCOUNT h = %d, committed transactions = %d", pf.Val(), total)
					return
				}
				reads.Add(1)
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	rg.Wait()
	close(fail)
	for err := range fail {
		t.Fatal(err)
	}
	if n, _ := c.PFCount(ctx, "h").Result(); n != writers*each {
		t.Fatalf("PFCOUNT h = %d after every writer finished, want %d", n, writers*each)
	}
	if reads.Load() == 0 {
		t.Fatal("no consistent read completed: the test checked nothing")
	}
	t.Logf("round %d: %d transactions, %d consistent reads", round, writers*each, reads.Load())
}

// kill -9 during a stream of transactions with appendfsync always: after
// the restart every acknowledged transaction is whole, and the one in
// flight is whole or absent. Each writer w commits transactions j = 0, 1,
// … of SET t:w:j; INCR c:w; BF.ADD f:w j: after recovery, with
// n = GET c:w, n ≥ the acknowledged count and exactly the keys t:w:0 …
// t:w:(n-1) exist, with their items in f:w. 2 rounds; 20 with
// PROBLY_FULL=1.
func TestTxCrashAlways(t *testing.T) {
	rounds := 2
	if testutil.FullEnabled() {
		rounds = 20
	}
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx := context.Background()
	const writers = 4
	acked := make([]int, writers) // transactions acknowledged per writer
	next := make([]int, writers)  // the next transaction each writer sends
	check := func(round int, c *redis.Client) {
		for w := range writers {
			n, err := c.Get(ctx, fmt.Sprintf("c:%d", w)).Int()
			if errors.Is(err, redis.Nil) {
				n, err = 0, nil
			}
			if err != nil {
				t.Fatalf("round %d: GET c:%d: %v", round, w, err)
			}
			if int(n) < acked[w] {
				t.Fatalf("round %d: writer %d: %d transactions acknowledged, %d recovered", round, w, acked[w], n)
			}
			keys, err := c.Keys(ctx, fmt.Sprintf("t:%d:*", w)).Result()
			if err != nil || len(keys) != int(n) {
				t.Fatalf("round %d: writer %d: c:%d says %d transactions, %d t: keys exist (%v): half a transaction",
					round, w, w, n, len(keys), err)
			}
			for j := range int(n) {
				if ok, err := c.BFExists(ctx, fmt.Sprintf("f:%d", w), strconv.Itoa(j)).Result(); err != nil || !ok {
					t.Fatalf("round %d: writer %d: transaction %d recovered without its BF.ADD (%v)", round, w, j, err)
				}
			}
			acked[w], next[w] = int(n), int(n)
		}
	}
	total := 0
	for round := range rounds {
		cmd := startChild(t, addr, dir, "always")
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: writers})
		check(round, c)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := next[w]; ; j++ {
					_, err := c.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
						pipe.Set(ctx, fmt.Sprintf("t:%d:%d", w, j), "v", 0)
						pipe.Incr(ctx, fmt.Sprintf("c:%d", w))
						pipe.BFAdd(ctx, fmt.Sprintf("f:%d", w), strconv.Itoa(j))
						return nil
					})
					if err != nil {
						return
					}
					acked[w] = j + 1
				}
			}()
		}
		time.Sleep(time.Duration(100+rand.IntN(300)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		wg.Wait()
		c.Close()
		for w := range writers {
			total += acked[w] - next[w]
		}
	}
	cmd := startChild(t, addr, dir, "always")
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	check(rounds, c)
	if total == 0 {
		t.Fatal("no transaction was acknowledged: the test did not exercise anything")
	}
	t.Logf("%d rounds of kill -9, %d acknowledged transactions, all whole", rounds, total)
}

// The AOF holds a transaction that writes as MULTI, its records, EXEC, and
// nothing for one that only reads or was discarded.
func TestTxAOFUnit(t *testing.T) {
	dir := t.TempDir()
	s := runApp(t, Options{Dir: dir}, true)
	ctx := context.Background()
	c := newClient(t, s.addr, nil)
	if err := c.Set(ctx, "x", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Set(ctx, "a", "1", 0)
		pipe.Get(ctx, "x")
		pipe.Set(ctx, "b", "2", 0)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Get(ctx, "a")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.stop(t)
	fc, err := persist.CheckFile(filepath.Join(dir, "appendonly.1.aof"))
	if err != nil || fc.Problem != "" {
		t.Fatalf("CheckFile: %+v, %v", fc, err)
	}
	// SET x; MULTI SET a SET b EXEC.
	if fc.Records != 5 {
		t.Fatalf("%d records in the AOF, want 5", fc.Records)
	}
	s = runApp(t, Options{Dir: dir}, true)
	c = newClient(t, s.addr, nil)
	if n, _ := c.Exists(ctx, "x", "a", "b").Result(); n != 3 {
		t.Fatalf("%d of 3 keys after restart", n)
	}
}
