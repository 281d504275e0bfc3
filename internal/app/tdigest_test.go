package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestTDigestRestart: t-digests come back bit-identical after a restart,
// from the snapshot plus the AOF after SIGTERM, and from the AOF alone
// after kill -9 with appendfsync always: INFO (centroid and buffer counts,
// total compressions) and every double the queries answer, which depend
// on each merge pass having run at the same moment (reads compress and
// are logged when they do; MERGE logs its result's state).
func TestTDigestRestart(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 8))
	keys := []string{"lat", "size", "merged"}
	var c *redis.Client
	do := func(args ...any) any {
		t.Helper()
		v, err := c.Do(ctx, args...).Result()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
	work := func(rounds int) {
		for range rounds {
			k := keys[r.IntN(2)]
			args := []any{"TDIGEST.ADD", k}
			for range 1 + r.IntN(40) {
				args = append(args, strconv.FormatFloat(r.ExpFloat64()*50, 'g', -1, 64))
			}
			do(args...)
			switch r.IntN(6) {
			case 0:
				do("TDIGEST.QUANTILE", k, "0.5", "0.99")
			case 1:
				do("TDIGEST.RANK", k, "10")
			case 2:
				do("TDIGEST.MERGE", "merged", "2", "lat", "size")
			}
		}
	}
	state := func() string {
		out := ""
		for _, k := range keys {
			out += fmt.Sprint(do("TDIGEST.INFO", k), do("TDIGEST.MIN", k), do("TDIGEST.MAX", k)) + "\n"
		}
		return out
	}
	// Queries compress, so they run on both sides only after the state
	// was compared, in the same order.
	queries := func() string {
		out := ""
		for _, k := range keys {
			out += fmt.Sprint(do("TDIGEST.QUANTILE", k, "0.001", "0.01", "0.5", "0.99", "0.999"),
				do("TDIGEST.CDF", k, "1", "20", "100"), do("TDIGEST.TRIMMED_MEAN", k, "0.1", "0.9"),
				do("TDIGEST.BYRANK", k, "1", "50")) + "\n"
		}
		return out
	}
	cmd := startChild(t, addr, dir, "everysec")
	c = redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	do("TDIGEST.CREATE", "lat", "COMPRESSION", "50")
	do("TDIGEST.CREATE", "size")
	do("TDIGEST.MERGE", "merged", "2", "lat", "size")
	work(300)
	do("SAVE")
	work(300)
	before := state()
	c.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server exit after SIGTERM: %v", err)
	}

	cmd = startChild(t, addr, dir, "always")
	c = redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	if after := state(); after != before {
		t.Fatalf("state changed across SIGTERM restart:\n%s\n%s", before, after)
	}
	// Reads merge buffers and are logged when they do: after them, and
	// a kill -9, the same state answers the same doubles.
	work(300)
	queries()
	before = state()
	q := queries() // nothing left to merge: changes nothing
	if state() != before {
		t.Fatal("queries of a merged digest changed it")
	}
	c.Close()
	cmd.Process.Kill() // kill -9: every acknowledged write was fsynced
	cmd.Wait()

	cmd = startChild(t, addr, dir, "always")
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	c = redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	if after := state(); after != before {
		t.Fatalf("state changed across kill -9:\n%s\n%s", before, after)
	}
	if after := queries(); after != q {
		t.Fatalf("queries changed across kill -9:\n%s\n%s", q, after)
	}
}
