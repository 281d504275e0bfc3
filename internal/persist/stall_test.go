package persist

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probly/probly/internal/keyspace"
)

// TestSnapshotStall measures how long writers are stalled while a snapshot
// of a large data set is taken. It allocates about twice
// PROBLY_STALL_MB (default 1024) MiB, so it runs only when PROBLY_STALL
// is set:
//
//	PROBLY_STALL=1 go test -run TestSnapshotStall -v ./internal/persist/
func TestSnapshotStall(t *testing.T) {
	if os.Getenv("PROBLY_STALL") == "" {
		t.Skip("set PROBLY_STALL=1 to measure the snapshot stall (allocates ~2 GB)")
	}
	mb := 1024
	if v, err := strconv.Atoi(os.Getenv("PROBLY_STALL_MB")); err == nil && v > 0 {
		mb = v
	}
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncNo)
	defer db.Close()
	const valueMB = 16
	big := make([]byte, valueMB<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	for i := 0; i < mb/valueMB; i++ {
		k := fmt.Sprintf("big-%03d", i)
		s.Update([]byte(k), func(tx *keyspace.Txn) { tx.Set(strVal(append([]byte(nil), big...))) })
	}
	// Writers on small keys, measuring the worst latency of one write.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	var worst time.Duration
	var writes atomic.Int64
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				k := fmt.Sprintf("small-%d-%d", g, i%1000)
				t0 := time.Now()
				set(t, s, k, "v")
				d := time.Since(t0)
				writes.Add(1)
				mu.Lock()
				worst = max(worst, d)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	worst = 0
	mu.Unlock()
	w0 := writes.Load()
	t0 := time.Now()
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	w1 := writes.Load()
	stop.Store(true)
	wg.Wait()
	st := db.SnapshotStats()
	t.Logf("%d MiB in %d values: snapshot took %v; cut (all shard locks held) %v; worst latency of one write to a small key during it %v (%d writes during the snapshot)",
		mb, mb/valueMB, took.Round(time.Millisecond), st.LastStall.Round(time.Microsecond), worst.Round(time.Microsecond), w1-w0)

	// Copy-on-write: the first write to a large value during a snapshot
	// clones it, under that key's shard lock only.
	f, err := s.FreezeCOW(nil)
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	s.Update([]byte("big-000"), func(tx *keyspace.Txn) { tx.Set(strVal("x")) })
	cow := time.Since(t1)
	f.Release()
	t.Logf("first write to a %d MiB value while a snapshot holds it: %v (one clone)", valueMB, cow.Round(time.Microsecond))
}
