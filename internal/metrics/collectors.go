package metrics

import (
	"container/heap"
	"strconv"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	tdcmd "github.com/probly/probly/internal/command/tdigest"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/persist"
	"github.com/probly/probly/internal/redisbloom"
	"github.com/probly/probly/internal/rediscuckoo"
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, labels, nil)
}

// --- server ---

var (
	descClients     = desc("connected_clients", "Client connections currently open.")
	descConnections = desc("connections_received_total", "Client connections accepted since start (or CONFIG RESETSTAT).")
	descRejected    = desc("rejected_connections_total", "Client connections refused because maxclients was reached, since start (or CONFIG RESETSTAT).")
	descNetIn       = desc("net_input_bytes_total", "Bytes read from clients since start (or CONFIG RESETSTAT).")
	descNetOut      = desc("net_output_bytes_total", "Bytes written to clients since start (or CONFIG RESETSTAT).")
	descMaxMemory   = desc("maxmemory_bytes", "The maxmemory limit; 0 means no limit.")
)

type serverCollector struct{ m *Metrics }

func (c *serverCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descClients, descConnections, descRejected, descNetIn, descNetOut, descMaxMemory} {
		ch <- d
	}
}

func (c *serverCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.m.srv.Load()
	if p == nil {
		return
	}
	srv := *p
	st := srv.Stats()
	ch <- prometheus.MustNewConstMetric(descClients, prometheus.GaugeValue, float64(st.ConnectedClients))
	ch <- prometheus.MustNewConstMetric(descConnections, prometheus.CounterValue, float64(st.TotalConnections))
	ch <- prometheus.MustNewConstMetric(descRejected, prometheus.CounterValue, float64(st.RejectedConnections))
	ch <- prometheus.MustNewConstMetric(descNetIn, prometheus.CounterValue, float64(st.NetInputBytes))
	ch <- prometheus.MustNewConstMetric(descNetOut, prometheus.CounterValue, float64(st.NetOutputBytes))
	ch <- prometheus.MustNewConstMetric(descMaxMemory, prometheus.GaugeValue, float64(srv.MaxMemory()))
}

// --- persistence ---

var (
	descAOFSize      = desc("aof_size_bytes", "Bytes of the AOF generations a restart would replay.")
	descFsyncs       = desc("aof_fsyncs_total", "fsync calls on the AOF since start.")
	descRewrites     = desc("aof_rewrites_total", "AOF rewrites (compactions) since start.")
	descLastSave     = desc("last_snapshot_timestamp_seconds", "Unix time of the last successful snapshot (LASTSAVE; the start time when none was taken yet).")
	descLastSaveOK   = desc("last_snapshot_success", "1 if the last snapshot attempt succeeded (or none was attempted), 0 if it failed.")
	descSnapshotting = desc("snapshot_in_progress", "1 while a snapshot is being written.")
	descSnapshots    = desc("snapshots_total", "Completed snapshots since start, by trigger (manual: SAVE/BGSAVE; save: a save rule; aof-rewrite: AOF growth; resync; shutdown: the final snapshot of SIGTERM/SIGINT or SHUTDOWN).", "trigger")
	descSnapFailures = desc("snapshot_failures_total", "Snapshots that failed since start (the previous files stayed).")
	descSnapDuration = desc("last_snapshot_duration_seconds", "Duration of the last completed snapshot, from its start to dump.pdb being durable.")
	descSnapStall    = desc("snapshot_max_stall_seconds", "Longest time writers were blocked while a snapshot's cut was taken, since start.")
	descSnapConsec   = desc("snapshot_consecutive_failures", "Snapshots that failed since the last successful one (INFO aof_rewrites_consecutive_failures); automatic retries back off from 5 s to 30 s.")
	descWriteOK      = desc("aof_last_write_success", "1 while the AOF accepts writes, 0 from a failed AOF write (ENOSPC, failed fsync) until writes are accepted again (INFO aof_last_write_status); write commands are refused meanwhile.")
)

type persistCollector struct{ m *Metrics }

func (c *persistCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descAOFSize, descFsyncs, descRewrites, descLastSave, descLastSaveOK, descSnapshotting,
		descSnapshots, descSnapFailures, descSnapDuration, descSnapStall, descSnapConsec, descWriteOK} {
		ch <- d
	}
}

func (c *persistCollector) Collect(ch chan<- prometheus.Metric) {
	pp := c.m.persist.Load()
	if pp == nil {
		return
	}
	p := *pp
	ch <- prometheus.MustNewConstMetric(descAOFSize, prometheus.GaugeValue, float64(p.AOFSize()))
	if f, ok := p.(interface{ Fsyncs() uint64 }); ok {
		ch <- prometheus.MustNewConstMetric(descFsyncs, prometheus.CounterValue, float64(f.Fsyncs()))
	}
	if r, ok := p.(interface{ Rewrites() uint64 }); ok {
		ch <- prometheus.MustNewConstMetric(descRewrites, prometheus.CounterValue, float64(r.Rewrites()))
	}
	if t := p.LastSave(); !t.IsZero() {
		ch <- prometheus.MustNewConstMetric(descLastSave, prometheus.GaugeValue, float64(t.UnixNano())/1e9)
	}
	ch <- prometheus.MustNewConstMetric(descLastSaveOK, prometheus.GaugeValue, b2f(p.LastSaveOK()))
	ch <- prometheus.MustNewConstMetric(descSnapshotting, prometheus.GaugeValue, b2f(p.InProgress()))
	if w, ok := p.(interface{ LastWriteOK() bool }); ok {
		ch <- prometheus.MustNewConstMetric(descWriteOK, prometheus.GaugeValue, b2f(w.LastWriteOK()))
	}
	if ss, ok := p.(interface{ SnapshotStats() persist.SnapshotStats }); ok {
		st := ss.SnapshotStats()
		for trigger, n := range st.ByTrigger {
			ch <- prometheus.MustNewConstMetric(descSnapshots, prometheus.CounterValue, float64(n), trigger)
		}
		ch <- prometheus.MustNewConstMetric(descSnapFailures, prometheus.CounterValue, float64(st.Failed))
		ch <- prometheus.MustNewConstMetric(descSnapDuration, prometheus.GaugeValue, st.LastDuration.Seconds())
		ch <- prometheus.MustNewConstMetric(descSnapStall, prometheus.GaugeValue, st.MaxStall.Seconds())
		ch <- prometheus.MustNewConstMetric(descSnapConsec, prometheus.GaugeValue, float64(st.ConsecutiveFailures))
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// --- key space and filters ---

var (
	descKeys       = desc("keys", "Keys by type (the TYPE reply: MBbloom--, MBbloomCF, TopK-TYPE, CMSk-TYPE, string).", "type")
	descUsedMemory = desc("used_memory_bytes", "Approximate memory of the key space: key lengths plus each value's MemoryUsage (INFO used_memory).")

	filterLabels   = []string{"key", "type"}
	descFillRatio  = desc("filter_fill_ratio", "Per filter: fraction of the filter that is occupied (Bloom: bits set over all bits of every sub-filter; cuckoo: used slots over all slots).", filterLabels...)
	descFPR        = desc("filter_estimated_fpr_ratio", "Per filter: estimated false-positive probability from the current fill (Bloom: 1 - prod(1 - fill_i^k_i) over sub-filters; cuckoo: from each sub-filter's load).", filterLabels...)
	descItems      = desc("filter_items", "Per filter: items inserted (BF.CARD; cuckoo: items currently held).", filterLabels...)
	descCapacity   = desc("filter_capacity", "Per filter: items the filter holds at its target error rate (Bloom: sum of sub-filter capacities; cuckoo: slots of all sub-filters).", filterLabels...)
	descSubFilters = desc("filter_sub_filters", "Per filter: number of sub-filters (grows when a scaling filter expands).", filterLabels...)
	descFilterSize = desc("filter_size_bytes", "Per filter: bytes of its bit arrays or tables.", filterLabels...)
	descTDigestObs = desc("tdigest_observations", "Values held by all t-digest keys (the sum of their TDIGEST.INFO Observations).")
	descDropped    = desc("filter_metrics_dropped", "Filter keys without per-filter series because metrics-max-filters was reached (the largest filters by memory are reported).")
)

type keyspaceCollector struct{ m *Metrics }

func (c *keyspaceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descKeys, descUsedMemory, descFillRatio, descFPR, descItems,
		descCapacity, descSubFilters, descFilterSize, descDropped, descTDigestObs} {
		ch <- d
	}
}

// filterRef is a filter key and its memory, for choosing which get series.
type filterRef struct {
	key string
	mem uint64
}

// smallest-first heap: the root is the filter that leaves first when a
// larger one arrives. Ties: the larger key name leaves first.
type refHeap []filterRef

func (h refHeap) Len() int { return len(h) }
func (h refHeap) Less(i, j int) bool {
	if h[i].mem != h[j].mem {
		return h[i].mem < h[j].mem
	}
	return h[i].key > h[j].key
}
func (h refHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *refHeap) Push(x any)   { *h = append(*h, x.(filterRef)) }
func (h *refHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func isFilter(v keyspace.Value) bool {
	switch v.(type) {
	case *redisbloom.Chain, *rediscuckoo.Filter:
		return true
	}
	return false
}

func (c *keyspaceCollector) Collect(ch chan<- prometheus.Metric) {
	store := c.m.store
	if store == nil {
		return
	}
	limit := c.m.MaxFilters()
	types := map[string]int{}
	var used, tdObs uint64
	filters := 0
	h := make(refHeap, 0, min(limit, 1024))

	// Pass 1: walk the key space shard by shard (Scan with count 1 returns
	// one non-empty shard per call), reading each key under its lock.
	var cursor uint64
	for {
		next, keys := store.Scan(cursor, "", "", 1)
		for _, k := range keys {
			store.View([]byte(k), func(v keyspace.Value) {
				if v == nil {
					return // deleted since Scan
				}
				types[v.TypeName()]++
				mem := v.MemoryUsage()
				used += uint64(len(k)) + mem
				if td, ok := v.(*tdcmd.Value); ok {
					tdObs += td.D.Count()
				}
				if !isFilter(v) {
					return
				}
				filters++
				if limit == 0 {
					return
				}
				r := filterRef{key: k, mem: mem}
				if h.Len() < limit {
					heap.Push(&h, r)
				} else if h[0].mem < r.mem || (h[0].mem == r.mem && h[0].key > r.key) {
					h[0] = r
					heap.Fix(&h, 0)
				}
			})
		}
		if next == 0 {
			break
		}
		cursor = next
	}
	for t, n := range types {
		ch <- prometheus.MustNewConstMetric(descKeys, prometheus.GaugeValue, float64(n), t)
	}
	ch <- prometheus.MustNewConstMetric(descUsedMemory, prometheus.GaugeValue, float64(used))
	ch <- prometheus.MustNewConstMetric(descTDigestObs, prometheus.GaugeValue, float64(tdObs))

	// Pass 2: statistics of the chosen filters, each under its read lock.
	reported := 0
	seen := make(map[string]bool, h.Len())
	for _, r := range h {
		label := labelValue(r.key)
		if seen[label] {
			continue // two binary keys that render alike: keep one
		}
		var st filterStats
		ok := false
		store.View([]byte(r.key), func(v keyspace.Value) { st, ok = statsOf(v) })
		if !ok {
			continue
		}
		seen[label] = true
		reported++
		lv := []string{label, st.typ}
		ch <- prometheus.MustNewConstMetric(descFillRatio, prometheus.GaugeValue, st.fill, lv...)
		ch <- prometheus.MustNewConstMetric(descFPR, prometheus.GaugeValue, st.fpr, lv...)
		ch <- prometheus.MustNewConstMetric(descItems, prometheus.GaugeValue, float64(st.items), lv...)
		ch <- prometheus.MustNewConstMetric(descCapacity, prometheus.GaugeValue, float64(st.capacity), lv...)
		ch <- prometheus.MustNewConstMetric(descSubFilters, prometheus.GaugeValue, float64(st.subFilters), lv...)
		ch <- prometheus.MustNewConstMetric(descFilterSize, prometheus.GaugeValue, float64(st.bytes), lv...)
	}
	ch <- prometheus.MustNewConstMetric(descDropped, prometheus.GaugeValue, float64(max(filters-reported, 0)))
}

type filterStats struct {
	typ                    string
	fill, fpr              float64
	items, capacity, bytes uint64
	subFilters             int
}

// statsOf reads a filter's statistics; ok is false for other values
// (the key was deleted or replaced since pass 1).
func statsOf(v keyspace.Value) (filterStats, bool) {
	switch f := v.(type) {
	case *redisbloom.Chain:
		s := f.Stats()
		return filterStats{typ: "bf", fill: s.FillRatio, fpr: s.FPR, items: s.Items,
			capacity: s.Capacity, bytes: s.Bytes, subFilters: s.Filters}, true
	case *rediscuckoo.Filter:
		s := f.Cuckoo().Stats()
		return filterStats{typ: "cf", fill: s.FillRatio, fpr: s.FPR, items: s.N,
			capacity: s.M, bytes: s.Bytes, subFilters: s.SubFilters}, true
	}
	return filterStats{}, false
}

// labelValue renders a key as a label value: valid UTF-8 as is (label
// values must be UTF-8), anything else Go-quoted ("\xff…", with quotes).
func labelValue(key string) string {
	if utf8.ValidString(key) {
		return key
	}
	return strconv.Quote(key)
}
