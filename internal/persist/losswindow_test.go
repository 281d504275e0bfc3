package persist

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestEverySecLossWindow measures what an OS crash or power loss could
// lose with appendfsync everysec: at any moment, the acknowledged writes
// not yet covered by an fsync. (kill -9 alone loses nothing in any mode:
// records are in the page cache before the reply; see the app crash
// tests.) Writers run flat out for a few seconds while a sampler records,
// every few milliseconds, the age of the oldest acknowledged write that is
// not fsynced yet and how many such writes there are.
func TestEverySecLossWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	db, s := openStore(t, t.TempDir(), FsyncEverySec)
	defer db.Close()
	const maxSeq = 1 << 22
	acked := make([]atomic.Int64, maxSeq+1) // seq → acknowledgement time (unix ns)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				seq := set(t, s, fmt.Sprintf("g%d-%d", g, i%10000), "value")
				if seq > maxSeq {
					return
				}
				if err := db.Wait(seq); err != nil { // written: acknowledged
					t.Error(err)
					return
				}
				acked[seq].Store(time.Now().UnixNano())
			}
		}()
	}
	var worstAge time.Duration
	var worstLost uint64
	end := time.Now().Add(3500 * time.Millisecond)
	for time.Now().Before(end) {
		time.Sleep(3 * time.Millisecond)
		db.smu.Lock()
		synced := db.synced.Load()
		db.smu.Unlock()
		now := time.Now()
		last := db.seq.Load()
		var lost uint64
		for q := synced + 1; q <= min(last, maxSeq); q++ {
			if ts := acked[q].Load(); ts != 0 {
				if lost == 0 {
					worstAge = max(worstAge, now.Sub(time.Unix(0, ts)))
				}
				lost++
			}
		}
		worstLost = max(worstLost, lost)
	}
	stop.Store(true)
	wg.Wait()
	total := db.seq.Load()
	n, fsyncTotal, longest := db.FsyncStats()
	t.Logf("everysec: %d writes in 3.5 s (%.0f/s); a power loss at the worst moment would have lost the last %v of acknowledged writes (%d writes); %d fsyncs, mean %v, longest %v",
		total, float64(total)/3.5, worstAge.Round(time.Millisecond), worstLost, n, (fsyncTotal / time.Duration(max(n, 1))).Round(time.Microsecond), longest.Round(time.Microsecond))
	if worstAge > 3*time.Second {
		t.Fatalf("acknowledged writes stayed unsynced for %v (want about 1 s)", worstAge)
	}
}
