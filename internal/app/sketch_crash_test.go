package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/probly/probly/internal/testutil"
)

// kill -9 with appendfsync always during writes to the three sketch types
// (issue 17): every acknowledged CMS.INCRBY, TOPK.ADD and TDIGEST.ADD is
// there after the restart. Each writer owns one item or digest, so the
// recovered count is exact: the acknowledged writes, or one more (the one
// in flight at the kill, written but not acknowledged). 2 rounds; 20 with
// PROBLY_FULL=1.
func TestSketchCrashAlways(t *testing.T) {
	rounds := 2
	if testutil.FullEnabled() {
		rounds = 20
	}
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx := context.Background()
	const writers = 3
	// acked[w][f] counts the acknowledged writes of writer w to family f.
	var acked [writers][3]int
	families := [3]string{"cms", "topk", "tdigest"}
	count := func(c *redis.Client, w, f int) (int, error) {
		switch f {
		case 0:
			v, err := c.CMSQuery(ctx, "cms", fmt.Sprintf("w%d", w)).Result()
			if err != nil {
				return 0, err
			}
			return int(v[0]), nil
		case 1:
			v, err := c.TopKCount(ctx, fmt.Sprintf("topk:%d", w), "x").Result()
			if err != nil {
				return 0, err
			}
			return int(v[0]), nil
		}
		info, err := c.TDigestInfo(ctx, fmt.Sprintf("td:%d", w)).Result()
		return int(info.Observations), err
	}
	check := func(round int, c *redis.Client) {
		for w := range writers {
			for f := range 3 {
				n, err := count(c, w, f)
				if err != nil {
					t.Fatalf("round %d: writer %d %s: %v", round, w, families[f], err)
				}
				if n < acked[w][f] || n > acked[w][f]+1 {
					t.Fatalf("round %d: writer %d %s: %d writes acknowledged, %d recovered", round, w, families[f], acked[w][f], n)
				}
				acked[w][f] = n
			}
		}
	}
	setup := redis.NewClient(&redis.Options{Addr: addr})
	defer setup.Close()
	total := 0
	for round := range rounds {
		cmd := startChild(t, addr, dir, "always")
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: writers})
		if round == 0 {
			if err := c.CMSInitByDim(ctx, "cms", 2000, 5).Err(); err != nil {
				t.Fatal(err)
			}
			for w := range writers {
				if err := c.TopKReserveWithOptions(ctx, fmt.Sprintf("topk:%d", w), 10, 100, 5, 1).Err(); err != nil {
					t.Fatal(err)
				}
				if err := c.TDigestCreate(ctx, fmt.Sprintf("td:%d", w)).Err(); err != nil {
					t.Fatal(err)
				}
			}
		}
		check(round, c)
		before := acked
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; ; j++ {
					var err error
					f := j % 3
					switch f {
					case 0:
						err = c.CMSIncrBy(ctx, "cms", fmt.Sprintf("w%d", w), 1).Err()
					case 1:
						err = c.TopKAdd(ctx, fmt.Sprintf("topk:%d", w), "x").Err()
					case 2:
						err = c.TDigestAdd(ctx, fmt.Sprintf("td:%d", w), float64(w*1_000_000+j)).Err()
					}
					if err != nil {
						return
					}
					acked[w][f]++
				}
			}()
		}
		time.Sleep(time.Duration(100+rand.IntN(300)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		wg.Wait()
		c.Close()
		for w := range writers {
			for f := range 3 {
				total += acked[w][f] - before[w][f]
			}
		}
	}
	cmd := startChild(t, addr, dir, "always")
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	check(rounds, c)
	if total == 0 {
		t.Fatal("no write was acknowledged: the test did not exercise anything")
	}
	t.Logf("%d rounds of kill -9, %d acknowledged sketch writes, all recovered", rounds, total)
}
