package guard

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"
)

// Loader fetches a key from the cache and the database behind the Guard.
// found false with a nil error means the key does not exist.
type Loader[V any] func(ctx context.Context, key []byte) (value V, found bool, err error)

// Defaults of Options and RebuildPolicy.
const (
	DefaultCapacity          = 1 << 20
	DefaultFalsePositiveRate = 0.01
	DefaultNegativeTTL       = time.Minute
	DefaultNegativeCacheSize = 100_000
	DefaultFPRMultiple       = 2.0
	DefaultHeadroom          = 2.0
	DefaultCheckInterval     = 10 * time.Second
	DefaultMinInterval       = time.Minute
)

// Options configure a Guard. Loader and Snapshot are required.
type Options[V any] struct {
	// Name labels the Guard's metrics (label "guard"); default "default".
	Name string
	// Loader answers the lookups the filter cannot rule out.
	Loader Loader[V]
	// Snapshot yields every key and the stream position it reflects; each
	// version of the filter is built from one scan.
	Snapshot Snapshot
	// Stream delivers the changes after a snapshot. nil: the filter only
	// changes at rebuilds (Rebuild, or a rebuild trigger).
	Stream Stream
	// NewFilter makes the filter of each version; default NewBloom.
	NewFilter NewFilterFunc
	// Capacity is the smallest capacity a version is built with; default
	// DefaultCapacity. A rebuild sizes the filter for
	// max(Capacity, Headroom × live keys).
	Capacity uint64
	// FalsePositiveRate is the target p of every version; default 0.01.
	FalsePositiveRate float64
	// NegativeTTL is how long the negative cache remembers a key the
	// backing store did not have; default DefaultNegativeTTL; negative
	// disables the negative cache.
	NegativeTTL time.Duration
	// NegativeCacheSize bounds the negative cache's entries; default
	// DefaultNegativeCacheSize.
	NegativeCacheSize int
	// Rebuild sets when a new version is built.
	Rebuild RebuildPolicy
	// Logger receives lifecycle events (builds, swaps, stream errors);
	// default slog.Default(). Keys are never logged.
	Logger *slog.Logger
}

// RebuildPolicy sets the automatic rebuild triggers, checked every
// CheckInterval on the serving version. A rebuild starts when
//
//   - an Add failed (a full cuckoo filter): at once, whatever MinInterval;
//   - the filter holds more items than its capacity;
//   - its estimated false-positive rate (from the fill) exceeds
//     FPRMultiple × the target;
//   - its observed non-member false-positive rate since the version was
//     published exceeds FPRMultiple × the target, once it rests on at least
//     MinObservations lookups. It is computed from the loader's misses after
//     a filter positive: misses / (negatives + misses). Negative-cache hits
//     are left out (a hot absent key that is a false positive would
//     otherwise trigger rebuilds that do not change it).
type RebuildPolicy struct {
	FPRMultiple     float64       // default DefaultFPRMultiple
	Headroom        float64       // capacity = Headroom × live keys; default DefaultHeadroom
	MinObservations uint64        // default ⌈30 / p⌉
	CheckInterval   time.Duration // default DefaultCheckInterval
	MinInterval     time.Duration // least time between automatic rebuilds; default DefaultMinInterval
	Disabled        bool          // only Rebuild (and failed Adds) rebuild
}

// ErrClosed is returned by the waiting methods after Close.
var ErrClosed = errors.New("guard: closed")

const numStripes = 4096

// Guard answers lookups with a filter in front of a negative cache and a
// loader. See the package documentation.
type Guard[V any] struct {
	opts Options[V]
	pol  RebuildPolicy
	log  *slog.Logger

	cur     atomic.Pointer[version]
	applied atomic.Uint64

	// Negative cache and its invalidation: stripes[h(key)] is the highest
	// position of an add applied to a key of that stripe; floor is raised
	// when a version is published whose snapshot covers adds no version
	// applied. A loader miss observed with applied position pos0 may only
	// stay in the negative cache if neither moved past pos0.
	neg     *otter.Cache[string, struct{}]
	seed    maphash.Seed
	stripes []atomic.Uint64
	floor   atomic.Uint64

	wmu     sync.Mutex
	advance chan struct{}
	waiting atomic.Bool
	ready   chan struct{}

	rebuildReq chan string
	cancel     context.CancelFunc
	done       chan struct{}
	closeOnce  sync.Once

	c counters
}

// counters are the cumulative lookup and lifecycle counters.
type counters struct {
	negatives, positives, unready         atomic.Uint64
	negHits, backingHits, backingMisses   atomic.Uint64
	loaderErrors, falsePositives          atomic.Uint64
	rebuilds, rebuildFailures, streamErrs atomic.Uint64
	lag                                   atomic.Uint64
	versionID                             atomic.Uint64
	lastRebuildNanos                      atomic.Int64
	building                              atomic.Bool
	lastReason                            atomic.Pointer[string]
}

// version is one immutable-once-published filter and its bookkeeping.
type version struct {
	id        uint64
	f         Filter
	del       Deleter // nil: the filter cannot delete
	capacity  uint64
	snapPos   uint64
	snapKeys  uint64
	published atomic.Int64 // unix nanos
	degraded  atomic.Bool  // an Add failed: negatives are no longer trusted

	adds, deletes atomic.Uint64
	// observation window of this version (rebuild trigger): negatives and
	// loader misses after a positive. Negative-cache hits are left out, so
	// one hot absent key that happens to be a false positive cannot keep
	// triggering rebuilds that would not change it.
	negatives, misses atomic.Uint64
}

// New validates opts, starts the Guard's lifecycle goroutine (the first
// build begins at once) and returns. Until the first version has been
// built and has caught up with the stream, Get consults the negative cache
// and the loader for every key. Close stops it.
func New[V any](opts Options[V]) (*Guard[V], error) {
	if opts.Loader == nil {
		return nil, errors.New("guard: Options.Loader is required")
	}
	if opts.Snapshot == nil {
		return nil, errors.New("guard: Options.Snapshot is required")
	}
	if opts.Name == "" {
		opts.Name = "default"
	}
	if opts.NewFilter == nil {
		opts.NewFilter = NewBloom
	}
	if opts.Capacity == 0 {
		opts.Capacity = DefaultCapacity
	}
	if opts.FalsePositiveRate == 0 {
		opts.FalsePositiveRate = DefaultFalsePositiveRate
	}
	if p := opts.FalsePositiveRate; !(p > 0 && p < 1) {
		return nil, fmt.Errorf("guard: FalsePositiveRate %v not in (0, 1)", p)
	}
	if opts.NegativeTTL == 0 {
		opts.NegativeTTL = DefaultNegativeTTL
	}
	if opts.NegativeCacheSize <= 0 {
		opts.NegativeCacheSize = DefaultNegativeCacheSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	pol := opts.Rebuild
	if pol.FPRMultiple <= 0 {
		pol.FPRMultiple = DefaultFPRMultiple
	}
	if pol.Headroom < 1 {
		pol.Headroom = DefaultHeadroom
	}
	if pol.MinObservations == 0 {
		pol.MinObservations = uint64(math.Ceil(30 / opts.FalsePositiveRate))
	}
	if pol.CheckInterval <= 0 {
		pol.CheckInterval = DefaultCheckInterval
	}
	if pol.MinInterval <= 0 {
		pol.MinInterval = DefaultMinInterval
	}
	g := &Guard[V]{
		opts:       opts,
		pol:        pol,
		log:        opts.Logger.With("guard", opts.Name),
		seed:       maphash.MakeSeed(),
		stripes:    make([]atomic.Uint64, numStripes),
		advance:    make(chan struct{}),
		ready:      make(chan struct{}),
		rebuildReq: make(chan string, 1),
		done:       make(chan struct{}),
	}
	if opts.NegativeTTL > 0 {
		neg, err := otter.New(&otter.Options[string, struct{}]{
			MaximumSize:      opts.NegativeCacheSize,
			ExpiryCalculator: otter.ExpiryWriting[string, struct{}](opts.NegativeTTL),
		})
		if err != nil {
			return nil, fmt.Errorf("guard: negative cache: %w", err)
		}
		g.neg = neg
	}
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	go g.run(ctx)
	return g, nil
}

// Close stops the lifecycle goroutine and the stream subscriptions. Get
// keeps answering from the last version (and the loader) afterwards.
func (g *Guard[V]) Close() error {
	g.closeOnce.Do(func() {
		g.cancel()
		<-g.done
		if g.neg != nil {
			g.neg.StopAllGoroutines()
		}
	})
	return nil
}

// Get looks key up: a filter negative answers "not found" without touching
// the backing store; otherwise the negative cache, then the loader, answer.
// A loader miss after a filter positive is a false positive (a backing
// miss) and enters the negative cache. Get never answers "not found" for a
// key whose add the Guard has applied (Applied), unless its delete was
// applied after it.
func (g *Guard[V]) Get(ctx context.Context, key []byte) (value V, found bool, err error) {
	var zero V
	v := g.cur.Load()
	positive := false
	if v != nil && !v.degraded.Load() {
		if !v.f.Test(key) {
			g.c.negatives.Add(1)
			v.negatives.Add(1)
			return zero, false, nil
		}
		positive = true
		g.c.positives.Add(1)
	} else {
		g.c.unready.Add(1)
	}
	if g.neg != nil {
		if _, ok := g.neg.GetIfPresent(string(key)); ok {
			g.c.negHits.Add(1)
			if positive {
				g.c.falsePositives.Add(1)
			}
			return zero, false, nil
		}
	}
	pos0 := g.applied.Load()
	value, found, err = g.opts.Loader(ctx, key)
	switch {
	case err != nil:
		g.c.loaderErrors.Add(1)
		return zero, false, err
	case found:
		g.c.backingHits.Add(1)
		return value, true, nil
	}
	g.c.backingMisses.Add(1)
	if positive {
		g.c.falsePositives.Add(1)
		v.misses.Add(1)
	}
	if g.neg != nil {
		ks := string(key)
		g.neg.Set(ks, struct{}{})
		// Insert, then re-check: an add applied (or covered by a published
		// snapshot) after pos0 may have happened after the loader's read.
		// The applier raises the stripe (or floor) before it invalidates,
		// so either it sees this entry or this check sees its mark.
		if g.floor.Load() > pos0 || g.stripe(key).Load() > pos0 {
			g.neg.Invalidate(ks)
		}
	}
	return zero, false, nil
}

// Test reports whether key may be present according to the serving filter:
// false is definite. It answers true (maybe) while no version is ready or
// after the serving version's Add failed. It does not consult the negative
// cache or the loader and is not counted in the lookup statistics.
func (g *Guard[V]) Test(key []byte) bool {
	v := g.cur.Load()
	if v == nil || v.degraded.Load() {
		return true
	}
	return v.f.Test(key)
}

func (g *Guard[V]) stripe(key []byte) *atomic.Uint64 {
	return &g.stripes[maphash.Bytes(g.seed, key)%numStripes]
}

// Applied returns the position of the last change reflected by the serving
// version (its snapshot position or the last change applied after it): a
// safe watermark. Every key whose add is at or before Applied is answered
// "maybe" by Test and found by Get (unless deleted at or before Applied).
// It is 0 until the first version is ready, and never decreases.
func (g *Guard[V]) Applied() uint64 { return g.applied.Load() }

// WaitApplied blocks until Applied() ≥ pos (read-your-writes: a writer
// that published its change at pos, then waits here, is sure to be found),
// ctx ends (its error) or the Guard closes (ErrClosed).
func (g *Guard[V]) WaitApplied(ctx context.Context, pos uint64) error {
	for {
		if g.applied.Load() >= pos {
			return nil
		}
		g.wmu.Lock()
		ch := g.advance
		g.waiting.Store(true)
		g.wmu.Unlock()
		if g.applied.Load() >= pos {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-g.done:
			if g.applied.Load() >= pos {
				return nil
			}
			return ErrClosed
		}
	}
}

// setApplied advances the watermark (never backwards) and wakes waiters.
func (g *Guard[V]) setApplied(pos uint64) {
	if pos <= g.applied.Load() {
		return
	}
	g.applied.Store(pos)
	if g.waiting.Swap(false) {
		g.wmu.Lock()
		close(g.advance)
		g.advance = make(chan struct{})
		g.wmu.Unlock()
	}
}

// Ready reports whether a version has been built and caught up, so that
// filter negatives are trusted.
func (g *Guard[V]) Ready() bool { return g.cur.Load() != nil }

// WaitReady blocks until Ready, ctx ends or the Guard closes.
func (g *Guard[V]) WaitReady(ctx context.Context) error {
	select {
	case <-g.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-g.done:
		return ErrClosed
	}
}

// Rebuild asks for a new version now (unless one is being built). It does
// not wait; Stats().Rebuilds counts completed rebuilds.
func (g *Guard[V]) Rebuild() { g.requestRebuild("requested") }

func (g *Guard[V]) requestRebuild(reason string) {
	select {
	case g.rebuildReq <- reason:
	default:
	}
}
