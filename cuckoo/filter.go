package cuckoo

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Limits.
const (
	// MaxBucketSize is the largest bucket size (slots per bucket).
	MaxBucketSize = 255
	// MaxKicks is the largest bound on the kick-out walk.
	MaxKicks = 65535
	// MaxExpansion is the largest growth factor (after rounding up to a
	// power of two).
	MaxExpansion = 32768
	// MaxSubFilters is the most sub-filters a filter may have.
	MaxSubFilters = 1 << 16
	// MaxTableBytes is the most table bytes (all sub-filters) a filter may
	// have, 1 TiB.
	MaxTableBytes = 1 << 40
)

// Defaults applied by NewWithConfig to zero Config fields.
const (
	DefaultBucketSize      = 4
	DefaultFingerprintBits = 16
	DefaultMaxKicks        = 500
	DefaultExpansion       = 2
)

// NoGrowth as Config.Expansion makes a filter that never grows: an insert
// that finds no room returns ErrFull.
const NoGrowth = ^uint32(0)

// Config holds the parameters of a filter. Zero fields take the documented
// defaults; in particular a zero Expansion grows by DefaultExpansion, as
// New does (set NoGrowth to turn growth off).
type Config struct {
	// Capacity sizes the first sub-filter: it gets
	// nextPow2(Capacity / BucketSize) buckets (integer division; at least
	// 1). A filter holds at most about 95% of its slots with bucket size 4
	// (84% with 2, 50% with 1) before inserts start to fail or grow it.
	// When Buckets is set, Buckets sizes the table and Capacity is only
	// recorded (Config, Stats().Capacity; 0 = Buckets · BucketSize).
	Capacity uint64
	// Buckets, if not 0, is the first sub-filter's number of buckets, a
	// power of two. It takes precedence over Capacity.
	Buckets uint64
	// BucketSize is the number of slots per bucket, 1 … 255 (default 4).
	BucketSize int
	// FingerprintBits is the fingerprint width, 8 or 16 (default 16).
	// 8-bit fingerprints are RedisBloom's; a slot then takes one byte.
	FingerprintBits int
	// MaxKicks bounds the kick-out walk of one insert, 1 … 65535 (default
	// 500). RedisBloom calls it MAXITERATIONS (default 20 there).
	MaxKicks int
	// Expansion is the growth factor: when an insert finds no room a new
	// sub-filter with Expansion times the buckets of the previous one is
	// added. It is rounded up to a power of two (3 becomes 4); at most
	// 32768. 0 means DefaultExpansion (2); NoGrowth means the filter never
	// grows and a full insert returns ErrFull.
	Expansion uint32
	// MaxBytes, if not 0, limits the total table bytes of all
	// sub-filters; creating or growing beyond it fails with ErrTooLarge.
	MaxBytes uint64
	// HashID is the hash the keys go through: 0 or HashXXH3 (the
	// default; NewWithConfig accepts no other). Seed is its seed (default
	// 0). Filters decoded from elsewhere may carry another hash ID (see
	// CanHashKeys): the *Hash methods work with any.
	HashID HashID
	Seed   uint64
}

// Filter is a cuckoo filter (Fan, Andersen, Kaminsky & Mitzenmacher 2014)
// made of one or more sub-filters. See the package documentation.
//
// The zero Filter is not usable: create one with New or NewWithConfig,
// or call UnmarshalBinary / ReadFrom on it. On the zero value,
// every method that reads or changes the tables (Add, Test, Count, Remove,
// Compact, Reset, Stats, Clone and the encoders) panics with a message
// naming the constructors; Config returns the zero Config.
//
// A Filter is not safe for concurrent use when any goroutine modifies it
// (Add, Remove, Compact, Reset, UnmarshalBinary, ReadFrom); read-only
// methods (Test, Count, Stats, encoding) may run concurrently with each
// other. Callers serialize modifications with their own lock.
type Filter struct {
	bucketSize int
	fpBits     int
	maxKicks   int
	expansion  uint64 // power of two, or 0
	buckets    uint64 // of sub-filter 0
	maxBytes   uint64 // 0 = MaxTableBytes only
	hashID     HashID
	seed       uint64
	capacity   uint64  // the n it was sized for (0: buckets · bucket size)
	p          float64 // the p it was sized for (0: the full-table rate)

	items   uint64
	deletes uint64
	bytes   uint64 // table bytes of all sub-filters

	c8  *core[uint8] // exactly one of c8, c16 is set
	c16 *core[uint16]
}

// zeroFilter is the panic message of a method that needs the tables,
// called on the zero Filter.
const zeroFilter = "cuckoo: method called on a zero Filter, which is not usable: create it with New or NewWithConfig (or UnmarshalBinary / ReadFrom into it)"

// core16 returns the 16-bit core, the one in use when c8 is nil; on the
// zero Filter (neither set) it panics with zeroFilter instead of a nil
// dereference. The check costs one predictable branch.
func (f *Filter) core16() *core[uint16] {
	if f.c16 == nil {
		panic(zeroFilter)
	}
	return f.c16
}

// nextPow2 returns the smallest power of two ≥ n (0 stays 0), as
// RedisBloom's getNextN2 for n ≤ 2^63.
func nextPow2(n uint64) uint64 {
	if n <= 1 {
		return n
	}
	return 1 << (64 - bits.LeadingZeros64(n-1))
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidParameter, fmt.Sprintf(format, args...))
}

// normalize applies defaults, validates c, rounds Expansion up to a power
// of two and sets Buckets from Capacity when it is 0. Expansion has its
// encoded meaning here (0 = never grow; see public).
func (c *Config) normalize() error {
	if c.BucketSize == 0 {
		c.BucketSize = DefaultBucketSize
	}
	if c.FingerprintBits == 0 {
		c.FingerprintBits = DefaultFingerprintBits
	}
	if c.MaxKicks == 0 {
		c.MaxKicks = DefaultMaxKicks
	}
	if c.HashID == 0 {
		c.HashID = HashXXH3
	}
	if c.BucketSize < 1 || c.BucketSize > MaxBucketSize {
		return invalid("bucket size %d not in [1, %d]", c.BucketSize, MaxBucketSize)
	}
	if c.FingerprintBits != 8 && c.FingerprintBits != 16 {
		return invalid("fingerprint width %d bits, want 8 or 16", c.FingerprintBits)
	}
	if c.MaxKicks < 1 || c.MaxKicks > MaxKicks {
		return invalid("max kicks %d not in [1, %d]", c.MaxKicks, MaxKicks)
	}
	if c.Expansion > MaxExpansion {
		return invalid("expansion %d above %d", c.Expansion, MaxExpansion)
	}
	c.Expansion = uint32(nextPow2(uint64(c.Expansion)))
	if c.Buckets == 0 {
		if c.Capacity == 0 {
			return invalid("capacity 0")
		}
		q := c.Capacity / uint64(c.BucketSize)
		if q > MaxTableBytes {
			return fmt.Errorf("%w: capacity %d needs more than %d buckets", ErrTooLarge, c.Capacity, uint64(MaxTableBytes))
		}
		c.Buckets = max(nextPow2(q), 1)
	} else if c.Buckets&(c.Buckets-1) != 0 {
		return invalid("%d buckets is not a power of two", c.Buckets)
	}
	return nil
}

// slotBytes is the size of one slot.
func (f *Filter) slotBytes() uint64 { return uint64(f.fpBits / 8) }

// subBuckets returns the bucket count of sub-filter i,
// buckets·expansion^i, and false if it overflows or exceeds MaxTableBytes.
func (f *Filter) subBuckets(i int) (uint64, bool) {
	if i == 0 {
		return f.buckets, f.buckets <= MaxTableBytes
	}
	if f.expansion == 0 {
		return 0, false
	}
	shift := uint64(bits.TrailingZeros64(f.expansion)) * uint64(i)
	lg := uint64(bits.TrailingZeros64(f.buckets))
	if lg+shift > 40 {
		return 0, false
	}
	return f.buckets << shift, true
}

// reserve checks that a sub-filter of nb buckets fits the limits and
// returns its table bytes.
func (f *Filter) reserve(nb uint64) (uint64, error) {
	hi, b := bits.Mul64(nb, uint64(f.bucketSize)*f.slotBytes())
	limit := uint64(MaxTableBytes)
	if f.maxBytes != 0 {
		limit = min(limit, f.maxBytes)
	}
	if hi != 0 || b > limit || f.bytes > limit-b {
		return 0, fmt.Errorf("%w: a sub-filter of %d buckets would take the tables to more than %d bytes", ErrTooLarge, nb, limit)
	}
	return b, nil
}

// grow appends sub-filter number subFilters().
func (f *Filter) grow() error {
	n := f.subFilters()
	if n >= MaxSubFilters {
		return fmt.Errorf("%w: already %d sub-filters", ErrTooLarge, n)
	}
	nb, ok := f.subBuckets(n)
	if !ok {
		return fmt.Errorf("%w: sub-filter %d would have more than 2^40 buckets", ErrTooLarge, n)
	}
	b, err := f.reserve(nb)
	if err != nil {
		return err
	}
	slots := nb * uint64(f.bucketSize)
	if f.c8 != nil {
		f.c8.subs = append(f.c8.subs, sub[uint8]{data: make([]uint8, slots), mask: nb - 1})
	} else {
		f.c16.subs = append(f.c16.subs, sub[uint16]{data: make([]uint16, slots), mask: nb - 1})
	}
	f.bytes += b
	return nil
}

// public converts a Config of the public API (Expansion 0 = the default,
// NoGrowth = never) to the encoded meaning normalize and the hooks use
// (0 = never).
func (c Config) public() Config {
	switch c.Expansion {
	case 0:
		c.Expansion = DefaultExpansion
	case NoGrowth:
		c.Expansion = 0
	}
	return c
}

func newEmpty(c Config) (*Filter, error) {
	if err := c.normalize(); err != nil {
		return nil, err
	}
	f := &Filter{
		bucketSize: c.BucketSize,
		fpBits:     c.FingerprintBits,
		maxKicks:   c.MaxKicks,
		expansion:  uint64(c.Expansion),
		buckets:    c.Buckets,
		maxBytes:   c.MaxBytes,
		hashID:     c.HashID,
		seed:       c.Seed,
	}
	if f.fpBits == 8 {
		f.c8 = &core[uint8]{bs: uint64(f.bucketSize)}
	} else {
		f.c16 = &core[uint16]{bs: uint64(f.bucketSize)}
	}
	return f, nil
}

// NewWithConfig returns an empty filter with one sub-filter of
// nextPow2(Capacity / BucketSize) buckets (or Buckets) that grows by
// Expansion (default 2) when full. Errors: ErrInvalidParameter for a
// parameter out of range or a hash ID other than HashXXH3, ErrTooLarge
// when the first sub-filter exceeds MaxBytes or MaxTableBytes.
func NewWithConfig(c Config) (*Filter, error) {
	if c.HashID != 0 && c.HashID != HashXXH3 {
		return nil, invalid("hash ID %d (%v): this package computes only HashXXH3", uint16(c.HashID), c.HashID)
	}
	return newWithConfig(c.public())
}

// newWithConfig is NewWithConfig with c's Expansion in the encoded meaning
// and any hash ID (the server's hook).
func newWithConfig(c Config) (*Filter, error) {
	f, err := newEmpty(c)
	if err != nil {
		return nil, err
	}
	if err := f.grow(); err != nil {
		return nil, err
	}
	f.capacity = c.Capacity // recorded even when Buckets sized the table
	return f, nil
}

// New returns a filter for n keys with a false-positive rate of at most
// about p while it holds n keys, using the default hash. It picks
//
//   - 8-bit fingerprints and bucket size 4 if p ≥ 8/255 (≈ 3.1%);
//   - otherwise 16-bit fingerprints with the largest bucket size b of 4, 2
//     and 1 for which 2b/65535 ≤ p (p ≥ 3.05·10⁻⁵ at b = 1);
//
// sizes the first sub-filter so that n keys fill at most 95% (b = 4), 84%
// (b = 2) or 50% (b = 1) of its slots, bounds kick-out walks at 500 and
// sets Expansion 2, so inserting beyond n adds sub-filters (each adds its
// own share to the false-positive rate) instead of failing. Config and
// Stats report n as Capacity and p as the target rate. Errors:
// ErrInvalidParameter for n = 0, p ∉ (0, 1) or NaN, or p < 2/65535 (no
// fingerprint width of this package reaches it); ErrTooLarge if the table
// would exceed MaxTableBytes.
func New(n uint64, p float64) (*Filter, error) {
	if n == 0 {
		return nil, invalid("capacity 0")
	}
	if !(p > 0 && p < 1) {
		return nil, invalid("false-positive rate %v not in (0, 1)", p)
	}
	c := Config{MaxKicks: DefaultMaxKicks, Expansion: 2}
	load := 0.95
	switch {
	case p >= 8.0/255:
		c.FingerprintBits, c.BucketSize = 8, 4
	case p >= 8.0/65535:
		c.FingerprintBits, c.BucketSize = 16, 4
	case p >= 4.0/65535:
		c.FingerprintBits, c.BucketSize, load = 16, 2, 0.84
	case p >= 2.0/65535:
		c.FingerprintBits, c.BucketSize, load = 16, 1, 0.5
	default:
		return nil, invalid("false-positive rate %v is below 2/65535, the best a cuckoo filter with 16-bit fingerprints gives", p)
	}
	need := math.Ceil(float64(n) / load)
	if need > MaxTableBytes {
		return nil, fmt.Errorf("%w: %d keys", ErrTooLarge, n)
	}
	c.Buckets = max(nextPow2(uint64(need)/uint64(c.BucketSize)), 1)
	if c.Buckets*uint64(c.BucketSize) < uint64(need) {
		c.Buckets *= 2
	}
	f, err := newWithConfig(c)
	if err != nil {
		return nil, err
	}
	f.capacity, f.p = n, p
	return f, nil
}

// restore returns a filter with the parameters of c (Expansion in the
// encoded meaning), sub sub-filters (sizes as if it had grown sub−1 times)
// whose tables are all empty, and the given item and delete counters. It
// is for loading a filter whose tables arrive separately (writeTableAt):
// the decoder and RedisBloom's CF.LOADCHUNK. Sizes are checked against the
// limits before anything is allocated. Errors as NewWithConfig, and
// ErrInvalidParameter for sub < 1, or sub > 1 with Expansion 0.
func restore(c Config, sub int, items, deletes uint64) (*Filter, error) {
	f, err := newEmpty(c)
	if err != nil {
		return nil, err
	}
	if sub < 1 || sub > MaxSubFilters {
		return nil, invalid("%d sub-filters not in [1, %d]", sub, MaxSubFilters)
	}
	if sub > 1 && f.expansion == 0 {
		return nil, invalid("%d sub-filters but expansion 0", sub)
	}
	// Check the total before allocating anything.
	total := uint64(0)
	limit := uint64(MaxTableBytes)
	if f.maxBytes != 0 {
		limit = min(limit, f.maxBytes)
	}
	for i := range sub {
		nb, ok := f.subBuckets(i)
		if !ok {
			return nil, fmt.Errorf("%w: sub-filter %d would have more than 2^40 buckets", ErrTooLarge, i)
		}
		b := nb * uint64(f.bucketSize) * f.slotBytes() // ≤ 2^40·255·2: no overflow
		if b > limit || total > limit-b {
			return nil, fmt.Errorf("%w: %d sub-filters need more than %d bytes", ErrTooLarge, sub, limit)
		}
		total += b
	}
	for range sub {
		if err := f.grow(); err != nil {
			return nil, err
		}
	}
	f.items, f.deletes = items, deletes
	return f, nil
}

// Config returns the filter's parameters, with defaults applied, Buckets
// set to the first sub-filter's bucket count, Expansion rounded (NoGrowth
// for a filter that does not grow) and Capacity the n it was sized for
// (Buckets · BucketSize when that is not known, as after decoding).
// NewWithConfig(f.Config()) makes an empty filter of the same shape.
func (f *Filter) Config() Config {
	c := f.rawConfig()
	if c.Expansion == 0 && f.buckets != 0 {
		c.Expansion = NoGrowth
	}
	return c
}

// rawConfig is Config with Expansion in the encoded meaning (0 = never).
func (f *Filter) rawConfig() Config {
	return Config{
		Capacity:        f.capacity0(),
		Buckets:         f.buckets,
		BucketSize:      f.bucketSize,
		FingerprintBits: f.fpBits,
		MaxKicks:        f.maxKicks,
		Expansion:       uint32(f.expansion),
		MaxBytes:        f.maxBytes,
		HashID:          f.hashID,
		Seed:            f.seed,
	}
}

// capacity0 is the n the first sub-filter was sized for.
func (f *Filter) capacity0() uint64 {
	if f.capacity != 0 {
		return f.capacity
	}
	return f.buckets * uint64(f.bucketSize)
}

// setMaxBytes replaces the limit on the total table bytes (0 = none but
// MaxTableBytes). It does not shrink anything: a lower limit only stops
// future growth.
func (f *Filter) setMaxBytes(n uint64) { f.maxBytes = n }

// subFilters returns the number of sub-filters (at least 1).
func (f *Filter) subFilters() int {
	if f.c8 != nil {
		return len(f.c8.subs)
	}
	return len(f.core16().subs)
}

// subFilterBuckets returns the bucket count of sub-filter i (0 = oldest),
// or 0 if there is no such sub-filter.
func (f *Filter) subFilterBuckets(i int) uint64 {
	if i < 0 || i >= f.subFilters() {
		return 0
	}
	if f.c8 != nil {
		return f.c8.subs[i].buckets()
	}
	return f.core16().subs[i].buckets()
}

// tableBytes returns the size in bytes of sub-filter i's table (buckets ·
// bucket size · fingerprint bytes), or 0 if there is no such sub-filter.
func (f *Filter) tableBytes(i int) uint64 {
	return f.subFilterBuckets(i) * uint64(f.bucketSize) * f.slotBytes()
}

// ---- fingerprints ----

func fp8(h uint64) uint8   { return uint8(h%255 + 1) }
func fp16(h uint64) uint16 { return uint16(h%65535 + 1) }

// ---- operations ----

// AddHash adds one copy of the key whose hash is h (RedisBloom's
// CuckooFilter_Insert). It tries, sub-filters newest first, an empty slot
// in bucket h1 then h2; then a kick-out walk of at most MaxKicks steps in
// the newest sub-filter; then, unless the filter does not grow, it adds a
// sub-filter and stores the fingerprint there. Errors: ErrFull (NoGrowth)
// and ErrTooLarge (the new sub-filter would break a limit); on error the
// filter is exactly as it was.
func (f *Filter) AddHash(h uint64) error {
	for {
		var ok bool
		if f.c8 != nil {
			fp := fp8(h)
			ok = f.c8.placeAny(h, fp) || f.c8.kick(h, fp, f.maxKicks)
		} else {
			fp := fp16(h)
			ok = f.core16().placeAny(h, fp) || f.core16().kick(h, fp, f.maxKicks)
		}
		if ok {
			f.items++
			return nil
		}
		if f.expansion == 0 {
			return ErrFull
		}
		if err := f.grow(); err != nil {
			return err
		}
	}
}

// Add adds one copy of key (see AddHash). Adding the same key again adds
// another copy; a bucket pair holds at most 2·BucketSize copies per
// sub-filter.
func (f *Filter) Add(key []byte) error { return f.AddHash(f.hashKey(key)) }

// AddMany adds every key in order (see Add) and stops at the first error,
// which it returns wrapped with the key's index; the keys before it stay
// added.
func (f *Filter) AddMany(keys [][]byte) error {
	for i, k := range keys {
		if err := f.AddHash(f.hashKey(k)); err != nil {
			return fmt.Errorf("key %d: %w", i, err)
		}
	}
	return nil
}

// TestAndAddHash reports TestHash(h) and, when it was false, adds h (so
// afterwards TestHash(h) is true). Unlike AddHash it never stores a second
// copy of a key that may be present: this is RedisBloom's CF.ADDNX.
// Errors as AddHash (the bool is then false and nothing changed).
func (f *Filter) TestAndAddHash(h uint64) (bool, error) {
	if f.TestHash(h) {
		return true, nil
	}
	if err := f.AddHash(h); err != nil {
		return false, err
	}
	return false, nil
}

// TestAndAdd is TestAndAddHash for key.
func (f *Filter) TestAndAdd(key []byte) (bool, error) {
	return f.TestAndAddHash(f.hashKey(key))
}

// TestHash reports whether the key whose hash is h may be in the filter.
// It is never false for a key added and not removed; it is true for
// another key with the probability given in the package documentation.
func (f *Filter) TestHash(h uint64) bool {
	if f.c8 != nil {
		return f.c8.lookup(h, fp8(h))
	}
	return f.core16().lookup(h, fp16(h))
}

// Test reports whether key may be in the filter (see TestHash).
func (f *Filter) Test(key []byte) bool { return f.TestHash(f.hashKey(key)) }

// TestMany tests every key and appends the answers to dst, returning the
// extended slice.
func (f *Filter) TestMany(keys [][]byte, dst []bool) []bool {
	dst = slices.Grow(dst, len(keys))
	for _, k := range keys {
		dst = append(dst, f.TestHash(f.hashKey(k)))
	}
	return dst
}

// CountHash returns the number of slots that hold h's fingerprint in h's
// two buckets, summed over all sub-filters (RedisBloom's CF.COUNT). It is
// at least the number of copies of the key added and not removed; other
// keys with the same fingerprint and buckets add to it, and a bucket that
// is both h1 and h2 is counted twice.
func (f *Filter) CountHash(h uint64) uint64 {
	if f.c8 != nil {
		return f.c8.count(h, fp8(h))
	}
	return f.core16().count(h, fp16(h))
}

// Count is CountHash for key.
func (f *Filter) Count(key []byte) uint64 { return f.CountHash(f.hashKey(key)) }

// RemoveHash removes one copy of h's fingerprint, searching sub-filters
// newest first and bucket h1 before h2, and reports whether it found one
// (false: nothing changed). On success Stats().N decreases and
// Stats().Deletes increases by one.
//
// Remove only keys that were added: removing a key that never was can
// remove the fingerprint of another key that shares its fingerprint and a
// bucket, which then is no longer found (a false negative).
func (f *Filter) RemoveHash(h uint64) bool {
	var ok bool
	if f.c8 != nil {
		ok = f.c8.remove(h, fp8(h))
	} else {
		ok = f.core16().remove(h, fp16(h))
	}
	if ok {
		f.items--
		f.deletes++
	}
	return ok
}

// Remove is RemoveHash for key.
func (f *Filter) Remove(key []byte) bool { return f.RemoveHash(f.hashKey(key)) }

// Compact moves fingerprints of newer sub-filters into free slots of older
// ones, from the newest sub-filter down to the second, and releases the
// newest sub-filters once they are empty (RedisBloom's CF.COMPACT). A
// sub-filter that cannot be emptied stays and compaction continues with
// the next older one. Stats().Deletes is reset to 0. Tests answer the same
// before and after (fingerprints stay in one of their key's buckets).
// Cost: one pass over the tables of the sub-filters it visits.
func (f *Filter) Compact() { f.compact(false) }

func (f *Filter) compact(stop bool) {
	if f.c8 != nil {
		f.c8.compact(stop)
	} else {
		f.core16().compact(stop)
	}
	f.bytes = 0
	for i := range f.subFilters() {
		f.bytes += f.tableBytes(i)
	}
	f.deletes = 0
}

// Reset empties the filter and releases every sub-filter but the first,
// keeping the parameters: it is then as NewWithConfig(f.Config()) made it.
func (f *Filter) Reset() {
	if f.c8 != nil {
		f.c8.reset()
	} else {
		f.core16().reset()
	}
	f.bytes = f.tableBytes(0)
	f.items, f.deletes = 0, 0
}

// ---- stats ----

// Stats describes a filter's size and load, with the library's shared
// field names (docs/LIBRARY.md).
type Stats struct {
	M        uint64  // slots of all sub-filters (Buckets · BucketSize)
	K        int     // buckets probed per key and sub-filter: 2
	Bytes    uint64  // table bytes of all sub-filters
	N        uint64  // successful adds minus successful removes (duplicates count every time)
	Capacity uint64  // the n it was sized for, scaled by the buckets of all sub-filters
	P        float64 // the target rate it was sized for (New's p; otherwise the full-table rate 2b/(2^f − 1) of one sub-filter)
	SetBits  uint64  // slots holding a fingerprint
	// FillRatio is SetBits / M.
	FillRatio float64
	// FPR is the probability that a key never added is reported present,
	// given the current load of every sub-filter:
	// 1 − (1 − 1/(2^f − 1))^(Σ 2b·α_i), α_i the load of sub-filter i.
	FPR float64
	// Cardinality has no meaning for a cuckoo filter and is 0 (N counts
	// the keys).
	Cardinality uint64

	Deletes         uint64 // successful removes since the last compaction
	SubFilters      int    // number of sub-filters
	Buckets         uint64 // buckets of all sub-filters
	BucketSize      int    // slots per bucket
	FingerprintBits int    // 8 or 16
}

// Stats returns the filter's statistics. Cost: O(sub-filters).
func (f *Filter) Stats() Stats {
	s := Stats{
		K:               2,
		Bytes:           f.bytes,
		N:               f.items,
		Deletes:         f.deletes,
		SubFilters:      f.subFilters(),
		BucketSize:      f.bucketSize,
		FingerprintBits: f.fpBits,
	}
	q := 1 / (math.Exp2(float64(f.fpBits)) - 1)
	s.P = f.p
	if s.P == 0 {
		s.P = min(1, 2*float64(f.bucketSize)*q)
	}
	probed := 0.0 // expected occupied slots probed by a lookup
	for i := range s.SubFilters {
		nb := f.subFilterBuckets(i)
		var used uint64
		if f.c8 != nil {
			used = f.c8.subs[i].used
		} else {
			used = f.core16().subs[i].used
		}
		slots := nb * uint64(f.bucketSize)
		s.Buckets += nb
		s.M += slots
		s.SetBits += used
		probed += 2 * float64(f.bucketSize) * float64(used) / float64(slots)
	}
	if s.M > 0 {
		s.FillRatio = float64(s.SetBits) / float64(s.M)
	}
	if f.buckets > 0 {
		s.Capacity = uint64(float64(f.capacity0()) * float64(s.Buckets) / float64(f.buckets))
	}
	s.FPR = -math.Expm1(probed * math.Log1p(-q))
	return s
}

// ---- raw tables ----

func (f *Filter) checkRange(i int, off, n uint64) error {
	if i < 0 || i >= f.subFilters() {
		return invalid("no sub-filter %d (have %d)", i, f.subFilters())
	}
	if size := f.tableBytes(i); off > size || n > size-off {
		return invalid("bytes [%d, %d+%d) outside sub-filter %d's %d table bytes", off, off, n, i, size)
	}
	return nil
}

// readTableAt copies bytes of sub-filter i's table, starting at byte off,
// into dst and returns how many it copied (fewer than len(dst) at the end
// of the table; 0 for a missing sub-filter or off past the end). Table
// bytes are the slots in order, bucket j's slots at [j·b, (j+1)·b), each
// slot one byte (8-bit fingerprints) or a little-endian u16; 0 is empty.
// For 8-bit fingerprints this is RedisBloom's CF.SCANDUMP data.
func (f *Filter) readTableAt(i int, dst []byte, off uint64) int {
	if i < 0 || i >= f.subFilters() || off >= f.tableBytes(i) {
		return 0
	}
	if f.c8 != nil {
		return copy(dst, f.c8.subs[i].data[off:])
	}
	data := f.core16().subs[i].data
	n := min(uint64(len(dst)), f.tableBytes(i)-off)
	for k := uint64(0); k < n; k++ {
		b := off + k
		dst[k] = byte(data[b/2] >> (8 * (b % 2)))
	}
	return int(n)
}

// writeTableAt overwrites bytes of sub-filter i's table, starting at byte
// off, with src (layout as readTableAt). The range must lie inside the
// table, else ErrInvalidParameter and nothing changes. The item counter is
// not touched: it is the caller's (restore sets it).
func (f *Filter) writeTableAt(i int, src []byte, off uint64) error {
	if err := f.checkRange(i, off, uint64(len(src))); err != nil {
		return err
	}
	if f.c8 != nil {
		s := &f.c8.subs[i]
		dst := s.data[off : off+uint64(len(src))]
		for k, v := range src {
			if dst[k] != 0 {
				s.used--
			}
			if v != 0 {
				s.used++
			}
			dst[k] = v
		}
		return nil
	}
	s := &f.core16().subs[i]
	for k, v := range src {
		b := off + uint64(k)
		p := &s.data[b/2]
		if *p != 0 {
			s.used--
		}
		shift := 8 * (b % 2)
		*p = *p&^(0xff<<shift) | uint16(v)<<shift
		if *p != 0 {
			s.used++
		}
	}
	return nil
}

// ---- copies ----

// Clone returns a deep copy of f.
func (f *Filter) Clone() *Filter {
	g := *f
	if f.c8 != nil {
		g.c8 = f.c8.clone()
	} else {
		g.c16 = f.core16().clone()
	}
	return &g
}

// equal reports whether f and g have the same parameters (MaxBytes,
// capacity and target rate aside), counters and table contents.
func (f *Filter) equal(g *Filter) bool {
	if f.bucketSize != g.bucketSize || f.fpBits != g.fpBits || f.maxKicks != g.maxKicks ||
		f.expansion != g.expansion || f.buckets != g.buckets || f.hashID != g.hashID ||
		f.seed != g.seed || f.items != g.items || f.deletes != g.deletes {
		return false
	}
	if f.c8 != nil {
		return f.c8.equal(g.c8)
	}
	return f.core16().equal(g.c16)
}
