package follow

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/probly/probly/internal/command"
)

// CaughtUp reports whether the followed keys' negatives are trusted: the
// follower has caught up with the stream since it started (or last
// replayed it), is not halted, the stream still holds every change it has
// not read, it heard from the stream within Config.MaxStale, and it lags
// by at most Config.MaxLag messages (when set).
func (f *Follower) CaughtUp() bool { return f.NotReadyReason() == "" }

// NotReadyReason says why CaughtUp is false ("" when it is true), for
// /readyz and INFO follow_not_ready_reason.
func (f *Follower) NotReadyReason() string {
	switch st := f.State(); {
	case st == StateStopped:
		return "stopped"
	case st == StateHalted:
		if t := f.truncated.Load(); t != nil {
			return "halted: " + *t
		}
		return "halted by an error (follow_last_error), retrying"
	case f.truncated.Load() != nil:
		return "halted: " + *f.truncated.Load()
	case st == StateBootstrapping:
		return "loading the newest snapshot (follow_last_error says why if it takes long)"
	case !f.caughtUp.Load():
		return "catching up with the stream"
	}
	if age := f.ContactAge(); age > time.Duration(f.cfg.MaxStale) {
		return fmt.Sprintf("no contact with the stream for %s (max_stale %s)", age.Round(time.Millisecond), time.Duration(f.cfg.MaxStale))
	}
	if stalled := time.Since(time.Unix(0, f.progress.Load())); f.lag.Load() > 0 && stalled > time.Duration(f.cfg.MaxStale) {
		return fmt.Sprintf("applying stalled: %d messages wait and nothing was applied for %s (max_stale %s)",
			f.lag.Load(), stalled.Round(time.Millisecond), time.Duration(f.cfg.MaxStale))
	}
	if lag := f.lag.Load(); f.cfg.MaxLag != 0 && lag > f.cfg.MaxLag {
		return fmt.Sprintf("lag %d messages is over max_lag %d", lag, f.cfg.MaxLag)
	}
	return ""
}

// ContactAge is how long ago the follower last heard from the stream (a
// message or a successful state request); since Start if never.
func (f *Follower) ContactAge() time.Duration {
	n := f.contact.Load()
	if n == 0 {
		return time.Since(f.started)
	}
	return time.Since(time.Unix(0, n))
}

// Connected reports whether the follower has a NATS connection and a
// consumer reading the stream.
func (f *Follower) Connected() bool {
	r := f.reader.Load()
	return f.server.Load() != nil && r != nil && r.Connected()
}

// Ready is /readyz's condition: caught up.
func (f *Follower) Ready() bool { return f.CaughtUp() }

// Applied returns the stream sequence of the last applied message.
func (f *Follower) Applied() uint64 { return f.applied.Load() }

// Lag returns the messages of the followed subjects the server reported
// after the applied position at the last poll (every 250 ms while the
// stream answers), including those delivered but not yet applied.
func (f *Follower) Lag() uint64 { return f.lag.Load() }

// followed reports whether key is a followed key (allocation-free).
func (f *Follower) followed(key []byte) bool {
	for _, ks := range f.keys {
		if ks.name == string(key) {
			return true
		}
	}
	return false
}

// WrapReads makes BF.EXISTS, BF.MEXISTS, CF.EXISTS and CF.MEXISTS answer 1
// (maybe) for every item of a followed key while the follower is not
// caught up, and makes FOLLOW.WAIT (Register) wait for this follower.
// Call it before the server serves.
func (f *Follower) WrapReads(t *command.Table) {
	if spec := t.Lookup([]byte(WaitCommand)); spec != nil {
		spec.Handler = f.waitHandler
	}
	for _, name := range []string{"bf.exists", "bf.mexists", "cf.exists", "cf.mexists"} {
		spec := t.Lookup([]byte(name))
		if spec == nil || spec.Handler == nil {
			continue
		}
		orig, multi := spec.Handler, strings.HasSuffix(name, "mexists")
		spec.Handler = func(c *command.Ctx) {
			if f.CaughtUp() || !f.followed(c.Args[1]) {
				orig(c)
				return
			}
			if !multi {
				c.R.Bool(true)
				return
			}
			c.R.Array(len(c.Args) - 2)
			for range len(c.Args) - 2 {
				c.R.Bool(true)
			}
		}
	}
}

// Info writes INFO's Follow section through kv.
func (f *Follower) Info(kv func(key string, value any)) {
	kv("follow_enabled", 1)
	src := redactURLs(f.cfg.URL)
	if src == "" {
		src = "embedded"
		if u := f.EmbeddedURL(); u != "" {
			src += " " + u
		}
	}
	kv("follow_source", src)
	kv("follow_stream", f.cfg.Stream)
	kv("follow_consumer", f.cfg.Consumer)
	kv("follow_position_key", f.cfg.PositionKey)
	kv("follow_state", f.State())
	kv("follow_caught_up", f.CaughtUp())
	kv("follow_not_ready_reason", f.NotReadyReason())
	kv("follow_connected", f.Connected())
	server := ""
	if u := f.server.Load(); u != nil {
		server = *u
	}
	kv("follow_server", server)
	kv("follow_last_contact_ms", f.ContactAge().Milliseconds())
	kv("follow_max_stale_ms", time.Duration(f.cfg.MaxStale).Milliseconds())
	kv("follow_applied_seq", f.applied.Load())
	kv("follow_stream_first_seq", f.streamHead.Load())
	kv("follow_stream_last_seq", f.streamLastSeq())
	kv("follow_lag", f.lag.Load())
	kv("follow_messages_applied", f.messages.Load())
	kv("follow_replays", f.replays.Load())
	var resets uint64
	if r := f.reader.Load(); r != nil {
		resets = r.Resets()
	}
	kv("follow_consumer_resets", resets)
	kv("follow_snapshots_published", f.published.Load())
	kv("follow_snapshot_failures", f.publishFail.Load())
	kv("follow_snapshot_age_seconds", f.snapshotAge())
	last := ""
	if e := f.lastErr.Load(); e != nil {
		last = strings.NewReplacer("\r", " ", "\n", " ").Replace(*e)
	}
	kv("follow_last_error", last)
	caught := 0
	if f.CaughtUp() {
		caught = 1
	}
	for i, ks := range f.keys {
		kv("follow_key_"+strconv.Itoa(i), fmt.Sprintf("name=%s,type=%s,caught_up=%d,adds=%d,deletes=%d,ignored_deletes=%d",
			ks.name, ks.typ, caught, ks.adds.Load(), ks.deletes.Load(), ks.ignoredDeletes.Load()))
	}
}

// redactURLs replaces the user information (user and password, or a
// token) of each URL of a comma-separated NATS URL list with "redacted",
// for INFO. An element that does not parse as a URL is replaced whole.
func redactURLs(list string) string {
	if list == "" {
		return ""
	}
	parts := strings.Split(list, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		u, err := url.Parse(p)
		switch {
		case err != nil:
			parts[i] = "redacted"
		case u.User != nil:
			u.User = url.User("redacted")
			parts[i] = u.String()
		default:
			parts[i] = p
		}
	}
	return strings.Join(parts, ",")
}

// Readyz is the /readyz text of the follower.
func (f *Follower) Readyz() string {
	var b strings.Builder
	f.Info(func(k string, v any) {
		switch k {
		case "follow_state", "follow_caught_up", "follow_not_ready_reason", "follow_connected", "follow_last_contact_ms",
			"follow_applied_seq", "follow_stream_last_seq", "follow_lag", "follow_last_error":
			if x, ok := v.(bool); ok {
				v = map[bool]int{false: 0, true: 1}[x]
			}
			fmt.Fprintf(&b, "%s: %v\n", k, v)
		}
	})
	return b.String()
}

// Collector returns the follower's Prometheus metrics.
func (f *Follower) Collector() prometheus.Collector {
	c := &collector{f: f}
	d := func(n, help string, vars ...string) *prometheus.Desc {
		return prometheus.NewDesc("probly_follow_"+n, help, vars, nil)
	}
	c.applied = d("applied_sequence", "Stream sequence of the last applied change message.")
	c.last = d("stream_last_sequence", "Last stream sequence the follower knows of.")
	c.lag = d("lag_messages", "Change messages after the applied position, as the stream reported at the last poll.")
	c.caught = d("caught_up", "1 when the followed keys' negatives are trusted (caught up, not halted, not stale, lag within max_lag).")
	c.connected = d("connected", "1 while connected to NATS with a consumer reading the stream.")
	c.contact = d("last_contact_age_seconds", "Seconds since the follower last heard from the stream.")
	c.resets = d("consumer_resets_total", "Consumers dropped and recreated at the applied position after a break (gap, lost connection, deleted consumer).")
	c.halted = d("halted", "1 while applying is stopped by an error (retried).")
	c.msgs = d("messages_applied_total", "Change messages applied.")
	c.replays = d("replays_total", "Times the stream was replayed from the start after followed data was removed.")
	c.snapFail = d("snapshot_failures_total", "Snapshot captures or uploads to the bucket that failed (retried on the next cycle).")
	c.snapAge = d("snapshot_age_seconds", "Seconds since this follower last published a snapshot to the bucket; -1 before the first.")
	c.events = d("events_total", "Changes applied per key and kind; ignored: deletes a Bloom filter cannot apply.", "key", "op")
	return c
}

type collector struct {
	f                                                         *Follower
	applied, last, lag, caught, halted, msgs, replays, events *prometheus.Desc
	connected, contact, resets, snapFail, snapAge             *prometheus.Desc
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.applied, c.last, c.lag, c.caught, c.halted, c.msgs, c.replays, c.events, c.connected, c.contact, c.resets, c.snapFail, c.snapAge} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	f := c.f
	b := func(x bool) float64 {
		if x {
			return 1
		}
		return 0
	}
	g := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	g(c.applied, float64(f.applied.Load()))
	g(c.last, float64(f.streamLastSeq()))
	g(c.lag, float64(f.lag.Load()))
	g(c.caught, b(f.CaughtUp()))
	g(c.connected, b(f.Connected()))
	g(c.contact, f.ContactAge().Seconds())
	var resets uint64
	if r := f.reader.Load(); r != nil {
		resets = r.Resets()
	}
	ch <- prometheus.MustNewConstMetric(c.resets, prometheus.CounterValue, float64(resets))
	g(c.halted, b(f.State() == StateHalted))
	ch <- prometheus.MustNewConstMetric(c.msgs, prometheus.CounterValue, float64(f.messages.Load()))
	ch <- prometheus.MustNewConstMetric(c.replays, prometheus.CounterValue, float64(f.replays.Load()))
	ch <- prometheus.MustNewConstMetric(c.snapFail, prometheus.CounterValue, float64(f.publishFail.Load()))
	g(c.snapAge, f.snapshotAge())
	for _, ks := range f.keys {
		ch <- prometheus.MustNewConstMetric(c.events, prometheus.CounterValue, float64(ks.adds.Load()), ks.name, "add")
		ch <- prometheus.MustNewConstMetric(c.events, prometheus.CounterValue, float64(ks.deletes.Load()), ks.name, "delete")
		ch <- prometheus.MustNewConstMetric(c.events, prometheus.CounterValue, float64(ks.ignoredDeletes.Load()), ks.name, "ignored_delete")
	}
}

// streamLastSeq is the stream's last sequence as far as the follower
// knows: the last poll's, or the applied position if that is further (the
// poll runs once a second; applying goes on between polls).
func (f *Follower) streamLastSeq() uint64 { return max(f.streamLast.Load(), f.applied.Load()) }

// snapshotAge is the seconds since this follower last published a
// snapshot, -1 before the first.
func (f *Follower) snapshotAge() float64 {
	at := f.publishedAt.Load()
	if at == 0 {
		return -1
	}
	return time.Since(time.Unix(0, at)).Seconds()
}
