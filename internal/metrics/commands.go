package metrics

import (
	"sort"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// commandBounds are CommandBuckets in nanoseconds, for bucketing without
// floating point.
var commandBounds = func() []time.Duration {
	out := make([]time.Duration, len(CommandBuckets))
	for i, b := range CommandBuckets {
		out[i] = time.Duration(b * 1e9)
	}
	return out
}()

// nBuckets counts the finite buckets plus the +Inf one.
const nBuckets = 10

func init() {
	if len(CommandBuckets)+1 != nBuckets {
		panic("metrics: nBuckets does not match CommandBuckets")
	}
}

func bucketOf(d time.Duration) int {
	for i, b := range commandBounds {
		if d <= b {
			return i
		}
	}
	return nBuckets - 1
}

// cmdStats are one command name's published totals.
type cmdStats struct {
	name    string
	ok, err atomic.Uint64
	buckets [nBuckets]atomic.Uint64 // non-cumulative; last = above every bound
	sumNs   atomic.Uint64
}

// localStats are one connection's not yet published counts for a name.
type localStats struct {
	shared  *cmdStats
	ok, err uint64
	buckets [nBuckets]uint64
	sumNs   uint64
	dirty   bool
}

// recorder is the per-connection server.Recorder.
type recorder struct {
	m     *Metrics
	local map[string]*localStats
	dirty []*localStats
	// last and lastName cache the previous command's entry: a connection
	// mostly repeats one command, and comparing the name (the same string
	// the server passes each time) is cheaper than hashing it.
	last     *localStats
	lastName string
}

func (r *recorder) Command(name string, d time.Duration, failed bool) {
	l := r.last
	if l == nil || name != r.lastName {
		l = r.lookup(name)
		r.last, r.lastName = l, name
	}
	if failed {
		l.err++
	} else {
		l.ok++
	}
	if d < 0 {
		d = 0
	}
	l.buckets[bucketOf(d)]++
	l.sumNs += uint64(d)
	if !l.dirty {
		l.dirty = true
		r.dirty = append(r.dirty, l)
	}
}

// lookup returns name's per-connection entry, creating it on first use.
func (r *recorder) lookup(name string) *localStats {
	l := r.local[name]
	if l == nil {
		// The server names only registered commands (and "unknown"), so
		// the table bounds this map.
		shared := r.m.cmds[name]
		if shared == nil {
			shared = r.m.unknown
		}
		l = &localStats{shared: shared}
		r.local[name] = l
	}
	return l
}

func (r *recorder) Flush() {
	for _, l := range r.dirty {
		s := l.shared
		if l.ok != 0 {
			s.ok.Add(l.ok)
		}
		if l.err != 0 {
			s.err.Add(l.err)
		}
		for i, n := range l.buckets {
			if n != 0 {
				s.buckets[i].Add(n)
			}
		}
		s.sumNs.Add(l.sumNs)
		*l = localStats{shared: s}
	}
	r.dirty = r.dirty[:0]
}

var (
	descCommands = desc("commands_total", "Commands executed, by command name (registered lowercase name, 'container|sub' "+
		"for subcommands, 'unknown' for names not in the table) and outcome (ok, or error when the reply is an error).", "command", "outcome")
	descCommandDuration = desc("command_duration_seconds", "Time to dispatch and execute one command, by command name; "+
		"excludes reading the request, waiting for fsync and writing the reply.", "command")
)

// commandCollector exports the per-command totals; names never used
// export nothing.
type commandCollector struct{ m *Metrics }

func (c *commandCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descCommands
	ch <- descCommandDuration
}

func (c *commandCollector) Collect(ch chan<- prometheus.Metric) {
	all := make([]*cmdStats, 0, len(c.m.cmds)+1)
	for _, s := range c.m.cmds {
		all = append(all, s)
	}
	all = append(all, c.m.unknown)
	sort.Slice(all, func(i, j int) bool { return all[i].name < all[j].name })
	for _, s := range all {
		var cum, counts [nBuckets]uint64
		for i := range counts {
			counts[i] = s.buckets[i].Load()
		}
		var total uint64
		for i, n := range counts {
			total += n
			cum[i] = total
		}
		if total == 0 {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descCommands, prometheus.CounterValue, float64(s.ok.Load()), s.name, "ok")
		ch <- prometheus.MustNewConstMetric(descCommands, prometheus.CounterValue, float64(s.err.Load()), s.name, "error")
		b := make(map[float64]uint64, len(CommandBuckets))
		for i, ub := range CommandBuckets {
			b[ub] = cum[i]
		}
		ch <- prometheus.MustNewConstHistogram(descCommandDuration, total, float64(s.sumNs.Load())/1e9, b, s.name)
	}
}
