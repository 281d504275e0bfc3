package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/probly/probly/internal/command"
	tdcmd "github.com/probly/probly/internal/command/tdigest"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/redisbloom"
	"github.com/probly/probly/internal/rediscuckoo"
	"github.com/probly/probly/internal/server"
	"github.com/probly/probly/tdigest"
)

func gather(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, lp := range m.GetLabel() {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return -1
}

// find returns the value of the series of family name whose labels
// include want, and whether it exists.
func find(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	mf := fams[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		l := labels(m)
		for k, v := range want {
			if l[k] != v {
				continue next
			}
		}
		return value(m), true
	}
	return 0, false
}

func bloomChain(t *testing.T, capacity uint64, items int) *redisbloom.Chain {
	t.Helper()
	c, err := redisbloom.New(redisbloom.Params{ErrorRate: 0.01, Capacity: capacity, Expansion: 2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < items; i++ {
		if _, err := c.Add([]byte("item-" + string(rune('a'+i%26)) + "-" + itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func itoa(i int) string { return strconv.Itoa(i) }

func put(s *keyspace.Store, key string, v keyspace.Value) {
	s.Update([]byte(key), func(tx *keyspace.Txn) { tx.Set(v) })
}

// The per-filter cap keeps the largest filters (ties by name), reports
// the rest in probly_filter_metrics_dropped, and follows CONFIG SET.
func TestPerFilterCap(t *testing.T) {
	store := keyspace.New(nil)
	put(store, "small", bloomChain(t, 100, 10))
	put(store, "medium", bloomChain(t, 10000, 10))
	put(store, "large", bloomChain(t, 100000, 10))
	cf, err := rediscuckoo.New(rediscuckoo.Params{Capacity: 50000, BucketSize: 2, MaxIterations: 20, Expansion: 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if err := cf.Insert([]byte(itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	put(store, "cuckoo", cf)
	put(store, "bin\xff\x00", bloomChain(t, 1000000, 1))
	for _, n := range []int{7, 35} {
		d, _ := tdigest.New(100)
		for i := range n {
			d.Add(float64(i))
		}
		put(store, "td"+itoa(n), &tdcmd.Value{D: d})
	}
	m := New(Options{Store: store, MaxFilters: 3})

	fams := gather(t, m.Registry())
	if v, _ := find(fams, "probly_filter_metrics_dropped", nil); v != 2 {
		t.Fatalf("dropped = %v, want 2", v)
	}
	for _, k := range []string{`"bin\xff\x00"`, "large", "cuckoo"} {
		if _, ok := find(fams, "probly_filter_capacity", map[string]string{"key": k}); !ok {
			t.Errorf("no series for %q", k)
		}
	}
	for _, k := range []string{"small", "medium"} {
		if _, ok := find(fams, "probly_filter_capacity", map[string]string{"key": k}); ok {
			t.Errorf("series for %q despite the cap", k)
		}
	}
	if v, _ := find(fams, "probly_filter_items", map[string]string{"key": "cuckoo", "type": "cf"}); v != 100 {
		t.Errorf("cuckoo items = %v", v)
	}
	if v, _ := find(fams, "probly_filter_sub_filters", map[string]string{"key": "large", "type": "bf"}); v != 1 {
		t.Errorf("large sub-filters = %v", v)
	}
	if v, _ := find(fams, "probly_keys", map[string]string{"type": redisbloom.TypeName}); v != 4 {
		t.Errorf("bloom keys = %v", v)
	}
	if v, _ := find(fams, "probly_used_memory_bytes", nil); v != float64(store.MemoryUsage()) {
		t.Errorf("used memory = %v, want %d", v, store.MemoryUsage())
	}
	if v, _ := find(fams, "probly_tdigest_observations", nil); v != 42 {
		t.Errorf("t-digest observations = %v, want 42", v)
	}
	if v, _ := find(fams, "probly_keys", map[string]string{"type": tdcmd.TypeName}); v != 2 {
		t.Errorf("t-digest keys = %v", v)
	}

	// CONFIG SET metrics-max-filters 0: no per-filter series at all.
	p := m.ConfigParam()
	if err := p.Set("0"); err != nil {
		t.Fatal(err)
	}
	fams = gather(t, m.Registry())
	if _, ok := fams["probly_filter_fill_ratio"]; ok {
		t.Error("per-filter series with metrics-max-filters 0")
	}
	if v, _ := find(fams, "probly_filter_metrics_dropped", nil); v != 5 {
		t.Errorf("dropped = %v, want 5", v)
	}
	if err := p.Set("100001"); err == nil {
		t.Error("metrics-max-filters above the maximum accepted")
	}
}

type fakeServer struct{}

func (fakeServer) Stats() server.Stats {
	return server.Stats{ConnectedClients: 3, TotalConnections: 9, NetInputBytes: 100, NetOutputBytes: 200}
}
func (fakeServer) MaxMemory() uint64 { return 1000 }

type fakePersist struct{}

func (fakePersist) AOFSize() int64      { return 4096 }
func (fakePersist) LastSave() time.Time { return time.Unix(1700000000, 0) }
func (fakePersist) LastSaveOK() bool    { return false }
func (fakePersist) InProgress() bool    { return true }
func (fakePersist) Fsyncs() uint64      { return 42 }
func (fakePersist) LastWriteOK() bool   { return false }

// Every probly_ metric follows the naming rule (CheckName: help text,
// _total on counters, base-unit suffixes where there is a unit, none on
// unitless counts); internal/app's TestMetricNames applies it to a running
// server with --follow.
func TestNamesHelpAndSources(t *testing.T) {
	store := keyspace.New(nil)
	put(store, "f", bloomChain(t, 100, 10))
	table := command.NewTable()
	table.Add(&command.Spec{Name: "bf.add", Arity: 3},
		&command.Spec{Name: "config", Arity: -2, Subcommands: []*command.Spec{{Name: "config|get", Arity: -3}}})
	m := New(Options{Store: store, Table: table, MaxFilters: -1})
	if m.MaxFilters() != DefaultMaxFilters {
		t.Fatalf("default max filters = %d", m.MaxFilters())
	}
	m.SetServer(fakeServer{})
	m.SetPersist(fakePersist{})
	m.ObserveFsync(3 * time.Millisecond)
	m.Command("bf.add", time.Microsecond, false)
	m.Command("bf.add", time.Microsecond, true)
	m.Command("config|get", time.Microsecond, false)
	m.Command("no-such", time.Microsecond, true)

	fams := gather(t, m.Registry())
	n := 0
	for name, mf := range fams {
		if !strings.HasPrefix(name, "probly_") {
			continue
		}
		n++
		if err := CheckName(name, strings.ToLower(mf.GetType().String()), mf.GetHelp()); err != nil {
			t.Error(err)
		}
	}
	if n < 20 {
		t.Fatalf("only %d probly_ metrics gathered", n)
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"probly_commands_total", map[string]string{"command": "bf.add", "outcome": "ok"}, 1},
		{"probly_commands_total", map[string]string{"command": "bf.add", "outcome": "error"}, 1},
		{"probly_commands_total", map[string]string{"command": "config|get", "outcome": "ok"}, 1},
		{"probly_commands_total", map[string]string{"command": "unknown", "outcome": "error"}, 1},
		{"probly_command_duration_seconds", map[string]string{"command": "bf.add"}, 2},
		{"probly_connected_clients", nil, 3},
		{"probly_connections_received_total", nil, 9},
		{"probly_net_input_bytes_total", nil, 100},
		{"probly_net_output_bytes_total", nil, 200},
		{"probly_maxmemory_bytes", nil, 1000},
		{"probly_aof_size_bytes", nil, 4096},
		{"probly_aof_fsyncs_total", nil, 42},
		{"probly_aof_fsync_duration_seconds", nil, 1},
		{"probly_last_snapshot_timestamp_seconds", nil, 1700000000},
		{"probly_last_snapshot_success", nil, 0},
		{"probly_snapshot_in_progress", nil, 1},
		{"probly_aof_last_write_success", nil, 0},
		{"probly_keys", map[string]string{"type": redisbloom.TypeName}, 1},
		{"probly_filter_items", map[string]string{"key": "f", "type": "bf"}, 10},
		{"probly_filter_capacity", map[string]string{"key": "f", "type": "bf"}, 100},
		{"probly_filter_metrics_dropped", nil, 0},
	}
	for _, c := range checks {
		if v, ok := find(fams, c.name, c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	// Commands never called export no series.
	if _, ok := find(fams, "probly_commands_total", map[string]string{"command": "config"}); ok {
		t.Error("series for an unused command")
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
}

func TestMux(t *testing.T) {
	m := New(Options{Store: keyspace.New(nil)})
	ready := false
	srv := httptest.NewServer(m.Mux(func() bool { return ready }))
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("/healthz = %d", code)
	}
	if code, _ := get("/readyz"); code != 503 {
		t.Fatalf("/readyz before ready = %d", code)
	}
	ready = true
	if code, _ := get("/readyz"); code != 200 {
		t.Fatalf("/readyz when ready = %d", code)
	}
	code, body := get("/metrics")
	if code != 200 || !strings.Contains(body, "# HELP probly_used_memory_bytes ") {
		t.Fatalf("/metrics = %d %.300s", code, body)
	}
}

// A connection's Recorder does not allocate once it has seen a name.
func TestRecorderDoesNotAllocate(t *testing.T) {
	table := command.NewTable()
	table.Add(&command.Spec{Name: "ping", Arity: -1})
	m := New(Options{Table: table})
	r := m.Recorder()
	r.Command("ping", time.Microsecond, false)
	r.Flush()
	if n := testing.AllocsPerRun(100, func() {
		r.Command("ping", time.Microsecond, false)
		r.Command("ping", time.Second, true)
		r.Flush()
	}); n != 0 {
		t.Fatalf("%v allocations per batch", n)
	}
	fams := gather(t, m.Registry())
	// AllocsPerRun runs the function once more to warm up: 101 batches.
	if v, _ := find(fams, "probly_commands_total", map[string]string{"command": "ping", "outcome": "error"}); v != 101 {
		t.Fatalf("errors = %v", v)
	}
	h := fams["probly_command_duration_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 203 || h.GetSampleSum() < 101 || h.GetSampleSum() > 101.1 {
		t.Fatalf("histogram count %d sum %v", h.GetSampleCount(), h.GetSampleSum())
	}
	// 1 s is above every bound: only in +Inf.
	last := h.GetBucket()[len(h.GetBucket())-1]
	if last.GetCumulativeCount() != 102 {
		t.Fatalf("last finite bucket = %d, want 102", last.GetCumulativeCount())
	}
}

func BenchmarkRecorder(b *testing.B) {
	table := command.NewTable()
	table.Add(&command.Spec{Name: "bf.add", Arity: -1})
	m := New(Options{Table: table})
	b.RunParallel(func(pb *testing.PB) {
		r := m.Recorder()
		i := 0
		for pb.Next() {
			r.Command("bf.add", 3*time.Microsecond, false)
			if i++; i%16 == 0 {
				r.Flush()
			}
		}
	})
}

// CheckName accepts the conventions and refuses each kind of violation.
func TestCheckName(t *testing.T) {
	for _, c := range []struct{ name, typ string }{
		{"probly_commands_total", "counter"},
		{"probly_net_input_bytes_total", "counter"},
		{"probly_command_duration_seconds", "histogram"},
		{"probly_used_memory_bytes", "gauge"},
		{"probly_filter_fill_ratio", "gauge"},
		{"probly_filter_estimated_fpr_ratio", "gauge"},
		{"probly_last_snapshot_timestamp_seconds", "gauge"},
		{"probly_keys", "gauge"},
		{"probly_filter_sub_filters", "gauge"},
		{"probly_follow_lag_messages", "gauge"},
		{"probly_snapshot_in_progress", "gauge"},
	} {
		if err := CheckName(c.name, c.typ, "help"); err != nil {
			t.Errorf("%s (%s) refused: %v", c.name, c.typ, err)
		}
	}
	for _, c := range []struct{ name, typ, help, why string }{
		{"probly_keys", "gauge", "", "no help text"},
		{"other_keys", "gauge", "h", "namespace"},
		{"probly_commands", "counter", "h", "_total"},
		{"probly_keys_total", "gauge", "h", "_total"},
		{"probly_command_duration", "histogram", "h", "_seconds"},
		{"probly_command_duration_milliseconds", "histogram", "h", "base unit"},
		{"probly_aof_size", "gauge", "h", "implies a unit"},
		{"probly_used_memory", "gauge", "h", "implies a unit"},
		{"probly_filter_fill", "gauge", "h", "implies a unit"},
		{"probly_last_snapshot_duration", "gauge", "h", "implies a unit"},
		{"probly_aof_size_kb", "gauge", "h", "base unit"},
		{"probly_fill_percent", "gauge", "h", "base unit"},
		{"probly_keys", "info", "h", "unknown type"},
	} {
		err := CheckName(c.name, c.typ, c.help)
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s (%s, help %q): %v, want an error about %q", c.name, c.typ, c.help, err, c.why)
		}
	}
}

// TestRecorderAlternatingNames: the recorder's last-command cache counts
// each name separately when commands alternate, across flushes.
func TestRecorderAlternatingNames(t *testing.T) {
	table := command.NewTable()
	table.Add(&command.Spec{Name: "get", Arity: 2})
	table.Add(&command.Spec{Name: "set", Arity: -3})
	m := New(Options{Table: table})
	r := m.Recorder()
	for i := 0; i < 10; i++ {
		r.Command("get", time.Microsecond, false)
		if i%3 == 0 {
			r.Command("set", time.Microsecond, true)
		}
		if i%4 == 0 {
			r.Flush()
		}
	}
	r.Command("nosuch", time.Microsecond, false)
	r.Flush()
	for _, c := range []struct {
		name    string
		ok, err uint64
	}{{"get", 10, 0}, {"set", 0, 4}} {
		s := m.cmds[c.name]
		if s.ok.Load() != c.ok || s.err.Load() != c.err {
			t.Errorf("%s: ok %d err %d, want %d %d", c.name, s.ok.Load(), s.err.Load(), c.ok, c.err)
		}
	}
	if m.unknown.ok.Load() != 1 {
		t.Errorf("unknown: ok %d, want 1", m.unknown.ok.Load())
	}
}
