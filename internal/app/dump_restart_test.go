package app

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestDumpStableAcrossRestart: DUMP and CF.SCANDUMP of cuckoo keys are a
// function of the filter's logical state alone: the same bytes before and
// after a restart, whether the key comes back from the snapshot ("snap",
// saved by SAVE) or from the AOF ("aof", written after it, replayed after
// kill -9). The filters are created under a cf-max-filter-bytes that is
// not the budget recovery uses (the per-filter budget is policy, not
// state; it used to be written into the encoding) and hold 3000 items in
// a 131072-byte table.
func TestDumpStableAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx := context.Background()
	cmd := startChild(t, addr, dir, "always")
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer func() { c.Close() }()
	must := func(args ...any) any { t.Helper(); return doOK(t, c, args...) }
	fill := func(key string) {
		t.Helper()
		must("CF.RESERVE", key, "100000")
		p := c.Pipeline()
		for i := range 3000 {
			p.Do(ctx, "CF.ADD", key, i)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatalf("CF.ADD %s: %v", key, err)
		}
		must("CF.DEL", key, "7")
	}
	state := func(key string) (dump []byte, scan string) {
		t.Helper()
		dump = []byte(must("DUMP", key).(string))
		var b bytes.Buffer
		for it := int64(0); ; {
			r := must("CF.SCANDUMP", key, it).([]any)
			if it = r[0].(int64); it == 0 {
				break
			}
			fmt.Fprintf(&b, "%d:%x\n", it, r[1])
		}
		return dump, b.String()
	}

	must("CONFIG", "SET", "cf-max-filter-bytes", "134217728")
	fill("snap")
	must("SAVE")
	fill("aof")
	keys := []string{"snap", "aof"}
	dumps, scans := map[string][]byte{}, map[string]string{}
	for _, k := range keys {
		dumps[k], scans[k] = state(k)
		if len(dumps[k]) < 131072 {
			t.Fatalf("DUMP %s is %d bytes, want the whole table", k, len(dumps[k]))
		}
	}

	c.Close()
	cmd.Process.Kill()
	cmd.Wait()
	cmd = startChild(t, addr, dir, "always")
	c = redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	for _, k := range keys {
		d, s := state(k)
		if s != scans[k] {
			t.Errorf("CF.SCANDUMP %s changed across the restart", k)
		}
		if !bytes.Equal(d, dumps[k]) {
			n, first := 0, -1
			for i := range min(len(d), len(dumps[k])) {
				if d[i] != dumps[k][i] {
					n++
					if first < 0 {
						first = i
					}
				}
			}
			t.Errorf("DUMP %s changed across the restart: %d → %d bytes, %d differ, the first at %d", k, len(dumps[k]), len(d), n, first)
		}
		// The restored dump loads back to the same bytes too.
		must("RESTORE", k+"2", "0", string(d))
		if d2, _ := state(k + "2"); !bytes.Equal(d2, d) {
			t.Errorf("DUMP of RESTORE %s differs from the dump restored", k)
		}
	}
}

// doOK runs one command on c and returns its reply; an error reply or a
// failed connection fails the test.
func doOK(t testing.TB, c *redis.Client, args ...any) any {
	t.Helper()
	v, err := c.Do(context.Background(), args...).Result()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}
