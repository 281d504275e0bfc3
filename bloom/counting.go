package bloom

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"
)

const (
	// MaxCounters is the largest number of counters m of one Counting
	// filter: 2^40 counters, 512 GiB. Index arithmetic is 64-bit, so every
	// m up to it works, including m > 2^32. As for MaxBits, it is not a
	// memory budget.
	MaxCounters uint64 = 1 << 40

	// CounterMax is the value at which a Counting filter's 4-bit counters
	// saturate: they then stay at 15 forever (never decremented).
	CounterMax = 15

	countersPerWord = 16
	nibbleOnes      = 0x1111111111111111
)

// Counting is a counting Bloom filter (Fan, Cao, Almeida & Broder 2000,
// "Summary cache"): m 4-bit counters instead of m bits, so items can be
// removed. Positions are the classic filter's, by double hashing
// (Kirsch & Mitzenmacher 2006) of the key's hash pair:
//
//	x_i = (h1 + i·h2) mod m,   i = 0 … k−1   (uint64 arithmetic).
//
// Add increments the k counters of an item, Remove decrements them, Test
// reports whether all are nonzero, and Count returns their minimum (an
// upper bound on how many times a present item was added, up to 15).
//
// Saturation: a counter that reaches CounterMax (15) sticks there; Remove
// never decrements it, so an overflow can never make a present item
// disappear (it only keeps some removed items as false positives). With
// the classic sizing the chance that any counter reaches 16 additions is
// below 1.37e-15·m (Fan et al.).
//
// Remove of an item none of whose counters is 0 decrements them: the
// caller must only remove items it added. Removing an item that was never
// added but tests positive (a false positive) would take counts from other
// items and could cause false negatives later; no filter can detect that
// case. Remove refuses every case it can detect: if one of the item's
// counters is 0 (or, for an item whose probes repeat a counter, lower than
// the number of its probes there) it returns false and changes
// nothing.
//
// Memory: m/2 bytes (16 counters per uint64 word) plus a fixed header.
// Add, Remove, Test and Count cost one hash and k counter accesses (k
// divisions); they do not allocate. AddMany and TestMany compute the same
// positions with a multiply instead of a division and overlap the cache
// misses of groups of keys. The false-positive rate is the classic
// filter's with "counter ≠ 0" for "bit set": fill^k, where fill is the
// fraction of nonzero counters, so the classic sizing applies (4× the
// memory of a classic filter at equal p).
//
// Concurrency: Test, Count, TestMany, Stats and the encoders may run
// concurrently with each other; Add, Remove, Merge, Intersect and decoding must not run concurrently with any other use (the
// caller locks).
//
// The zero Counting is not usable; create one with NewCounting,
// or NewCountingWithConfig, or call UnmarshalBinary / ReadFrom on it. On the zero value the methods that read or change counters (Add,
// Remove, Test, Count and their forms, Stats, Compatible, Merge,
// Intersect, the encoders) panic with a message naming these; the getters
// return zeros.
type Counting struct {
	words    []uint64
	m        uint64
	k        uint32
	hashID   HashID
	seed     uint64
	n        uint64
	capacity uint64
	targetP  float64
}

// NewCounting returns an empty counting filter for n items at
// false-positive rate p, sized by optimalSizing (m counters, k probes),
// hash HashXXH3_128 seed 0. Errors are optimalSizing's. It allocates
// 8·⌈m/16⌉ bytes.
func NewCounting(n uint64, p float64) (*Counting, error) {
	m, k, err := optimalSizing(n, p)
	if err != nil {
		return nil, err
	}
	c := newCounting(m, k)
	c.capacity, c.targetP = n, p
	return c, nil
}

// CountingConfig holds the raw parameters of a Counting filter
// (NewCountingWithConfig). Counters are 4 bits wide (CounterMax).
type CountingConfig struct {
	// M is the number of counters, in [1, MaxCounters].
	M uint64
	// K is the number of probes per key, in [1, MaxK].
	K uint32
	// Seed is the seed of the key hash (XXH3-128); default 0.
	Seed uint64
}

// NewCountingWithConfig returns an empty counting filter of exactly c.M
// counters and c.K probes, hashing keys with XXH3-128 seeded with c.Seed.
// Errors name the field: M = 0, K = 0 or K > MaxK wrap
// ErrInvalidParameter, M > MaxCounters ErrTooLarge. Capacity and target p
// are unknown (0 in Stats). It allocates 8·⌈M/16⌉ bytes.
func NewCountingWithConfig(cfg CountingConfig) (*Counting, error) {
	if err := checkCountingMK(cfg.M, cfg.K); err != nil {
		return nil, err
	}
	c := newCounting(cfg.M, cfg.K)
	c.seed = cfg.Seed
	return c, nil
}

// newCounting returns an empty Counting of m counters and k probes
// (checked by the caller), hash HashXXH3_128 seed 0.
func newCounting(m uint64, k uint32) *Counting {
	return &Counting{words: make([]uint64, counterWords(m)), m: m, k: k, hashID: HashXXH3_128}
}

func checkCountingMK(m uint64, k uint32) error {
	switch {
	case m == 0:
		return fmt.Errorf("%w: M (counters) must be at least 1, got 0", ErrInvalidParameter)
	case m > MaxCounters:
		return fmt.Errorf("%w: M=%d counters is more than MaxCounters (%d)", ErrTooLarge, m, MaxCounters)
	case k == 0 || k > MaxK:
		return fmt.Errorf("%w: K (probes) must be in [1, %d], got %d", ErrInvalidParameter, MaxK, k)
	}
	return nil
}

// counterWords returns ⌈m/16⌉.
func counterWords(m uint64) uint64 { return (m + countersPerWord - 1) / countersPerWord }

// M returns the number of counters.
func (c *Counting) numBits() uint64 { return c.m }

// K returns the number of probes per item.
func (c *Counting) numHashes() uint32 { return c.k }

// SizeBytes returns the memory of the counters in bytes: 8·⌈m/16⌉.
func (c *Counting) sizeBytes() uint64 { return uint64(len(c.words)) * 8 }

// N returns the number of items in the filter: Adds minus successful
// Removes (not below 0).
func (c *Counting) items() uint64 { return c.n }

// SetN overwrites the item count. It changes no counters.
func (c *Counting) setN(n uint64) { c.n = n }

// Capacity returns the n the filter was sized for (0 if unknown).
func (c *Counting) capacityN() uint64 { return c.capacity }

// TargetP returns the p the filter was sized for (0 if unknown).
func (c *Counting) targetRate() float64 { return c.targetP }

// HashID returns the ID of the hash the filter's pairs come from.
func (c *Counting) hashKind() HashID { return c.hashID }

// HashSeed returns the seed of the filter's hash.
func (c *Counting) hashSeed() uint64 { return c.seed }

// SetHash sets the hash the key methods use, as Filter.SetHash does (call
// it before adding anything; id 0 gives ErrInvalidParameter).
func (c *Counting) setHash(id HashID, seed uint64) error {
	if id == 0 {
		return fmt.Errorf("%w: hash ID 0 is reserved", ErrInvalidParameter)
	}
	c.hashID, c.seed = id, seed
	return nil
}

// counter returns counter x.
func (c *Counting) counter(x uint64) uint64 {
	return c.words[x/countersPerWord] >> (x % countersPerWord * 4) & CounterMax
}

// Add inserts key: every one of its k counters below 15 grows by one, and
// N by one. It always returns nil: a counting filter cannot fail (counters
// saturate at 15 instead of overflowing). Cost: one hash plus k counter
// updates; no allocation.
func (c *Counting) Add(key []byte) error {
	h1, h2 := keyHash(c.hashID, c.seed, key, zeroCounting)
	c.addHash(h1, h2)
	return nil
}

// addString is Add for a string key.
func (c *Counting) addString(key string) {
	h1, h2 := keyHashString(c.hashID, c.seed, key, zeroCounting)
	c.addHash(h1, h2)
}

// AddHash inserts the item with hash pair (h1, h2). It always returns nil.
func (c *Counting) AddHash(h1, h2 uint64) error {
	c.addHash(h1, h2)
	return nil
}

func (c *Counting) addHash(h1, h2 uint64) {
	w, m := c.words, c.m
	if m == 0 { // the zero Counting; also lets the compiler drop its divide check
		zeroPanic(zeroCounting)
	}
	for i := c.k; i > 0; i-- {
		x := h1 % m
		sh := x % countersPerWord * 4
		if p := &w[x/countersPerWord]; *p>>sh&CounterMax != CounterMax {
			*p += 1 << sh
		}
		h1 += h2
	}
	if c.n != math.MaxUint64 {
		c.n++
	}
}

// TestAndAdd reports whether key may have been present (Test's answer
// before the add: false means key was certainly new) and then adds it, as
// Add does. The error is always nil. Not safe for concurrent use.
func (c *Counting) TestAndAdd(key []byte) (present bool, err error) {
	h1, h2 := keyHash(c.hashID, c.seed, key, zeroCounting)
	present = c.TestHash(h1, h2)
	c.addHash(h1, h2)
	return present, nil
}

// Remove removes one occurrence of key, which the caller added before (see
// Counting: removing a false positive cannot be detected) and reports
// whether it did. If one of the key's counters is 0 the key cannot be
// present: Remove returns false and changes nothing. Otherwise every
// counter below 15 shrinks by one (saturated counters stay), N shrinks by
// one and Remove returns true. No allocation.
func (c *Counting) Remove(key []byte) bool {
	h1, h2 := keyHash(c.hashID, c.seed, key, zeroCounting)
	return c.RemoveHash(h1, h2)
}

// removeString is Remove for a string key.
func (c *Counting) removeString(key string) bool {
	h1, h2 := keyHashString(c.hashID, c.seed, key, zeroCounting)
	return c.RemoveHash(h1, h2)
}

// RemoveHash is Remove for a hash pair.
func (c *Counting) RemoveHash(h1, h2 uint64) bool {
	w, m := c.words, c.m
	if m == 0 { // the zero Counting; also lets the compiler drop its divide check
		zeroPanic(zeroCounting)
	}
	start := h1
	for i := uint32(0); i < c.k; i++ {
		x := h1 % m
		sh := x % countersPerWord * 4
		p := &w[x/countersPerWord]
		switch *p >> sh & CounterMax {
		case 0:
			// Undo the decrements already made (probes 0 … i−1): each
			// touched a counter that is now below 15, and only those
			// (a counter at 15 was skipped and still is 15).
			h := start
			for j := uint32(0); j < i; j++ {
				y := h % m
				ysh := y % countersPerWord * 4
				if q := &w[y/countersPerWord]; *q>>ysh&CounterMax != CounterMax {
					*q += 1 << ysh
				}
				h += h2
			}
			return false
		case CounterMax:
			// saturated: sticks
		default:
			*p -= 1 << sh
		}
		h1 += h2
	}
	if c.n > 0 {
		c.n--
	}
	return true
}

// Test reports whether key may be in the filter: all its counters are
// nonzero. No false negatives for added items that were not removed
// (given Remove's precondition). No allocation.
func (c *Counting) Test(key []byte) bool {
	h1, h2 := keyHash(c.hashID, c.seed, key, zeroCounting)
	return c.TestHash(h1, h2)
}

// TestString is Test for a string key.
func (c *Counting) testString(key string) bool {
	h1, h2 := keyHashString(c.hashID, c.seed, key, zeroCounting)
	return c.TestHash(h1, h2)
}

// TestHash is Test for a hash pair.
func (c *Counting) TestHash(h1, h2 uint64) bool {
	w, m := c.words, c.m
	if m == 0 { // the zero Counting; also lets the compiler drop its divide check
		zeroPanic(zeroCounting)
	}
	for i := c.k; i > 0; i-- {
		x := h1 % m
		if w[x/countersPerWord]>>(x%countersPerWord*4)&CounterMax == 0 {
			return false
		}
		h1 += h2
	}
	return true
}

// Count returns the minimum of key's k counters: 0 if key is definitely
// absent, otherwise an upper bound on the number of times it was added
// (minus removed), where 15 means "15 or more".
func (c *Counting) Count(key []byte) uint64 {
	h1, h2 := keyHash(c.hashID, c.seed, key, zeroCounting)
	return c.CountHash(h1, h2)
}

// CountHash is Count for a hash pair.
func (c *Counting) CountHash(h1, h2 uint64) uint64 {
	w, m := c.words, c.m
	if m == 0 { // the zero Counting; also lets the compiler drop its divide check
		zeroPanic(zeroCounting)
	}
	low := uint64(CounterMax)
	for i := c.k; i > 0 && low > 0; i-- {
		x := h1 % m
		low = min(low, w[x/countersPerWord]>>(x%countersPerWord*4)&CounterMax)
		h1 += h2
	}
	return low
}

// countingGroup is the number of counter positions AddMany and TestMany
// compute ahead, as Filter.AddMany does: a group of ⌊256/k⌋ keys is hashed,
// its positions are computed without a division (see positions), the words
// of all of them are loaded (overlapping the cache misses), and only then
// updated or tested.
const countingGroup = 256

// AddMany adds every key of keys, with the same result as calling Add on
// each in order, overlapping the cache misses of groups of keys. No
// allocation. It always returns nil.
func (c *Counting) AddMany(keys [][]byte) error {
	if c.m == 0 {
		zeroPanic(zeroCounting)
	}
	k := int(c.k)
	if k > countingGroup {
		for _, key := range keys {
			h1, h2 := keyHash(c.hashID, c.seed, key, zeroCounting)
			c.addHash(h1, h2)
		}
		return nil
	}
	var pos [countingGroup]uint64
	per := countingGroup / k
	for len(keys) > 0 {
		g := keys[:min(per, len(keys))]
		keys = keys[len(g):]
		ps := c.positions(g, pos[:len(g)*k])
		w := c.words
		for _, x := range ps {
			sh := x % countersPerWord * 4
			if p := &w[x/countersPerWord]; *p>>sh&CounterMax != CounterMax {
				*p += 1 << sh
			}
		}
		if n, carry := bits.Add64(c.n, uint64(len(g)), 0); carry == 0 {
			c.n = n
		} else {
			c.n = math.MaxUint64
		}
	}
	return nil
}

// TestMany returns out with out[i] = Test(keys[i]), reusing out's storage
// when cap(out) ≥ len(keys) (then it does not allocate).
func (c *Counting) TestMany(keys [][]byte, out []bool) []bool {
	if c.m == 0 {
		zeroPanic(zeroCounting)
	}
	out = slices.Grow(out[:0], len(keys))[:len(keys)]
	k := int(c.k)
	if k > countingGroup {
		for i, key := range keys {
			out[i] = c.Test(key)
		}
		return out
	}
	var pos [countingGroup]uint64
	per := countingGroup / k
	for done := 0; done < len(keys); {
		g := keys[done:min(done+per, len(keys))]
		ps := c.positions(g, pos[:len(g)*k])
		w := c.words
		for i := range g {
			ok := true
			for _, x := range ps[i*k : i*k+k] {
				ok = ok && w[x/countersPerWord]>>(x%countersPerWord*4)&CounterMax != 0
			}
			out[done+i] = ok
		}
		done += len(g)
	}
	return out
}

// positions stores the k counter positions (h1 + i·h2) mod m of each key
// of g in pos and loads every word involved, in a loop of independent
// loads. The reduction is Filter's division-free one (mod with
// reciprocal(m)), exact for every m ≥ 1 and so for every m ≤ MaxCounters:
// the positions are exactly those of h1 % m in Add, Test and Remove.
func (c *Counting) positions(g [][]byte, pos []uint64) []uint64 {
	k, m := int(c.k), c.m
	inv := reciprocal(m)
	for j, key := range g {
		h1, h2 := keyHash(c.hashID, c.seed, key, zeroCounting)
		for i := range k {
			pos[j*k+i] = mod(h1, m, inv)
			h1 += h2
		}
	}
	w := c.words
	for _, x := range pos {
		atomic.LoadUint64(&w[x/countersPerWord]) // the compiler keeps atomic loads
	}
	return pos
}

// Saturated returns the number of counters stuck at 15. Cost: one pass.
func (c *Counting) saturated() uint64 {
	var s uint64
	for _, w := range c.words {
		s += uint64(bits.OnesCount64(w & (w >> 1) & (w >> 2) & (w >> 3) & nibbleOnes))
	}
	return s
}

// Stats returns the filter's statistics, counting a nonzero counter as a
// set bit: M counters, K, Bytes, N, SetBits = nonzero counters, FillRatio =
// SetBits/M, FPR = fill^K, Cardinality =
// −(M/K)·ln(1 − fill) (+Inf when no counter is 0), capacity and target p.
// Cost: one pass over the counters.
func (c *Counting) Stats() Stats {
	if c.m == 0 {
		zeroPanic(zeroCounting)
	}
	var set uint64
	for _, w := range c.words {
		set += uint64(bits.OnesCount64((w | w>>1 | w>>2 | w>>3) & nibbleOnes))
	}
	st := classicStats(c.m, c.k, set)
	st.Bytes, st.N, st.Capacity, st.P = c.sizeBytes(), c.n, c.capacity, c.targetP
	return st
}

// Reset empties c: every counter 0 and N = 0, with the same m, k, hash,
// seed, capacity and target p. Cost: one pass; no allocation.
func (c *Counting) Reset() {
	if c.m == 0 {
		zeroPanic(zeroCounting)
	}
	clear(c.words)
	c.n = 0
}

// Compatible returns nil if c and g can be merged (same m, k, hash ID and
// seed), else an error wrapping ErrIncompatible naming both values.
func (c *Counting) compatible(g *Counting) error {
	if c.m == 0 || g.m == 0 {
		zeroPanic(zeroCounting)
	}
	switch {
	case c.m != g.m:
		return fmt.Errorf("%w: m %d != m %d", ErrIncompatible, c.m, g.m)
	case c.k != g.k:
		return fmt.Errorf("%w: k %d != k %d", ErrIncompatible, c.k, g.k)
	case c.hashID != g.hashID:
		return fmt.Errorf("%w: hash %v != hash %v", ErrIncompatible, c.hashID, g.hashID)
	case c.seed != g.seed:
		return fmt.Errorf("%w: seed %#x != seed %#x", ErrIncompatible, c.seed, g.seed)
	}
	return nil
}

// Merge adds g's counters to c's, saturating at 15: c then holds the
// multiset sum (every item added to either, as many times, up to
// saturation), and N becomes the (saturating) sum. Errors: ErrIncompatible,
// with c unchanged. c.Merge(c) doubles every count. Cost: one pass.
func (c *Counting) Merge(g *Counting) error {
	if err := c.compatible(g); err != nil {
		return err
	}
	for i, a := range c.words {
		b := g.words[i]
		if b == 0 {
			continue
		}
		var r uint64
		for sh := uint(0); sh < 64; sh += 4 {
			r |= min(a>>sh&CounterMax+b>>sh&CounterMax, CounterMax) << sh
		}
		c.words[i] = r
	}
	n, carry := bits.Add64(c.n, g.n, 0)
	if carry != 0 {
		n = math.MaxUint64
	}
	c.n = n
	return nil
}

// Intersect sets every counter of c to the minimum of c's and g's: c then
// holds at least the multiset intersection (every item added to both stays
// present, with the smaller count), and N becomes min(c.N, g.N).
// Errors: ErrIncompatible, with c unchanged. Cost: one pass.
func (c *Counting) Intersect(g *Counting) error {
	if err := c.compatible(g); err != nil {
		return err
	}
	for i, a := range c.words {
		b := g.words[i]
		var r uint64
		for sh := uint(0); sh < 64; sh += 4 {
			r |= min(a>>sh&CounterMax, b>>sh&CounterMax) << sh
		}
		c.words[i] = r
	}
	c.n = min(c.n, g.n)
	return nil
}

// Clone returns an independent copy of c.
func (c *Counting) clone() *Counting {
	d := *c
	d.words = slices.Clone(c.words)
	return &d
}

// Equal reports whether c and g have the same parameters, N and counters.
func (c *Counting) equal(g *Counting) bool {
	return c.compatible(g) == nil && c.n == g.n && c.capacity == g.capacity &&
		math.Float64bits(c.targetP) == math.Float64bits(g.targetP) && slices.Equal(c.words, g.words)
}
