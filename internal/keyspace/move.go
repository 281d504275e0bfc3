package keyspace

import (
	"hash/maphash"
	"math/rand/v2"
	"slices"
)

// Multi-key operations: RENAME, COPY, MSET, MSETNX and MGET change or
// read several keys as one step. They lock every shard their keys live
// in, in ascending shard order (the order Freeze and Flush take all the
// locks in), so they cannot deadlock with each other or with a cut, and
// no reader sees a state between their changes: a RENAME onto an
// existing key shows a concurrent reader either the old value or the new
// one under the destination key, never no key.

// lockOrder returns the distinct shard indexes of keys, ascending.
func (s *Store) lockOrder(keys [][]byte) []int {
	idx := make([]int, 0, len(keys))
	for _, k := range keys {
		idx = append(idx, s.shardIndex(k))
	}
	slices.Sort(idx)
	return slices.Compact(idx)
}

// lockShards takes the write (or read) locks of keys' shards in
// ascending order and returns the function that releases them.
func (s *Store) lockShards(keys [][]byte, write bool) (unlock func()) {
	order := s.lockOrder(keys)
	for _, i := range order {
		if write {
			s.shards[i].mu.Lock()
		} else {
			s.shards[i].mu.RLock()
		}
	}
	return func() {
		for _, i := range order {
			if write {
				s.shards[i].mu.Unlock()
			} else {
				s.shards[i].mu.RUnlock()
			}
		}
	}
}

// shardIndex is the index of shardOf(key).
func (s *Store) shardIndex(key []byte) int {
	return int(maphash.Bytes(s.seed, key) % numShards)
}

// UpdateKeys runs fn with one write transaction per key of keys, all
// under the write locks of the keys' shards at once: txs[i] is keys[i]'s
// (a key named twice gets the same *Txn twice). Every Txn may Set,
// Delete and Log as in Update; a change to one key is visible to others
// only together with all the others, when UpdateKeys returns. Memory
// accounting (Used, expire times included), copy-on-write cuts, change
// notification (touch) and lazy expiry (an expired key is deleted and
// logged as DEL first, so fn sees it missing) are handled per key as
// Update does; Txn.Expire and SetExpire move expire times between keys. It returns the highest sequence
// number logged and the first logging error; the logger's WriteGate is
// asked first, as in Update. fn must not retain the Txns.
//
// Cost: one map lookup and one small allocation per key plus fn's; the
// locks of up to len(keys) shards are held for fn's duration.
func (s *Store) UpdateKeys(keys [][]byte, fn func(txs []*Txn)) (seq uint64, err error) {
	if s.gate != nil {
		if err := s.gate(); err != nil {
			return 0, err
		}
	}
	defer s.lockShards(keys, true)()
	var expSeq uint64
	for _, k := range keys {
		if sh := s.shardOf(k); s.expiredNow(sh, string(k)) {
			q, err := s.expireLocked(sh, string(k))
			if err != nil {
				return 0, err
			}
			expSeq = max(expSeq, q)
		}
	}
	txs := make([]*Txn, len(keys))
	distinct := make([]*Txn, 0, len(keys))
	before := make([]uint64, 0, len(keys))
	byKey := make(map[string]*Txn, len(keys))
	for i, k := range keys {
		if t, ok := byKey[string(k)]; ok {
			txs[i] = t
			continue
		}
		sh := s.shardOf(k)
		v := sh.m[string(k)]
		before = append(before, entryUsage(k, v)+sh.expireUsage(string(k)))
		if sh.cow != nil {
			sh.preserve(k)
			v = sh.m[string(k)]
		}
		t := &Txn{Key: k, Value: v, sh: sh, store: s, seq: expSeq}
		byKey[string(k)] = t
		txs[i] = t
		distinct = append(distinct, t)
	}
	defer func() {
		for j, t := range distinct {
			v := t.sh.m[string(t.Key)]
			if t.set || t.logged {
				t.sh.touch(string(t.Key))
			}
			s.addUsed(before[j], entryUsage(t.Key, v)+t.sh.expireUsage(string(t.Key)))
			seq = max(seq, t.seq)
			if err == nil {
				err = t.err
			}
		}
	}()
	fn(txs)
	return 0, nil
}

// ViewKeys runs fn with the current values of keys (nil for a missing
// or expired key; vals[i] is keys[i]'s) under the read locks of all their shards at
// once, so the values are one consistent state. fn must not retain or
// mutate them.
func (s *Store) ViewKeys(keys [][]byte, fn func(vals []Value)) {
	defer s.lockShards(keys, false)()
	vals := make([]Value, len(keys))
	for i, k := range keys {
		if sh := s.shardOf(k); !s.expiredNow(sh, string(k)) {
			vals[i] = sh.m[string(k)]
		}
	}
	fn(vals)
}

// RandomKey returns a key chosen at random and true, or false when the
// store holds no live key (RANDOMKEY; expired keys are skipped). It starts at a random shard and takes the
// first key of the first non-empty shard in Go's randomized map order,
// so every key can be chosen, though not with equal probability (keys in
// sparsely filled shards are likelier). O(shards) read locks at worst.
func (s *Store) RandomKey() (string, bool) {
	start := rand.IntN(numShards)
	now := s.Now()
	for j := range numShards {
		sh := &s.shards[(start+j)%numShards]
		sh.mu.RLock()
		for k := range sh.m {
			if !s.expired(sh, k, now) {
				sh.mu.RUnlock()
				return k, true
			}
		}
		sh.mu.RUnlock()
	}
	return "", false
}
