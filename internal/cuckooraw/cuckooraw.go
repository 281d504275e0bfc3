// Package cuckooraw is the server's backdoor into package cuckoo: the
// operations only internal/rediscuckoo needs, which must not be public
// because they can break a filter's invariants (overwrite table bytes,
// restore item counters without checking them against the tables, lift
// the growth limit) or build a filter whose hash the cuckoo package cannot
// compute (RedisBloom's MurmurHash64A).
//
// The pattern (docs/LIBRARY.md, "How the server uses the library"):
// package cuckoo keeps its implementation and, in its init, calls
// Register with a Hooks value instantiated over its own types; an adapter
// fetches it once with Get and calls the fields. This package imports
// nothing from probly, so there is no import cycle; only the module can
// import it.
//
// The hooks do no more validation than the unexported functions they
// wrap: callers validate their input first.
//
// In every Config a hook takes or returns, Expansion has the meaning it
// has in the encoding (docs/FORMATS.md) and in RedisBloom: 0 means the
// filter never grows. (The public API says cuckoo.NoGrowth for that and
// takes 0 as the default, 2.)
package cuckooraw

import "io"

// HashMurmur64A is the hash ID of MurmurHash64A (64-bit MurmurHash2,
// variant "64A") of the key with the filter's seed; with seed 0 it is the
// hash of RedisBloom's cuckoo filters (internal/rediscuckoo.Hash). Package
// cuckoo records it but cannot compute it: filters with this ID take only
// pre-computed hashes.
const HashMurmur64A = 4

// Hooks are package cuckoo's server-only operations. F is cuckoo.Filter
// and C cuckoo.Config.
type Hooks[F, C any] struct {
	// New is cuckoo.NewWithConfig with any hash ID.
	New func(c C) (*F, error)
	// Restore returns a filter with sub sub-filters (sizes as if it had
	// grown sub−1 times) whose tables are all empty, and the given item
	// and delete counters; the tables arrive separately (WriteTableAt).
	// Sizes are checked against the limits before anything is allocated.
	Restore func(c C, sub int, items, deletes uint64) (*F, error)
	// TableBytes is the table bytes of the filter New(c) (sub = 1) or
	// Restore(c, sub, …) would build, or their error, without allocating.
	TableBytes func(c C, sub int) (uint64, error)
	// Config is the filter's configuration (Buckets set, defaults
	// applied).
	Config func(f *F) C
	// SetMaxBytes replaces the limit on the total table bytes (0 = none
	// but cuckoo.MaxTableBytes); a lower limit only stops future growth.
	SetMaxBytes func(f *F, n uint64)
	// Items is successful inserts minus successful deletes; Deletes the
	// successful deletes since the last compaction.
	Items   func(f *F) uint64
	Deletes func(f *F) uint64
	// SubFilters is the number of sub-filters; SubFilterBuckets and
	// SubTableBytes the bucket count and table bytes of sub-filter i (0
	// if there is none); SizeBytes the table bytes of all of them.
	SubFilters       func(f *F) int
	SubFilterBuckets func(f *F, i int) uint64
	SubTableBytes    func(f *F, i int) uint64
	SizeBytes        func(f *F) uint64
	// CompactNewest is Compact that stops at the first sub-filter (from
	// the newest down) that cannot be emptied, as RedisBloom's automatic
	// compaction after deletes does.
	CompactNewest func(f *F)
	// ReadTableAt copies table bytes of sub-filter i from byte off into
	// dst and returns the count; WriteTableAt overwrites them (the range
	// must lie inside the table; the item counter is not touched).
	ReadTableAt  func(f *F, i int, dst []byte, off uint64) int
	WriteTableAt func(f *F, i int, src []byte, off uint64) error
	// Equal compares parameters (MaxBytes aside), counters and tables.
	Equal func(f, g *F) bool
	// ReadN decodes one encoding (cuckoo's UnmarshalBinary format) of
	// exactly n bytes from r in place: tables allocated once, zero pages
	// left untouched, every check UnmarshalBinary makes.
	ReadN func(r io.Reader, n uint64) (*F, error)
}

var hooks any

// Register records package cuckoo's hooks; cuckoo calls it from init.
func Register(h any) { hooks = h }

// Get returns the registered hooks as H (a Hooks instantiated over
// cuckoo's types). It panics if cuckoo registered none of that type: a
// programming error found at start-up, since adapters call it while their
// package initialises.
func Get[H any]() H {
	h, ok := hooks.(H)
	if !ok {
		panic("cuckooraw: package cuckoo registered no hooks of this type")
	}
	return h
}
