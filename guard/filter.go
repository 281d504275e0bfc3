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
// NewScalable and NewCuckoo), or a type of your own.
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
	Items        uint64  // keys added (an estimate for some filters)
	Capacity     uint64  // keys the filter was sized for
	Bytes        uint64  // memory of the filter's tables
	FillRatio    float64 // Bloom: set bits / m; cuckoo: used slots / slots
	EstimatedFPR float64 // false-positive rate estimated from the fill
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
	f, err := bloom.New(capacity, p)
	if err != nil {
		return nil, err
	}
	return Bloom(f), nil
}

// NewSBBF is a NewFilterFunc making a split-block Bloom filter
// (bloom.NewSBBF, Parquet layout): one 32-byte block per lookup (one cache
// miss at most, against about k for NewBloom), lock-free, safe for
// concurrent Test and Add, no deletes. Errors are bloom.SBBFSizing's.
func NewSBBF(capacity uint64, p float64) (Filter, error) {
	s, err := bloom.NewSBBF(capacity, p)
	if err != nil {
		return nil, err
	}
	return SBBF(s), nil
}

// NewCounting is a NewFilterFunc making a counting Bloom filter
// (bloom.NewCounting, 4-bit counters, 4× the memory of NewBloom at equal
// p), which supports deletes. Errors are bloom.ClassicSizing's.
func NewCounting(capacity uint64, p float64) (Filter, error) {
	c, err := bloom.NewCounting(capacity, p)
	if err != nil {
		return nil, err
	}
	return Counting(c), nil
}

// NewScalable is a NewFilterFunc making a scalable Bloom filter
// (bloom.NewScalable, growth 2), which keeps its false-positive bound when
// more than capacity keys arrive between rebuilds.
func NewScalable(capacity uint64, p float64) (Filter, error) {
	s, err := bloom.NewScalableWithConfig(bloom.ScalableConfig{Capacity: capacity, ErrorRate: p, Growth: 2})
	if err != nil {
		return nil, err
	}
	return Scalable(s), nil
}

// NewCuckoo is a NewFilterFunc making a cuckoo filter (cuckoo.New), which
// supports deletes.
func NewCuckoo(capacity uint64, p float64) (Filter, error) {
	f, err := cuckoo.New(capacity, p)
	if err != nil {
		return nil, err
	}
	return Cuckoo(f), nil
}

// Bloom adapts a classic Bloom filter. bloom.Filter is safe for concurrent
// Add and Test, so the adapter adds no lock.
func Bloom(f *bloom.Filter) Filter { return bloomFilter{f} }

type bloomFilter struct{ f *bloom.Filter }

func (b bloomFilter) Test(key []byte) bool { return b.f.Test(key) }
func (b bloomFilter) Add(key []byte) error { b.f.Add(key); return nil }
func (b bloomFilter) FilterStats() FilterStats {
	s := b.f.Stats()
	return FilterStats{Items: s.N, Capacity: s.Capacity, Bytes: s.Bytes, FillRatio: s.FillRatio, EstimatedFPR: s.EstimatedFPR}
}

// SBBF adapts a split-block Bloom filter. bloom.SBBF is safe for
// concurrent Add and Test (atomic OR), so the adapter adds no lock. Add
// never fails.
func SBBF(s *bloom.SBBF) Filter { return sbbfFilter{s} }

type sbbfFilter struct{ s *bloom.SBBF }

func (b sbbfFilter) Test(key []byte) bool { return b.s.Test(key) }
func (b sbbfFilter) Add(key []byte) error { b.s.Add(key); return nil }

// FilterStats costs one pass over the bitset (bloom.SBBF.Stats).
func (b sbbfFilter) FilterStats() FilterStats {
	s := b.s.Stats()
	return FilterStats{Items: s.N, Capacity: s.Capacity, Bytes: s.Bytes, FillRatio: s.FillRatio, EstimatedFPR: s.EstimatedFPR}
}

// Counting adapts a counting Bloom filter, with deletes. bloom.Counting
// must not be read while it is modified, so the adapter serializes Add and
// Delete against Test with a sync.RWMutex (readers share it). Add never
// fails (saturated counters stick at 15 and only keep removed keys as false
// positives). Delete returns bloom.Counting.Remove's error (wrapping
// bloom.ErrNotPresent, nothing changed) for a key one of whose counters is
// 0; the Guard logs it and goes on.
func Counting(c *bloom.Counting) Filter { return &countingFilter{c: c} }

type countingFilter struct {
	mu sync.RWMutex
	c  *bloom.Counting
}

func (f *countingFilter) Test(key []byte) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.c.Test(key)
}

func (f *countingFilter) Add(key []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.c.Add(key)
	return nil
}

func (f *countingFilter) Delete(key []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.c.Remove(key)
}

// FilterStats costs one pass over the counters (bloom.Counting.Stats).
func (f *countingFilter) FilterStats() FilterStats {
	f.mu.RLock()
	defer f.mu.RUnlock()
	s := f.c.Stats()
	return FilterStats{Items: s.N, Capacity: s.Capacity, Bytes: s.Bytes, FillRatio: s.FillRatio, EstimatedFPR: s.EstimatedFPR}
}

// Scalable adapts a scalable Bloom filter. bloom.Scalable must not be read
// while it grows, so the adapter serializes Add against Test with a
// sync.RWMutex (readers share it).
func Scalable(s *bloom.Scalable) Filter { return &scalableFilter{s: s} }

type scalableFilter struct {
	mu sync.RWMutex
	s  *bloom.Scalable
}

func (f *scalableFilter) Test(key []byte) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.s.Test(key)
}

func (f *scalableFilter) Add(key []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, err := f.s.Add(key)
	return err
}

func (f *scalableFilter) FilterStats() FilterStats {
	f.mu.RLock()
	defer f.mu.RUnlock()
	ss := f.s.Stats()
	st := FilterStats{Items: ss.N, Capacity: ss.Capacity, Bytes: ss.Bytes, EstimatedFPR: ss.EstimatedFPR, FillRatio: ss.FillRatio}
	return st
}

// Cuckoo adapts a cuckoo filter, with deletes. cuckoo.Filter is not safe
// for reads during a modification, so the adapter serializes Add and
// Delete against Test with a sync.RWMutex.
func Cuckoo(f *cuckoo.Filter) Filter { return &cuckooFilter{f: f} }

type cuckooFilter struct {
	mu sync.RWMutex
	f  *cuckoo.Filter
}

func (c *cuckooFilter) Test(key []byte) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.f.Test(key)
}

// Add inserts key. cuckoo.Filter undoes a failed insert completely, so on
// error no other key was lost and only this one is missing.
func (c *cuckooFilter) Add(key []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.f.Add(key)
}

func (c *cuckooFilter) Delete(key []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.f.Remove(key)
	return nil
}

func (c *cuckooFilter) FilterStats() FilterStats {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s := c.f.Stats()
	// The load a table of this bucket size reaches before inserts fail
	// (cuckoo package documentation).
	load := 0.95
	switch {
	case s.BucketSize == 1:
		load = 0.5
	case s.BucketSize < 4:
		load = 0.84
	}
	return FilterStats{Items: s.N, Capacity: uint64(float64(s.M) * load), Bytes: s.Bytes, FillRatio: s.FillRatio, EstimatedFPR: s.FPR}
}

// errNoFilter is returned by a NewFilterFunc that returned nil.
var errNoFilter = errors.New("guard: NewFilter returned a nil filter")
