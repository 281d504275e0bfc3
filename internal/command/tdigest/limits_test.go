package tdigest_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/keyspace"
)

// Allocation goes through Ctx.Reserve: refused, CREATE and MERGE answer
// RedisBloom's allocation errors and create nothing; ADD that would grow
// the node array answers OOM and adds nothing.
func TestReserve(t *testing.T) {
	tab, cfg := table()
	store := keyspace.New(nil)
	var asked []uint64
	refuse := commandtest.ReserveMem(func(n uint64) bool { asked = append(asked, n); return false })
	do := func(cmd string, opts ...commandtest.Option) string {
		r, _ := commandtest.Run(tab, store, cfg, 2, commandtest.Argv(strings.Fields(cmd)...), opts...)
		return r
	}
	if r := do("TDIGEST.CREATE t COMPRESSION 1000", refuse); r != "-ERR T-Digest: allocation failed\r\n" {
		t.Fatalf("CREATE: %q", r)
	}
	if len(asked) != 1 || asked[0] != 1+128+16*6010 {
		t.Fatalf("reserved %v, want the key and the full digest (%d)", asked, 1+128+16*6010)
	}
	if r := do("EXISTS t"); r != ":0\r\n" {
		t.Fatalf("refused CREATE created the key: %q", r)
	}
	do("TDIGEST.CREATE s")
	do("TDIGEST.ADD s 1 2 3")
	if r := do("TDIGEST.MERGE d 1 s", refuse); r != "-ERR T-Digest: allocation of destination digest failed\r\n" {
		t.Fatalf("MERGE: %q", r)
	}
	// s holds 3 nodes in a 64-node array: more than 61 new values need growth.
	if r := do("TDIGEST.ADD s"+strings.Repeat(" 5", 100), refuse); r != "-"+command.ErrOOM+"\r\n" {
		t.Fatalf("ADD: %q", r)
	}
	if r := do("TDIGEST.ADD s 4", refuse); r != "+OK\r\n" {
		t.Fatalf("ADD without growth: %q", r)
	}
	if r := do("TDIGEST.INFO s"); !strings.Contains(r, "Observations\r\n:4\r\n") {
		t.Fatalf("INFO after the refused ADD: %q", r)
	}
}

// Concurrent writers and readers of one digest (run with -race): reads
// take the read lock only when nothing is buffered.
func TestConcurrent(t *testing.T) {
	tab, cfg := table()
	store := keyspace.New(nil)
	commandtest.Run(tab, store, cfg, 2, commandtest.Argv("TDIGEST.CREATE", "k"))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				var args []string
				switch (g + i) % 4 {
				case 0:
					args = []string{"TDIGEST.ADD", "k", fmt.Sprint(i), fmt.Sprint(g)}
				case 1:
					args = []string{"TDIGEST.QUANTILE", "k", "0.5"}
				case 2:
					args = []string{"TDIGEST.INFO", "k"}
				default:
					args = []string{"TDIGEST.MERGE", "m", "1", "k"}
				}
				if r, _ := commandtest.Run(tab, store, cfg, 3, commandtest.Argv(args...)); r[0] == '-' {
					t.Errorf("%q: %q", args, r)
					return
				}
			}
		}()
	}
	wg.Wait()
	if r, _ := commandtest.Run(tab, store, cfg, 2, commandtest.Argv("TDIGEST.INFO", "k")); !strings.Contains(r, "Observations\r\n:600\r\n") {
		t.Fatalf("INFO: %q", r)
	}
}
