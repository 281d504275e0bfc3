// Package rediscuckoo is the server's RedisBloom-compatible cuckoo filter
// (the value behind CF.* keys, TYPE "MBbloomCF").
//
// It is not a second cuckoo implementation: a Filter wraps the library's
// cuckoo.Filter with RedisBloom's exact parameters (spec redis-compat.md
// §2.2):
//
//   - h = MurmurHash64A(item, seed 0) (internal/hashing), hash ID
//     cuckoo.HashMurmur64A;
//   - 8-bit fingerprints fp = h mod 255 + 1, h2 = h XOR fp·0x5bd1e995,
//     bucket = h mod buckets, one byte per slot;
//   - numBuckets = nextPow2(capacity / bucketSize), sub-filter i has
//     numBuckets·expansion^i buckets, expansion rounded up to a power of
//     two; insert newest→oldest, kick-out in the newest sub-filter with
//     RedisBloom's victim order and undo walk (cuckoo.Filter.InsertHash);
//   - CuckooFilter_Delete's automatic compaction: after a successful delete,
//     if there is more than one sub-filter and deletes > items·0.10, compact
//     from the newest sub-filter down, stopping at the first that cannot be
//     emptied.
//
// It also implements RedisBloom's CF.SCANDUMP/CF.LOADCHUNK wire format: a
// packed 38-byte little-endian header, then the raw sub-filter tables.
// Snapshots (MarshalBinary / UnmarshalFilter) use the cuckoo package's own
// checksummed format.
//
// Memory: the tables (Σ buckets·bucket size bytes) plus ~100 bytes per
// sub-filter. Every allocation is bounded by a per-filter byte budget (the
// budget argument of New and the decoders); headers that ask for more are
// refused before allocating.
//
// Concurrency: a Filter is not safe for concurrent mutation; the keyspace's
// per-key lock serializes commands. Read-only methods may run concurrently
// with each other.
package rediscuckoo

import (
	"errors"
	"strconv"

	"github.com/probly/probly/cuckoo"
	"github.com/probly/probly/internal/hashing"
	"github.com/probly/probly/internal/keyspace"
)

// TypeName is the TYPE reply for a cuckoo key (RedisBloom's module type).
const TypeName = "MBbloomCF"

// DefaultBudget is the default per-filter byte budget: the most table
// bytes one filter may hold in all its sub-filters, 128 MiB.
const DefaultBudget = 128 << 20

// MaxBudget is the largest budget: every slot index then fits the 32 bits
// RedisBloom computes it in, so positions are RedisBloom's for every
// filter this package builds.
const MaxBudget = 1<<32 - 1

// Limits of RedisBloom's parameters (spec §2.1, §3).
const (
	MaxCapacity      = 1 << 30
	MaxBucketSize    = 255
	MaxIterations    = 65535
	MaxExpansion     = 32768
	MaxMaxExpansions = 65536 // upper bound of cf-max-expansions
)

// MaxScanDumpChunk is the largest chunk CF.SCANDUMP returns (RedisBloom's
// MAX_SCANDUMP_SIZE, 16 MiB).
const MaxScanDumpChunk = 16 << 20

// Error is an error whose text is the exact RedisBloom reply (sent behind a
// "-").
type Error string

func (e Error) Error() string { return string(e) }

// The RedisBloom error replies produced by this package.
const (
	ErrFull               Error = "Filter is full"
	ErrInsufficientMemory Error = "ERR Insufficient memory"
	ErrCreateMemory       Error = "ERR Insufficient memory to create filter"
	ErrCouldNotCreate     Error = "ERR Could not create filter"
	ErrInvalidHeader      Error = "Invalid header"
	ErrBadHeader          Error = "Couldn't create filter!"
	ErrLoadChunk          Error = "Couldn't load chunk!"
	ErrBadData            Error = "ERR received bad data"
)

// Params are the parameters of a new filter, as CF.RESERVE takes them.
type Params struct {
	Capacity      uint64 // first sub-filter: nextPow2(Capacity / BucketSize) buckets
	BucketSize    uint16 // 1 … 255
	MaxIterations uint16 // 1 … 65535
	Expansion     uint16 // 0 … 32768, rounded up to a power of two; 0 = never grows
}

// Filter is a RedisBloom cuckoo filter.
type Filter struct{ f *cuckoo.Filter }

var _ keyspace.Value = (*Filter)(nil)

// Hash is RedisBloom's cuckoo hash of an item: MurmurHash64A with seed 0.
func Hash(item []byte) uint64 { return hashing.MurmurHash64A(item, 0) }

func budgetOr(budget uint64) uint64 {
	if budget == 0 {
		return DefaultBudget
	}
	return budget
}

func (p Params) config(budget uint64) cuckoo.Config {
	return cuckoo.Config{
		Capacity:        p.Capacity,
		BucketSize:      int(p.BucketSize),
		FingerprintBits: 8,
		MaxKicks:        int(p.MaxIterations),
		Expansion:       uint32(p.Expansion),
		MaxBytes:        budgetOr(budget),
		HashID:          cuckoo.HashMurmur64A,
	}
}

// New creates an empty filter with one sub-filter. budget bounds the
// total table bytes, now and when the filter grows (0 = DefaultBudget).
// Errors: ErrCreateMemory if the first sub-filter does not fit the budget,
// ErrCouldNotCreate for parameters out of range.
func New(p Params, budget uint64) (*Filter, error) {
	if p.Capacity == 0 || p.BucketSize == 0 || p.BucketSize > MaxBucketSize || p.MaxIterations == 0 || p.Expansion > MaxExpansion {
		return nil, ErrCouldNotCreate
	}
	f, err := cuckoo.NewWithConfig(p.config(budget))
	if err != nil {
		if errors.Is(err, cuckoo.ErrTooLarge) {
			return nil, ErrCreateMemory
		}
		return nil, ErrCouldNotCreate
	}
	return &Filter{f: f}, nil
}

func insertErr(err error) error {
	if errors.Is(err, cuckoo.ErrFull) {
		return ErrFull
	}
	return ErrInsufficientMemory
}

// Insert adds a copy of item (CF.ADD). Errors: ErrFull (expansion 0, no
// room), ErrInsufficientMemory (a new sub-filter would break the budget);
// the filter is unchanged on error.
func (c *Filter) Insert(item []byte) error { return c.InsertHash(Hash(item)) }

// InsertHash is Insert for a precomputed Hash.
func (c *Filter) InsertHash(h uint64) error {
	if err := c.f.InsertHash(h); err != nil {
		return insertErr(err)
	}
	return nil
}

// InsertNX adds item unless it (probably) exists (CF.ADDNX): false if it
// does. Errors as Insert.
func (c *Filter) InsertNX(item []byte) (bool, error) {
	ok, err := c.f.InsertUniqueHash(Hash(item))
	if err != nil {
		return false, insertErr(err)
	}
	return ok, nil
}

// Exists reports whether item may be in the filter (CF.EXISTS).
func (c *Filter) Exists(item []byte) bool { return c.f.LookupHash(Hash(item)) }

// Count is CF.COUNT: the slots holding item's fingerprint in its two
// buckets, over all sub-filters.
func (c *Filter) Count(item []byte) uint64 { return c.f.CountHash(Hash(item)) }

// Delete removes one copy of item's fingerprint (CF.DEL) and reports
// whether it found one; then it runs RedisBloom's automatic compaction if
// there is more than one sub-filter and deletes > items·0.10.
func (c *Filter) Delete(item []byte) bool {
	if !c.f.DeleteHash(Hash(item)) {
		return false
	}
	if c.f.SubFilters() > 1 && float64(c.f.Deletes()) > float64(c.f.Items())*0.10 {
		c.f.CompactNewest()
	}
	return true
}

// Compact is CF.COMPACT: relocate what fits into older sub-filters,
// release emptied newest sub-filters, reset the delete counter.
func (c *Filter) Compact() { c.f.Compact() }

// NumFilters returns the number of sub-filters.
func (c *Filter) NumFilters() int { return c.f.SubFilters() }

// NumBuckets returns the bucket count of the first sub-filter.
func (c *Filter) NumBuckets() uint64 { return c.f.SubFilterBuckets(0) }

// Items returns "Number of items inserted".
func (c *Filter) Items() uint64 { return c.f.Items() }

// Deletes returns "Number of items deleted" (since the last compaction).
func (c *Filter) Deletes() uint64 { return c.f.Deletes() }

// BucketSize returns the slots per bucket.
func (c *Filter) BucketSize() uint16 { return uint16(c.f.Config().BucketSize) }

// MaxIterations returns the kick-out bound.
func (c *Filter) MaxIterations() uint16 { return uint16(c.f.Config().MaxKicks) }

// Expansion returns the (rounded) expansion factor.
func (c *Filter) Expansion() uint16 { return uint16(c.f.Config().Expansion) }

// SizeBytes returns the table bytes of all sub-filters.
func (c *Filter) SizeBytes() uint64 { return c.f.SizeBytes() }

// Budget returns the filter's byte budget.
func (c *Filter) Budget() uint64 { return c.f.Config().MaxBytes }

// Cuckoo returns the underlying library filter (for tests and statistics;
// callers must not modify it).
func (c *Filter) Cuckoo() *cuckoo.Filter { return c.f }

// InfoSize is CF.INFO's Size: the C struct sizes on 64-bit,
// 40 + 16·numFilters + Σ numBuckets_i·bucketSize.
func (c *Filter) InfoSize() uint64 { return 40 + 16*uint64(c.f.SubFilters()) + c.f.SizeBytes() }

// Debug returns CF.DEBUG's reply: "bktsize:%u buckets:%lu items:%lu
// deletes:%lu filters:%u max_iterations:%u expansion:%u".
func (c *Filter) Debug() string {
	b := make([]byte, 0, 112)
	b = append(b, "bktsize:"...)
	b = strconv.AppendUint(b, uint64(c.BucketSize()), 10)
	b = append(b, " buckets:"...)
	b = strconv.AppendUint(b, c.NumBuckets(), 10)
	b = append(b, " items:"...)
	b = strconv.AppendUint(b, c.Items(), 10)
	b = append(b, " deletes:"...)
	b = strconv.AppendUint(b, c.Deletes(), 10)
	b = append(b, " filters:"...)
	b = strconv.AppendUint(b, uint64(c.NumFilters()), 10)
	b = append(b, " max_iterations:"...)
	b = strconv.AppendUint(b, uint64(c.MaxIterations()), 10)
	b = append(b, " expansion:"...)
	b = strconv.AppendUint(b, uint64(c.Expansion()), 10)
	return string(b)
}

// TypeName implements keyspace.Value.
func (c *Filter) TypeName() string { return TypeName }

// MemoryUsage implements keyspace.Value: tables plus bookkeeping.
func (c *Filter) MemoryUsage() uint64 { return memoryUsage(c.f.SizeBytes(), c.f.SubFilters()) }

// memoryUsage is MemoryUsage of a filter with these table bytes and
// sub-filters.
func memoryUsage(tables uint64, subFilters int) uint64 { return tables + 160 + 48*uint64(subFilters) }

// NewMemoryUsage returns the MemoryUsage of the filter New(p, budget)
// would create, without allocating it, and false if New would fail.
func NewMemoryUsage(p Params, budget uint64) (uint64, bool) {
	if p.Capacity == 0 || p.BucketSize == 0 || p.BucketSize > MaxBucketSize || p.MaxIterations == 0 || p.Expansion > MaxExpansion {
		return 0, false
	}
	tables, err := cuckoo.TableBytes(p.config(budget), 1)
	if err != nil {
		return 0, false
	}
	return memoryUsage(tables, 1), true
}

// Clone implements keyspace.Value (a deep copy).
func (c *Filter) Clone() keyspace.Value { return c.CloneFilter() }

// CloneFilter returns a deep copy of c.
func (c *Filter) CloneFilter() *Filter { return &Filter{f: c.f.Clone()} }

// Equal reports whether two filters have identical state: parameters,
// counters and tables.
func (c *Filter) Equal(d *Filter) bool { return c.f.Equal(d.f) }
