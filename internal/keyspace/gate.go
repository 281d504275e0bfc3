package keyspace

import (
	"sync"
	"unsafe"
)

// Command gate and change notification: the two points where transactions
// (MULTI/EXEC, WATCH) meet the key space.
//
// Every command execution holds the gate shared for its whole run (all the
// Updates and Views it makes); EXEC holds it exclusively, so no other
// command, on any key and from any path (clients, the follower, active
// expiry), interleaves with a transaction. Recovery, which runs before the
// store is shared, needs no gate.

// The gate is a distributed reader-writer lock: gateSlots RWMutexes,
// each on its own cache lines. A command takes one slot shared (its
// connection's, so that connections on different cores touch different
// cache lines: one RWMutex's reader count, written by every command of
// every connection, would be a line bouncing between all cores); EXEC
// takes every slot exclusively, in slot order (so two EXECs cannot
// deadlock). Cost: shared, one uncontended RLock/RUnlock; exclusive,
// gateSlots Locks.
const gateSlots = 32

// gateSlot is one slot of the gate, padded to two cache lines (the
// adjacent-line prefetcher pairs lines).
type gateSlot struct {
	mu sync.RWMutex
	_  [128 - unsafe.Sizeof(sync.RWMutex{})]byte
}

// GateSlot names one slot of the command gate (SharedSlot).
type GateSlot uint32

// SharedSlot returns the gate slot for a caller identified by hint (a
// connection id): callers with different hints mostly use different
// slots.
func (s *Store) SharedSlot(hint uint64) GateSlot { return GateSlot(hint % gateSlots) }

// SharedAt takes the command gate shared through slot. Every call must be
// paired with SharedDoneAt(slot). It must not be called again by a
// goroutine that already holds the gate (a waiting Exclusive would
// deadlock the two).
func (s *Store) SharedAt(slot GateSlot) { s.cmd[slot%gateSlots].mu.RLock() }

// SharedDoneAt releases what SharedAt(slot) took.
func (s *Store) SharedDoneAt(slot GateSlot) { s.cmd[slot%gateSlots].mu.RUnlock() }

// Shared takes the command gate shared through slot 0, for the rare
// callers that are not connections (snapshots, active expiry, the
// follower). Every call must be paired with SharedDone; the rule of
// SharedAt applies.
func (s *Store) Shared() { s.SharedAt(0) }

// SharedDone releases what Shared took.
func (s *Store) SharedDone() { s.SharedDoneAt(0) }

// Exclusive takes the command gate exclusively: it waits for every running
// command to finish and keeps new ones out until ExclusiveDone.
func (s *Store) Exclusive() {
	for i := range s.cmd {
		s.cmd[i].mu.Lock()
	}
}

// ExclusiveDone releases what Exclusive took.
func (s *Store) ExclusiveDone() {
	for i := len(s.cmd) - 1; i >= 0; i-- {
		s.cmd[i].mu.Unlock()
	}
}

// touch is called with key's shard write lock held whenever a write may
// have changed key (set, deleted, expired, renamed away or onto): WATCH
// hooks in here. Code that changes keys outside Update and Flush (for
// example a multi-shard rename) must call it for every key it changes.
func (sh *shard) touch(key string) {
	if len(sh.watch) != 0 {
		sh.flagAll(key)
	}
}

// touchAll is called with every shard write lock held when every key may
// have changed (FLUSHALL, FLUSHDB). As in Redis, it flags the watchers of
// the keys that exist (a flush does not change a key that was missing).
func (s *Store) touchAll() {
	for i := range s.shards {
		sh := &s.shards[i]
		for k := range sh.watch {
			if _, ok := sh.m[k]; ok {
				sh.flagAll(k)
			}
		}
	}
}
