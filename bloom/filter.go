package bloom

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"
)

const (
	// MaxBits is the largest m (number of bits) of one Filter: 2^40 bits,
	// which is 128 GiB of memory. Index arithmetic is 64-bit throughout, so
	// every m up to MaxBits works, including m > 2^32. Validation against
	// MaxBits is not a memory budget: callers that take sizes from untrusted
	// input must also apply their own limit (ScalableConfig.MaxBytes does
	// this for Scalable).
	MaxBits uint64 = 1 << 40

	// MaxK is the largest number of probes k of one Filter. The classic
	// formula never exceeds about 1076 for any representable p > 0
	// (k ≈ −log2 p); larger k would only cost time. Each probe costs one
	// memory access.
	MaxK uint32 = 2048

	// MinP is the smallest false-positive rate optimalSizing (and so New
	// and NewCounting) accepts: 2^-64 ≈ 5.42e-20, the rate at which the
	// classic optimum reaches k = 64 probes and m/n = 64/ln 2 ≈ 92.3 bits
	// per key. Each halving of p below it would cost one more probe per
	// Add and Test and 1.44 more bits per key, and buy nothing: with double
	// hashing a key's probes depend only on its hash pair reduced mod m, and
	// keys whose stride h2 is a multiple of m (probability 1/m) probe far
	// fewer than k distinct bits, which keeps every Filter's measured rate
	// above about 1/(m·k) (see chainsizing.go) — at least 2^-51 for any m ≤
	// MaxBits and k ≤ MaxK, far above 2^-64. A request such as p = 1e-300
	// (k = 997 probes and 1438 bits per key) is therefore refused instead of
	// served by a filter that cannot meet it. The floor is about the 64-bit
	// arithmetic of the positions, not the pinned 128-bit hash: two keys
	// share a whole XXH3-128 pair with probability 2^-128.
	//
	// Scalable chains are not bounded by MinP: their sub-filters' rates
	// have their own floor, ScalableConfig.MinErrorRate, and the default sizing
	// accepts any p in (0, 1).
	MinP = 0x1p-64
)

// Filter is a classic Bloom filter: a bitset of m bits and k probes per key,
// with probe positions from double hashing (Kirsch & Mitzenmacher 2006):
//
//	x_i = (h1 + i·h2) mod m,   i = 0 … k−1,
//
// computed in uint64 wrap-around arithmetic, where (h1, h2) is the key's hash
// pair (see Hash and HashID). Bit x lives in word x/64 at bit x mod 64; the
// words serialize little-endian, so bit x is also byte x/8 under mask
// 1<<(x mod 8) (the layout of RedisBloom's dumps).
//
// Memory: 8·⌈m/64⌉ bytes plus a fixed header. Add and Test cost one hash of
// the key plus at most k memory accesses and k 64-bit divisions; Test stops
// at the first clear bit. They do not allocate.
//
// Concurrency: Add, Test, TestAndAdd, their Hash and Many forms, Stats,
// Merge and Intersect (on the receiver) and the encoders
// are safe to call from many goroutines at once: bits are read with
// atomic.LoadUint64 and set with atomic.OrUint64, never with a lock. A Test
// that runs concurrently with an Add of the same key may see it or not; once
// Add has returned, every later Test of that key reports true. An encoding
// taken during concurrent Adds holds a valid filter containing at least the
// keys added before the encoding started. UnmarshalBinary/ReadFrom replace
// state and must not run concurrently with
// other use of the same Filter. addManyExclusive and addHashManyExclusive
// are the batch adds without atomic instructions, for a filter that is not
// yet shared (a build): they too must not run concurrently with any other
// use of the Filter.
//
// The zero Filter is not usable; create one with New or NewWithConfig, or call
// UnmarshalBinary / ReadFrom on it. On the zero value the methods
// that read or change bits (Add, Test and their forms, Stats, Compatible,
// Merge, Intersect, the encoders) panic with a message naming these; the
// getters (M, K, N, SizeBytes, …) return zeros.
type Filter struct {
	bits     []uint64
	m        uint64
	k        uint32
	hashID   HashID
	seed     uint64
	n        atomic.Uint64
	capacity uint64  // n the filter was sized for; 0 if unknown
	targetP  float64 // p the filter was sized for; 0 if unknown
}

// optimalSizing returns the classic optimal parameters for n items at
// false-positive rate p:
//
//	m = ⌈−n·ln p / (ln 2)²⌉ bits,   k = round((m/n)·ln 2), at least 1.
//
// It returns an error wrapping ErrInvalidParameter if n = 0, if p is not in
// the open interval (0, 1) (including NaN and ±Inf), or if p is below the
// floor MinP = 2^-64 ≈ 5.42e-20 (where k reaches 64 probes; see MinP for
// why no smaller rate is useful), and one wrapping ErrTooLarge if m would
// exceed MaxBits. Every n ≥ 1 with p in [MinP, 1) that fits MaxBits is
// valid: for example n = 1, p = MinP gives m = 93, k = 64, and n = 1,
// p = 1e-300 is refused. optimalSizing is a Sizing.
func optimalSizing(n uint64, p float64) (m uint64, k uint32, err error) {
	if n != 0 && !(p >= MinP && p < 1) {
		return 0, 0, fmt.Errorf("%w: false-positive rate p must be in [MinP, 1), MinP = 2^-64 (%.4g, where k reaches 64 probes), got %v", ErrInvalidParameter, MinP, p)
	}
	return classicSizing(n, p)
}

// classicSizing is optimalSizing without the floor MinP: it validates n ≥ 1
// and p in (0, 1) only. For p below MinP it still returns quickly, with k at
// most about 1076 for any representable p > 0 (within MaxK) and m checked
// against MaxBits; nothing is allocated. chainSizingFn uses it, because a
// Scalable bounds its sub-filters' rates with its own floor
// (ScalableConfig.MinErrorRate, 1e-300 by default).
func classicSizing(n uint64, p float64) (m uint64, k uint32, err error) {
	if n == 0 {
		return 0, 0, fmt.Errorf("%w: capacity n must be at least 1, got 0", ErrInvalidParameter)
	}
	if !(p > 0 && p < 1) {
		return 0, 0, fmt.Errorf("%w: false-positive rate p must be in (0, 1), got %v", ErrInvalidParameter, p)
	}
	mf := math.Ceil(-float64(n) * math.Log(p) / (math.Ln2 * math.Ln2))
	if !(mf <= float64(MaxBits)) {
		return 0, 0, fmt.Errorf("%w: n=%d, p=%v needs %.4g bits, more than MaxBits (%d)", ErrTooLarge, n, p, mf, MaxBits)
	}
	m = uint64(mf)
	if m < 1 {
		m = 1
	}
	kf := math.Round(float64(m) / float64(n) * math.Ln2)
	switch {
	case kf < 1:
		k = 1
	case kf > float64(MaxK):
		return 0, 0, fmt.Errorf("%w: n=%d, p=%v needs k=%.0f probes, more than MaxK (%d)", ErrTooLarge, n, p, kf, MaxK)
	default:
		k = uint32(kf)
	}
	return m, k, nil
}

// New returns an empty Filter sized by optimalSizing for n items at
// false-positive rate p:
//
//	m = ⌈−n·ln p / (ln 2)²⌉ bits,   k = round((m/n)·ln 2) probes,
//
// hash HashXXH3_128 with seed 0. Errors are those of optimalSizing: n = 0,
// p ∉ [MinP, 1), NaN or ±Inf give ErrInvalidParameter, m > MaxBits
// ErrTooLarge. The returned filter records n and p as its capacity and
// target p (see Stats). It allocates 8·⌈m/64⌉ bytes.
func New(n uint64, p float64) (*Filter, error) {
	m, k, err := optimalSizing(n, p)
	if err != nil {
		return nil, err
	}
	f := newFilter(m, k)
	f.capacity, f.targetP = n, p
	return f, nil
}

// Config holds the raw parameters of a classic Filter (NewWithConfig).
type Config struct {
	// M is the number of bits, in [1, MaxBits].
	M uint64
	// K is the number of probes per key, in [1, MaxK].
	K uint32
	// Seed is the seed of the key hash (XXH3-128); default 0. Filters are
	// only compatible (Merge) with filters of the same seed. A secret seed
	// keeps an adversary from searching for false positives.
	Seed uint64
}

// NewWithConfig returns an empty Filter with exactly c.M bits and c.K
// probes, hashing keys with XXH3-128 seeded with c.Seed. Errors wrap
// ErrInvalidParameter (M = 0, K = 0 or K > MaxK) or ErrTooLarge
// (M > MaxBits) and name the field. Capacity and target p are unknown (0
// in Stats). It allocates 8·⌈M/64⌉ bytes.
func NewWithConfig(c Config) (*Filter, error) {
	if err := checkMK(c.M, c.K); err != nil {
		return nil, err
	}
	f := newFilter(c.M, c.K)
	f.seed = c.Seed
	return f, nil
}

// newFilter returns an empty Filter of m bits and k probes (checked by the
// caller), hash HashXXH3_128 seed 0.
func newFilter(m uint64, k uint32) *Filter {
	return &Filter{bits: make([]uint64, words(m)), m: m, k: k, hashID: HashXXH3_128}
}

func checkMK(m uint64, k uint32) error {
	switch {
	case m == 0:
		return fmt.Errorf("%w: M (bits) must be at least 1, got 0", ErrInvalidParameter)
	case m > MaxBits:
		return fmt.Errorf("%w: M=%d bits is more than MaxBits (%d)", ErrTooLarge, m, MaxBits)
	case k == 0:
		return fmt.Errorf("%w: K (probes) must be at least 1, got 0", ErrInvalidParameter)
	case k > MaxK:
		return fmt.Errorf("%w: K=%d is more than MaxK (%d)", ErrInvalidParameter, k, MaxK)
	}
	return nil
}

// words returns ⌈m/64⌉ for m ≤ MaxBits.
func words(m uint64) uint64 { return (m + 63) >> 6 }

// SetHash records that the filter's hash pairs come from hash id with the
// given seed. It changes no bits: call it before adding anything. The key
// methods then hash with (id, seed); for an id other than HashXXH3_128 they
// panic (see CanHashKeys). Programs that
// hash themselves (the RedisBloom layer, with hashMurmur64A) use the *Hash
// methods only. id 0 is reserved and gives ErrInvalidParameter. Not safe for
// concurrent use.
func (f *Filter) setHash(id HashID, seed uint64) error {
	if id == 0 {
		return fmt.Errorf("%w: hash ID 0 is reserved", ErrInvalidParameter)
	}
	f.hashID, f.seed = id, seed
	return nil
}

// HashID returns the ID of the hash function the filter's bits were built
// with (HashXXH3_128 unless SetHash changed it).
func (f *Filter) hashKind() HashID { return f.hashID }

// M returns the number of bits m.
func (f *Filter) numBits() uint64 { return f.m }

// K returns the number of probes k per key.
func (f *Filter) numHashes() uint32 { return f.k }

// N returns the number of items added: the number of Add-type calls that set
// at least one new bit. An add whose k bits were all already set (a
// duplicate, or a false positive) does not count, so N ≤ the number of
// distinct keys added; this is RedisBloom's "size". Merge and Intersect
// change N (see there); SetN overwrites it. Safe for concurrent use.
func (f *Filter) items() uint64 { return f.n.Load() }

// SetN overwrites the item count, for restoring a filter from an external
// dump. It changes no bits.
func (f *Filter) setN(n uint64) { f.n.Store(n) }

// Capacity returns the number of items the filter was sized for (New's n),
// or 0 if it was built from raw m and k.
func (f *Filter) capacityN() uint64 { return f.capacity }

// TargetP returns the false-positive rate the filter was sized for (New's
// p), or 0 if it was built from raw m and k.
func (f *Filter) targetRate() float64 { return f.targetP }

// SetSizing records the capacity and target false-positive rate a filter
// built with NewWithConfig was sized for (Scalable does this for its links). It
// changes no bits; values are reported by Stats and encoded. p must be 0
// (unknown) or in (0, 1): ErrInvalidParameter otherwise. Not safe for
// concurrent use.
func (f *Filter) setSizing(capacity uint64, p float64) error {
	if !(p == 0 || (p > 0 && p < 1)) {
		return fmt.Errorf("%w: target p must be 0 or in (0, 1), got %v", ErrInvalidParameter, p)
	}
	f.capacity, f.targetP = capacity, p
	return nil
}

// SizeBytes returns the size of the bitset in bytes: 8·⌈m/64⌉.
func (f *Filter) sizeBytes() uint64 { return uint64(len(f.bits)) * 8 }

// Add inserts key. It always returns nil: a classic filter cannot fail
// (beyond its capacity its false-positive rate rises instead; see
// Scalable). N grows by one if at least one of key's k bits was newly set
// (TestAndAdd reports which). Cost: one hash plus k probes; no allocation.
// Safe for concurrent use.
func (f *Filter) Add(key []byte) error {
	h1, h2 := keyHash(f.hashID, f.seed, key, zeroFilter)
	f.addHash(h1, h2)
	return nil
}

// addString is Add for a string key (no copy); it reports addHash's result.
func (f *Filter) addString(key string) bool {
	h1, h2 := keyHashString(f.hashID, f.seed, key, zeroFilter)
	return f.addHash(h1, h2)
}

// AddHash inserts the item with hash pair (h1, h2): it sets the bits
// x_i = (h1 + i·h2) mod m for i = 0 … k−1, in uint64 wrap-around
// arithmetic. It always returns nil. No allocation. Safe for concurrent
// use.
func (f *Filter) AddHash(h1, h2 uint64) error {
	f.addHash(h1, h2)
	return nil
}

// addHash is AddHash reporting whether at least one bit was newly set;
// only then N grows by one.
func (f *Filter) addHash(h1, h2 uint64) bool {
	if f.setBits(h1, h2) {
		f.n.Add(1)
		return true
	}
	return false
}

// addHashExclusive is addHash with plain loads and stores, for a caller
// that owns f exclusively (a Scalable's add, which its callers lock): the
// k cache misses overlap, where each atomic OR would wait for its own.
func (f *Filter) addHashExclusive(h1, h2 uint64) bool {
	if f.setBitsExclusive(h1, h2) {
		f.n.Store(f.n.Load() + 1)
		return true
	}
	return false
}

// setBits sets the k bits of (h1, h2) and reports whether any was new.
func (f *Filter) setBits(h1, h2 uint64) bool {
	b, m := f.bits, f.m
	if m == 0 { // the zero Filter; also lets the compiler drop its divide check
		zeroPanic(zeroFilter)
	}
	added := false
	for i := f.k; i > 0; i-- {
		x := h1 % m
		w := &b[x>>6]
		mask := uint64(1) << (x & 63)
		if atomic.LoadUint64(w)&mask == 0 && atomic.OrUint64(w, mask)&mask == 0 {
			added = true
		}
		h1 += h2
	}
	return added
}

// Test reports whether key may be in the set: false means definitely not
// (no false negatives), true means present or a false positive. Cost: one
// hash plus at most k probes, stopping at the first clear bit; no
// allocation. Safe for concurrent use.
func (f *Filter) Test(key []byte) bool {
	h1, h2 := keyHash(f.hashID, f.seed, key, zeroFilter)
	return f.TestHash(h1, h2)
}

// TestString is Test for a string key (no copy).
func (f *Filter) testString(key string) bool {
	h1, h2 := keyHashString(f.hashID, f.seed, key, zeroFilter)
	return f.TestHash(h1, h2)
}

// TestHash reports whether all k bits x_i = (h1 + i·h2) mod m are set. No
// allocation. Safe for concurrent use.
func (f *Filter) TestHash(h1, h2 uint64) bool {
	b, m := f.bits, f.m
	if m == 0 { // the zero Filter; also lets the compiler drop its divide check
		zeroPanic(zeroFilter)
	}
	for i := f.k; i > 0; i-- {
		x := h1 % m
		if atomic.LoadUint64(&b[x>>6])&(uint64(1)<<(x&63)) == 0 {
			return false
		}
		h1 += h2
	}
	return true
}

// TestAndAdd adds key and reports whether it was (maybe) present before:
// present is true exactly when all k bits were already set (Test's answer
// before the add; false: key was certainly new, and N grew by one). The
// error is always nil. Safe for concurrent use: of two concurrent
// TestAndAdds of a new key, at least one reports false.
func (f *Filter) TestAndAdd(key []byte) (present bool, err error) {
	h1, h2 := keyHash(f.hashID, f.seed, key, zeroFilter)
	return !f.addHash(h1, h2), nil
}

// TestAndAddHash is TestAndAdd for a hash pair.
func (f *Filter) TestAndAddHash(h1, h2 uint64) (present bool, err error) {
	return !f.addHash(h1, h2), nil
}

// setBit atomically sets mask in *w and returns newBit || (the bit was clear
// before). Once an add already knows it set a new bit (newBit), the old
// value is not needed, and a plain atomic OR (one LOCK OR on amd64) is
// cheaper than the compare-and-swap loop that returns it.
func setBit(w *uint64, mask uint64, newBit bool) bool {
	if newBit {
		atomic.OrUint64(w, mask)
		return true
	}
	return atomic.OrUint64(w, mask)&mask == 0
}

// batchPositions is the number of bit positions AddMany computes ahead: it
// hashes a group of ⌊batchPositions/k⌋ keys, computes and loads the
// words of all their positions (independent loads, so the cache misses of
// the whole group overlap instead of being paid one after another), and only
// then sets the bits, which are by then in L1. 256 positions = 2 KiB
// of stack and at most 256 cache lines, well inside L1.
const batchPositions = 256

// AddMany adds every key of keys, as Add would, with the same result (bits
// and N) as calling Add on each key in order. It groups the keys so that
// their cache misses overlap (see batchPositions); bits are still set with
// atomic operations. No allocation. Safe for concurrent use. To fill a
// filter that no other goroutine uses yet, addManyExclusive gives the same
// result in about half the time. It always returns nil.
func (f *Filter) AddMany(keys [][]byte) error {
	if f.m == 0 {
		zeroPanic(zeroFilter)
	}
	k := int(f.k)
	if k > batchPositions {
		for _, key := range keys {
			h1, h2 := keyHash(f.hashID, f.seed, key, zeroFilter)
			f.addHash(h1, h2)
		}
		return nil
	}
	var pos [batchPositions]uint64
	b, m := f.bits, f.m
	inv := reciprocal(m)
	per := batchPositions / k
	for len(keys) > 0 {
		group := keys[:min(per, len(keys))]
		keys = keys[len(group):]
		pos := pos[:len(group)*k]
		f.positions(group, pos, m, inv)
		var added uint64
		for len(pos) >= k {
			newBit := false
			for _, x := range pos[:k] {
				w := &b[x>>6]
				mask := uint64(1) << (x & 63)
				if atomic.LoadUint64(w)&mask == 0 {
					newBit = setBit(w, mask, newBit)
				}
			}
			if newBit {
				added++
			}
			pos = pos[k:]
		}
		if added > 0 {
			f.n.Add(added)
		}
	}
	return nil
}

// positions hashes each key of group and stores its k bit positions
// (h1 + i·h2) mod m, key after key, in pos (len(group)·k entries). Then it
// loads the word of every position in a tight loop of independent loads, so
// that many cache misses are in flight at once and the words are cached
// when the caller uses them.
func (f *Filter) positions(group [][]byte, pos []uint64, m, inv uint64) {
	k := int(f.k)
	for j, key := range group {
		h1, h2 := keyHash(f.hashID, f.seed, key, zeroFilter)
		for i := range pos[j*k : j*k+k] {
			pos[j*k+i] = mod(h1, m, inv)
			h1 += h2
		}
	}
	b := f.bits
	for _, x := range pos {
		atomic.LoadUint64(&b[x>>6]) // the compiler keeps atomic loads
	}
}

// TestMany tests every key of keys and returns out with out[i] = Test(keys[i]).
// It reuses out's storage when cap(out) ≥ len(keys) (then it does not
// allocate) and returns a slice of length len(keys).
//
// Like AddMany it works on groups of ⌊batchPositions/k⌋ keys: it hashes
// the group, computes every bit position of every key (with the
// division-free exact reduction), loads all their words in a loop of
// independent loads, and only then tests each key's k bits, which are by
// then cached. A loop of Test overlaps the misses of consecutive keys only
// as far as its early exits (mispredicted branches) let the processor run
// ahead; TestMany keeps the misses of a whole group in flight, at the
// price of loading all k words of every key where Test stops at the first
// clear bit. For a filter larger than the cache it is faster per key than
// a loop of Test (BenchmarkClassicTestMany); each key still costs up to k
// cache lines, against one for an SBBF.
//
// Safe for concurrent use (bits are read with atomic loads); a key added
// concurrently may or may not be seen, as for Test.
func (f *Filter) TestMany(keys [][]byte, out []bool) []bool {
	if f.m == 0 {
		zeroPanic(zeroFilter)
	}
	out = slices.Grow(out[:0], len(keys))[:len(keys)]
	k := int(f.k)
	if k > batchPositions {
		for i, key := range keys {
			h1, h2 := keyHash(f.hashID, f.seed, key, zeroFilter)
			out[i] = f.TestHash(h1, h2)
		}
		return out
	}
	var pos [batchPositions]uint64
	b, m := f.bits, f.m
	inv := reciprocal(m)
	per := batchPositions / k
	for done := 0; done < len(keys); {
		group := keys[done:min(done+per, len(keys))]
		ps := pos[:len(group)*k]
		f.positions(group, ps, m, inv)
		res := out[done : done+len(group)]
		for i := range res {
			var miss uint64 // nonzero iff one of the key's bits is clear
			for _, x := range ps[i*k : i*k+k] {
				miss |= ^atomic.LoadUint64(&b[x>>6]) & (uint64(1) << (x & 63))
			}
			res[i] = miss == 0
		}
		done += len(group)
	}
	return out
}

// reciprocal returns ⌊(2^64−1)/m⌋ for mod; m ≥ 1.
func reciprocal(m uint64) uint64 { return math.MaxUint64 / m }

// mod returns x mod m exactly, without a division, given
// inv = reciprocal(m) (Barrett reduction). With q = ⌊x·inv/2^64⌋:
// inv·m ≥ 2^64 − m gives x·inv/2^64 > x/m − 1, so q ≥ ⌊x/m⌋ − 1; and
// inv·m < 2^64 gives q·m ≤ x. Hence r = x − q·m is in [0, 2m) and one
// conditional subtraction yields x mod m. The subtraction is branch-free
// (a data-dependent branch here would be mispredicted often).
func mod(x, m, inv uint64) uint64 {
	q, _ := bits.Mul64(x, inv)
	d, borrow := bits.Sub64(x-q*m, m, 0) // borrow = 1 iff x−q·m < m
	return d + m&-borrow
}

// Stats describes a filter's parameters and fill, with the library's
// shared field names (docs/LIBRARY.md). Each type's Stats method says what
// the fields mean for it (bits or cells, its own FPR formula).
type Stats struct {
	M       uint64 // bits (counters for Counting, cells for Stable)
	K       uint32 // probes per key
	Bytes   uint64 // memory of the bitset (counters, cells) in bytes
	N       uint64 // items added (see each type's Add)
	SetBits uint64 // bits set to one (nonzero counters or cells)

	// FillRatio is SetBits / M, in [0, 1].
	FillRatio float64
	// FPR is the estimated false-positive rate given the current fill:
	// FillRatio^K for the classic filter (each type's own formula
	// otherwise): the probability that a key never added tests positive.
	FPR float64
	// Cardinality is the number of distinct keys estimated from the fill
	// (Swamidass & Baldi 2007): −(m/k)·ln(1 − SetBits/m). It is +Inf when
	// every bit is set.
	Cardinality float64

	Capacity uint64  // items the filter was sized for; 0 if unknown
	P        float64 // false-positive rate it was sized for; 0 if unknown
}

// Stats returns the filter's statistics. Cost: one pass over the bitset
// (m/64 words). Safe for concurrent use; under concurrent Adds the values
// are a consistent lower bound, not a snapshot.
func (f *Filter) Stats() Stats {
	if f.m == 0 {
		zeroPanic(zeroFilter)
	}
	var set uint64
	for i := range f.bits {
		set += uint64(bits.OnesCount64(atomic.LoadUint64(&f.bits[i])))
	}
	st := classicStats(f.m, f.k, set)
	st.Bytes, st.N, st.Capacity, st.P = f.sizeBytes(), f.items(), f.capacity, f.targetP
	return st
}

// classicStats returns the Stats of m bits (counters, cells) with k probes
// of which set are set (nonzero): FillRatio = set/m, FPR = fill^k and
// Cardinality = −(m/k)·ln(1 − fill). The caller fills Bytes, N, Capacity
// and P.
func classicStats(m uint64, k uint32, set uint64) Stats {
	mf, kf := float64(m), float64(k)
	fill := float64(set) / mf
	return Stats{M: m, K: k, SetBits: set, FillRatio: fill, FPR: math.Pow(fill, kf), Cardinality: -(mf / kf) * math.Log1p(-fill)}
}

// Reset empties f: every bit cleared and N = 0, with the same m, k, hash,
// seed, capacity and target p. Cost: one pass over m/64 words; no
// allocation. Concurrent Tests are safe (words are cleared with atomic
// stores); Adds that run concurrently with Reset may or may not survive it.
func (f *Filter) Reset() {
	if f.m == 0 {
		zeroPanic(zeroFilter)
	}
	clearAtomic(f.bits)
	f.n.Store(0)
}

// clearAtomic zeroes words with atomic stores, so that concurrent atomic
// readers never race with it.
func clearAtomic(words []uint64) {
	for i := range words {
		atomic.StoreUint64(&words[i], 0)
	}
}

// Compatible returns nil if f and g can be merged: same m, k, hash ID and
// hash seed. Otherwise it returns an error wrapping ErrIncompatible that
// names both values, e.g. "bloom: incompatible filters: k 7 != k 5".
func (f *Filter) compatible(g *Filter) error {
	if f.m == 0 || g.m == 0 {
		zeroPanic(zeroFilter)
	}
	switch {
	case f.m != g.m:
		return fmt.Errorf("%w: m %d != m %d", ErrIncompatible, f.m, g.m)
	case f.k != g.k:
		return fmt.Errorf("%w: k %d != k %d", ErrIncompatible, f.k, g.k)
	case f.hashID != g.hashID:
		return fmt.Errorf("%w: hash %v != hash %v", ErrIncompatible, f.hashID, g.hashID)
	case f.seed != g.seed:
		return fmt.Errorf("%w: seed %#x != seed %#x", ErrIncompatible, f.seed, g.seed)
	}
	return nil
}

// Merge sets f to the union of f and g (bitwise OR), so f then tests
// positive for every key added to either; its false-positive rate is that
// of a filter holding both sets. The filters must be Compatible; otherwise
// f is unchanged and the error wraps ErrIncompatible. N becomes f.items()+g.items()
// (saturating), an upper bound on the items added to either; f.Merge(f)
// changes nothing. Capacity and
// target p are kept. Cost: one pass over m/64 words. Concurrent Adds to f
// and g are safe; the result contains at least the keys added to either
// before Merge started.
func (f *Filter) Merge(g *Filter) error {
	if err := f.compatible(g); err != nil {
		return err
	}
	if g == f {
		return nil // idempotent; N unchanged
	}
	for i := range f.bits {
		if v := atomic.LoadUint64(&g.bits[i]); v != 0 {
			atomic.OrUint64(&f.bits[i], v)
		}
	}
	s, c := bits.Add64(f.items(), g.items(), 0)
	if c != 0 {
		s = math.MaxUint64
	}
	f.n.Store(s)
	return nil
}

// Intersect sets f to the bitwise AND of f and g. Every key added to both
// still tests positive (no false negatives for the intersection), but the
// false-positive rate can be higher than that of a filter built from the
// intersection of the two sets. The filters must be Compatible; otherwise f
// is unchanged and the error wraps ErrIncompatible. N becomes
// min(f.items(), g.items()), an upper bound on the items in both. Cost: one pass
// over m/64 words. Must not run concurrently with Adds to f (they could be
// lost); concurrent Tests are safe.
func (f *Filter) Intersect(g *Filter) error {
	if err := f.compatible(g); err != nil {
		return err
	}
	for i := range f.bits {
		atomic.AndUint64(&f.bits[i], atomic.LoadUint64(&g.bits[i]))
	}
	f.n.Store(min(f.items(), g.items()))
	return nil
}

// Clone returns an independent copy of f. Cost: one allocation of
// sizeBytes() and one pass; only non-zero words are written, so the pages
// of the copy (fresh memory) that would hold only zero words stay
// untouched, as in f (a copy-on-write clone of a large, sparsely used
// filter costs resident memory for the used pages only). Safe for
// concurrent use (see Filter).
func (f *Filter) clone() *Filter {
	c := &Filter{
		bits:     make([]uint64, len(f.bits)),
		m:        f.m,
		k:        f.k,
		hashID:   f.hashID,
		seed:     f.seed,
		capacity: f.capacity,
		targetP:  f.targetP,
	}
	c.n.Store(f.items())
	for i := range f.bits {
		if w := atomic.LoadUint64(&f.bits[i]); w != 0 {
			c.bits[i] = w
		}
	}
	return c
}

// Equal reports whether f and g have the same parameters (m, k, hash ID,
// seed, capacity, target p), the same N and the same bits.
func (f *Filter) equal(g *Filter) bool {
	if f.compatible(g) != nil || f.items() != g.items() || f.capacity != g.capacity ||
		math.Float64bits(f.targetP) != math.Float64bits(g.targetP) {
		return false
	}
	for i := range f.bits {
		if atomic.LoadUint64(&f.bits[i]) != atomic.LoadUint64(&g.bits[i]) {
			return false
		}
	}
	return true
}

// ReadBitsAt copies the raw bitset, starting at byte offset off, into dst
// and returns the number of bytes copied: min(len(dst), sizeBytes()−off),
// or 0 if off ≥ sizeBytes(). Byte j of the bitset holds bits 8j … 8j+7, bit
// x under mask 1<<(x mod 8) (the little-endian serialization of the words).
// This is the data part of RedisBloom's SCANDUMP. No allocation. Safe for
// concurrent use (bytes set concurrently may or may not be seen).
func (f *Filter) readBitsAt(dst []byte, off uint64) int {
	size := f.sizeBytes()
	if off >= size {
		return 0
	}
	if uint64(len(dst)) > size-off {
		dst = dst[:size-off]
	}
	var tmp [8]byte
	i := 0
	for i < len(dst) {
		if off&7 == 0 && len(dst)-i >= 8 { // whole words: no copy through tmp
			binary.LittleEndian.PutUint64(dst[i:], atomic.LoadUint64(&f.bits[off>>3]))
			i += 8
			off += 8
			continue
		}
		binary.LittleEndian.PutUint64(tmp[:], atomic.LoadUint64(&f.bits[off>>3]))
		c := copy(dst[i:], tmp[off&7:])
		i += c
		off += uint64(c)
	}
	return len(dst)
}

// WriteBitsAt overwrites the raw bitset at byte offset off with src (the
// inverse of ReadBitsAt; RedisBloom's LOADCHUNK). It returns an error
// wrapping ErrInvalidParameter, and changes nothing, if off+len(src) >
// sizeBytes(). Bits at positions ≥ numBits() (padding in the last word) are kept
// zero. It does not change N (use SetN). It may clear bits, so it must not
// run concurrently with Adds to f (they could be lost); it never tears a
// concurrent Test's word read.
func (f *Filter) writeBitsAt(src []byte, off uint64) error {
	size := f.sizeBytes()
	if off > size || uint64(len(src)) > size-off {
		return fmt.Errorf("%w: writing %d bytes at offset %d overflows the %d-byte bitset", ErrInvalidParameter, len(src), off, size)
	}
	var val, msk [8]byte
	for len(src) > 0 {
		wi := off >> 3
		start := off & 7
		val, msk = [8]byte{}, [8]byte{}
		c := copy(val[start:], src)
		for j := start; j < start+uint64(c); j++ {
			msk[j] = 0xff
		}
		v := binary.LittleEndian.Uint64(val[:])
		mask := binary.LittleEndian.Uint64(msk[:])
		if wi == uint64(len(f.bits))-1 {
			mask &= lastWordMask(f.m)
		}
		w := &f.bits[wi]
		for {
			old := atomic.LoadUint64(w)
			if atomic.CompareAndSwapUint64(w, old, old&^mask|v&mask) {
				break
			}
		}
		src = src[c:]
		off += uint64(c)
	}
	return nil
}

// lastWordMask returns the mask of the bits of the last word that are below m.
func lastWordMask(m uint64) uint64 {
	if r := m & 63; r != 0 {
		return uint64(1)<<r - 1
	}
	return math.MaxUint64
}
