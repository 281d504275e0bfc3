package server

import (
	"strings"
	"testing"
)

// consecutivePersist adds the optional consecutive-failure count.
type consecutivePersist struct {
	*fakePersist
	fails uint64
}

func (p consecutivePersist) ConsecutiveFailures() uint64 { return p.fails }

// TestInfoPersistenceStatus: aof_last_write_status, aof_last_bgrewrite_status
// and rdb_last_bgsave_status report what the persister says (ok/err), not a
// constant, in Redis 7's field order.
func TestInfoPersistenceStatus(t *testing.T) {
	p := &fakePersist{}
	e := start(t, func(o *Options) { o.Persist = consecutivePersist{p, 3} })
	r := e.raw(t)
	field := func(info, name string) string {
		for _, l := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				return v
			}
		}
		t.Fatalf("INFO persistence has no %s: %q", name, info)
		return ""
	}
	for _, c := range []struct {
		saveFailed, writeErr bool
		save, write          string
	}{
		{false, false, "ok", "ok"},
		{false, true, "ok", "err"},
		{true, true, "err", "err"},
		{true, false, "err", "ok"},
	} {
		p.mu.Lock()
		p.saveFailed, p.writeErr = c.saveFailed, c.writeErr
		p.mu.Unlock()
		info := r.do("INFO", "persistence")
		if got := field(info, "aof_last_write_status"); got != c.write {
			t.Errorf("write error %v: aof_last_write_status:%s, want %s", c.writeErr, got, c.write)
		}
		for _, f := range []string{"rdb_last_bgsave_status", "aof_last_bgrewrite_status"} {
			if got := field(info, f); got != c.save {
				t.Errorf("save failed %v: %s:%s, want %s", c.saveFailed, f, got, c.save)
			}
		}
		if got := field(info, "aof_rewrites_consecutive_failures"); got != "3" {
			t.Errorf("aof_rewrites_consecutive_failures:%s", got)
		}
		// Redis 7's order of these fields.
		order := []string{"rdb_last_bgsave_status:", "aof_enabled:", "aof_last_bgrewrite_status:",
			"aof_rewrites_consecutive_failures:", "aof_last_write_status:", "aof_current_size:"}
		last := -1
		for _, f := range order {
			i := strings.Index(info, "\r\n"+f)
			if i <= last {
				t.Fatalf("INFO persistence field order: %s out of place in %q", f, info)
			}
			last = i
		}
	}
}
