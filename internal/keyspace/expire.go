package keyspace

// Key expiry (Redis's EXPIRE family): a per-shard map from key to its
// absolute expire time in Unix milliseconds, next to the values.
//
// A key is expired once the clock (Store.Now) is past its expire time
// (now > when, as Redis's keyIsExpired). An expired key is never visible:
// View, Keys, Scan, Len and ExpireStats treat it as missing (a read only
// hides it: it holds the shard's read lock); Update deletes it first,
// logging "DEL key" and calling touch like any write, and then runs fn on
// a missing key (lazy expiry). ActiveExpire reclaims expired keys nobody
// accesses, in the background (active expiry, Redis's
// activeExpireCycle).
//
// While recovery replays the log (SetLoading(true)) nothing expires, as in
// Redis during loading: a record is replayed against the state it was
// logged against, and the key that expired afterwards was deleted by a DEL
// record later in the log.
//
// Memory: each expire time adds expireEntryCost plus the key's length to
// Used (and MemoryUsage), the cost of its map entry and its own copy of
// the key.

import (
	"maps"
	"sync"
	"time"
)

// expireEntryCost is what one expire-map entry adds to Used beyond the
// key bytes: the string header (16) and the int64 (8) of the slot, plus
// the map's control byte and load-factor slack, rounded up.
const expireEntryCost = 32

var delRecord = []byte("DEL")

// ExpireUsage is what an expire time on key adds to Store.Used (and
// MemoryUsage): expireEntryCost plus the key's length.
func ExpireUsage(key []byte) uint64 { return expireEntryCost + uint64(len(key)) }

// expireUsage is what key's expire time adds to Used (0 without one). The
// caller holds sh.mu.
func (sh *shard) expireUsage(key string) uint64 {
	if len(sh.exp) == 0 {
		return 0
	}
	if _, ok := sh.exp[key]; ok {
		return expireEntryCost + uint64(len(key))
	}
	return 0
}

// Now returns the store's clock in Unix milliseconds (the wall clock
// unless SetClock replaced it).
func (s *Store) Now() int64 {
	if s.clock != nil {
		return s.clock()
	}
	return time.Now().UnixMilli()
}

// SetClock replaces the clock Now reads (tests; nil restores the wall
// clock). It must be called before the store is shared.
func (s *Store) SetClock(now func() int64) { s.clock = now }

// SetLoading switches expiry off (true) or on: while loading, no key
// expires (neither lazily nor actively) and every key is visible, as in
// Redis while it loads its AOF. Recovery sets it around the replay. Safe
// for concurrent use.
func (s *Store) SetLoading(on bool) { s.loading.Store(on) }

// expired reports whether key has an expire time that now is past. The
// caller holds sh.mu (read or write). It costs one length check for a
// shard without expire times.
func (s *Store) expired(sh *shard, key string, now int64) bool {
	if len(sh.exp) == 0 {
		return false
	}
	t, ok := sh.exp[key]
	return ok && now > t && !s.loading.Load()
}

// expiredNow is expired at the store's clock, which it reads only when
// the shard has expire times (no clock read on the hot path of a store
// without any).
func (s *Store) expiredNow(sh *shard, key string) bool {
	return len(sh.exp) != 0 && s.expired(sh, key, s.Now())
}

// expireLocked deletes key, which has expired, logging "DEL key". The
// caller holds sh.mu for writing. If the log refuses the record the key
// stays (still invisible: it has expired) and the error is returned, so
// that memory and log stay in agreement. It returns the record's sequence
// number.
func (s *Store) expireLocked(sh *shard, key string) (uint64, error) {
	var seq uint64
	if s.log != nil {
		var err error
		if seq, err = s.log.Append([][]byte{delRecord, []byte(key)}); err != nil {
			return 0, err
		}
	}
	if sh.cow != nil { // keep the value at the cut (no clone: it goes)
		if _, saved := sh.cow[key]; !saved {
			sh.cow[key] = sh.m[key]
			sh.cowExp[key] = sh.exp[key]
		}
	}
	s.addUsed(entryUsage([]byte(key), sh.m[key])+sh.expireUsage(key), 0)
	delete(sh.m, key)
	delete(sh.exp, key)
	sh.touch(key)
	s.expiredKeys.Add(1)
	return seq, nil
}

// ExpiredKeys returns how many keys expired (lazily or actively) since
// the store was created (INFO stats expired_keys).
func (s *Store) ExpiredKeys() uint64 { return s.expiredKeys.Load() }

// Expire returns the key's expire time in Unix milliseconds, 0 if it has
// none (or is missing).
func (t *Txn) Expire() int64 {
	if t.Value == nil {
		return 0
	}
	return t.sh.expireOf(string(t.Key))
}

// SetExpire sets the key's expire time to ms (Unix milliseconds); ms ≤ 0
// removes it (PERSIST). It does nothing on a missing key. The caller logs
// the change (Log) as for any write. The expire time stays through Set
// (an in-place change that replaces the value object keeps it, as BF.ADD
// growing a chain must); a command that replaces the value as Redis's SET
// does clears it with SetExpire(0). Delete clears it.
func (t *Txn) SetExpire(ms int64) {
	if t.Value == nil {
		return
	}
	t.sh.setExpire(string(t.Key), ms)
	t.set = true
}

// expireOf returns key's expire time, 0 if none. The caller holds sh.mu.
// (For code inside the package that moves keys between shards, e.g. a
// rename: read it here, clear it with setExpire(k, 0) on the source and
// set it on the destination, and count expireUsage before and after in
// Used; check expired/expireLocked first so an expired key is not moved.)
func (sh *shard) expireOf(key string) int64 {
	if len(sh.exp) == 0 {
		return 0
	}
	return sh.exp[key]
}

// setExpire sets key's expire time to ms, or removes it for ms ≤ 0. The
// caller holds sh.mu for writing, keeps Used in step (expireUsage) and
// never sets a time on a key the shard does not hold.
func (sh *shard) setExpire(key string, ms int64) {
	if ms <= 0 {
		if len(sh.exp) != 0 {
			delete(sh.exp, key)
		}
		return
	}
	if sh.exp == nil {
		sh.exp = make(map[string]int64)
	}
	sh.exp[key] = ms
	sh.expPeak = max(sh.expPeak, len(sh.exp))
}

// compactExpire replaces a shard's expire map that has shrunk to under a
// quarter of its peak by a copy: Go maps never shrink, and the active
// cycle's samples (a map iteration from a random slot) would otherwise
// scan ever more empty slots to find live entries. The caller holds sh.mu
// for writing.
func (sh *shard) compactExpire() {
	if sh.expPeak >= 256 && len(sh.exp)*4 < sh.expPeak {
		m := make(map[string]int64, len(sh.exp)) // sized to what is left
		maps.Copy(m, sh.exp)
		sh.exp, sh.expPeak = m, len(m)
	}
}

// Now is the store's clock (Store.Now), for fn's expiry arithmetic.
func (t *Txn) Now() int64 { return t.store.Now() }

// ExpireOf returns key's expire time in Unix milliseconds (0 if it has
// none) and whether the key exists (an expired key does not).
func (s *Store) ExpireOf(key []byte) (ms int64, ok bool) {
	sh := s.shardOf(key)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	k := string(key)
	if sh.m[k] == nil || s.expiredNow(sh, k) {
		return 0, false
	}
	return sh.exp[k], true
}

// ExpireStats returns the number of live keys with an expire time and
// their average remaining time to live in milliseconds (INFO keyspace's
// expires= and avg_ttl=). Cost: O(keys with an expire time), one shard
// read lock at a time.
func (s *Store) ExpireStats() (expires int, avgTTL int64) {
	now := s.Now()
	var sum float64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		for k, t := range sh.exp {
			if !s.expired(sh, k, now) {
				expires++
				sum += float64(t - now)
			}
		}
		sh.mu.RUnlock()
	}
	if expires > 0 {
		avgTTL = int64(sum / float64(expires))
	}
	return expires, avgTTL
}

// expiredIn counts the shard's keys that have expired but are still
// stored. The caller holds sh.mu.
func (s *Store) expiredIn(sh *shard, now int64) int {
	if len(sh.exp) == 0 || s.loading.Load() {
		return 0
	}
	n := 0
	for _, t := range sh.exp {
		if now > t {
			n++
		}
	}
	return n
}

// Active expiry parameters (Redis's ACTIVE_EXPIRE_CYCLE_* at effort 1).
const (
	activeExpireSample   = 20                     // keys sampled per round
	activeExpireRounds   = 16                     // rounds per lock hold at most
	activeExpireInterval = 100 * time.Millisecond // one cycle per interval (hz 10)
	activeExpireBudget   = 25 * time.Millisecond  // CPU time per cycle at most (25 %)
)

// ExpireCycle runs one active-expiry cycle: for each shard, starting where
// the last cycle stopped, it samples up to 20 keys that have an expire time
// and deletes the expired ones, and samples again while more than a quarter
// of a sample had expired; it stops when every shard is done or budget has
// elapsed. Each batch (at most 16 samples) holds the command gate shared
// (Store.Shared) and the shard's write lock. Deletions are logged and
// touched as in lazy expiry. It returns the number of keys deleted.
func (s *Store) ExpireCycle(budget time.Duration) int {
	if s.loading.Load() {
		return 0
	}
	start := time.Now()
	deleted := 0
	for n := 0; n < numShards; n++ {
		i := (s.expireCursor.Add(1) - 1) % numShards
		sh := &s.shards[i]
		for {
			d, more := s.expireBatch(sh)
			deleted += d
			if time.Since(start) >= budget {
				return deleted
			}
			if !more {
				break
			}
		}
	}
	return deleted
}

// expireBatch runs up to activeExpireRounds sampling rounds on sh under
// the gate and sh's write lock; more reports that the last round still
// found more than a quarter of its sample expired.
func (s *Store) expireBatch(sh *shard) (deleted int, more bool) {
	sh.mu.RLock()
	none := len(sh.exp) == 0
	sh.mu.RUnlock()
	if none {
		return 0, false
	}
	s.Shared()
	defer s.SharedDone()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := s.Now()
	var victims [activeExpireSample]string
	for round := 0; round < activeExpireRounds; round++ {
		sampled, n := 0, 0
		for k, t := range sh.exp { // Go's map iteration starts at a random slot
			if now > t {
				victims[n] = k
				n++
			}
			if sampled++; sampled == activeExpireSample {
				break
			}
		}
		for _, k := range victims[:n] {
			if _, err := s.expireLocked(sh, k); err != nil {
				return deleted, false // the log refuses writes: try again next cycle
			}
			deleted++
		}
		clear(victims[:n])
		if sampled == 0 || n*4 <= sampled {
			sh.compactExpire()
			return deleted, false
		}
	}
	sh.compactExpire()
	return deleted, true
}

// flusher is implemented by a Logger that buffers records until a caller
// waits for them (persist.DB with BufferAppends): the active cycle, which
// has no client to wait for, flushes its DEL records itself.
type flusher interface{ Flush() error }

// flushLog writes the logger's buffered records, if it buffers any. A
// write error is the logger's to report (it refuses later writes).
func (s *Store) flushLog() {
	if f, ok := s.log.(flusher); ok {
		_ = f.Flush()
	}
}

// StartActiveExpire runs ExpireCycle every 100 ms with a 25 ms budget
// (Redis's default hz 10 and effort) in a new goroutine, flushing the
// logger after a cycle that deleted keys (see flusher), until stop is
// called; stop waits for a running cycle to end and may be called more
// than once. It is what makes memory fall back when expired keys are never
// accessed again.
func (s *Store) StartActiveExpire() (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(activeExpireInterval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if s.ExpireCycle(activeExpireBudget) > 0 {
					s.flushLog()
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}
