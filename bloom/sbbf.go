package bloom

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"github.com/probly/probly/internal/binfmt"
)

// HashXXH64 is the hash of the split-block filter (SBBF): one 64-bit XXH64
// of the key with the filter's seed. Seed 0 is the Parquet hash (BloomFilter.md,
// "XXHASH"), which is what Hash64 returns.
const HashXXH64 HashID = binfmt.HashXXH64

const (
	// MaxSBBFBlocks is the largest number of 256-bit blocks of one SBBF:
	// 2^32 blocks = MaxBits bits = 128 GiB. The block index
	// ((h >> 32) · blocks) >> 32 is exact in 64-bit arithmetic up to this
	// size, and always less than blocks.
	MaxSBBFBlocks uint64 = MaxBits / sbbfBlockBits

	sbbfBlockBits  = 256
	sbbfBlockBytes = 32
	sbbfBlockWords = 4 // uint64 words per block
)

// The eight salts of the Parquet split-block filter (BloomFilter.md): lane
// i of a block gets bit (x·salt_i mod 2^32) >> 27 for the low 32 bits x of
// the hash.
const (
	salt0 = 0x47b6137b
	salt1 = 0x44974d91
	salt2 = 0x8824ad5b
	salt3 = 0xa2b7289d
	salt4 = 0x705495c7
	salt5 = 0x2df1424b
	salt6 = 0x9efc4947
	salt7 = 0x5c6bfb31
)

// Hash64 returns XXH64 of key with seed 0: the Parquet split-block filter's
// hash (hash ID HashXXH64), for use with the SBBF *Hash methods. It does not
// allocate.
func Hash64(key []byte) uint64 { return xxhash.Sum64(key) }

// Hash64String is Hash64 for a string key (no copy).
func hash64String(key string) uint64 { return xxhash.Sum64String(key) }

func xxh64(seed uint64, key []byte) uint64 {
	if seed == 0 {
		return xxhash.Sum64(key)
	}
	var d xxhash.Digest
	d.ResetWithSeed(seed)
	_, _ = d.Write(key)
	return d.Sum64()
}

func xxh64String(seed uint64, key string) uint64 {
	if seed == 0 {
		return xxhash.Sum64String(key)
	}
	var d xxhash.Digest
	d.ResetWithSeed(seed)
	_, _ = d.WriteString(key)
	return d.Sum64()
}

// SBBF is a split-block Bloom filter, bit-compatible with the Parquet
// format's Bloom filters (BloomFilter.md): a blocked Bloom filter (Putze,
// Sanders & Singler 2007) of 256-bit blocks, each split into eight 32-bit
// lanes with one bit per lane per key.
//
// A key's 64-bit hash h (XXH64, seed 0 for Parquet) selects block
//
//	b = ((h >> 32) · blocks) >> 32
//
// and, with x the low 32 bits of h, sets or tests bit
// (x·salt_i mod 2^32) >> 27 of lane i of that block, i = 0 … 7 (the eight
// salts of the spec). Lane i of block b is the little-endian uint32 at byte
// offset 32·b + 4·i of the bitset (ParquetBitset); in memory two lanes share
// one uint64 word, lane 2j in its low half, which is the same bytes.
//
// Every operation touches one 32-byte block, so a lookup costs one cache
// miss at most, against about k for a classic Filter; the price is a higher
// false-positive rate at equal memory, which the sizing accounts for (see
// sbbfSizing). Add and Test hash the key once and do not allocate.
//
// Concurrency: as for Filter. Add, Test and their forms, the batch methods,
// Stats, Merge and Intersect (on the receiver) and the encoders are safe
// from many goroutines at once (atomic loads, atomic OR);
// UnmarshalBinary/ReadFrom must not run
// concurrently with other use.
//
// The zero SBBF is not usable; create one with NewSBBF, NewSBBFWithConfig,
// NewSBBFFromParquet or DecodeParquet, or call UnmarshalBinary
// / ReadFrom on it. On the zero value the methods that read or change bits
// (Add, Test and their forms, the batch methods, Stats, Compatible, Merge,
// Intersect, the encoders) panic with a message naming these; the getters
// return zeros.
type SBBF struct {
	bits     []uint64 // sbbfBlockWords words per block
	blocks   uint64
	seed     uint64
	n        atomic.Uint64
	capacity uint64
	targetP  float64
}

// sbbfFalsePositiveRate returns the expected false-positive rate of an SBBF
// of the given number of blocks after n distinct keys. A block's load L is
// Poisson with mean λ = n/blocks, and a lane holding L keys has each bit
// set with probability 1 − (31/32)^L, so
//
//	FPR = Σ_{L≥0} e^(−λ)·λ^L/L! · (1 − (31/32)^L)^8.
//
// The sum is evaluated numerically (to about 1e-15 relative). It is larger
// than the classic (1 − e^(−8n/m))^8 for the same m = 256·blocks because
// blocks are unevenly loaded (Putze, Sanders & Singler 2007). It returns
// 0 for n = 0 and NaN for blocks = 0.
func sbbfFalsePositiveRate(blocks, n uint64) float64 {
	if blocks == 0 {
		return math.NaN()
	}
	return sbbfFPR(float64(n) / float64(blocks))
}

// sbbfFPR is the expected false-positive rate at mean block load lambda.
func sbbfFPR(lambda float64) float64 {
	if !(lambda > 0) {
		return 0
	}
	if lambda > 1e5 {
		// Every lane is full for all practical loads.
		return math.Pow(-math.Expm1(lambda*math.Log1p(-1.0/32)), 8)
	}
	// Sum the Poisson terms from the mode outwards, each from its
	// neighbour, until they no longer matter.
	laneSet := func(l float64) float64 { return math.Pow(-math.Expm1(l*math.Log1p(-1.0/32)), 8) }
	mode := math.Floor(lambda)
	lg, _ := math.Lgamma(mode + 1)
	pm := math.Exp(-lambda + mode*math.Log(lambda) - lg)
	sum := pm * laneSet(mode)
	p := pm
	for l := mode + 1; ; l++ {
		p *= lambda / l
		t := p * laneSet(l)
		sum += t
		if p < 1e-18*pm || (t < 1e-17*sum && l > lambda+10) {
			break
		}
	}
	p = pm
	for l := mode; l >= 1; l-- {
		p *= l / lambda
		t := p * laneSet(l-1)
		sum += t
		if p < 1e-18*pm || t < 1e-17*sum {
			break
		}
	}
	return sum
}

// sbbfSizing returns the smallest number of blocks whose expected
// false-positive rate after n keys, by the block-aware formula of
// sbbfFalsePositiveRate, is at most p. It is found by a binary search; the
// result is about 6.0 bits per key at p = 10%, 10.5 at 1% and 16.9 at 0.1%
// (the classic filter needs 4.8, 9.6 and 14.4). It returns an error wrapping
// ErrInvalidParameter if n = 0 or p ∉ (0, 1) (NaN, ±Inf), and one wrapping
// ErrTooLarge if even MaxSBBFBlocks blocks do not reach p (an SBBF cannot go
// below about 2^-40·n/blocks).
func sbbfSizing(n uint64, p float64) (blocks uint64, err error) {
	if n == 0 {
		return 0, fmt.Errorf("%w: capacity n must be at least 1, got 0", ErrInvalidParameter)
	}
	if !(p > 0 && p < 1) {
		return 0, fmt.Errorf("%w: false-positive rate p must be in (0, 1), got %v", ErrInvalidParameter, p)
	}
	ok := func(b uint64) bool { return sbbfFPR(float64(n)/float64(b)) <= p }
	if !ok(MaxSBBFBlocks) {
		return 0, fmt.Errorf("%w: n=%d, p=%v needs more than MaxSBBFBlocks (%d) split blocks", ErrTooLarge, n, p, MaxSBBFBlocks)
	}
	lo, hi := uint64(0), MaxSBBFBlocks // ok(hi); lo = 0 stands for "not ok"
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// NewSBBF returns an empty SBBF sized by sbbfSizing for n keys at
// false-positive rate p, with hash XXH64 seed 0 (Parquet's). It records n
// and p as its capacity and target p. Errors are sbbfSizing's. It
// allocates 32 bytes per block.
func NewSBBF(n uint64, p float64) (*SBBF, error) {
	b, err := sbbfSizing(n, p)
	if err != nil {
		return nil, err
	}
	s := newSBBF(b)
	s.capacity, s.targetP = n, p
	return s, nil
}

// SBBFConfig holds the raw parameters of an SBBF (NewSBBFWithConfig).
type SBBFConfig struct {
	// Blocks is the number of 256-bit blocks (32 bytes each), in
	// [1, MaxSBBFBlocks]. Parquet writers usually choose a power of two
	// between 1 and 2^22 blocks (32 bytes to 128 MiB); the format allows
	// any count.
	Blocks uint64
	// Seed is the XXH64 seed of the key hash; default 0, Parquet's. A
	// nonzero seed makes the filter unreadable by Parquet readers (which
	// always use seed 0) but stops anyone who does not know the seed from
	// crafting false positives.
	Seed uint64
}

// NewSBBFWithConfig returns an empty SBBF of exactly c.Blocks blocks
// (32·Blocks bytes), hash XXH64 seeded with c.Seed. Errors name the field:
// Blocks = 0 wraps ErrInvalidParameter, Blocks > MaxSBBFBlocks ErrTooLarge.
// Capacity and target p are unknown (0 in Stats).
func NewSBBFWithConfig(c SBBFConfig) (*SBBF, error) {
	if err := checkBlocks(c.Blocks); err != nil {
		return nil, err
	}
	s := newSBBF(c.Blocks)
	s.seed = c.Seed
	return s, nil
}

// newSBBF returns an empty SBBF of blocks blocks (checked by the caller),
// seed 0.
func newSBBF(blocks uint64) *SBBF {
	return &SBBF{bits: make([]uint64, blocks*sbbfBlockWords), blocks: blocks}
}

func checkBlocks(blocks uint64) error {
	if blocks == 0 {
		return fmt.Errorf("%w: Blocks must be at least 1, got 0", ErrInvalidParameter)
	}
	if blocks > MaxSBBFBlocks {
		return fmt.Errorf("%w: Blocks=%d is more than MaxSBBFBlocks (%d)", ErrTooLarge, blocks, MaxSBBFBlocks)
	}
	return nil
}

// Blocks returns the number of 256-bit blocks.
func (s *SBBF) numBlocks() uint64 { return s.blocks }

// M returns the number of bits, 256·numBlocks().
func (s *SBBF) numBits() uint64 { return s.blocks * sbbfBlockBits }

// K returns the number of bits per key: always 8, one per lane.
func (s *SBBF) numHashes() uint32 { return 8 }

// SizeBytes returns the size of the bitset in bytes, 32·numBlocks().
func (s *SBBF) sizeBytes() uint64 { return s.blocks * sbbfBlockBytes }

// HashID returns HashXXH64.
func (s *SBBF) hashKind() HashID { return HashXXH64 }

// HashSeed returns the XXH64 seed (0 = Parquet).
func (s *SBBF) hashSeed() uint64 { return s.seed }

// SetHashSeed sets the XXH64 seed the key methods use. It changes no bits:
// call it before adding anything. A nonzero seed makes the filter
// unreadable by Parquet readers (which always use seed 0) but stops anyone
// who does not know the seed from crafting false positives. Not safe for
// concurrent use.
func (s *SBBF) setHashSeed(seed uint64) { s.seed = seed }

// N returns the number of adds that set at least one new bit (as for
// Filter.N). A filter read from a Parquet bitset starts at 0.
func (s *SBBF) items() uint64 { return s.n.Load() }

// SetN overwrites the item count. It changes no bits.
func (s *SBBF) setN(n uint64) { s.n.Store(n) }

// SetSizing records the capacity and target false-positive rate (for
// Stats and the encoding); p must be 0 or in (0, 1). Not safe for
// concurrent use.
func (s *SBBF) setSizing(capacity uint64, p float64) error {
	if !(p == 0 || (p > 0 && p < 1)) {
		return fmt.Errorf("%w: target p must be 0 or in (0, 1), got %v", ErrInvalidParameter, p)
	}
	s.capacity, s.targetP = capacity, p
	return nil
}

// sbbfMask returns the bits of the eight lanes for the low hash half x, two
// lanes per word: lane 2j in bits 0–31 of word j, lane 2j+1 in bits 32–63.
func sbbfMask(x uint32) (m0, m1, m2, m3 uint64) {
	m0 = 1<<(x*salt0>>27) | 1<<(x*salt1>>27+32)
	m1 = 1<<(x*salt2>>27) | 1<<(x*salt3>>27+32)
	m2 = 1<<(x*salt4>>27) | 1<<(x*salt5>>27+32)
	m3 = 1<<(x*salt6>>27) | 1<<(x*salt7>>27+32)
	return
}

// sbbfIndex returns the block of hash h among blocks (< blocks for
// blocks ≤ 2^32).
func sbbfIndex(h, blocks uint64) uint64 { return (h >> 32) * blocks >> 32 }

// Add inserts key. It always returns nil: a split-block filter cannot fail
// (beyond its capacity its false-positive rate rises). N grows by one if
// at least one of key's 8 bits was newly set. One hash, one block; no
// allocation. Safe for concurrent use.
func (s *SBBF) Add(key []byte) error {
	s.addHash(xxh64(s.seed, key))
	return nil
}

// addString is Add for a string key (no copy), reporting addHash's result.
func (s *SBBF) addString(key string) bool { return s.addHash(xxh64String(s.seed, key)) }

// AddHash inserts the item whose 64-bit hash is h (XXH64 with the filter's
// seed for keys; any well-mixed 64-bit hash if the caller always uses the
// same one). It always returns nil. No allocation. Safe for concurrent use.
func (s *SBBF) AddHash(h uint64) error {
	s.addHash(h)
	return nil
}

// addHash is AddHash reporting whether at least one bit was newly set.
func (s *SBBF) addHash(h uint64) bool {
	if s.blocks == 0 {
		zeroPanic(zeroSBBF)
	}
	if sbbfSet(sbbfBlock(s.bits, sbbfIndex(h, s.blocks)), uint32(h)) {
		s.n.Add(1)
		return true
	}
	return false
}

// sbbfSet sets the 8 bits of x in block b and reports whether one was new.
func sbbfSet(b *[4]uint64, x uint32) bool {
	m0, m1, m2, m3 := sbbfMask(x)
	added := orWord(&b[0], m0, false)
	added = orWord(&b[1], m1, added)
	added = orWord(&b[2], m2, added)
	return orWord(&b[3], m3, added)
}

// orWord sets mask in *w and returns added || (a bit of mask was clear).
// It skips the atomic write when every bit is already set, and uses the
// cheaper OR that does not return the old value once a new bit is known.
func orWord(w *uint64, mask uint64, added bool) bool {
	if atomic.LoadUint64(w)&mask == mask {
		return added
	}
	if added {
		atomic.OrUint64(w, mask)
		return true
	}
	return atomic.OrUint64(w, mask)&mask != mask
}

// Test reports whether key may be in the set (false: definitely not). One
// hash, one block of 32 bytes, no branch on the bits; no allocation. Safe
// for concurrent use.
func (s *SBBF) Test(key []byte) bool { return s.TestHash(xxh64(s.seed, key)) }

// TestString is Test for a string key (no copy).
func (s *SBBF) testString(key string) bool { return s.TestHash(xxh64String(s.seed, key)) }

// TestHash reports whether all 8 bits of hash h are set.
func (s *SBBF) TestHash(h uint64) bool {
	if s.blocks == 0 {
		zeroPanic(zeroSBBF)
	}
	return sbbfHas(sbbfBlock(s.bits, sbbfIndex(h, s.blocks)), uint32(h))
}

func sbbfHas(b *[4]uint64, x uint32) bool {
	m0, m1, m2, m3 := sbbfMask(x)
	return (atomic.LoadUint64(&b[0])&m0^m0)|(atomic.LoadUint64(&b[1])&m1^m1)|
		(atomic.LoadUint64(&b[2])&m2^m2)|(atomic.LoadUint64(&b[3])&m3^m3) == 0
}

// TestAndAdd adds key and reports whether it was (maybe) present before:
// true exactly when all 8 bits were already set (false: key was certainly
// new). The error is always nil. Safe for concurrent use.
func (s *SBBF) TestAndAdd(key []byte) (present bool, err error) {
	return !s.addHash(xxh64(s.seed, key)), nil
}

// Stats returns the filter's statistics, with K = 8 and M = 256·blocks:
//
//   - FPR is the exact false-positive rate of a random key given
//     the current bits: the mean over blocks of Π_i (set bits of lane i)/32;
//   - Cardinality is −32·blocks·ln(1 − fill), which inverts the
//     expected fill 1 − e^(−λ/32) at Poisson block load λ = n/blocks (it is
//     the classic −(m/k)·ln(1 − fill) with k = 8), +Inf when full.
//
// Cost: one pass over the bitset. Safe for concurrent use.
func (s *SBBF) Stats() Stats {
	if s.blocks == 0 {
		zeroPanic(zeroSBBF)
	}
	var set uint64
	var fpr float64
	for b := uint64(0); b < s.blocks; b++ {
		blk := sbbfBlock(s.bits, b)
		q := 1.0
		for j := range blk {
			w := atomic.LoadUint64(&blk[j])
			lo, hi := bits.OnesCount32(uint32(w)), bits.OnesCount32(uint32(w>>32))
			set += uint64(lo + hi)
			q *= float64(lo) * float64(hi) / 1024
		}
		fpr += q
	}
	m := float64(s.numBits())
	fill := float64(set) / m
	return Stats{
		M:           s.numBits(),
		K:           8,
		Bytes:       s.sizeBytes(),
		N:           s.items(),
		SetBits:     set,
		FillRatio:   fill,
		FPR:         fpr / float64(s.blocks),
		Cardinality: -(m / 8) * math.Log1p(-fill),
		Capacity:    s.capacity,
		P:           s.targetP,
	}
}

// Reset empties s: every bit cleared and N = 0, with the same blocks,
// seed, capacity and target p. Cost: one pass; no allocation. Concurrent
// Tests are safe (atomic stores); Adds concurrent with Reset may or may
// not survive it.
func (s *SBBF) Reset() {
	if s.blocks == 0 {
		zeroPanic(zeroSBBF)
	}
	clearAtomic(s.bits)
	s.n.Store(0)
}

// Compatible returns nil if s and g can be merged (same number of blocks
// and seed), else an error wrapping ErrIncompatible naming both values.
func (s *SBBF) compatible(g *SBBF) error {
	if s.blocks == 0 || g.blocks == 0 {
		zeroPanic(zeroSBBF)
	}
	switch {
	case s.blocks != g.blocks:
		return fmt.Errorf("%w: blocks %d != blocks %d", ErrIncompatible, s.blocks, g.blocks)
	case s.seed != g.seed:
		return fmt.Errorf("%w: seed %#x != seed %#x", ErrIncompatible, s.seed, g.seed)
	}
	return nil
}

// Merge sets s to the bitwise OR of s and g (see Filter.Merge: same rules
// for N, errors and concurrency).
func (s *SBBF) Merge(g *SBBF) error {
	if err := s.compatible(g); err != nil {
		return err
	}
	if g == s {
		return nil
	}
	for i := range s.bits {
		if v := atomic.LoadUint64(&g.bits[i]); v != 0 {
			atomic.OrUint64(&s.bits[i], v)
		}
	}
	n, c := bits.Add64(s.items(), g.items(), 0)
	if c != 0 {
		n = math.MaxUint64
	}
	s.n.Store(n)
	return nil
}

// Intersect sets s to the bitwise AND of s and g (see Filter.Intersect:
// keys added to both stay present; must not run concurrently with Adds).
func (s *SBBF) Intersect(g *SBBF) error {
	if err := s.compatible(g); err != nil {
		return err
	}
	for i := range s.bits {
		atomic.AndUint64(&s.bits[i], atomic.LoadUint64(&g.bits[i]))
	}
	s.n.Store(min(s.items(), g.items()))
	return nil
}

// Clone returns an independent copy of s.
func (s *SBBF) clone() *SBBF {
	c := &SBBF{bits: make([]uint64, len(s.bits)), blocks: s.blocks, seed: s.seed, capacity: s.capacity, targetP: s.targetP}
	c.n.Store(s.items())
	for i := range s.bits {
		c.bits[i] = atomic.LoadUint64(&s.bits[i])
	}
	return c
}

// Equal reports whether s and g have the same parameters, N and bits.
func (s *SBBF) equal(g *SBBF) bool {
	if s.compatible(g) != nil || s.items() != g.items() || s.capacity != g.capacity ||
		math.Float64bits(s.targetP) != math.Float64bits(g.targetP) {
		return false
	}
	for i := range s.bits {
		if atomic.LoadUint64(&s.bits[i]) != atomic.LoadUint64(&g.bits[i]) {
			return false
		}
	}
	return true
}
