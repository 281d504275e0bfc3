package app

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/testutil"
)

func TestTunedLimit(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ used, live, scan, nonHeap, hardCap, want uint64 }{
		// The data is used_memory when the live heap is smaller.
		{used: 100 * mib, live: 40 * mib, nonHeap: 2 * mib, want: 112*mib + 512<<10 + 2*mib + tuneSlack},
		// A live heap above used_memory (buffers, snapshot copies) raises
		// the limit: never below live + an eighth.
		{used: 10 * mib, live: 80 * mib, nonHeap: 0, want: 90*mib + tuneSlack},
		// Capped.
		{used: 1000 * mib, live: 0, nonHeap: 0, hardCap: 512 * mib, want: 512 * mib},
		// A live heap above the cap: not below it plus the runtime's memory
		// and the slack (a limit under the live heap collects continuously).
		{used: 100 * mib, live: 600 * mib, nonHeap: 3 * mib, hardCap: 512 * mib, want: 603*mib + tuneSlack},
		// A live heap just under the cap: the cap.
		{used: 100 * mib, live: 500 * mib, nonHeap: 3 * mib, hardCap: 512 * mib, want: 512 * mib},
		// A heap that is mostly pointers (many small keys): the headroom
		// is the scannable heap (GOGC=100's cost), not an eighth.
		{used: 30 * mib, live: 150 * mib, scan: 120 * mib, nonHeap: 2 * mib, want: 270*mib + 2*mib + tuneSlack},
		// Large pointer-free payloads with a small scannable rest: an eighth.
		{used: 100 * mib, live: 104 * mib, scan: 5 * mib, want: 117*mib + tuneSlack},
		// Empty.
		{want: tuneSlack},
	} {
		if got := tunedLimit(c.used, c.live, c.scan, c.nonHeap, c.hardCap); got != c.want {
			t.Errorf("tunedLimit(%d, %d, %d, %d, %d) = %d, want %d", c.used, c.live, c.scan, c.nonHeap, c.hardCap, got, c.want)
		}
	}
}

// TestMemoryTuner: while a store is registered the runtime's limit
// follows its used_memory (at least used + an eighth, and far below the
// previous limit for a small store); when the last store goes, the limit
// found at the start is restored.
func TestMemoryTuner(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "") // the tuner runs only without GOMEMLIMIT
	prev := debug.SetMemoryLimit(1 << 40)
	defer debug.SetMemoryLimit(prev)
	s := keyspace.New(nil)
	s.Update([]byte("k"), func(tx *keyspace.Txn) { tx.Set(bigVal(64 << 20)) })
	stop := startMemoryTuner(s)
	if !testutil.Eventually(t, 5*time.Second, func() bool {
		l := debug.SetMemoryLimit(-1)
		return l >= int64(s.Used()+s.Used()/8) && l < 1<<39
	}) {
		t.Fatalf("limit %d with used_memory %d", debug.SetMemoryLimit(-1), s.Used())
	}
	stop()
	stop() // idempotent
	if !testutil.Eventually(t, 5*time.Second, func() bool { return debug.SetMemoryLimit(-1) == 1<<40 }) {
		t.Fatalf("limit %d after stop, want %d", debug.SetMemoryLimit(-1), int64(1<<40))
	}
}

// bigVal is a value whose MemoryUsage is its length (no real memory).
type bigVal uint64

func (v bigVal) TypeName() string      { return "string" }
func (v bigVal) MemoryUsage() uint64   { return uint64(v) }
func (v bigVal) Clone() keyspace.Value { return v }
