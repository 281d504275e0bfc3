package app

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"time"

	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/sysmem"
)

// DefaultMaxMemory is the default of maxmemory: a quarter of the memory
// available to the process, or 0 (no limit) where that cannot be read.
//
// A quarter, not more: maxmemory counts the key space's data (used_memory),
// Go's garbage collector lets the heap reach about twice the live data
// before it collects (GOGC=100), and a snapshot copies each value written
// while it runs (copy-on-write). Under write load during snapshots the
// process was measured at about 4× used_memory.
func DefaultMaxMemory() uint64 { return availableMemory() / 4 }

// GoMemoryLimit is the soft limit handed to the Go runtime
// (debug.SetMemoryLimit) unless GOMEMLIMIT is set: three quarters of the
// available memory, so the collector works harder before the kernel's OOM
// killer would act. 0 when the available memory cannot be read.
func GoMemoryLimit() uint64 { return availableMemory() / 4 * 3 }

// availableMemory is sysmem.Available: the smallest of the cgroup limit
// and the machine's MemTotal, in bytes; 0 when neither can be read.
func availableMemory() uint64 { return sysmem.Available() }

// The memory tuner keeps the process's memory close to the data.
//
// Go's collector lets the heap grow to about twice the live data
// (GOGC=100) and returns freed memory to the OS only slowly, so a server
// whose data is mostly a few large filters was measured at 2.3× to 5.8×
// used_memory in RSS (docs/BENCHMARKS.md, issue 18). The tuner hands the
// runtime a soft memory limit (debug.SetMemoryLimit) that follows the
// data: every tuneEvery it sets
//
//	limit = data + max(data/8, scannable heap) + nonHeap + tuneSlack, data = max(used_memory, live heap)
//
// capped at GoMemoryLimit, where live heap is the heap marked live by the
// last collection and nonHeap the runtime's own memory outside the heap
// (stacks, GC metadata). Below the limit the collector behaves as with
// GOGC; near it, it collects earlier and returns freed pages to the OS at
// once. Below the cap the limit is never below the live heap plus an
// eighth and tuneSlack (data ≥ live heap), and at the cap never below the
// live heap plus the runtime's memory and tuneSlack, so the collector
// cannot be driven into collecting continuously by its own limit: the
// headroom costs about one collection per headroom + tuneSlack bytes
// allocated, each scanning the scannable heap (the headroom is at least
// that, see tunedLimit); the large payloads (bit arrays, bucket tables,
// registers) hold no pointers, so marking them is cheap. Between two
// ticks a burst of allocation (large requests, a load) can take the heap
// past a limit computed before it; the runtime then collects at each
// step, its GC CPU limiter caps that at about half the CPU, and each
// tick (tuneEvery) raises the limit to the new live heap.
//
// It runs only when GOMEMLIMIT is not set (an operator's GOMEMLIMIT wins),
// once per process for every Run (tests run several servers in one
// process: their used_memory is summed).
const (
	tuneEvery = 100 * time.Millisecond
	tuneSlack = 4 << 20
)

// tunedLimit is the memory limit for used bytes of data, a live heap of
// live bytes of which scan bytes hold pointers, and nonHeap bytes of
// runtime memory outside the heap, capped at hardCap (0 = no cap).
//
// The headroom is an eighth of the data, but at least the scannable heap:
// a collection's cost is the heap it must scan (key maps, small values),
// not the pointer-free payloads (bit arrays, registers), so a headroom of
// the scannable heap keeps the collector's CPU per byte allocated at most
// what GOGC=100 costs, while a heap of large filters still gets an
// eighth. (Measured: with about a million string keys, data/8 alone cost SET 45 % and
// BF.ADD 35 % more server CPU per request than GOGC=100; docs/BENCHMARKS.md.)
func tunedLimit(used, live, scan, nonHeap, hardCap uint64) uint64 {
	data := max(used, live)
	l := data + max(data/8, min(scan, live)) + nonHeap + tuneSlack
	if hardCap > 0 && l > hardCap {
		// Near the cap the collector works harder, but a limit at or
		// below the live heap would have it collect continuously (the
		// runtime then spends up to half the CPU on it) and free
		// nothing: the floor is the live heap, the runtime's own memory
		// and the slack.
		l = max(hardCap, live+nonHeap+tuneSlack)
	}
	return l
}

var memTuner struct {
	mu    sync.Mutex
	users map[*keyspace.Store]int // Run calls per store
	stop  chan struct{}
}

// startMemoryTuner adds store's used_memory to the tuner (starting it if
// it is not running) and returns the function that removes it again;
// the tuner stops, restoring the limit it found, when no store is left.
func startMemoryTuner(store *keyspace.Store) (stop func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	t := &memTuner
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.users == nil {
		t.users = map[*keyspace.Store]int{}
	}
	t.users[store]++
	if t.stop == nil {
		t.stop = make(chan struct{})
		go runMemoryTuner(t.stop, debug.SetMemoryLimit(-1))
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.users[store]--; t.users[store] == 0 {
				delete(t.users, store)
			}
			if len(t.users) == 0 && t.stop != nil {
				close(t.stop)
				t.stop = nil
			}
		})
	}
}

var tuneSamples = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
	{Name: "/gc/scan/heap:bytes"},
}

func runMemoryTuner(stop chan struct{}, prev int64) {
	hardCap := GoMemoryLimit()
	tick := time.NewTicker(tuneEvery)
	defer tick.Stop()
	samples := slices.Clone(tuneSamples)
	for {
		var used uint64
		memTuner.mu.Lock()
		for s := range memTuner.users {
			used += s.Used()
		}
		memTuner.mu.Unlock()
		metrics.Read(samples)
		v := func(i int) uint64 {
			if samples[i].Value.Kind() != metrics.KindUint64 {
				return 0
			}
			return samples[i].Value.Uint64()
		}
		heap := v(2) + v(3) + v(4) + v(5)
		var nonHeap uint64
		if total := v(1); total > heap {
			nonHeap = total - heap
		}
		if l := tunedLimit(used, v(0), v(6), nonHeap, hardCap); l < math.MaxInt64 {
			debug.SetMemoryLimit(int64(l))
		}
		select {
		case <-stop:
			debug.SetMemoryLimit(prev)
			return
		case <-tick.C:
		}
	}
}
