package server

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/probly/probly/internal/keyspace"
)

// Memory accounting for maxmemory.
//
// keyspace.Store.MemoryUsage walks every key (under each shard's read
// lock), which is far too slow to run before every write. Values also grow
// in place (a Bloom chain adds a link inside BF.ADD) without the key space
// seeing it, so exact delta accounting would need every value type's
// cooperation. Instead a background goroutine recomputes the total every
// memRefresh (100 ms) while a limit is set, and the OOM check compares the
// last total with the limit: one atomic load per denyoom command.
//
// The approximation: the total is at most one refresh interval old, so
// writes in that window can overshoot maxmemory by what they add in it
// (each key's growth is further bounded by its per-filter byte budget); a
// walk that takes longer than memRefresh/10 stretches the interval to ten
// times the walk, so the walker never uses more than about 10 % of a core.
// INFO, /metrics and CONFIG SET maxmemory compute the exact total (and
// store it) on the spot.
const memRefresh = 100 * time.Millisecond

type memTracker struct {
	store *keyspace.Store
	limit atomic.Uint64 // bytes; 0 = no limit
	used  atomic.Uint64 // last computed Store.MemoryUsage
	wake  chan struct{} // a limit was set: refresh now
}

func (m *memTracker) init(store *keyspace.Store) {
	m.store = store
	m.wake = make(chan struct{}, 1)
}

// setLimit is the maxmemory parameter's setter. It recomputes the total
// at once, so a lowered limit takes effect with the next command.
func (m *memTracker) setLimit(n uint64) {
	m.limit.Store(n)
	if n > 0 {
		m.refresh()
		select {
		case m.wake <- struct{}{}:
		default:
		}
	}
}

// refresh walks the key space and stores the total.
func (m *memTracker) refresh() uint64 {
	n := m.store.MemoryUsage()
	m.used.Store(n)
	return n
}

// over reports whether the last total exceeds a set limit.
func (m *memTracker) over() bool {
	l := m.limit.Load()
	return l > 0 && m.used.Load() > l
}

// start runs the refresher until the returned function is called.
func (m *memTracker) start() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTimer(memRefresh)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-m.wake:
			case <-t.C:
			}
			next := memRefresh
			if m.limit.Load() > 0 {
				begin := time.Now()
				m.refresh()
				next = max(memRefresh, 10*time.Since(begin))
			}
			t.Reset(next)
		}
	}()
	return func() { close(done); wg.Wait() }
}

// UsedMemory computes the key space's memory now (Σ key lengths + value
// MemoryUsage, as INFO's used_memory) and records it for the maxmemory
// check.
func (s *Server) UsedMemory() uint64 { return s.mem.refresh() }

// MaxMemory returns the maxmemory limit in bytes (0 = none).
func (s *Server) MaxMemory() uint64 { return s.mem.limit.Load() }
