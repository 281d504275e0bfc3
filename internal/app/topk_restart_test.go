package app

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/probly/probly/topk"
)

// TestTopKRestart: top-k sketches with decay < 1 (the seeded generator
// decides collisions) come back from the snapshot plus the AOF, after
// kill -9 with appendfsync always, exactly as an in-process model of the
// same writes holds them, and continue the same way: the generator state
// survives the restart.
func TestTopKRestart(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx := context.Background()
	model, err := topk.NewWithConfig(topk.Config{K: 5, Width: 6, Depth: 3, Decay: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(1))
	var c *redis.Client
	step := func(i int) {
		t.Helper()
		item := fmt.Sprint("i", r.Intn(25))
		var got any
		var err error
		var want any = nil
		if i%3 == 0 {
			n := r.Intn(50)
			got, err = c.Do(ctx, "TOPK.INCRBY", "t", item, n).Result()
			if e, ok := model.AddN([]byte(item), uint32(n)); ok {
				want = string(e)
			}
		} else {
			got, err = c.Do(ctx, "TOPK.ADD", "t", item).Result()
			if e, ok := model.Add([]byte(item)); ok {
				want = string(e)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if g := got.([]any)[0]; fmt.Sprint(g) != fmt.Sprint(want) {
			t.Fatalf("step %d (%s): expelled %v, model %v", i, item, g, want)
		}
	}
	list := func() string {
		t.Helper()
		v, err := c.Do(ctx, "TOPK.LIST", "t", "WITHCOUNT").Result()
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(v)
	}
	modelList := func() string {
		var out []any
		for _, it := range model.List() {
			out = append(out, string(it.Value), int64(it.Count))
		}
		return fmt.Sprint(out)
	}

	cmd := startChild(t, addr, dir, "always")
	c = redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	if err := c.Do(ctx, "TOPK.RESERVE", "t", "5", "6", "3", "0.8").Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		step(i)
		if i == 150 {
			if err := c.Do(ctx, "SAVE").Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.Close()
	cmd.Process.Kill()
	cmd.Wait()

	cmd = startChild(t, addr, dir, "always")
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	c = redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	if got, want := list(), modelList(); got != want {
		t.Fatalf("after restart LIST WITHCOUNT %s, model %s", got, want)
	}
	if typ, err := c.Type(ctx, "t").Result(); err != nil || typ != "TopK-TYPE" {
		t.Fatalf("TYPE %q %v", typ, err)
	}
	for i := 300; i < 600; i++ {
		step(i)
	}
	if got, want := list(), modelList(); got != want {
		t.Fatalf("LIST WITHCOUNT %s, model %s", got, want)
	}
}
