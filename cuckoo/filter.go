package cuckoo

import (
	"fmt"
	"math"
	"math/bits"
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
)

// Config holds the parameters of a filter. Zero fields take the documented
// defaults, except Expansion, where 0 means "never grow".
type Config struct {
	// Capacity sizes the first sub-filter: it gets
	// nextPow2(Capacity / BucketSize) buckets (integer division; at least
	// 1). A filter holds at most about 95% of its slots with bucket size 4
	// (84% with 2, 50% with 1) before inserts start to fail or grow it.
	// Ignored when Buckets is set.
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
	// 32768. 0 means the filter never grows and a full insert returns
	// ErrFull.
	Expansion uint32
	// MaxBytes, if not 0, limits the total table bytes of all
	// sub-filters; creating or growing beyond it fails with ErrTooLarge.
	MaxBytes uint64
	// HashID is the hash the keys go through (default HashXXH3); Seed is
	// its seed. The key methods need a hash this package computes (see
	// CanHashKeys); the *Hash methods work with any.
	HashID HashID
	Seed   uint64
}

// Filter is a cuckoo filter (Fan, Andersen, Kaminsky & Mitzenmacher 2014)
// made of one or more sub-filters. See the package documentation.
//
// The zero Filter is not usable: create one with New, NewWithConfig
// or Restore, or call UnmarshalBinary / ReadFrom on it. On the zero
// value, every method that reads or changes the tables (Insert, Lookup,
// Count, Delete, Compact, SubFilters, Stats, the table access and the
// encoders) panics with a message naming them; the counters (Items,
// Deletes, SizeBytes) and Config, HashID and Seed return zeros.
//
// A Filter is not safe for concurrent use when any goroutine modifies it
// (Insert, Delete, Compact, WriteTableAt, UnmarshalBinary, ReadFrom);
// read-only methods (Lookup, Count, Stats, encoding) may run concurrently
// with each other. Callers serialize modifications with their own lock.
type Filter struct {
	bucketSize int
	fpBits     int
	maxKicks   int
	expansion  uint64 // power of two, or 0
	buckets    uint64 // of sub-filter 0
	maxBytes   uint64 // 0 = MaxTableBytes only
	hashID     HashID
	seed       uint64

	items   uint64
	deletes uint64
	bytes   uint64 // table bytes of all sub-filters

	c8  *core[uint8] // exactly one of c8, c16 is set
	c16 *core[uint16]
}

// zeroFilter is the panic message of a method that needs the tables,
// called on the zero Filter.
const zeroFilter = "cuckoo: method called on a zero Filter, which is not usable: create it with New, NewWithConfig or Restore (or UnmarshalBinary into it)"

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
// of two and sets Buckets from Capacity when it is 0.
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

// grow appends sub-filter number SubFilters().
func (f *Filter) grow() error {
	n := f.SubFilters()
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

// NewWithConfig returns an empty filter with one sub-filter. Errors:
// ErrInvalidParameter for a parameter out of range, ErrTooLarge when the
// first sub-filter exceeds MaxBytes or MaxTableBytes.
func NewWithConfig(c Config) (*Filter, error) {
	f, err := newEmpty(c)
	if err != nil {
		return nil, err
	}
	if err := f.grow(); err != nil {
		return nil, err
	}
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
// own share to the false-positive rate) instead of failing. Errors:
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
	return NewWithConfig(c)
}

// Restore returns a filter with the parameters of c, sub sub-filters
// (sizes as if it had grown sub−1 times) whose tables are all empty, and
// the given item and delete counters. It is for loading a filter whose
// tables arrive separately (WriteTableAt), such as RedisBloom's
// CF.LOADCHUNK. Sizes are checked against the limits before anything is
// allocated. Errors as NewWithConfig, and ErrInvalidParameter for sub < 1,
// or sub > 1 with Expansion 0.
func Restore(c Config, sub int, items, deletes uint64) (*Filter, error) {
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
// set to the first sub-filter's bucket count and Expansion rounded.
// NewWithConfig(f.Config()) makes an empty filter of the same shape.
func (f *Filter) Config() Config {
	return Config{
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

// SetMaxBytes replaces the limit on the total table bytes (0 = none but
// MaxTableBytes). It does not shrink anything: a lower limit only stops
// future growth.
func (f *Filter) SetMaxBytes(n uint64) { f.maxBytes = n }

// HashID returns the filter's hash ID.
func (f *Filter) HashID() HashID { return f.hashID }

// Seed returns the filter's hash seed.
func (f *Filter) Seed() uint64 { return f.seed }

// Items returns the number of successful inserts minus the number of
// successful deletes (duplicates count every time).
func (f *Filter) Items() uint64 { return f.items }

// Deletes returns the number of successful deletes since the last
// compaction.
func (f *Filter) Deletes() uint64 { return f.deletes }

// SubFilters returns the number of sub-filters (at least 1).
func (f *Filter) SubFilters() int {
	if f.c8 != nil {
		return len(f.c8.subs)
	}
	return len(f.core16().subs)
}

// SubFilterBuckets returns the bucket count of sub-filter i (0 = oldest),
// or 0 if there is no such sub-filter.
func (f *Filter) SubFilterBuckets(i int) uint64 {
	if i < 0 || i >= f.SubFilters() {
		return 0
	}
	if f.c8 != nil {
		return f.c8.subs[i].buckets()
	}
	return f.core16().subs[i].buckets()
}

// TableBytes returns the size in bytes of sub-filter i's table (buckets ·
// bucket size · fingerprint bytes), or 0 if there is no such sub-filter.
func (f *Filter) TableBytes(i int) uint64 {
	return f.SubFilterBuckets(i) * uint64(f.bucketSize) * f.slotBytes()
}

// SizeBytes returns the table bytes of all sub-filters.
func (f *Filter) SizeBytes() uint64 { return f.bytes }

// ---- fingerprints ----

func fp8(h uint64) uint8   { return uint8(h%255 + 1) }
func fp16(h uint64) uint16 { return uint16(h%65535 + 1) }

// ---- operations ----

// InsertHash adds one copy of the key whose hash is h (RedisBloom's
// CuckooFilter_Insert). It tries, sub-filters newest first, an empty slot
// in bucket h1 then h2; then a kick-out walk of at most MaxKicks steps in
// the newest sub-filter; then, unless Expansion is 0, it adds a sub-filter
// and stores the fingerprint there. Errors: ErrFull (Expansion 0) and
// ErrTooLarge (the new sub-filter would break a limit); on error the
// filter is exactly as it was.
func (f *Filter) InsertHash(h uint64) error {
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

// Insert adds one copy of key (see InsertHash). Inserting the same key
// again adds another copy; a bucket pair holds at most 2·BucketSize copies
// per sub-filter.
func (f *Filter) Insert(key []byte) error { return f.InsertHash(f.hashKey(key)) }

// InsertString is Insert for a string key.
func (f *Filter) InsertString(key string) error { return f.InsertHash(f.hashString(key)) }

// InsertUniqueHash inserts h unless LookupHash(h) is already true, in which
// case it returns false and changes nothing (RedisBloom's CF.ADDNX). Errors
// as InsertHash.
func (f *Filter) InsertUniqueHash(h uint64) (bool, error) {
	if f.LookupHash(h) {
		return false, nil
	}
	if err := f.InsertHash(h); err != nil {
		return false, err
	}
	return true, nil
}

// InsertUnique is InsertUniqueHash for key.
func (f *Filter) InsertUnique(key []byte) (bool, error) {
	return f.InsertUniqueHash(f.hashKey(key))
}

// LookupHash reports whether the key whose hash is h may be in the filter.
// It is never false for a key inserted and not deleted; it is true for
// another key with the probability given in the package documentation.
func (f *Filter) LookupHash(h uint64) bool {
	if f.c8 != nil {
		return f.c8.lookup(h, fp8(h))
	}
	return f.core16().lookup(h, fp16(h))
}

// Lookup reports whether key may be in the filter (see LookupHash).
func (f *Filter) Lookup(key []byte) bool { return f.LookupHash(f.hashKey(key)) }

// LookupString is Lookup for a string key.
func (f *Filter) LookupString(key string) bool { return f.LookupHash(f.hashString(key)) }

// LookupMany looks up every key, storing the answers in out (grown if
// shorter than keys) and returning it.
func (f *Filter) LookupMany(keys [][]byte, out []bool) []bool {
	if cap(out) < len(keys) {
		out = make([]bool, len(keys))
	}
	out = out[:len(keys)]
	for i, k := range keys {
		out[i] = f.LookupHash(f.hashKey(k))
	}
	return out
}

// CountHash returns the number of slots that hold h's fingerprint in h's
// two buckets, summed over all sub-filters (RedisBloom's CF.COUNT). It is
// at least the number of copies of the key inserted and not deleted; other
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

// DeleteHash removes one copy of h's fingerprint, searching sub-filters
// newest first and bucket h1 before h2, and reports whether it found one.
// On success Items decreases and Deletes increases by one.
//
// Delete only keys that were inserted: deleting a key that never was can
// remove the fingerprint of another key that shares its fingerprint and a
// bucket, which then is no longer found (a false negative).
func (f *Filter) DeleteHash(h uint64) bool {
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

// Delete is DeleteHash for key.
func (f *Filter) Delete(key []byte) bool { return f.DeleteHash(f.hashKey(key)) }

// DeleteString is Delete for a string key.
func (f *Filter) DeleteString(key string) bool { return f.DeleteHash(f.hashString(key)) }

// Compact moves fingerprints of newer sub-filters into free slots of older
// ones, from the newest sub-filter down to the second, and releases the
// newest sub-filters once they are empty (RedisBloom's CF.COMPACT). A
// sub-filter that cannot be emptied stays and compaction continues with
// the next older one. Deletes is reset to 0. Lookups answer the same
// before and after (fingerprints stay in one of their key's buckets).
// Cost: one pass over the tables of the sub-filters it visits.
func (f *Filter) Compact() { f.compact(false) }

// CompactNewest is Compact that stops at the first sub-filter (from the
// newest down) that cannot be emptied, as RedisBloom's automatic
// compaction after deletes does.
func (f *Filter) CompactNewest() { f.compact(true) }

func (f *Filter) compact(stop bool) {
	if f.c8 != nil {
		f.c8.compact(stop)
	} else {
		f.core16().compact(stop)
	}
	f.bytes = 0
	for i := range f.SubFilters() {
		f.bytes += f.TableBytes(i)
	}
	f.deletes = 0
}

// ---- stats ----

// Stats describes a filter's size and load.
type Stats struct {
	Items           uint64  // Items()
	Deletes         uint64  // Deletes()
	SubFilters      int     // number of sub-filters
	Buckets         uint64  // buckets of all sub-filters
	BucketSize      int     // slots per bucket
	FingerprintBits int     // 8 or 16
	Slots           uint64  // Buckets · BucketSize
	UsedSlots       uint64  // slots holding a fingerprint
	LoadFactor      float64 // UsedSlots / Slots
	Bytes           uint64  // table bytes (SizeBytes)
	// EstimatedFPR is the probability that a key never inserted is
	// reported present, given the current load of every sub-filter:
	// 1 − (1 − 1/(2^f − 1))^(Σ 2b·α_i), α_i the load of sub-filter i.
	EstimatedFPR float64
}

// Stats returns the filter's statistics. Cost: O(sub-filters).
func (f *Filter) Stats() Stats {
	s := Stats{
		Items:           f.items,
		Deletes:         f.deletes,
		SubFilters:      f.SubFilters(),
		BucketSize:      f.bucketSize,
		FingerprintBits: f.fpBits,
		Bytes:           f.bytes,
	}
	probed := 0.0 // expected occupied slots probed by a lookup
	for i := range s.SubFilters {
		nb := f.SubFilterBuckets(i)
		var used uint64
		if f.c8 != nil {
			used = f.c8.subs[i].used
		} else {
			used = f.core16().subs[i].used
		}
		slots := nb * uint64(f.bucketSize)
		s.Buckets += nb
		s.Slots += slots
		s.UsedSlots += used
		probed += 2 * float64(f.bucketSize) * float64(used) / float64(slots)
	}
	if s.Slots > 0 {
		s.LoadFactor = float64(s.UsedSlots) / float64(s.Slots)
	}
	q := 1 / (math.Exp2(float64(f.fpBits)) - 1)
	s.EstimatedFPR = -math.Expm1(probed * math.Log1p(-q))
	return s
}

// ---- raw tables ----

func (f *Filter) checkRange(i int, off, n uint64) error {
	if i < 0 || i >= f.SubFilters() {
		return invalid("no sub-filter %d (have %d)", i, f.SubFilters())
	}
	if size := f.TableBytes(i); off > size || n > size-off {
		return invalid("bytes [%d, %d+%d) outside sub-filter %d's %d table bytes", off, off, n, i, size)
	}
	return nil
}

// ReadTableAt copies bytes of sub-filter i's table, starting at byte off,
// into dst and returns how many it copied (fewer than len(dst) at the end
// of the table; 0 for a missing sub-filter or off past the end). Table
// bytes are the slots in order, bucket j's slots at [j·b, (j+1)·b), each
// slot one byte (8-bit fingerprints) or a little-endian u16; 0 is empty.
// For 8-bit fingerprints this is RedisBloom's CF.SCANDUMP data.
func (f *Filter) ReadTableAt(i int, dst []byte, off uint64) int {
	if i < 0 || i >= f.SubFilters() || off >= f.TableBytes(i) {
		return 0
	}
	if f.c8 != nil {
		return copy(dst, f.c8.subs[i].data[off:])
	}
	data := f.core16().subs[i].data
	n := min(uint64(len(dst)), f.TableBytes(i)-off)
	for k := uint64(0); k < n; k++ {
		b := off + k
		dst[k] = byte(data[b/2] >> (8 * (b % 2)))
	}
	return int(n)
}

// WriteTableAt overwrites bytes of sub-filter i's table, starting at byte
// off, with src (layout as ReadTableAt). The range must lie inside the
// table, else ErrInvalidParameter and nothing changes. The item counter is
// not touched: it is the caller's (Restore sets it).
func (f *Filter) WriteTableAt(i int, src []byte, off uint64) error {
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

// Equal reports whether f and g have the same parameters (MaxBytes
// aside), counters and table contents.
func (f *Filter) Equal(g *Filter) bool {
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
