package guard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/probly/probly/bloom"
)

// feed pumps one Subscription into a channel, so the lifecycle goroutine
// can wait on the serving version's and the new version's streams at once.
type feed struct {
	sub    Subscription
	ch     chan feedItem
	cancel context.CancelFunc
	done   chan struct{}
}

type feedItem struct {
	c   Change
	err error
}

func (f *feed) stop() {
	f.cancel()
	_ = f.sub.Close()
	<-f.done
}

// follower is a version and its position in the stream: the serving one
// (cur) or the one catching up (nxt).
type follower struct {
	v       *version
	feed    *feed // nil while (re)subscribing
	applied uint64
	// caught: the follower has reached the stream head as of its first
	// subscription (it applied the changes pending then, or a change
	// arrived with nothing pending after it).
	caught  bool
	toCatch uint64 // changes still to apply before caught
	// subscribed: a subscription was opened before (toCatch counts from
	// the first one).
	subscribed bool
	started    time.Time
	reason     string
}

type buildResult struct {
	v       *version
	err     error
	started time.Time
	reason  string
}

// addError marks a failed Filter.Add during a build.
type addError struct{ err error }

func (e addError) Error() string { return "adding a snapshot key: " + e.err.Error() }
func (e addError) Unwrap() error { return e.err }

// run is the lifecycle goroutine: it owns every version and subscription.
// Changes are applied here only, one at a time, so a version never sees
// two appliers; readers only load the published version pointer.
func (g *Guard[V]) run(ctx context.Context) {
	defer close(g.done)
	var cur, nxt *follower
	building := false
	needBuild := false // retry a failed build or subscription
	var lastStart time.Time
	results := make(chan buildResult, 1)
	tick := time.NewTicker(g.pol.CheckInterval)
	defer tick.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	backoff := time.Duration(0)
	scheduleRetry := func() {
		backoff = min(max(2*backoff, 50*time.Millisecond), 5*time.Second)
		retry.Reset(backoff)
	}
	defer func() {
		if cur != nil && cur.feed != nil {
			cur.feed.stop()
		}
		if nxt != nil && nxt.feed != nil {
			nxt.feed.stop()
		}
		if building {
			<-results
		}
	}()

	startBuild := func(reason string) {
		building, needBuild = true, false
		lastStart = time.Now()
		g.c.building.Store(true)
		g.c.lastReason.Store(&reason)
		capacity := g.nextCapacity(cur)
		g.log.Info("guard: building a new version", "reason", reason, "capacity", capacity)
		go func() { results <- g.build(ctx, capacity, reason) }()
	}
	subscribe := func(fl *follower) bool {
		if g.opts.Stream == nil {
			fl.caught = true
			return true
		}
		f, pending, err := g.subscribe(ctx, fl.applied)
		if err != nil {
			if ctx.Err() == nil {
				g.c.streamErrs.Add(1)
				g.log.Warn("guard: subscribing to the change stream failed; retrying", "after", fl.applied, "err", err)
			}
			return false
		}
		fl.feed = f
		// A resubscription keeps the first one's target: the changes
		// pending then that are still to apply come first in this one
		// too. Counting the new backlog instead would move the target
		// on at every stream error, and a follower whose stream fails
		// more often than it drains would never catch up.
		if !fl.subscribed || pending < fl.toCatch {
			fl.toCatch = pending
		}
		fl.subscribed = true
		if fl.toCatch == 0 {
			fl.caught = true
		}
		return true
	}
	// A new version replaces the serving one once it reflects at least the
	// same position; the first one once it has caught up with the head.
	// (Under a constant write load the stream may never be idle, so "no
	// change pending" cannot be the condition.)
	trySwap := func() {
		if nxt == nil || (cur == nil && !nxt.caught) || (cur != nil && nxt.applied < cur.applied) {
			return
		}
		g.publish(cur, nxt)
		g.c.building.Store(false)
		if cur != nil && cur.feed != nil {
			cur.feed.stop()
		}
		cur, nxt = nxt, nil
		backoff = 0
	}

	startBuild("initial")
	for {
		var curCh, nxtCh <-chan feedItem
		if cur != nil && cur.feed != nil {
			curCh = cur.feed.ch
		}
		if nxt != nil && nxt.feed != nil {
			nxtCh = nxt.feed.ch
			// While the new version is behind the serving one, it alone
			// reads: otherwise, under a write load the applier cannot
			// outrun, it would never catch up. The serving version pauses
			// (its watermark holds) for the catch-up only.
			if cur != nil && nxt.applied < cur.applied {
				curCh = nil
			}
		}
		select {
		case <-ctx.Done():
			return

		case it := <-curCh:
			if it.err != nil {
				g.feedFailed(ctx, cur, it.err)
				scheduleRetry()
				continue
			}
			backoff = 0
			g.apply(cur, it.c, true, nxt)
			g.setApplied(cur.applied)
			g.c.lag.Store(it.c.Pending + uint64(len(cur.feed.ch)))
			trySwap()

		case it := <-nxtCh:
			if it.err != nil {
				g.feedFailed(ctx, nxt, it.err)
				scheduleRetry()
				continue
			}
			backoff = 0 // progress: the next failure retries quickly again
			g.apply(nxt, it.c, false, nil)
			if cur == nil {
				g.c.lag.Store(it.c.Pending + uint64(len(nxt.feed.ch)))
			}
			trySwap()

		case r := <-results:
			building = false
			if r.err != nil {
				g.c.building.Store(false)
				if ctx.Err() != nil {
					return
				}
				g.c.rebuildFailures.Add(1)
				g.log.Error("guard: building a version failed", "reason", r.reason, "err", r.err)
				if cur == nil || cur.v.degraded.Load() {
					needBuild = true
					scheduleRetry()
				}
				continue
			}
			if nxt != nil && nxt.feed != nil { // cannot happen: one build at a time
				nxt.feed.stop()
			}
			nxt = &follower{v: r.v, applied: r.v.snapPos, started: r.started, reason: r.reason}
			if !subscribe(nxt) {
				scheduleRetry()
				continue
			}
			trySwap()

		case reason := <-g.rebuildReq:
			if !building && nxt == nil {
				startBuild(reason)
			}

		case <-retry.C:
			if cur != nil && cur.feed == nil && !subscribe(cur) {
				scheduleRetry()
			}
			if nxt != nil && nxt.feed == nil {
				if subscribe(nxt) {
					trySwap()
				} else {
					scheduleRetry()
				}
			}
			if needBuild && !building && nxt == nil {
				startBuild("retry")
			}

		case <-tick.C:
			if building || nxt != nil || cur == nil {
				continue
			}
			if reason := g.trigger(cur.v, lastStart); reason != "" {
				startBuild(reason)
			}
		}
	}
}

// feedFailed drops a failed subscription; the retry timer subscribes again
// after the last change the follower applied.
func (g *Guard[V]) feedFailed(ctx context.Context, fl *follower, err error) {
	fl.feed.stop()
	fl.feed = nil
	if ctx.Err() == nil {
		g.c.streamErrs.Add(1)
		g.log.Warn("guard: change stream failed; resubscribing", "after", fl.applied, "err", err)
	}
}

// subscribe opens a subscription after pos and starts its pump.
func (g *Guard[V]) subscribe(ctx context.Context, after uint64) (*feed, uint64, error) {
	sctx, cancel := context.WithCancel(ctx)
	sub, pending, err := g.opts.Stream.Subscribe(sctx, after)
	if err != nil {
		cancel()
		return nil, 0, err
	}
	f := &feed{sub: sub, ch: make(chan feedItem, 256), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		for {
			c, err := sub.Next(sctx)
			if err == nil && c.Op != OpAdd && c.Op != OpDelete {
				err = fmt.Errorf("guard: change at position %d has unknown op %d", c.Pos, c.Op)
			}
			select {
			case f.ch <- feedItem{c, err}:
			case <-sctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return f, pending, nil
}

// apply applies one change to a follower's version. serving tells whether
// fl is the serving version; other is then the version catching up (or
// nil).
func (g *Guard[V]) apply(fl *follower, c Change, serving bool, other *follower) {
	if c.Pos > fl.applied && fl.toCatch > 0 {
		fl.toCatch-- // a redelivered change was counted already
	}
	if c.Pending == 0 || fl.toCatch == 0 {
		fl.caught = true
	}
	if c.Pos <= fl.applied { // redelivered after a resubscription
		return
	}
	v := fl.v
	switch c.Op {
	case OpAdd:
		if !v.degraded.Load() {
			if err := v.f.Add(c.Key); err != nil {
				// The key is not in the filter: its negatives are no longer
				// true. Readers treat a degraded version as not ready.
				v.degraded.Store(true)
				g.log.Error("guard: adding a key failed; answering maybe until a rebuild", "pos", c.Pos, "err", err)
				g.requestRebuild("add failed")
			}
		}
		v.adds.Add(1)
		// Mark, then invalidate (see Get).
		if st := g.stripe(c.Key); st.Load() < c.Pos {
			st.Store(c.Pos)
		}
		if g.neg != nil {
			g.neg.Invalidate(string(c.Key))
		}
	case OpDelete:
		v.deletes.Add(1)
		switch {
		case v.degraded.Load():
			// The key may be one whose Add failed: deleting it could remove
			// another key's fingerprint.
		case v.del != nil:
			if err := v.del.Delete(c.Key); err != nil {
				g.log.Warn("guard: deleting a key failed; it stays a false positive", "pos", c.Pos, "err", err)
			}
		case serving && g.neg != nil && (other == nil || other.applied < c.Pos):
			// The filter keeps the key until the next rebuild; remember it
			// as absent. Only the serving version does this, and only while
			// no newer version has applied later changes (which could
			// re-add the key and would not invalidate this entry again).
			g.neg.Set(string(c.Key), struct{}{})
		}
	}
	fl.applied = c.Pos
}

// nextCapacity sizes the next version.
func (g *Guard[V]) nextCapacity(cur *follower) uint64 {
	c := g.opts.Capacity
	if cur == nil {
		return c
	}
	v := cur.v
	live := float64(v.liveItems())
	want := uint64(math.Min(math.Ceil(live*g.pol.Headroom), math.MaxInt64))
	if v.degraded.Load() {
		want = max(want, 2*v.capacity)
	}
	return max(c, want)
}

// build makes a version from a snapshot scan. If the snapshot holds more
// keys than the capacity, or an Add fails (a full cuckoo filter), it scans
// again with a larger capacity (twice at most).
func (g *Guard[V]) build(ctx context.Context, capacity uint64, reason string) buildResult {
	start := time.Now()
	p := g.opts.FalsePositiveRate
	for attempt := 0; ; attempt++ {
		f, err := g.opts.NewFilter(capacity, p)
		if err == nil && f == nil {
			err = errNoFilter
		}
		if err != nil {
			return buildResult{err: fmt.Errorf("creating a filter for %d keys: %w", capacity, err), started: start, reason: reason}
		}
		var n uint64
		pos, err := g.opts.Snapshot.Scan(ctx, func(key []byte) error {
			if err := f.Add(key); err != nil {
				return addError{err}
			}
			n++
			return nil
		})
		var ae addError
		switch {
		case errors.As(err, &ae) && attempt < 2:
			capacity = max(2*capacity, uint64(float64(n)*g.pol.Headroom))
			continue
		case err != nil:
			return buildResult{err: fmt.Errorf("snapshot: %w", err), started: start, reason: reason}
		case n > capacity && attempt < 2 && !growsItself(f):
			capacity = uint64(math.Min(math.Ceil(float64(n)*g.pol.Headroom), math.MaxInt64))
			continue
		}
		v := &version{f: f, capacity: capacity, snapPos: pos, snapKeys: n}
		v.del, _ = f.(Deleter)
		return buildResult{v: v, started: start, reason: reason}
	}
}

// growsItself reports filters that keep their rate beyond their capacity.
func growsItself(f Filter) bool {
	_, ok := f.(*adapter[*bloom.Scalable, bloom.Stats])
	return ok
}

// liveItems estimates the keys the system of record holds now.
func (v *version) liveItems() uint64 {
	n := v.snapKeys + v.adds.Load()
	if d := v.deletes.Load(); d < n {
		n -= d
	} else {
		n = 0
	}
	return n
}

// publish makes nxt the serving version. cur (may be nil) is the one it
// replaces; nxt.applied ≥ cur.applied.
func (g *Guard[V]) publish(cur, nxt *follower) {
	if cur == nil || nxt.v.snapPos > cur.applied {
		// The snapshot covers adds that no version applied as changes, so
		// their negative-cache entries were never invalidated: drop them
		// all, and make loads that started before now not cache misses.
		if g.floor.Load() < nxt.applied {
			g.floor.Store(nxt.applied)
		}
		if g.neg != nil {
			g.neg.InvalidateAll()
		}
	}
	nxt.v.id = g.c.versionID.Add(1)
	nxt.v.published.Store(time.Now().UnixNano())
	g.cur.Store(nxt.v)
	g.setApplied(nxt.applied)
	took := time.Since(nxt.started)
	g.c.lastRebuildNanos.Store(int64(took))
	if cur == nil {
		close(g.ready)
	} else {
		g.c.rebuilds.Add(1)
	}
	g.log.Info("guard: version published", "version", nxt.v.id, "reason", nxt.reason, "capacity", nxt.v.capacity,
		"snapshot_keys", nxt.v.snapKeys, "snapshot_pos", nxt.v.snapPos, "applied", nxt.applied, "took", took.Round(time.Millisecond))
}

// trigger returns why the serving version v should be rebuilt, or "".
func (g *Guard[V]) trigger(v *version, lastStart time.Time) string {
	if v.degraded.Load() {
		return "add failed"
	}
	if g.pol.Disabled || time.Since(lastStart) < g.pol.MinInterval {
		return ""
	}
	p := g.opts.FalsePositiveRate
	limit := g.pol.FPRMultiple * p
	items := v.liveItems()
	var est float64
	if sr, ok := v.f.(StatsReporter); ok {
		fs := sr.FilterStats()
		items, est = max(items, fs.Items), fs.FPR
	}
	if items > v.capacity && !growsItself(v.f) {
		return "items over capacity"
	}
	if est > limit {
		return "estimated FPR over target"
	}
	neg, fp := v.negatives.Load(), v.misses.Load()
	if obs := neg + fp; obs >= g.pol.MinObservations && float64(fp)/float64(obs) > limit {
		return "observed FPR over target"
	}
	return ""
}
