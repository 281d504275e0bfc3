package app

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestCMSRestart: count-min sketches written with appendfsync always
// survive kill -9 (AOF replay of CMS.INITBYDIM, _CMS.INCRBY with saturated
// items, _CMS.LOAD from merges), then a snapshot (SAVE) plus further AOF
// records and another kill -9: every reply of CMS.QUERY and CMS.INFO is the
// same after each restart.
func TestCMSRestart(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx := context.Background()
	items := make([]any, 0, 200)
	for i := range 200 {
		items = append(items, fmt.Sprint("item-", i))
	}
	state := func(c *redis.Client) string {
		out := ""
		for _, k := range []string{"a", "b", "m"} {
			q, err := c.Do(ctx, append([]any{"CMS.QUERY", k}, items...)...).Result()
			if err != nil {
				t.Fatalf("CMS.QUERY %s: %v", k, err)
			}
			info, err := c.Do(ctx, "CMS.INFO", k).Result()
			if err != nil {
				t.Fatalf("CMS.INFO %s: %v", k, err)
			}
			out += fmt.Sprint(k, q, info, "\n")
		}
		return out
	}
	do := func(c *redis.Client, args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	write := func(c *redis.Client, round int) {
		for i := range 200 {
			// INCRBY answers an array (the overflow error is an element).
			c.Do(ctx, "CMS.INCRBY", "a", items[i], i+round, items[(i*7)%200], 2147483647)
			do(c, "CMS.INCRBY", "b", items[i], 1)
		}
		do(c, "CMS.MERGE", "m", "3", "m", "b", "b", "WEIGHTS", "1", "2", "-1")
	}
	cmd := startChild(t, addr, dir, "always")
	c := redis.NewClient(&redis.Options{Addr: addr})
	do(c, "CMS.INITBYDIM", "a", "50", "3")
	do(c, "CMS.INITBYPROB", "b", "0.01", "0.01")
	do(c, "CMS.INITBYPROB", "m", "0.01", "0.01")
	write(c, 0)
	want := state(c)
	for round := 1; round <= 2; round++ {
		c.Close()
		cmd.Process.Kill()
		cmd.Wait()
		cmd = startChild(t, addr, dir, "always")
		c = redis.NewClient(&redis.Options{Addr: addr})
		if got := state(c); got != want {
			t.Fatalf("round %d: after kill -9\n%s\nwant\n%s", round, got, want)
		}
		if typ := c.Type(ctx, "a").Val(); typ != "CMSk-TYPE" {
			t.Fatalf("TYPE a = %q", typ)
		}
		do(c, "SAVE")
		write(c, round)
		want = state(c)
	}
	c.Close()
	cmd.Process.Kill()
	cmd.Wait()
	cmd = startChild(t, addr, dir, "always")
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	c = redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if got := state(c); got != want {
		t.Fatalf("after the last kill -9\n%s\nwant\n%s", got, want)
	}
}
