package metrics

import (
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/cms"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/keyspace"
)

// CMS keys are counted by type and in the used memory, and CMS.* calls by
// command, with no per-filter series (a count-min sketch has no fill or
// false-positive rate).
func TestCMSKeys(t *testing.T) {
	store := keyspace.New(nil)
	tab := command.NewTable()
	cms.Register(tab, nil)
	for _, args := range [][]string{{"CMS.INITBYDIM", "a", "100", "5"}, {"CMS.INITBYPROB", "b", "0.01", "0.01"}, {"CMS.INCRBY", "a", "x", "3"}} {
		if got, _ := commandtest.Run(tab, store, nil, 2, commandtest.Argv(args...)); got[0] == '-' {
			t.Fatalf("%q: %q", args, got)
		}
	}
	m := New(Options{Store: store, Table: tab})
	m.Command("cms.incrby", 1000, false)
	fams := gather(t, m.Registry())
	if v, _ := find(fams, "probly_keys", map[string]string{"type": cms.TypeName}); v != 2 {
		t.Errorf("CMS keys = %v, want 2", v)
	}
	if v, _ := find(fams, "probly_used_memory_bytes", nil); v != float64(store.MemoryUsage()) || v < 4*100*5+4*200*7 {
		t.Errorf("used memory = %v, MemoryUsage %d", v, store.MemoryUsage())
	}
	if v, _ := find(fams, "probly_commands_total", map[string]string{"command": "cms.incrby", "outcome": "ok"}); v != 1 {
		t.Errorf("cms.incrby calls = %v", v)
	}
	if _, ok := find(fams, "probly_filter_items", map[string]string{"key": "a"}); ok {
		t.Error("a per-filter series for a CMS key")
	}
}
