// Package rediscuckoo is the server's RedisBloom-compatible cuckoo filter
// (the value behind CF.* keys, TYPE "MBbloomCF").
//
// It is not a second cuckoo implementation: a Filter wraps the library's
// cuckoo.Filter with RedisBloom's exact parameters (spec redis-compat.md
// §2.2):
//
//   - h = MurmurHash64A(item, seed 0) (internal/hashing), hash ID
//     cuckooraw.HashMurmur64A;
//   - 8-bit fingerprints fp = h mod 255 + 1, h2 = h XOR fp·0x5bd1e995,
//     bucket = h mod buckets, one byte per slot;
//   - numBuckets = nextPow2(capacity / bucketSize), sub-filter i has
//     numBuckets·expansion^i buckets, expansion rounded up to a power of
//     two; insert newest→oldest, kick-out in the newest sub-filter with
//     RedisBloom's victim order and undo walk (cuckoo.Filter.AddHash);
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
// Memory: MemoryUsage counts what a filter really holds on the Go heap:
// each sub-filter's table rounded up to its allocation size
// (keyspace.HeapSize), plus SubFilterOverhead bytes per sub-filter and
// FilterOverhead bytes per filter. The per-filter byte budget (the budget
// argument of New and the decoders) bounds that total; every allocation
// is checked against it before it is made, and growth (InsertReserve)
// also asks the caller's reservation first.
//
// Concurrency: a Filter is not safe for concurrent mutation; the keyspace's
// per-key lock serializes commands. Read-only methods may run concurrently
// with each other.
package rediscuckoo

import (
	"errors"
	"strconv"
	"unsafe"

	"github.com/probly/probly/cuckoo"
	"github.com/probly/probly/internal/cuckooraw"
	"github.com/probly/probly/internal/hashing"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/sysmem"
)

// TypeName is the TYPE reply for a cuckoo key (RedisBloom's module type).
const TypeName = "MBbloomCF"

// DefaultBudget is the default per-filter byte budget: the most table
// bytes one filter may hold in all its sub-filters, 128 MiB.
const DefaultBudget = 128 << 20

// MaxBudget is the largest budget (cf-max-filter-bytes): the memory
// available to the process (sysmem.Available), and at least 2^32−1 where
// that is smaller or unknown. Read once at start-up.
var MaxBudget = max(uint64(1<<32-1), sysmem.Available())

// MaxSubFilterSlots is the most slots (buckets × bucket size) one
// sub-filter may have: RedisBloom computes a slot index (bucket ·
// bucketSize) in 32 bits, so up to 2^32 slots every position is
// RedisBloom's, and a larger sub-filter would be indexed differently.
// Headers declaring one are refused, and growth into one fails with
// ErrInsufficientMemory.
const MaxSubFilterSlots = 1 << 32

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

// ErrOOM is returned by InsertReserve when the caller's reservation
// refuses a new sub-filter: Redis's maxmemory reply.
const ErrOOM Error = "OOM command not allowed when used memory > 'maxmemory'."

// Filter is a RedisBloom cuckoo filter.
type Filter struct {
	f      *cuckoo.Filter
	budget uint64 // bound on MemoryUsage for growth
	heap   uint64 // Σ keyspace.HeapSize(table bytes of each sub-filter)
	subs   int    // sub-filters counted in heap
}

// SubFilterOverhead is the heap bytes a sub-filter costs besides its
// table: its slot in the cuckoo package's sub-filter slice (table slice
// header, bucket mask and used-slot count, 40 bytes), counted twice for
// the spare capacity append leaves.
const SubFilterOverhead = 2 * (24 + 8 + 8)

// FilterOverhead is the heap bytes of a filter besides its sub-filters:
// this Filter, its cuckoo.Filter and the cuckoo package's sub-filter list
// (a slice header and the bucket size, 32 bytes).
var FilterOverhead = keyspace.HeapSize(uint64(unsafe.Sizeof(Filter{}))) +
	keyspace.HeapSize(uint64(unsafe.Sizeof(*(*cuckoo.Filter)(nil)))) + keyspace.HeapSize(32)

// wrap returns f as a Filter with growth budget budget (not 0), lifting
// the library filter's own limit (a decoded encoding may carry one).
func wrap(f *cuckoo.Filter, budget uint64) *Filter {
	raw.SetMaxBytes(f, 0)
	c := &Filter{f: f}
	c.SetBudget(budget)
	c.recount()
	return c
}

// recount recomputes heap after the number of sub-filters changed.
func (c *Filter) recount() {
	c.subs = raw.SubFilters(c.f)
	c.heap = 0
	for i := range c.subs {
		c.heap += keyspace.HeapSize(raw.SubTableBytes(c.f, i))
	}
}

// sync keeps heap current after a change that may add or release
// sub-filters (growth, compaction).
func (c *Filter) sync() {
	if raw.SubFilters(c.f) != c.subs {
		c.recount()
	}
}

// SetBudget replaces the budget on MemoryUsage that future growth must
// fit (0 = DefaultBudget). Sub-filters already present are kept even if
// they exceed it. The budget is the server's policy, not the filter's
// state: only this Filter holds it (GrowthSize checks it), and the
// library filter's own limit stays 0, so encodings (snapshots, DUMP)
// record max bytes 0 whatever budget the filter was created, loaded or
// replayed under.
func (c *Filter) SetBudget(b uint64) { c.budget = budgetOr(b) }

var _ keyspace.Value = (*Filter)(nil)

// raw is package cuckoo's server-only operations (internal/cuckooraw). Its
// Configs have RedisBloom's meaning of Expansion: 0 = never grows.
var raw = cuckooraw.Get[cuckooraw.Hooks[cuckoo.Filter, cuckoo.Config]]()

// Hash is RedisBloom's cuckoo hash of an item: MurmurHash64A with seed 0.
func Hash(item []byte) uint64 { return hashing.MurmurHash64A(item, 0) }

func budgetOr(budget uint64) uint64 {
	if budget == 0 {
		return DefaultBudget
	}
	return budget
}

// config is the library configuration of p: no limit of its own
// (MaxBytes 0), the budget being checked by this package.
func (p Params) config() cuckoo.Config {
	return cuckoo.Config{
		Capacity:        p.Capacity,
		BucketSize:      int(p.BucketSize),
		FingerprintBits: 8,
		MaxKicks:        int(p.MaxIterations),
		Expansion:       uint32(p.Expansion),
		HashID:          cuckoo.HashID(cuckooraw.HashMurmur64A),
	}
}

// New creates an empty filter with one sub-filter. budget bounds the
// filter's MemoryUsage, now and when it grows (0 = DefaultBudget).
// Errors: ErrCreateMemory if the first sub-filter does not fit the budget,
// ErrCouldNotCreate for parameters out of range. Nothing is allocated
// when it fails.
func New(p Params, budget uint64) (*Filter, error) {
	budget = budgetOr(budget)
	if _, err := newSize(p, budget); err != nil {
		return nil, err
	}
	f, err := raw.New(p.config())
	if err != nil {
		if errors.Is(err, cuckoo.ErrTooLarge) {
			return nil, ErrCreateMemory
		}
		return nil, ErrCouldNotCreate
	}
	return wrap(f, budget), nil
}

// newSize returns the MemoryUsage of the filter New(p, budget) creates,
// or the error New returns, without allocating. budget is not 0.
func newSize(p Params, budget uint64) (uint64, error) {
	if p.Capacity == 0 || p.BucketSize == 0 || p.BucketSize > MaxBucketSize || p.MaxIterations == 0 || p.Expansion > MaxExpansion {
		return 0, ErrCouldNotCreate
	}
	tables, err := raw.TableBytes(p.config(), 1)
	if err != nil {
		if errors.Is(err, cuckoo.ErrTooLarge) {
			return 0, ErrCreateMemory
		}
		return 0, ErrCouldNotCreate
	}
	if mem := memoryUsage(keyspace.HeapSize(tables), 1); mem <= budget {
		return mem, nil
	}
	return 0, ErrCreateMemory
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
func (c *Filter) Insert(item []byte) error { return c.InsertHashReserve(Hash(item), nil) }

// InsertHash is Insert for a precomputed Hash.
func (c *Filter) InsertHash(h uint64) error { return c.InsertHashReserve(h, nil) }

// InsertReserve is Insert for a live command under a memory limit: when
// the item needs a new sub-filter, reserve (if not nil) is first asked for
// the bytes it adds to MemoryUsage (GrowthSize), and if it refuses
// InsertReserve returns ErrOOM and changes nothing. reserve must not
// block: it runs under the caller's key lock.
func (c *Filter) InsertReserve(item []byte, reserve func(n uint64) bool) error {
	return c.InsertHashReserve(Hash(item), reserve)
}

// InsertHashReserve is InsertReserve for a precomputed Hash. The insert is
// first tried with growth disabled; only if it needs a new sub-filter (the
// kick-out walk failed and was undone, leaving the filter as it was) is
// the growth sized, checked against the budget, reserved, and the insert
// run again, which repeats the same deterministic walk and then grows, as
// a single insert would have. Cost beyond cuckoo's InsertHash: two field
// stores, and on growth a second walk.
func (c *Filter) InsertHashReserve(h uint64, reserve func(n uint64) bool) error {
	raw.SetMaxBytes(c.f, raw.SizeBytes(c.f)) // any new sub-filter is refused
	err := c.f.AddHash(h)
	raw.SetMaxBytes(c.f, 0) // GrowthSize holds growth to the budget

	if err == nil {
		return nil
	}
	if !errors.Is(err, cuckoo.ErrTooLarge) {
		return insertErr(err)
	}
	n, err := c.GrowthSize()
	if err != nil {
		return err
	}
	if reserve != nil && !reserve(n) {
		return ErrOOM
	}
	if err := c.f.AddHash(h); err != nil {
		return insertErr(err)
	}
	c.sync()
	return nil
}

// GrowthSize returns the bytes the filter's next sub-filter would add to
// MemoryUsage (its table's heap size plus SubFilterOverhead), and
// ErrInsufficientMemory if it cannot be made (the filter does not grow,
// the cuckoo package's limits, or the budget). Cost: O(sub-filters).
func (c *Filter) GrowthSize() (uint64, error) {
	cfg := raw.Config(c.f)
	cfg.MaxBytes = 0
	nf := raw.SubFilters(c.f)
	total, err := raw.TableBytes(cfg, nf+1)
	if err != nil || total < raw.SizeBytes(c.f) {
		return 0, ErrInsufficientMemory
	}
	if total-raw.SizeBytes(c.f) > MaxSubFilterSlots {
		return 0, ErrInsufficientMemory
	}
	n := keyspace.HeapSize(total-raw.SizeBytes(c.f)) + SubFilterOverhead
	if mem := c.MemoryUsage(); n > c.budget || mem > c.budget-n {
		return 0, ErrInsufficientMemory
	}
	return n, nil
}

// InsertNX adds item unless it (probably) exists (CF.ADDNX): false if it
// does. Errors as Insert.
func (c *Filter) InsertNX(item []byte) (bool, error) { return c.InsertNXReserve(item, nil) }

// InsertNXReserve is InsertNX with InsertReserve's memory reservation.
func (c *Filter) InsertNXReserve(item []byte, reserve func(n uint64) bool) (bool, error) {
	h := Hash(item)
	if c.f.TestHash(h) {
		return false, nil
	}
	if err := c.InsertHashReserve(h, reserve); err != nil {
		return false, err
	}
	return true, nil
}

// Exists reports whether item may be in the filter (CF.EXISTS).
func (c *Filter) Exists(item []byte) bool { return c.f.TestHash(Hash(item)) }

// Count is CF.COUNT: the slots holding item's fingerprint in its two
// buckets, over all sub-filters.
func (c *Filter) Count(item []byte) uint64 { return c.f.CountHash(Hash(item)) }

// Delete removes one copy of item's fingerprint (CF.DEL) and reports
// whether it found one; then it runs RedisBloom's automatic compaction if
// there is more than one sub-filter and deletes > items·0.10.
func (c *Filter) Delete(item []byte) bool {
	if !c.f.RemoveHash(Hash(item)) {
		return false
	}
	if raw.SubFilters(c.f) > 1 && float64(raw.Deletes(c.f)) > float64(raw.Items(c.f))*0.10 {
		raw.CompactNewest(c.f)
		c.sync()
	}
	return true
}

// Compact is CF.COMPACT: relocate what fits into older sub-filters,
// release emptied newest sub-filters, reset the delete counter.
func (c *Filter) Compact() {
	c.f.Compact()
	c.sync()
}

// NumFilters returns the number of sub-filters.
func (c *Filter) NumFilters() int { return raw.SubFilters(c.f) }

// NumBuckets returns the bucket count of the first sub-filter.
func (c *Filter) NumBuckets() uint64 { return raw.SubFilterBuckets(c.f, 0) }

// Items returns "Number of items inserted".
func (c *Filter) Items() uint64 { return raw.Items(c.f) }

// Deletes returns "Number of items deleted" (since the last compaction).
func (c *Filter) Deletes() uint64 { return raw.Deletes(c.f) }

// BucketSize returns the slots per bucket.
func (c *Filter) BucketSize() uint16 { return uint16(raw.Config(c.f).BucketSize) }

// MaxIterations returns the kick-out bound.
func (c *Filter) MaxIterations() uint16 { return uint16(raw.Config(c.f).MaxKicks) }

// Expansion returns the (rounded) expansion factor.
func (c *Filter) Expansion() uint16 { return uint16(raw.Config(c.f).Expansion) }

// SizeBytes returns the table bytes of all sub-filters.
func (c *Filter) SizeBytes() uint64 { return raw.SizeBytes(c.f) }

// Budget returns the filter's byte budget (on MemoryUsage).
func (c *Filter) Budget() uint64 { return c.budget }

// Cuckoo returns the underlying library filter (for tests and statistics;
// callers must not modify it).
func (c *Filter) Cuckoo() *cuckoo.Filter { return c.f }

// InfoSize is CF.INFO's Size: the C struct sizes on 64-bit,
// 40 + 16·numFilters + Σ numBuckets_i·bucketSize.
func (c *Filter) InfoSize() uint64 { return 40 + 16*uint64(raw.SubFilters(c.f)) + raw.SizeBytes(c.f) }

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

// MemoryUsage implements keyspace.Value: the heap bytes of the tables
// (each rounded up to its allocation size) plus SubFilterOverhead per
// sub-filter and FilterOverhead. O(1).
func (c *Filter) MemoryUsage() uint64 { return memoryUsage(c.heap, c.subs) }

// memoryUsage is MemoryUsage of a filter whose tables take heap bytes in
// subFilters sub-filters.
func memoryUsage(heap uint64, subFilters int) uint64 {
	return FilterOverhead + heap + SubFilterOverhead*uint64(subFilters)
}

// NewMemoryUsage returns the MemoryUsage of the filter New(p, budget)
// would create, without allocating it, and false if New would fail.
func NewMemoryUsage(p Params, budget uint64) (uint64, bool) {
	n, err := newSize(p, budgetOr(budget))
	return n, err == nil
}

// Clone implements keyspace.Value (a deep copy).
func (c *Filter) Clone() keyspace.Value { return c.CloneFilter() }

// CloneFilter returns a deep copy of c.
func (c *Filter) CloneFilter() *Filter {
	return &Filter{f: c.f.Clone(), budget: c.budget, heap: c.heap, subs: c.subs}
}

// Equal reports whether two filters have identical state: parameters,
// counters and tables.
func (c *Filter) Equal(d *Filter) bool { return raw.Equal(c.f, d.f) }
