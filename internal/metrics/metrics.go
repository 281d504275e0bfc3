// Package metrics exposes probly serve's Prometheus metrics and its HTTP
// health endpoints.
//
// What it promises:
//
//   - Every metric lives in a private registry (no global state), has help
//     text and carries its unit in its name (_seconds, _bytes, _total).
//   - Label sets are bounded: command names are the registered ones (plus
//     "unknown"), outcomes are ok/error, key types are the value types, and
//     per-filter series are capped by metrics-max-filters.
//   - The command path touches only its connection's Recorder (plain
//     counters in a per-connection table); each batch of pipelined
//     commands is then published with a few atomic adds per command name
//     used. Gauges about the key space, persistence and filters are read
//     when Prometheus scrapes, by custom collectors that take each key's
//     read lock only while reading it.
//
// Cost of a scrape: one pass over the key space (a read lock per key),
// plus one population count over the bits of each reported Bloom filter.
//
// The HTTP side (Mux) serves /metrics, /healthz and /readyz.
package metrics

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/server"
)

const namespace = "probly"

// DefaultMaxFilters is the default of metrics-max-filters.
const DefaultMaxFilters = 100

// MaxMaxFilters is the largest value metrics-max-filters accepts.
const MaxMaxFilters = 100000

// CommandBuckets are the upper bounds (seconds) of the command latency
// histogram: 10 µs × 4^i, up to about 0.66 s.
var CommandBuckets = prometheus.ExponentialBuckets(10e-6, 4, 9)

// FsyncBuckets are the upper bounds (seconds) of the fsync latency
// histogram: 100 µs × 4^i, up to about 6.6 s.
var FsyncBuckets = prometheus.ExponentialBuckets(100e-6, 4, 9)

// Server is what the metrics read from the RESP server.
type Server interface {
	Stats() server.Stats
	MaxMemory() uint64
}

// Persist is what the metrics read from the persistence engine.
// persist.DB implements it; optional methods are used when present:
// Fsyncs() uint64 (fsync calls on the AOF), Rewrites() uint64 (AOF
// rewrites), LastWriteOK() bool (the AOF accepts writes) and
// SnapshotStats() persist.SnapshotStats.
type Persist interface {
	AOFSize() int64
	LastSave() time.Time
	LastSaveOK() bool
	InProgress() bool
}

// Options configure New.
type Options struct {
	// Table lists the command names that get their own series.
	Table *command.Table
	// Store is the key space (keys by type, per-filter gauges).
	Store *keyspace.Store
	// MaxFilters is the initial metrics-max-filters (0 = no per-filter
	// series; negative = DefaultMaxFilters).
	MaxFilters int
}

// Metrics is the set of collectors of one server. Create it with New.
type Metrics struct {
	reg   *prometheus.Registry
	store *keyspace.Store

	cmds    map[string]*cmdStats // read-only after New
	unknown *cmdStats
	fsync   prometheus.Histogram

	maxFilters atomic.Int64
	srv        atomic.Pointer[Server]
	persist    atomic.Pointer[Persist]
}

// New builds the registry with every collector.
func New(o Options) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), store: o.Store, cmds: map[string]*cmdStats{}}
	if o.MaxFilters < 0 {
		o.MaxFilters = DefaultMaxFilters
	}
	m.maxFilters.Store(int64(min(o.MaxFilters, MaxMaxFilters)))

	m.fsync = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Name: "aof_fsync_duration_seconds",
		Help:    "Duration of fsync calls on the append-only file.",
		Buckets: FsyncBuckets,
	})
	if o.Table != nil {
		for _, sp := range o.Table.All() {
			m.cmds[sp.Name] = &cmdStats{name: sp.Name}
			for _, sub := range sp.Subcommands {
				m.cmds[sub.Name] = &cmdStats{name: sub.Name}
			}
		}
	}
	m.unknown = &cmdStats{name: server.UnknownCommand}

	m.reg.MustRegister(
		&commandCollector{m: m}, m.fsync,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&serverCollector{m: m},
		&persistCollector{m: m},
		&keyspaceCollector{m: m},
		&expireCollector{m: m},
		&aclCollector{m: m},
	)
	return m
}

// Registry returns the private registry (tests, embedding).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// SetServer attaches the RESP server; its gauges appear from then on.
func (m *Metrics) SetServer(s Server) { m.srv.Store(&s) }

// SetPersist attaches the persistence engine once recovery has opened it.
func (m *Metrics) SetPersist(p Persist) { m.persist.Store(&p) }

// ObserveFsync records the duration of one AOF fsync (hook it to
// persist.DB.SetOnFsync).
func (m *Metrics) ObserveFsync(d time.Duration) { m.fsync.Observe(d.Seconds()) }

// Recorder implements server.Observer.
func (m *Metrics) Recorder() server.Recorder { return &recorder{m: m, local: map[string]*localStats{}} }

// Command records one command directly (without a per-connection
// recorder).
func (m *Metrics) Command(name string, d time.Duration, failed bool) {
	r := recorder{m: m, local: map[string]*localStats{}}
	r.Command(name, d, failed)
	r.Flush()
}

var _ server.Observer = (*Metrics)(nil)

// MaxFilters returns the current metrics-max-filters.
func (m *Metrics) MaxFilters() int { return int(m.maxFilters.Load()) }

// ConfigParam is the metrics-max-filters parameter, for the CONFIG
// registry: how many filter keys get per-filter series, in [0, 100000].
func (m *Metrics) ConfigParam() config.Param {
	return config.IntParam("metrics-max-filters", strconv.FormatInt(m.maxFilters.Load(), 10), 0, MaxMaxFilters, m.maxFilters.Store)
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Mux returns the HTTP handler of the metrics listener:
//
//	/metrics  the registry (Prometheus text or OpenMetrics)
//	/healthz  200 "ok" while the process serves HTTP
//	/readyz   200 "ready" when ready() is true, else 503 "not ready"
//	          (probly: recovery finished and the RESP listener accepts)
func (m *Metrics) Mux(ready func() bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		plain(w, http.StatusOK, "ok\n")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if ready != nil && ready() {
			plain(w, http.StatusOK, "ready\n")
			return
		}
		plain(w, http.StatusServiceUnavailable, "not ready\n")
	})
	return mux
}

func plain(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}
