package guard

import (
	"errors"
	"sync"

	"github.com/probly/probly/bloom"
	"github.com/probly/probly/cuckoo"
)

// Filter is the approximate set a Guard consults: any probly filter, through
// the adapters Bloom, Scalable and Cuckoo, or a type of your own.
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

// Deleter is implemented by filters that can remove a key (the cuckoo
// filter). The Guard deletes a key from such a filter when the change
// stream reports its deletion; a filter without Deleter keeps deleted keys
// until the next rebuild, and the negative cache answers for them
// meanwhile.
//
// Delete must only be called for a key that was added: deleting a key that
// was never added can remove another key's fingerprint (cuckoo package
// documentation). The Guard guarantees this as long as the Snapshot is
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

// NewScalable is a NewFilterFunc making a scalable Bloom filter
// (bloom.NewScalable, growth 2), which keeps its false-positive bound when
// more than capacity keys arrive between rebuilds.
func NewScalable(capacity uint64, p float64) (Filter, error) {
	s, err := bloom.NewScalable(bloom.ScalableConfig{Capacity: capacity, ErrorRate: p, Growth: 2})
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
	st := FilterStats{Items: f.s.N(), Capacity: f.s.Capacity(), Bytes: f.s.SizeBytes(), EstimatedFPR: f.s.EstimatedFPR()}
	var set, m uint64
	for _, l := range f.s.Links() {
		ls := l.Filter.Stats()
		set, m = set+ls.SetBits, m+ls.M
	}
	if m > 0 {
		st.FillRatio = float64(set) / float64(m)
	}
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
	return c.f.Lookup(key)
}

// Add inserts key. cuckoo.Filter undoes a failed insert completely, so on
// error no other key was lost and only this one is missing.
func (c *cuckooFilter) Add(key []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.f.Insert(key)
}

func (c *cuckooFilter) Delete(key []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.f.Delete(key)
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
	return FilterStats{Items: s.Items, Capacity: uint64(float64(s.Slots) * load), Bytes: s.Bytes, FillRatio: s.LoadFactor, EstimatedFPR: s.EstimatedFPR}
}

// errNoFilter is returned by a NewFilterFunc that returned nil.
var errNoFilter = errors.New("guard: NewFilter returned a nil filter")
