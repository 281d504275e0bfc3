package keyspace

import "sync/atomic"

// Watch registry (WATCH/EXEC): a connection's Watcher is registered under
// every key it watches, in the key's shard, and is flagged dirty by touch
// (any change of the key, under the shard's write lock) or touchAll
// (FLUSHALL/FLUSHDB). Because registration and flagging both happen under
// the shard's write lock, a change that completes after Watch returned is
// always seen; one that completed before is not.
//
// Cost: touch is one map-length test when no key of the shard is watched,
// and one map lookup otherwise. A watched key costs one map entry in its
// shard plus one in its Watcher.

// Watcher is one connection's set of watched keys. Its zero value is
// ready to use. A Watcher is used by one goroutine at a time (its
// connection's); Dirty may be read concurrently with the writes that set
// it.
type Watcher struct {
	dirty atomic.Bool
	// keys maps each watched key to whether it had already expired (but
	// was not deleted yet) when it was watched.
	keys map[string]bool
}

// Dirty reports whether a watched key changed since it was watched.
func (w *Watcher) Dirty() bool { return w.dirty.Load() }

// Watching reports whether w watches any key.
func (w *Watcher) Watching() bool { return len(w.keys) > 0 }

// Keys returns the number of keys w watches.
func (w *Watcher) Keys() int { return len(w.keys) }

// Watch registers w under key: a later change of key flags w dirty.
// Watching a key twice is the same as once. Cost: O(1) under the key's
// shard write lock.
func (s *Store) Watch(w *Watcher, key []byte) {
	if _, ok := w.keys[string(key)]; ok {
		return
	}
	k := string(key)
	if w.keys == nil {
		w.keys = make(map[string]bool)
	}
	sh := s.shardOf(key)
	sh.mu.Lock()
	w.keys[k] = s.expiredNow(sh, k)
	if sh.watch == nil {
		sh.watch = make(map[string][]*Watcher)
	}
	sh.watch[k] = append(sh.watch[k], w)
	sh.mu.Unlock()
}

// Unwatch unregisters w from every key it watches and clears its dirty
// flag (UNWATCH, EXEC, DISCARD, a closing connection). Cost: O(keys
// watched), each under its shard's write lock.
func (s *Store) Unwatch(w *Watcher) {
	for k := range w.keys {
		sh := s.shardOf([]byte(k))
		sh.mu.Lock()
		ws := sh.watch[k]
		for i, x := range ws {
			if x == w {
				ws[i] = ws[len(ws)-1]
				ws[len(ws)-1] = nil
				ws = ws[:len(ws)-1]
				break
			}
		}
		if len(ws) == 0 {
			delete(sh.watch, k)
		} else {
			sh.watch[k] = ws
		}
		sh.mu.Unlock()
	}
	w.keys = nil
	w.dirty.Store(false)
}

// WatchedExpired reports whether a key w watches has expired since it was
// watched (its value is still there, waiting for deletion: Redis's
// isWatchedKeyExpired). EXEC treats that key as changed. Cost: one read
// lock and expiry lookup per watched key; nothing without expiry.
func (s *Store) WatchedExpired(w *Watcher) bool {
	for k, before := range w.keys {
		if before {
			continue
		}
		sh := s.shardOf([]byte(k))
		sh.mu.RLock()
		exp := s.expiredNow(sh, k)
		sh.mu.RUnlock()
		if exp {
			return true
		}
	}
	return false
}

// Watched returns the number of keys watched by at least one Watcher
// (for tests and INFO), locking one shard at a time.
func (s *Store) Watched() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		n += len(sh.watch)
		sh.mu.RUnlock()
	}
	return n
}

// flagAll flags dirty every watcher of key. The caller holds the shard's
// write lock.
func (sh *shard) flagAll(key string) {
	for _, w := range sh.watch[key] {
		w.dirty.Store(true)
	}
}
