package guard

import (
	"errors"
	"sync"

	"github.com/probly/probly/bloom"
	"github.com/probly/probly/cuckoo"
)

// Filter is the approximate set a Guard consults: any probly filter without
// false negatives, through the adapters Bloom, SBBF, Counting, Scalable and
// Cuckoo (and the NewFilterFuncs NewBloom, NewSBBF, NewCounting,
// NewScalable and NewCuckoo), or a type of your own. The adapters are one
// code path: every probly membership filter has the library's Add(key)
// error, Test(key) bool and Stats (docs/LIBRARY.md), so they differ only
// in whether they need a lock and how their Stats read.
//
// bloom.Stable has no adapter, on purpose: it forgets old items to stay
// within fixed memory, so its Test answers false for keys that were added
// (false negatives by design). Behind a Guard that would answer "not
// found" for keys the database holds, which breaks the Guard's one promise.
// Use Scalable for a set that keeps growing between rebuilds.
//
// Test reports false only if key was never added (or, for a filter that
// also implements Deleter, every added copy was deleted): no false
// negatives. Add inserts key; an error means the key is NOT in the filter
// (the Guard then stops trusting this filter's negatives and rebuilds it).
//
// The Guard calls Add and Delete from one goroutine at a time, while Test
// runs on any number of goroutines: Test must be safe concurrently with Add
// and Delete (the adapters see to it).
type Filter interface {
	Test(key []byte) bool
	Add(key []byte) error
}

// Deleter is implemented by filters that can remove a key (the cuckoo and
// counting Bloom adapters). The Guard deletes a key from such a filter when the change
// stream reports its deletion; a filter without Deleter keeps deleted keys
// until the next rebuild, and the negative cache answers for them
// meanwhile.
//
// Delete must only be called for a key that was added: deleting a key that
// was never added can remove another key's fingerprint or counts (cuckoo
// and bloom.Counting documentation). The Guard guarantees this as long as the Snapshot is
// exact and every delete change follows the add of the same key.
type Deleter interface {
	Delete(key []byte) error
}

// FilterStats describes a filter's fill, for rebuild decisions and metrics.
// Zero fields are unknown.
type FilterStats struct {
	Items     uint64  // keys added (an estimate for some filters)
	Capacity  uint64  // keys the filter was sized for
	Bytes     uint64  // memory of the filter's tables
	FillRatio float64 // Bloom: set bits / m; cuckoo: used slots / slots
	FPR       float64 // false-positive rate estimated from the fill
}

// StatsReporter is implemented by filters that report FilterStats (all the
// adapters of this package). Without it the Guard counts items itself and
// cannot use the estimated-FPR rebuild trigger.
type StatsReporter interface {
	FilterStats() FilterStats
}

// NewFilterFunc creates an empty filter for capacity keys at false-positive
// rate p. The Guard calls it for every new version.
type NewFilterFunc func(capacity uint64, p float64) (Filter, error)

// NewBloom is a NewFilterFunc making a classic Bloom filter (bloom.New):
// lock-free, safe for concurrent Test and Add, no deletes.
func NewBloom(capacity uint64, p float64) (Filter, error) {
	return newAdapted(capacity, p, bloom.New, Bloom)
}

// NewSBBF is a NewFilterFunc making a split-block Bloom filter
// (bloom.NewSBBF, Parquet layout): one 32-byte block per lookup (one cache
// miss at most, against about k for NewBloom), lock-free, safe for
// concurrent Test and Add, no deletes. Errors are bloom.NewSBBF's.
func NewSBBF(capacity uint64, p float64) (Filter, error) {
	return newAdapted(capacity, p, bloom.NewSBBF, SBBF)
}

// NewCounting is a NewFilterFunc making a counting Bloom filter
// (bloom.NewCounting, 4-bit counters, 4× the memory of NewBloom at equal
// p), which supports deletes. Errors are bloom.NewCounting's.
func NewCounting(capacity uint64, p float64) (Filter, error) {
	return newAdapted(capacity, p, bloom.NewCounting, Counting)
}

// NewScalable is a NewFilterFunc making a scalable Bloom filter
// (bloom.NewScalable, growth 2), which keeps its false-positive bound when
// more than capacity keys arrive between rebuilds.
func NewScalable(capacity uint64, p float64) (Filter, error) {
	return newAdapted(capacity, p, bloom.NewScalable, Scalable)
}

// NewCuckoo is a NewFilterFunc making a cuckoo filter (cuckoo.New), which
// supports deletes.
func NewCuckoo(capacity uint64, p float64) (Filter, error) {
	return newAdapted(capacity, p, cuckoo.New, Cuckoo)
}

// Bloom adapts a classic Bloom filter. bloom.Filter is safe for concurrent
// Add and Test, so the adapter adds no lock. Add never fails.
func Bloom(f *bloom.Filter) Filter {
	return &adapter[*bloom.Filter, bloom.Stats]{f: f, stats: bloomStats}
}

// SBBF adapts a split-block Bloom filter. bloom.SBBF is safe for
// concurrent Add and Test (atomic OR), so the adapter adds no lock. Add
// never fails. FilterStats costs one pass over the bitset (bloom.SBBF.Stats).
func SBBF(s *bloom.SBBF) Filter { return &adapter[*bloom.SBBF, bloom.Stats]{f: s, stats: bloomStats} }

// Counting adapts a counting Bloom filter, with deletes. bloom.Counting
// must not be read while it is modified, so the adapter serializes Add and
// Delete against Test with a sync.RWMutex (readers share it). Add never
// fails (saturated counters stick at 15 and only keep removed keys as false
// positives). Delete returns an error, and changes nothing, for a key one of
// whose counters is 0 (bloom.Counting.Remove reports false); the Guard logs
// it and goes on. FilterStats costs one pass over the counters.
func Counting(c *bloom.Counting) Filter {
	return &remover[*bloom.Counting, bloom.Stats]{adapter[*bloom.Counting, bloom.Stats]{mu: new(sync.RWMutex), f: c, stats: bloomStats}}
}

// Scalable adapts a scalable Bloom filter. bloom.Scalable must not be read
// while it grows, so the adapter serializes Add against Test with a
// sync.RWMutex (readers share it). Add fails only for a chain made with
// bloom.NoGrowth that holds its capacity, or one that reached its MaxBytes.
func Scalable(s *bloom.Scalable) Filter {
	return &adapter[*bloom.Scalable, bloom.Stats]{mu: new(sync.RWMutex), f: s, stats: bloomStats}
}

// Cuckoo adapts a cuckoo filter, with deletes. cuckoo.Filter is not safe
// for reads during a modification, so the adapter serializes Add and
// Delete against Test with a sync.RWMutex. cuckoo.Filter undoes a failed
// insert completely, so when Add fails no other key was lost and only this
// one is missing. Delete returns an error, and changes nothing, when no
// copy of the key's fingerprint is found.
func Cuckoo(f *cuckoo.Filter) Filter {
	return &remover[*cuckoo.Filter, cuckoo.Stats]{adapter[*cuckoo.Filter, cuckoo.Stats]{mu: new(sync.RWMutex), f: f, stats: cuckooStats}}
}

// newAdapted makes a filter with mk (a library constructor from (n, p))
// and adapts it with adapt.
func newAdapted[F any](capacity uint64, p float64, mk func(uint64, float64) (F, error), adapt func(F) Filter) (Filter, error) {
	f, err := mk(capacity, p)
	if err != nil {
		return nil, err
	}
	return adapt(f), nil
}

// member is what an adapter needs of a probly filter: the library
// vocabulary's Test, Add and Stats (docs/LIBRARY.md), which every
// membership type of bloom and cuckoo has.
type member[S any] interface {
	Test(key []byte) bool
	Add(key []byte) error
	Stats() S
}

// adapter is the one Filter and StatsReporter over a probly filter F with
// statistics S. mu is nil for filters safe for concurrent Add and Test
// (bloom.Filter, bloom.SBBF); otherwise Test and FilterStats share it and
// Add (and remover's Delete) hold it exclusively.
type adapter[F member[S], S any] struct {
	mu    *sync.RWMutex
	f     F
	stats func(S) FilterStats
}

func (a *adapter[F, S]) Test(key []byte) bool {
	if a.mu != nil {
		a.mu.RLock()
		defer a.mu.RUnlock()
	}
	return a.f.Test(key)
}

func (a *adapter[F, S]) Add(key []byte) error {
	if a.mu != nil {
		a.mu.Lock()
		defer a.mu.Unlock()
	}
	return a.f.Add(key)
}

func (a *adapter[F, S]) FilterStats() FilterStats {
	if a.mu != nil {
		a.mu.RLock()
		defer a.mu.RUnlock()
	}
	return a.stats(a.f.Stats())
}

// remover is an adapter with Delete, for filters with the vocabulary's
// Remove (bloom.Counting, cuckoo.Filter); it always has a lock.
type remover[F interface {
	member[S]
	Remove(key []byte) bool
}, S any] struct {
	adapter[F, S]
}

func (r *remover[F, S]) Delete(key []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.f.Remove(key) {
		return errNotInFilter
	}
	return nil
}

// errNotInFilter is Delete's error for a key the filter cannot hold.
var errNotInFilter = errors.New("guard: key to delete is not in the filter; nothing removed")

// bloomStats reads the statistics of every Bloom filter type.
func bloomStats(s bloom.Stats) FilterStats {
	return FilterStats{Items: s.N, Capacity: s.Capacity, Bytes: s.Bytes, FillRatio: s.FillRatio, FPR: s.FPR}
}

// cuckooStats reads a cuckoo filter's statistics. Its capacity is the
// load a table of its bucket size reaches before inserts fail (cuckoo
// package documentation).
func cuckooStats(s cuckoo.Stats) FilterStats {
	load := 0.95
	switch {
	case s.BucketSize == 1:
		load = 0.5
	case s.BucketSize < 4:
		load = 0.84
	}
	return FilterStats{Items: s.N, Capacity: uint64(float64(s.M) * load), Bytes: s.Bytes, FillRatio: s.FillRatio, FPR: s.FPR}
}

// errNoFilter is returned by a NewFilterFunc that returned nil.
var errNoFilter = errors.New("guard: NewFilter returned a nil filter")
