package keyspace

// Command gate and change notification: the two points where transactions
// (MULTI/EXEC, WATCH) meet the key space.
//
// Every command execution holds the gate shared for its whole run (all the
// Updates and Views it makes); EXEC holds it exclusively, so no other
// command, on any key and from any path (clients, the follower, active
// expiry), interleaves with a transaction. Recovery, which runs before the
// store is shared, needs no gate.

// Shared takes the command gate shared. Every call must be paired with
// SharedDone. Shared must not be called again by a goroutine that already
// holds it (a waiting Exclusive would deadlock the two).
func (s *Store) Shared() { s.cmd.RLock() }

// SharedDone releases what Shared took.
func (s *Store) SharedDone() { s.cmd.RUnlock() }

// Exclusive takes the command gate exclusively: it waits for every running
// command to finish and keeps new ones out until ExclusiveDone.
func (s *Store) Exclusive() { s.cmd.Lock() }

// ExclusiveDone releases what Exclusive took.
func (s *Store) ExclusiveDone() { s.cmd.Unlock() }

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
