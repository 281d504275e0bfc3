// Package keyspace maps keys to typed values (Bloom chains, cuckoo filters,
// strings) for the server.
//
// Concurrency: the key space is split into shards, each with its own
// RWMutex, so commands on independent keys run in parallel on all cores.
// Every operation on one key runs under its shard's lock, which makes
// per-key work linearizable. Multi-key commands take one key at a time.
//
// Persistence: mutations are logged through a Logger while the shard lock
// is held, so the log order of records for one key is the order in which
// they were applied. Freeze takes every shard lock at once to obtain a
// consistent cut for snapshots. FreezeCOW obtains the same cut without
// copying anything under the locks: until the snapshot releases it, the
// first write to each key clones that key's value (copy-on-write), so the
// snapshot keeps reading the values as they were at the cut.
//
// Expiry (expire.go): a key may have an absolute expire time; an expired
// key is invisible to every read and is deleted (and logged as DEL) by the
// next Update of it or by the active-expiry cycle.
//
// Memory accounting: Used is the exact live total that MemoryUsage would
// compute by walking every key (Σ key length + value MemoryUsage over the
// stored keys, plus 32 + key length per expire time), kept as one atomic
// counter. Update adds the difference
// between the key's entry before and after its fn (so in-place growth,
// creation, deletion and a copy-on-write clone are all counted); Flush and
// FlushLog reset it. This requires that values change only inside Update
// and that MemoryUsage is cheap: it is called twice per Update. Values
// kept only for a FreezeCOW cut are not counted (MemoryUsage does not see
// them either).
package keyspace

import (
	"hash/maphash"
	"sort"
	"sync"
	"sync/atomic"
)

// Value is a typed value stored under a key.
type Value interface {
	// TypeName is the reply of TYPE, e.g. "MBbloom--" or "string".
	TypeName() string
	// MemoryUsage is the approximate heap size in bytes.
	MemoryUsage() uint64
	// Clone returns a deep copy that shares no mutable state.
	Clone() Value
}

// Logger receives mutation records in apply order. Append is called with
// the key's shard lock held and must not block on I/O for long; it returns
// a sequence number that the caller can later wait on for durability.
//
// Append must not retain args, neither the slice nor the byte slices it
// holds, after it returns: the slice is the store's scratch space, reused
// by the next record, and the bytes usually alias the client's input
// buffer. A Logger that keeps a record copies it.
type Logger interface {
	Append(args [][]byte) (seq uint64, err error)
}

const numShards = 256

type shard struct {
	mu sync.RWMutex
	m  map[string]Value
	// cow is not nil while a FreezeCOW cut is held: for every key written
	// since the cut it holds the key's value at the cut (nil = absent).
	cow map[string]Value
	// tx is the transaction Update hands to its fn. The write lock makes
	// it exclusive, so it is reused rather than allocated by every Update
	// (a *Txn passed to an unknown fn would otherwise escape to the heap).
	tx Txn
	// watch maps a watched key to its watchers (watch.go).
	watch map[string][]*Watcher
	// exp maps the keys that have an expire time to it, in Unix ms
	// (expire.go); nil until the shard's first one. cowExp is cow's
	// counterpart: the expire times at the cut of the keys cow holds.
	exp    map[string]int64
	cowExp map[string]int64
	// expPeak is len(exp)'s highest value since exp was last rebuilt
	// (compactExpire).
	expPeak int
}

// Store is a sharded, concurrency-safe key space. The zero value is not
// usable; call New.
type Store struct {
	seed   maphash.Seed // in-memory sharding only; never persisted
	shards [numShards]shard
	log    Logger
	gate   func() error // the logger's WriteGate, if it has one
	// used is Σ len(key) + MemoryUsage over the live keys (see Used). It
	// is written by every growing or shrinking Update, so it sits on a
	// cache line of its own, away from the read-mostly fields above.
	_    [64]byte
	used atomic.Uint64
	_    [56]byte
	// cmd is the command gate (gate.go).
	cmd [gateSlots]gateSlot
	// Expiry (expire.go): the clock (nil: the wall clock), whether
	// recovery is loading (nothing expires), the count of expired keys
	// and the active-expiry cycle's next shard.
	clock        func() int64
	loading      atomic.Bool
	expiredKeys  atomic.Uint64
	expireCursor atomic.Uint32
}

// WriteGater is implemented by a Logger that can refuse writes as a whole,
// for example after a failed append left memory ahead of the log. When
// the logger implements it, Update calls WriteGate first and, if it
// returns an error, returns that error without running fn: no change is
// made and nothing is acknowledged, including changes that would not have
// logged anything (a BF.ADD whose item is already in memory only because
// an earlier, failed command put it there).
type WriteGater interface {
	WriteGate() error
}

// New returns an empty Store. A nil logger disables logging.
func New(log Logger) *Store {
	s := &Store{seed: maphash.MakeSeed()}
	for i := range s.shards {
		s.shards[i].m = make(map[string]Value)
	}
	s.SetLogger(log)
	return s
}

// SetLogger replaces the logger. It must be called before the store is
// shared between goroutines (for example after recovery has replayed the
// log with logging disabled).
func (s *Store) SetLogger(l Logger) {
	s.log, s.gate = l, nil
	if g, ok := l.(WriteGater); ok && l != nil {
		s.gate = g.WriteGate
	}
}

func (s *Store) shardOf(key []byte) *shard {
	return &s.shards[maphash.Bytes(s.seed, key)%numShards]
}

// View runs fn with the current value of key (nil if missing) under the
// shard's read lock. fn must not retain v after returning and must not
// mutate it.
func (s *Store) View(key []byte, fn func(v Value)) {
	sh := s.shardOf(key)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if s.expiredNow(sh, string(key)) {
		fn(nil)
		return
	}
	fn(sh.m[string(key)])
}

// Txn is a write transaction on one key, valid only inside Update's fn:
// fn must not retain it (the store reuses it for the next Update on the
// same shard).
type Txn struct {
	Key   []byte
	Value Value // current value, nil if the key is missing
	sh    *shard
	store *Store
	seq   uint64
	err   error
	// set is true once Set or Delete has run: only then may the key's map
	// entry differ from the value Update found.
	set bool
	// logged is true once Log has run: fn changed the value (in place or
	// not), so watchers are told even when the key's entry stayed.
	logged bool
	// rec is Log's scratch copy of a record's argument vector (so the
	// caller's variadic slice does not escape).
	rec [][]byte
}

// Set stores v under the key.
func (t *Txn) Set(v Value) {
	t.sh.m[string(t.Key)] = v
	t.Value = v
	t.set = true
}

// Delete removes the key.
func (t *Txn) Delete() {
	delete(t.sh.m, string(t.Key))
	if len(t.sh.exp) != 0 {
		delete(t.sh.exp, string(t.Key))
	}
	t.Value = nil
	t.set = true
}

// maxRecScratch bounds the argument vector Log's scratch space keeps
// between records; a longer record's copy is dropped after use.
const maxRecScratch = 64

// Log appends one mutation record (a command in canonical form that,
// replayed against the state before this transaction, reproduces the
// change). It returns the logger's error, if any. args is copied into
// scratch space before it is handed to the Logger, so a call with a short
// literal argument list does not allocate.
func (t *Txn) Log(args ...[]byte) error {
	t.logged = true
	if t.store.log == nil {
		return nil
	}
	t.rec = append(t.rec[:0], args...)
	seq, err := t.store.log.Append(t.rec)
	if cap(t.rec) > maxRecScratch {
		t.rec = nil
	} else {
		clear(t.rec) // keep no reference to the caller's bytes
	}
	if err != nil {
		t.err = err
		return err
	}
	if seq > t.seq {
		t.seq = seq
	}
	return nil
}

// Update runs fn under the key's write lock. It returns the highest log
// sequence number written by fn (0 if none) and the first logging error.
// If the logger's WriteGate (see WriteGater) refuses, fn does not run and
// its error is returned. While a FreezeCOW cut is held, the key's value is
// cloned before fn sees it, once per key. fn must not retain the *Txn.
// An expired key is deleted (and logged) before fn runs; see expire.go.
// Update does not allocate (beyond what fn does, a lazy expiry's record,
// and the key string when fn creates the key).
func (s *Store) Update(key []byte, fn func(tx *Txn)) (seq uint64, err error) {
	if s.gate != nil {
		if err := s.gate(); err != nil {
			return 0, err
		}
	}
	sh := s.shardOf(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	// An expired key is deleted first (lazy expiry), logged as DEL; if the
	// log refuses the DEL, fn does not run.
	var expSeq uint64
	if s.expiredNow(sh, string(key)) {
		var err error
		if expSeq, err = s.expireLocked(sh, string(key)); err != nil {
			return 0, err
		}
	}
	// Account for the key's entry as fn leaves it (measured before the
	// copy-on-write clone, which may differ in size), even if fn panics.
	v := sh.m[string(key)]
	before := entryUsage(key, v) + sh.expireUsage(string(key))
	if sh.cow != nil {
		sh.preserve(key)
		v = sh.m[string(key)]
	}
	tx := &sh.tx
	*tx = Txn{Key: key, Value: v, sh: sh, store: s, rec: tx.rec, seq: expSeq}
	defer func() {
		if tx.set {
			v = sh.m[string(key)]
		}
		if tx.set || tx.logged {
			sh.touch(string(key))
		}
		s.addUsed(before, entryUsage(key, v)+sh.expireUsage(string(key)))
		// Drop the references to this call's key and value.
		tx.Key, tx.Value, tx.err = nil, nil, nil
	}()
	fn(tx)
	return tx.seq, tx.err
}

// preserve saves key's value at the cut before its first change since
// the cut, and replaces the live value by a clone that the caller may
// mutate. The caller holds sh.mu.
func (sh *shard) preserve(key []byte) {
	if _, saved := sh.cow[string(key)]; saved {
		return
	}
	k := string(key)
	old := sh.m[k]
	sh.cow[k] = old
	if t, ok := sh.exp[k]; ok && old != nil {
		sh.cowExp[k] = t
	}
	if old != nil {
		sh.m[k] = old.Clone()
	}
}

// preserveAll saves every value of the shard that is not saved yet (before
// the whole shard is dropped). The caller holds sh.mu.
func (sh *shard) preserveAll() {
	for k, v := range sh.m {
		if _, saved := sh.cow[k]; !saved {
			sh.cow[k] = v
			if t, ok := sh.exp[k]; ok {
				sh.cowExp[k] = t
			}
		}
	}
}

// Len returns the number of keys (expired keys not yet deleted do not
// count). Cost: O(shards + keys with an expire time).
func (s *Store) Len() int {
	n := 0
	now := s.Now()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		n += len(sh.m) - s.expiredIn(sh, now)
		sh.mu.RUnlock()
	}
	return n
}

// Keys returns the keys matching the glob pattern (Redis KEYS syntax, see
// Match), sorted.
func (s *Store) Keys(pattern string) []string {
	var out []string
	now := s.Now()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		for k := range sh.m {
			if Match(pattern, k) && !s.expired(sh, k, now) {
				out = append(out, k)
			}
		}
		sh.mu.RUnlock()
	}
	sort.Strings(out)
	return out
}

// Scan returns the keys of whole shards starting at cursor until at least
// count keys are collected, and the next cursor (0 when complete). A key
// present for the whole scan is returned at least once.
func (s *Store) Scan(cursor uint64, pattern, typeName string, count int) (next uint64, keys []string) {
	if count <= 0 {
		count = 10
	}
	i := cursor
	now := s.Now()
	for ; i < numShards && len(keys) < count; i++ {
		sh := &s.shards[i]
		sh.mu.RLock()
		for k, v := range sh.m {
			if pattern != "" && !Match(pattern, k) {
				continue
			}
			if s.expired(sh, k, now) {
				continue
			}
			if typeName != "" && v.TypeName() != typeName {
				continue
			}
			keys = append(keys, k)
		}
		sh.mu.RUnlock()
	}
	if i >= numShards {
		return 0, keys
	}
	return i, keys
}

// Entry is a key, its value and its expire time.
type Entry struct {
	Key   string
	Value Value
	// Expire is the key's expire time in Unix milliseconds, 0 if none.
	Expire int64
}

// Freeze takes every shard's write lock, runs fn (for example to rotate the
// log at this exact cut), clones every value and releases the locks. The
// returned entries are a consistent snapshot owned by the caller.
func (s *Store) Freeze(fn func() error) ([]Entry, error) {
	for i := range s.shards {
		s.shards[i].mu.Lock()
	}
	defer func() {
		for i := range s.shards {
			s.shards[i].mu.Unlock()
		}
	}()
	if fn != nil {
		if err := fn(); err != nil {
			return nil, err
		}
	}
	var out []Entry
	for i := range s.shards {
		for k, v := range s.shards[i].m {
			out = append(out, Entry{Key: k, Value: v.Clone(), Expire: s.shards[i].exp[k]})
		}
	}
	return out, nil
}

// Frozen is a consistent cut of a Store taken by FreezeCOW. Its entries
// are the values at the cut, shared with the store rather than copied:
// until a shard is released, every write to it clones a key's value
// before changing it.
//
// A Frozen is used by one goroutine (the snapshot writer); the store
// stays safe for concurrent use meanwhile.
type Frozen struct {
	s        *Store
	n        int             // keys at the cut
	done     [numShards]bool // shard released (ReleaseShard or Release)
	released bool            // Release ran
}

// FreezeCOW takes every shard's write lock, runs fn (for example to rotate
// the log at this exact cut), switches every shard to copy-on-write and
// releases the locks. Unlike Freeze it copies nothing while the locks are
// held, so the stall is fn plus a few microseconds; the cost moves to the
// first write of each key until its shard is released (one Clone of that
// value, under that key's shard lock only). Only one cut may be held at a
// time. If fn fails, nothing changes and its error is returned.
func (s *Store) FreezeCOW(fn func() error) (*Frozen, error) {
	for i := range s.shards {
		s.shards[i].mu.Lock()
	}
	defer func() {
		for i := range s.shards {
			s.shards[i].mu.Unlock()
		}
	}()
	for i := range s.shards {
		if s.shards[i].cow != nil {
			panic("keyspace: FreezeCOW while another cut is held")
		}
	}
	if fn != nil {
		if err := fn(); err != nil {
			return nil, err
		}
	}
	f := &Frozen{s: s}
	for i := range s.shards {
		s.shards[i].cow = make(map[string]Value)
		s.shards[i].cowExp = make(map[string]int64)
		f.n += len(s.shards[i].m)
	}
	return f, nil
}

// Len returns the number of keys at the cut (expired ones included: their
// entries carry the expire time).
func (f *Frozen) Len() int { return f.n }

// Shards returns the number of parts the cut is listed in: AppendShard
// takes a part's index, 0 ≤ i < Shards().
func (f *Frozen) Shards() int { return numShards }

// AppendShard appends part i's keys and values at the cut to dst, in no
// particular order, and returns the extended slice. It read-locks that
// shard only while listing it (about 20 ns per key). The values must be
// treated as read-only and must not be used after ReleaseShard(i) or
// Release. It panics if part i was released.
func (f *Frozen) AppendShard(dst []Entry, i int) []Entry {
	sh := &f.s.shards[i]
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if f.done[i] || sh.cow == nil {
		panic("keyspace: Frozen.AppendShard after release")
	}
	for k, v := range sh.m {
		if _, saved := sh.cow[k]; !saved {
			dst = append(dst, Entry{Key: k, Value: v, Expire: sh.exp[k]})
		}
	}
	for k, v := range sh.cow {
		if v != nil {
			dst = append(dst, Entry{Key: k, Value: v, Expire: sh.cowExp[k]})
		}
	}
	return dst
}

// ReleaseShard ends copy-on-write for part i: writes to its keys change
// values in place again, and the values AppendShard listed from it must
// no longer be used. A snapshot writer releases each part once it has
// encoded it, so that the clones made by writes stop early and the
// values kept for the cut are freed part by part. It is idempotent.
func (f *Frozen) ReleaseShard(i int) {
	if f.done[i] {
		return
	}
	f.done[i] = true
	sh := &f.s.shards[i]
	sh.mu.Lock()
	sh.cow, sh.cowExp = nil, nil
	sh.mu.Unlock()
}

// Entries returns every key and its value at the cut, in no particular
// order, locking one shard at a time just long enough to list it. The
// values must be treated as read-only and must not be used after Release.
// It panics after Release or ReleaseShard.
func (f *Frozen) Entries() []Entry {
	if f.released {
		panic("keyspace: Frozen.Entries after Release")
	}
	out := make([]Entry, 0, f.n)
	for i := range f.s.shards {
		out = f.AppendShard(out, i)
	}
	return out
}

// Release ends copy-on-write for every part not yet released; the cut's
// values may be changed again. It is idempotent.
func (f *Frozen) Release() {
	if f.released {
		return
	}
	f.released = true
	for i := range f.s.shards {
		f.ReleaseShard(i)
	}
}

// Flush removes every key. fn, if not nil, runs with all shard locks held
// (used to log the flush at a consistent cut).
func (s *Store) Flush(fn func()) {
	for i := range s.shards {
		s.shards[i].mu.Lock()
	}
	if fn != nil {
		fn()
	}
	s.touchAll()
	s.used.Store(0) // before the first shard is unlocked
	for i := range s.shards {
		if s.shards[i].cow != nil {
			s.shards[i].preserveAll()
		}
		s.shards[i].m = make(map[string]Value)
		s.shards[i].exp, s.shards[i].expPeak = nil, 0
		s.shards[i].mu.Unlock()
	}
}

// FlushLog logs one record (for example FLUSHALL) and removes every key,
// both under all shard locks, so the record sits at a consistent cut of the
// log. If logging fails nothing is removed and the error is returned, so
// memory and log stay in agreement. It returns the record's sequence number
// (0 without a logger).
func (s *Store) FlushLog(args ...[]byte) (seq uint64, err error) {
	for i := range s.shards {
		s.shards[i].mu.Lock()
	}
	defer func() {
		for i := range s.shards {
			s.shards[i].mu.Unlock()
		}
	}()
	if s.log != nil {
		if seq, err = s.log.Append(args); err != nil {
			return 0, err
		}
	}
	s.touchAll()
	for i := range s.shards {
		if s.shards[i].cow != nil {
			s.shards[i].preserveAll()
		}
		s.shards[i].m = make(map[string]Value)
		s.shards[i].exp, s.shards[i].expPeak = nil, 0
	}
	s.used.Store(0)
	return seq, nil
}

// entryUsage is what one key contributes to Used: its length plus its
// value's MemoryUsage, 0 if v is nil.
func entryUsage(key []byte, v Value) uint64 {
	if v == nil {
		return 0
	}
	return uint64(len(key)) + v.MemoryUsage()
}

// addUsed moves the counter from an entry's old contribution to its new
// one (modular arithmetic: a shrink wraps to a subtraction).
func (s *Store) addUsed(before, after uint64) {
	if after != before {
		s.used.Add(after - before)
	}
}

// Used returns Σ key length + value MemoryUsage over the stored keys (plus
// each expire time's cost, see expire.go), the
// total MemoryUsage computes, in O(1): it is maintained by every Update,
// Flush and FlushLog. A change is visible once its Update has returned.
func (s *Store) Used() uint64 { return s.used.Load() }

// MemoryUsage sums the values' MemoryUsage and the key lengths by walking
// every key (each shard under its read lock): O(keys). Used returns the
// same total in O(1); this walk is kept to verify it.
func (s *Store) MemoryUsage() uint64 {
	var n uint64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		for k, v := range sh.m {
			n += uint64(len(k)) + v.MemoryUsage() + sh.expireUsage(k)
		}
		sh.mu.RUnlock()
	}
	return n
}

// Match reports whether name matches the glob pattern with the semantics of
// Redis's stringmatchlen (KEYS, SCAN MATCH, CONFIG GET):
//
//   - '*' matches any run of bytes, including '/' and the empty run;
//   - '?' matches exactly one byte;
//   - '[abc]', '[a-z]' (reversed ranges like '[z-a]' also work) and '[^…]'
//     match one byte of (or, with '^', not of) the class; inside a class a
//     backslash escapes the next byte; '[]' matches nothing; a class left
//     open at the end of the pattern ends there;
//   - '\x' matches x literally; a trailing lone backslash matches '\'.
//
// Matching is byte-wise and case-sensitive. Every non-star token matches
// exactly one byte, so a greedy scan that backtracks only to the last star
// is exact and runs in O(len(pattern)·len(name)) without recursion (Redis
// recurses and gives up beyond 1000 nested stars; this never gives up).
func Match(pattern, name string) bool {
	if pattern == "*" {
		return true
	}
	p, s := 0, 0
	starP, starS := -1, 0
	for s < len(name) {
		if p < len(pattern) && pattern[p] == '*' {
			for p < len(pattern) && pattern[p] == '*' {
				p++
			}
			if p == len(pattern) {
				return true
			}
			starP, starS = p, s
			continue
		}
		if p < len(pattern) {
			if ok, next := matchToken(pattern, p, name[s]); ok {
				p = next
				s++
				continue
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last star absorb one more byte and retry from there.
		starS++
		p, s = starP, starS
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// matchToken matches the single pattern token starting at pattern[p]
// (anything but '*') against byte c. It returns whether it matched and the
// index just past the token; the token's extent never depends on c.
func matchToken(pattern string, p int, c byte) (bool, int) {
	switch pattern[p] {
	case '?':
		return true, p + 1
	case '\\':
		if len(pattern)-p >= 2 {
			p++
		}
		return pattern[p] == c, p + 1
	case '[':
		p++
		not := p < len(pattern) && pattern[p] == '^'
		if not {
			p++
		}
		match := false
		for {
			rest := len(pattern) - p
			if rest >= 2 && pattern[p] == '\\' {
				p++
				if pattern[p] == c {
					match = true
				}
			} else if rest >= 1 && pattern[p] == ']' {
				break
			} else if rest <= 0 {
				// Unterminated class: it ends with the pattern.
				return match != not, len(pattern)
			} else if rest >= 3 && pattern[p+1] == '-' {
				lo, hi := pattern[p], pattern[p+2]
				if lo > hi {
					lo, hi = hi, lo
				}
				if c >= lo && c <= hi {
					match = true
				}
				p += 2
			} else if pattern[p] == c {
				match = true
			}
			p++
		}
		return match != not, p + 1
	default:
		return pattern[p] == c, p + 1
	}
}
