package bloom

import (
	"fmt"
	"math"
	"math/bits"
)

// Sizing chooses the bit count m and probe count k of a sub-filter that must
// hold capacity items at false-positive rate p. It returns an error for
// parameters it cannot serve. nil (the default) sizes each sub-filter to
// meet its rate with high probability.
type Sizing func(capacity uint64, p float64) (m uint64, k uint32, err error)

const (
	// DefaultTightening is the tightening ratio r used when
	// ScalableConfig.Tightening is 0 (RedisBloom's ratio).
	DefaultTightening = 0.5

	// DefaultMinErrorRate is the floor on a sub-filter's error rate used when
	// ScalableConfig.MinErrorRate is 0. It only keeps the error rate from
	// underflowing to 0 after about a thousand links (at r = 0.5 it is
	// reached after ~990 links from p = 0.01), so it never changes a
	// realistic chain; a sub-filter at this rate needs about 1438 bits per
	// item and k ≈ 997 probes.
	DefaultMinErrorRate = 1e-300
)

// ScalableConfig configures a Scalable. The zero values of Tightening,
// MinErrorRate, Sizing, MaxBytes and HashID select defaults. It is a plain
// value; a Sizing function must be safe to call from whichever goroutine
// adds to the Scalable.
type ScalableConfig struct {
	// Capacity is the number of items the first sub-filter holds, ≥ 1.
	Capacity uint64

	// ErrorRate is the target overall false-positive rate p0, in (0, 1).
	ErrorRate float64

	// Growth multiplies the capacity of each new sub-filter: sub-filter i
	// holds Capacity·Growth^i items. 0 means DefaultGrowth (2): a
	// Scalable grows by default. NoGrowth makes it non-scaling: one
	// sub-filter at exactly ErrorRate (no tightening), and an Add beyond
	// its capacity returns ErrFull. Growth 1 adds sub-filters of equal
	// capacity.
	Growth uint64

	// Tightening is the ratio r in (0, 1) between the error rates of
	// consecutive sub-filters: sub-filter i gets p0·(1−r)·r^i, so the
	// compound false-positive rate, at most Σ p_i, stays ≤ p0 (for
	// sub-filters large enough to meet their rates; see the package doc on
	// small capacities). 0 means DefaultTightening (0.5: RedisBloom's p0/2,
	// p0/4, …).
	Tightening float64

	// MinErrorRate is the floor on a sub-filter's error rate, in (0, 1) and
	// below ErrorRate (ErrInvalidParameter otherwise); 0 means
	// DefaultMinErrorRate (which, unlike an explicit floor, is also
	// accepted for an ErrorRate at or below it: the first sub-filter then
	// gets the floor rate). Once the floor is reached every further
	// sub-filter gets the floor rate, and the bound Σ p_i ≤ p0 grows by the
	// floor per sub-filter.
	MinErrorRate float64

	// Sizing computes each sub-filter's m and k from its capacity and error
	// rate; nil means the default sizing, which makes each sub-filter meet its
	// rate with high probability even when it is small (optimalSizing
	// alone lets sub-filters of a few hundred items exceed their rates by
	// about 10%). It is not encoded.
	Sizing Sizing

	// MaxBytes bounds the total bitset size of all sub-filters in bytes
	// (Scalable.SizeBytes); 0 means no limit. Creating or growing beyond it
	// returns ErrTooLarge and changes nothing.
	MaxBytes uint64

	// HashID and Seed name the hash that makes the (h1, h2) pairs; HashID
	// 0 means HashXXH3_128, Seed is its seed (default 0). The key methods (Add, Test) hash with it; with
	// any other ID they panic (see CanHashKeys): use the *Hash methods.
	HashID HashID
	Seed   uint64
}

// DefaultGrowth is the growth factor used when ScalableConfig.Growth is 0.
const DefaultGrowth = 2

// NoGrowth, as ScalableConfig.Growth, makes a non-scaling Scalable.
const NoGrowth = ^uint64(0)

// withDefaults validates cfg and fills in its defaults. Inside a Scalable
// (and in its encoding) Growth 0 means non-scaling.
func (cfg ScalableConfig) withDefaults() (ScalableConfig, error) {
	switch cfg.Growth {
	case 0:
		cfg.Growth = DefaultGrowth
	case NoGrowth:
		cfg.Growth = 0
	}
	return cfg.validate(true)
}

// validate is withDefaults; checkFloor enables the rule MinErrorRate <
// ErrorRate for an explicit floor, which the decoder does not apply (an
// encoding records its floor, and one written before the rule existed
// must still load: a floor at or above the rate loses no item, it only
// sizes sub-filters for a higher rate).
func (cfg ScalableConfig) validate(checkFloor bool) (ScalableConfig, error) {
	if cfg.Capacity == 0 {
		return cfg, fmt.Errorf("%w: Capacity must be at least 1, got 0", ErrInvalidParameter)
	}
	if !(cfg.ErrorRate > 0 && cfg.ErrorRate < 1) {
		return cfg, fmt.Errorf("%w: ErrorRate must be in (0, 1), got %v", ErrInvalidParameter, cfg.ErrorRate)
	}
	if cfg.Tightening == 0 {
		cfg.Tightening = DefaultTightening
	}
	if !(cfg.Tightening > 0 && cfg.Tightening < 1) {
		return cfg, fmt.Errorf("%w: Tightening must be in (0, 1), got %v", ErrInvalidParameter, cfg.Tightening)
	}
	explicitFloor := cfg.MinErrorRate != 0
	if !explicitFloor {
		cfg.MinErrorRate = DefaultMinErrorRate
	}
	if !(cfg.MinErrorRate > 0 && cfg.MinErrorRate < 1) {
		return cfg, fmt.Errorf("%w: MinErrorRate must be in (0, 1), got %v", ErrInvalidParameter, cfg.MinErrorRate)
	}
	if checkFloor && explicitFloor && cfg.MinErrorRate >= cfg.ErrorRate {
		// A floor at or above the target would give the first sub-filter
		// the floor's rate, not the target (MinErrorRate 0.5 with
		// ErrorRate 0.01 made a filter with a 48 % false-positive rate).
		return cfg, fmt.Errorf("%w: MinErrorRate %v must be below ErrorRate %v", ErrInvalidParameter, cfg.MinErrorRate, cfg.ErrorRate)
	}
	if cfg.HashID == 0 {
		cfg.HashID = HashXXH3_128
	}
	return cfg, nil
}

// link is one sub-filter of a Scalable: its Filter, the number of items it
// was sized for, and the error rate it was sized for. Filter.items() is the
// number of items inserted into it (RedisBloom's link "size"). A link is a
// plain value; the Filter it points to follows the Filter concurrency rules,
// and belongs to the Scalable (read it, do not modify it).
type link struct {
	Filter    *Filter
	Capacity  uint64
	ErrorRate float64
}

// Scalable is a scalable Bloom filter (Almeida, Baquero, Preguiça & Hutchison
// 2007): a chain of classic Filters. Items go into the newest sub-filter;
// when it holds its capacity, a new sub-filter with Growth times the
// capacity and Tightening times the error rate is appended, so the set can
// grow without a bound known in advance while the compound false-positive
// rate stays at most ErrorRate. Test probes every sub-filter: cost is the sum
// of their k's in the worst case. Memory is the sum of the sub-filters'.
//
// Its Add semantics are RedisBloom's SBChain_Add exactly (see AddHash), so
// the same code serves library users and the server's BF.* commands.
//
// Concurrency: Scalable is not safe for concurrent use when any goroutine
// modifies it (Add*, UnmarshalBinary); the caller must lock. Concurrent
// read-only use (Test*, Stats, encoding) is safe.
//
// The zero Scalable is not usable (it has no sub-filter and no
// configuration): create one with NewScalable or NewScalableWithConfig,
// or call UnmarshalBinary / ReadFrom on it. On the zero
// value Add, Test and their forms, Stats and the encoders panic with a
// message naming these.
type Scalable struct {
	cfg   ScalableConfig
	links []link
	bytes uint64 // Σ links' SizeBytes
}

// NewScalable returns a growing Scalable whose first sub-filter holds n
// items and whose compound false-positive rate stays at most p: it is
// NewScalableWithConfig(ScalableConfig{Capacity: n, ErrorRate: p}), so
// growth 2 and tightening 0.5 (sub-filter i holds n·2^i items at rate
// p·0.5^(i+1)). Errors: ErrInvalidParameter for n = 0 or p ∉ (0, 1)
// (NaN and ±Inf included), ErrTooLarge if the first sub-filter exceeds
// MaxBits.
func NewScalable(n uint64, p float64) (*Scalable, error) {
	return NewScalableWithConfig(ScalableConfig{Capacity: n, ErrorRate: p})
}

// NewScalableWithConfig returns a Scalable with one empty sub-filter of
// cfg.Capacity items; it grows unless cfg.Growth is NoGrowth. Errors:
// ErrInvalidParameter for a configuration out of range (see
// ScalableConfig), the Sizing's errors, and ErrTooLarge if the first
// sub-filter exceeds MaxBits or MaxBytes.
func NewScalableWithConfig(cfg ScalableConfig) (*Scalable, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Scalable{cfg: cfg}
	p := cfg.ErrorRate
	if cfg.Growth != 0 {
		p *= 1 - cfg.Tightening
	}
	l, err := s.newLink(cfg.Capacity, max(p, cfg.MinErrorRate))
	if err != nil {
		return nil, err
	}
	s.links = []link{l}
	s.bytes = l.Filter.sizeBytes()
	return s, nil
}

// newLink sizes and allocates a sub-filter, checking MaxBytes before any
// allocation. It does not modify s.
func (s *Scalable) newLink(capacity uint64, p float64) (link, error) {
	sizing := s.cfg.Sizing
	if sizing == nil {
		sizing = chainSizingFn
	}
	m, k, err := sizing(capacity, p)
	if err != nil {
		return link{}, err
	}
	if err := checkMK(m, k); err != nil {
		return link{}, err
	}
	if b := words(m) * 8; s.cfg.MaxBytes != 0 && (b > s.cfg.MaxBytes || s.bytes > s.cfg.MaxBytes-b) {
		return link{}, fmt.Errorf("%w: sub-filter of %d bytes would bring the total to %d bytes, over the limit of %d", ErrTooLarge, b, s.bytes+b, s.cfg.MaxBytes)
	}
	f := newFilter(m, k)
	f.hashID, f.seed = s.cfg.HashID, s.cfg.Seed
	f.capacity, f.targetP = capacity, p
	return link{Filter: f, Capacity: capacity, ErrorRate: p}, nil
}

// Add inserts key (hashed with the configured hash) as AddHash does. The
// error is only about resources: ErrFull when a non-scaling chain holds its
// capacity, ErrTooLarge when growing would pass MaxBytes or MaxBits; the
// key is then not added and nothing changed.
func (s *Scalable) Add(key []byte) error {
	h1, h2 := keyHash(s.cfg.HashID, s.cfg.Seed, key, zeroScalable)
	_, err := s.addHash(h1, h2)
	return err
}

// addString is Add for a string key, reporting addHash's result.
func (s *Scalable) addString(key string) (bool, error) {
	h1, h2 := keyHashString(s.cfg.HashID, s.cfg.Seed, key, zeroScalable)
	return s.addHash(h1, h2)
}

// AddHash is Add for a hash pair (h1, h2), with RedisBloom's SBChain_Add
// semantics (see addHash).
func (s *Scalable) AddHash(h1, h2 uint64) error {
	_, err := s.addHash(h1, h2)
	return err
}

// TestAndAdd adds key and reports whether it was (maybe) present before:
// true if a sub-filter already had all of key's bits set, and then
// nothing changed; false if key was certainly new. On error (as Add's) it
// is false and nothing changed. This is RedisBloom's BF.ADD reply negated.
func (s *Scalable) TestAndAdd(key []byte) (present bool, err error) {
	h1, h2 := keyHash(s.cfg.HashID, s.cfg.Seed, key, zeroScalable)
	return s.TestAndAddHash(h1, h2)
}

// TestAndAddHash is TestAndAdd for a hash pair.
func (s *Scalable) TestAndAddHash(h1, h2 uint64) (present bool, err error) {
	added, err := s.addHash(h1, h2)
	return !added && err == nil, err
}

// addHash inserts the item with hash pair (h1, h2), with RedisBloom's
// SBChain_Add semantics:
//
//  1. If any sub-filter (checked newest to oldest) has all k bits of the
//     item set, it returns false, nil and changes nothing.
//  2. Otherwise, if the newest sub-filter's items() ≥ its Capacity: a
//     non-scaling chain returns ErrFull; else a sub-filter with capacity
//     last.Capacity·Growth and error rate max(last.ErrorRate·Tightening,
//     MinErrorRate) is appended (ErrTooLarge if it would break MaxBits,
//     MaxBytes or overflow; the Sizing's error if it fails; nothing changes
//     on error).
//  3. The item's bits are set in the newest sub-filter; it returns true only
//     if at least one bit was newly set (only then that sub-filter's N grows).
//
// Cost: up to Σ k probes, plus an allocation when a sub-filter is added.
// A single sub-filter that is not full is tested and set in one pass of k
// probes (Filter.addHash is a test-and-set); a chain is tested link by
// link, newest first, then the newest sub-filter is set, with plain
// stores (the caller locks: not safe for concurrent use), so the k cache
// misses of a large sub-filter overlap.
func (s *Scalable) addHash(h1, h2 uint64) (added bool, err error) {
	if len(s.links) == 0 {
		zeroPanic(zeroScalable)
	}
	last := &s.links[len(s.links)-1]
	room := last.Filter.items() < last.Capacity
	if len(s.links) == 1 && room {
		// Steps 1 and 3 in one pass: the item is present iff all k bits
		// were set before (addHash reports false and changes nothing).
		return last.Filter.addHashExclusive(h1, h2), nil
	}
	for i := len(s.links) - 1; i >= 0; i-- {
		if s.links[i].Filter.TestHash(h1, h2) {
			return false, nil
		}
	}
	if !room {
		if s.cfg.Growth == 0 {
			return false, fmt.Errorf("%w: non-scaling filter holds its capacity of %d items", ErrFull, last.Capacity)
		}
		hi, c := bits.Mul64(last.Capacity, s.cfg.Growth)
		if hi != 0 {
			return false, fmt.Errorf("%w: next sub-filter capacity %d×%d overflows 64 bits", ErrTooLarge, last.Capacity, s.cfg.Growth)
		}
		l, err := s.newLink(c, max(last.ErrorRate*s.cfg.Tightening, s.cfg.MinErrorRate))
		if err != nil {
			return false, err
		}
		s.links = append(s.links, l)
		s.bytes += l.Filter.sizeBytes()
		last = &s.links[len(s.links)-1]
	}
	return last.Filter.addHashExclusive(h1, h2), nil
}

// Reset empties s: the sub-filters added by growth are dropped and the
// first one is cleared (N = 0), with the same configuration. Cost: one
// pass over the first sub-filter; no allocation. Not safe for concurrent
// use.
func (s *Scalable) Reset() {
	if len(s.links) == 0 {
		zeroPanic(zeroScalable)
	}
	clear(s.links[1:]) // let the dropped sub-filters be collected
	s.links = s.links[:1]
	s.links[0].Filter.Reset()
	s.bytes = s.links[0].Filter.sizeBytes()
}

// Test reports whether key may be in the set (no false negatives): true if
// any sub-filter has all its bits set. Cost: one hash plus up to Σ k probes;
// no allocation.
func (s *Scalable) Test(key []byte) bool {
	h1, h2 := keyHash(s.cfg.HashID, s.cfg.Seed, key, zeroScalable)
	return s.TestHash(h1, h2)
}

// TestString is Test for a string key.
func (s *Scalable) testString(key string) bool {
	h1, h2 := keyHashString(s.cfg.HashID, s.cfg.Seed, key, zeroScalable)
	return s.TestHash(h1, h2)
}

// TestHash reports whether any sub-filter has all bits of (h1, h2) set,
// checking the newest (largest) first. No allocation.
func (s *Scalable) TestHash(h1, h2 uint64) bool {
	if len(s.links) == 0 {
		zeroPanic(zeroScalable)
	}
	for i := len(s.links) - 1; i >= 0; i-- {
		if s.links[i].Filter.TestHash(h1, h2) {
			return true
		}
	}
	return false
}

// Links returns the sub-filters, oldest first. The slice is a copy; the
// Filters are shared and must be treated as read-only (use ReadBitsAt to
// dump them).
func (s *Scalable) linkList() []link { return append([]link(nil), s.links...) }

// NumLinks returns the number of sub-filters (≥ 1).
func (s *Scalable) numLinks() int { return len(s.links) }

// Config returns the configuration with defaults filled in.
func (s *Scalable) config() ScalableConfig { return s.cfg }

// N returns the number of items inserted: the sum of the sub-filters' N.
func (s *Scalable) items() uint64 {
	var n uint64
	for _, l := range s.links {
		n += l.Filter.items()
	}
	return n
}

// Capacity returns the sum of the sub-filters' capacities (saturating at
// 2^64−1).
func (s *Scalable) capacityN() uint64 {
	var c uint64
	for _, l := range s.links {
		var carry uint64
		if c, carry = bits.Add64(c, l.Capacity, 0); carry != 0 {
			return math.MaxUint64
		}
	}
	return c
}

// SizeBytes returns the total bitset size of the sub-filters in bytes.
func (s *Scalable) sizeBytes() uint64 { return s.bytes }

// Stats returns the filter's statistics summed over its sub-filters: M,
// Bytes, N, SetBits, Cardinality and Capacity are sums, K is the
// sum of the sub-filters' probe counts (the most probes one Test makes),
// FillRatio is SetBits/M, FPR the compound rate
// 1 − Π(1 − fill_i^k_i), and P the configured ErrorRate. Cost: one
// pass over every bitset. It panics on the zero Scalable.
func (s *Scalable) Stats() Stats {
	if len(s.links) == 0 {
		zeroPanic(zeroScalable)
	}
	var st Stats
	q := 1.0
	for _, l := range s.links {
		ls := l.Filter.Stats()
		st.M += ls.M
		st.K += ls.K
		st.Bytes += ls.Bytes
		st.N += ls.N
		st.SetBits += ls.SetBits
		st.Cardinality += ls.Cardinality
		q *= 1 - ls.FPR
	}
	st.Capacity = s.capacityN() // saturating
	st.FillRatio = float64(st.SetBits) / float64(st.M)
	st.FPR = 1 - q
	st.P = s.cfg.ErrorRate
	return st
}

// Clone returns a deep copy of s.
func (s *Scalable) clone() *Scalable {
	c := &Scalable{cfg: s.cfg, links: make([]link, len(s.links)), bytes: s.bytes}
	for i, l := range s.links {
		c.links[i] = link{Filter: l.Filter.clone(), Capacity: l.Capacity, ErrorRate: l.ErrorRate}
	}
	return c
}

// RestoreScalable builds a Scalable from sub-filters loaded elsewhere (for
// example from a RedisBloom dump), oldest first. cfg is validated as by
// NewScalable; links must be non-empty, every Filter non-nil, every Capacity
// ≥ 1 and every ErrorRate in (0, 1) (ErrInvalidParameter otherwise), and
// their total size must fit cfg.MaxBytes (ErrTooLarge). The Scalable takes
// ownership of the Filters: it sets their hash to cfg's and their recorded
// capacity and target p to the link's values.
func restoreScalable(cfg ScalableConfig, links []link) (*Scalable, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(links) == 0 {
		return nil, fmt.Errorf("%w: a scalable filter needs at least one sub-filter", ErrInvalidParameter)
	}
	var total uint64
	for i, l := range links {
		switch {
		case l.Filter == nil:
			return nil, fmt.Errorf("%w: sub-filter %d is nil", ErrInvalidParameter, i)
		case l.Capacity == 0:
			return nil, fmt.Errorf("%w: sub-filter %d has capacity 0", ErrInvalidParameter, i)
		case !(l.ErrorRate > 0 && l.ErrorRate < 1):
			return nil, fmt.Errorf("%w: sub-filter %d has error rate %v, not in (0, 1)", ErrInvalidParameter, i, l.ErrorRate)
		}
		var c uint64
		total, c = bits.Add64(total, l.Filter.sizeBytes(), 0)
		if c != 0 || (cfg.MaxBytes != 0 && total > cfg.MaxBytes) {
			return nil, fmt.Errorf("%w: sub-filters total more than the limit of %d bytes", ErrTooLarge, cfg.MaxBytes)
		}
	}
	s := &Scalable{cfg: cfg, links: append([]link(nil), links...), bytes: total}
	for _, l := range s.links {
		l.Filter.hashID, l.Filter.seed = cfg.HashID, cfg.Seed
		l.Filter.capacity, l.Filter.targetP = l.Capacity, l.ErrorRate
	}
	return s, nil
}
