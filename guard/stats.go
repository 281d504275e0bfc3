package guard

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Stats is a snapshot of a Guard's counters and of its serving version.
// Counters are cumulative since New.
type Stats struct {
	// Lookups by Get = Negatives + Positives + Unready.
	Lookups uint64
	// Negatives were answered "definitely absent" by the filter, without
	// the negative cache or the loader.
	Negatives uint64
	// Positives were answered "maybe" by a ready filter.
	Positives uint64
	// Unready lookups found no trusted filter (still loading, or its Add
	// failed) and went on as if it had answered maybe.
	Unready uint64

	// NegativeCacheHits were answered "not found" by the negative cache.
	NegativeCacheHits uint64
	// BackingHits and BackingMisses are the loader's answers; LoaderErrors
	// its failures.
	BackingHits, BackingMisses, LoaderErrors uint64
	// FalsePositives are filter positives whose key turned out absent: a
	// loader miss or a negative-cache hit after a positive.
	FalsePositives uint64
	// BackingQueriesAvoided = Negatives + NegativeCacheHits: lookups that
	// never reached the loader.
	BackingQueriesAvoided uint64

	// ObservedFPR = FalsePositives / Positives: the share of the filter's
	// "maybe" answers that were wrong (with the negative cache off, backing
	// misses / filter positives). It depends on how many lookups are for
	// existing keys; compare NonMemberFPR with the target instead.
	ObservedFPR float64
	// NonMemberFPR = FalsePositives / (Negatives + FalsePositives): the
	// observed rate at which the filter lets a key that does not exist
	// through, the quantity the target false-positive rate bounds.
	NonMemberFPR float64

	// Ready: a version is serving and its negatives are trusted.
	Ready bool
	// Version counts published versions (1 = the first build).
	Version uint64
	// VersionAge is the time since the serving version was published.
	VersionAge time.Duration
	// Filter describes the serving version's filter (zero if it does not
	// implement StatsReporter); Capacity is what it was built for and
	// TargetFPR the configured false-positive rate.
	Filter    FilterStats
	Capacity  uint64
	TargetFPR float64
	// StaleDeletes counts deletes the serving filter could not apply (a
	// Bloom filter): false positives until the next rebuild.
	StaleDeletes uint64

	// Applied is the safe watermark (see Guard.Applied); Lag the changes
	// known to be in the stream after it.
	Applied, Lag uint64
	// StreamErrors counts failed subscriptions and deliveries.
	StreamErrors uint64

	// Rebuilds counts versions published after the first;
	// RebuildFailures failed builds. LastRebuild is how long the last
	// published version took from the start of its build to its swap
	// (snapshot scan plus catch-up). Rebuilding tells whether a build or
	// catch-up is in progress, LastRebuildReason why the last one started.
	Rebuilds, RebuildFailures uint64
	LastRebuild               time.Duration
	Rebuilding                bool
	LastRebuildReason         string

	// NegativeCacheEntries is the negative cache's approximate size.
	NegativeCacheEntries int
}

// Stats returns the current statistics. It reads the filter's fill, which
// costs one pass over a Bloom filter's bits.
func (g *Guard[V]) Stats() Stats {
	c := &g.c
	s := Stats{
		Negatives:         c.negatives.Load(),
		Positives:         c.positives.Load(),
		Unready:           c.unready.Load(),
		NegativeCacheHits: c.negHits.Load(),
		BackingHits:       c.backingHits.Load(),
		BackingMisses:     c.backingMisses.Load(),
		LoaderErrors:      c.loaderErrors.Load(),
		FalsePositives:    c.falsePositives.Load(),
		TargetFPR:         g.opts.FalsePositiveRate,
		Applied:           g.applied.Load(),
		Lag:               c.lag.Load(),
		StreamErrors:      c.streamErrs.Load(),
		Rebuilds:          c.rebuilds.Load(),
		RebuildFailures:   c.rebuildFailures.Load(),
		LastRebuild:       time.Duration(c.lastRebuildNanos.Load()),
		Rebuilding:        c.building.Load(),
	}
	s.Lookups = s.Negatives + s.Positives + s.Unready
	s.BackingQueriesAvoided = s.Negatives + s.NegativeCacheHits
	if s.Positives > 0 {
		s.ObservedFPR = float64(s.FalsePositives) / float64(s.Positives)
	}
	if n := s.Negatives + s.FalsePositives; n > 0 {
		s.NonMemberFPR = float64(s.FalsePositives) / float64(n)
	}
	if r := c.lastReason.Load(); r != nil {
		s.LastRebuildReason = *r
	}
	if g.neg != nil {
		s.NegativeCacheEntries = g.neg.EstimatedSize()
	}
	if v := g.cur.Load(); v != nil {
		s.Ready = !v.degraded.Load()
		s.Version = v.id
		s.VersionAge = time.Since(time.Unix(0, v.published.Load()))
		s.Capacity = v.capacity
		if sr, ok := v.f.(StatsReporter); ok {
			s.Filter = sr.FilterStats()
		}
		if v.del == nil {
			s.StaleDeletes = v.deletes.Load()
		}
	}
	return s
}

// Collector returns a Prometheus collector of the Guard's metrics, labelled
// guard=<Options.Name>, for the application to register:
//
//	reg.MustRegister(g.Collector())
//
// Metric names start with probly_guard_. Each scrape calls Stats.
func (g *Guard[V]) Collector() prometheus.Collector {
	return &collector[V]{g: g, d: newDescs(g.opts.Name)}
}

type descs struct {
	lookups, negCacheHits, backing, loaderErrors, falsePos    *prometheus.Desc
	observedFPR, nonMemberFPR, targetFPR, estFPR, fill        *prometheus.Desc
	items, capacity, bytes, staleDeletes, ready, version, age *prometheus.Desc
	applied, lag, streamErrors, rebuilds, rebuildFailures     *prometheus.Desc
	rebuildSeconds, rebuilding, negEntries, avoided           *prometheus.Desc
}

func newDescs(name string) descs {
	l := prometheus.Labels{"guard": name}
	d := func(n, help string, vars ...string) *prometheus.Desc {
		return prometheus.NewDesc("probly_guard_"+n, help, vars, l)
	}
	return descs{
		lookups:         d("lookups_total", "Lookups by the filter's answer: negative (definitely absent), positive (maybe) or unready (no trusted filter yet).", "result"),
		negCacheHits:    d("negative_cache_hits_total", "Lookups answered not-found by the negative cache."),
		backing:         d("backing_lookups_total", "Loader calls by result: hit (found) or miss (absent).", "result"),
		loaderErrors:    d("loader_errors_total", "Loader calls that failed."),
		falsePos:        d("false_positives_total", "Filter positives whose key was absent (loader miss or negative-cache hit)."),
		avoided:         d("backing_queries_avoided_total", "Lookups that never reached the loader (filter negatives plus negative-cache hits)."),
		observedFPR:     d("observed_fpr_ratio", "False positives / filter positives since start (the share of maybes that were wrong)."),
		nonMemberFPR:    d("nonmember_fpr_ratio", "False positives / (negatives + false positives) since start: the observed false-positive rate for absent keys."),
		targetFPR:       d("target_fpr_ratio", "Configured false-positive rate of each version."),
		estFPR:          d("filter_estimated_fpr_ratio", "False-positive rate estimated from the serving filter's fill."),
		fill:            d("filter_fill_ratio", "Fill of the serving filter (Bloom: set bits / m; cuckoo: used slots / slots)."),
		items:           d("filter_items", "Keys added to the serving filter."),
		capacity:        d("filter_capacity_items", "Keys the serving filter was sized for."),
		bytes:           d("filter_bytes", "Memory of the serving filter's tables."),
		staleDeletes:    d("filter_stale_deletes", "Deletes the serving filter could not apply (Bloom): false positives until the next rebuild."),
		ready:           d("ready", "1 when a built and caught-up version serves (negatives trusted)."),
		version:         d("version", "Number of the serving version (1 = first build)."),
		age:             d("version_age_seconds", "Time since the serving version was published."),
		applied:         d("applied_position", "Stream position of the last change the serving version reflects (safe watermark)."),
		lag:             d("stream_lag_changes", "Changes in the stream after the applied position, as last reported by the stream."),
		streamErrors:    d("stream_errors_total", "Change-stream subscriptions or deliveries that failed."),
		rebuilds:        d("rebuilds_total", "Versions published after the first."),
		rebuildFailures: d("rebuild_failures_total", "Builds that failed."),
		rebuildSeconds:  d("last_rebuild_seconds", "Duration of the last published build, from its start to its swap (snapshot scan plus catch-up)."),
		rebuilding:      d("rebuilding", "1 while a version is being built or is catching up."),
		negEntries:      d("negative_cache_entries", "Approximate entries in the negative cache."),
	}
}

type collector[V any] struct {
	g *Guard[V]
	d descs
}

func (c *collector[V]) Describe(ch chan<- *prometheus.Desc) {
	d := c.d
	for _, x := range []*prometheus.Desc{d.lookups, d.negCacheHits, d.backing, d.loaderErrors, d.falsePos, d.avoided,
		d.observedFPR, d.nonMemberFPR, d.targetFPR, d.estFPR, d.fill, d.items, d.capacity, d.bytes, d.staleDeletes,
		d.ready, d.version, d.age, d.applied, d.lag, d.streamErrors, d.rebuilds, d.rebuildFailures, d.rebuildSeconds,
		d.rebuilding, d.negEntries} {
		ch <- x
	}
}

func (c *collector[V]) Collect(ch chan<- prometheus.Metric) {
	s := c.g.Stats()
	d := c.d
	cnt := func(desc *prometheus.Desc, v uint64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), lv...)
	}
	gauge := func(desc *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v)
	}
	b := func(x bool) float64 {
		if x {
			return 1
		}
		return 0
	}
	cnt(d.lookups, s.Negatives, "negative")
	cnt(d.lookups, s.Positives, "positive")
	cnt(d.lookups, s.Unready, "unready")
	cnt(d.negCacheHits, s.NegativeCacheHits)
	cnt(d.backing, s.BackingHits, "hit")
	cnt(d.backing, s.BackingMisses, "miss")
	cnt(d.loaderErrors, s.LoaderErrors)
	cnt(d.falsePos, s.FalsePositives)
	cnt(d.avoided, s.BackingQueriesAvoided)
	gauge(d.observedFPR, s.ObservedFPR)
	gauge(d.nonMemberFPR, s.NonMemberFPR)
	gauge(d.targetFPR, s.TargetFPR)
	gauge(d.estFPR, s.Filter.FPR)
	gauge(d.fill, s.Filter.FillRatio)
	gauge(d.items, float64(s.Filter.Items))
	gauge(d.capacity, float64(s.Capacity))
	gauge(d.bytes, float64(s.Filter.Bytes))
	gauge(d.staleDeletes, float64(s.StaleDeletes))
	gauge(d.ready, b(s.Ready))
	gauge(d.version, float64(s.Version))
	gauge(d.age, s.VersionAge.Seconds())
	gauge(d.applied, float64(s.Applied))
	gauge(d.lag, float64(s.Lag))
	cnt(d.streamErrors, s.StreamErrors)
	cnt(d.rebuilds, s.Rebuilds)
	cnt(d.rebuildFailures, s.RebuildFailures)
	gauge(d.rebuildSeconds, s.LastRebuild.Seconds())
	gauge(d.rebuilding, b(s.Rebuilding))
	gauge(d.negEntries, float64(s.NegativeCacheEntries))
}
