package server

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
)

// SLOWLOG and LATENCY, as Redis 7: the slow log keeps the last
// slowlog-max-len commands that took at least slowlog-log-slower-than µs
// (negative: none; 0: every command), with at most 32 arguments of at
// most 128 bytes each (Redis's SLOWLOG_ENTRY_MAX_ARGC/STRING). The latency
// monitor records, per event ("command", "fast-command"), the commands
// that took at least latency-monitor-threshold ms (0: off): the latest
// and the worst sample, and a history of at most 160 samples, one per
// second (the worst of that second).

const (
	slowMaxArgc   = 32
	slowMaxString = 128
	latHistory    = 160
)

// opsParams are the diagnostics parameters (CONFIG GET/SET).
func (s *Server) opsParams() []config.Param {
	return []config.Param{
		config.IntParam("slowlog-log-slower-than", "10000", -1, maxInt64, func(us int64) {
			if us < 0 {
				s.ops.slowNs.Store(-1)
				return
			}
			s.ops.slowNs.Store(us * 1000)
		}),
		config.IntParam("slowlog-max-len", "128", 0, maxInt64, s.ops.slow.setMax),
		config.IntParam("latency-monitor-threshold", "0", 0, maxInt64, func(ms int64) {
			s.ops.latNs.Store(ms * int64(time.Millisecond))
		}),
	}
}

type slowEntry struct {
	id   int64
	at   int64 // unix seconds
	us   int64
	args []string
	addr string
	name string
}

type slowlog struct {
	mu      sync.Mutex
	entries []slowEntry // oldest first
	nextID  int64
	max     int64
}

func (l *slowlog) setMax(n int64) {
	l.mu.Lock()
	l.max = n
	l.trim()
	l.mu.Unlock()
}

func (l *slowlog) trim() {
	if over := int64(len(l.entries)) - l.max; over > 0 {
		l.entries = append(l.entries[:0], l.entries[over:]...)
	}
}

// add records a command; args are copied (they alias the read buffer).
func (l *slowlog) add(c *client, args [][]byte, d time.Duration) {
	n := min(len(args), slowMaxArgc)
	out := make([]string, n)
	for i := range n {
		a := args[i]
		switch {
		case i == slowMaxArgc-1 && len(args) > slowMaxArgc:
			out[i] = "... (" + strconv.Itoa(len(args)-slowMaxArgc+1) + " more arguments)"
		case len(a) > slowMaxString:
			out[i] = string(a[:slowMaxString]) + "... (" + strconv.Itoa(len(a)-slowMaxString) + " more bytes)"
		default:
			out[i] = string(a)
		}
	}
	e := slowEntry{at: time.Now().Unix(), us: int64(d / time.Microsecond), args: out, addr: c.conn.Addr, name: c.conn.Name}
	l.mu.Lock()
	e.id = l.nextID
	l.nextID++
	if l.max > 0 {
		l.entries = append(l.entries, e)
		l.trim()
	}
	l.mu.Unlock()
}

func (s *Server) slowlogCmd(ctx *command.Ctx, sub string) {
	l := &s.ops.slow
	r := ctx.R
	switch sub {
	case "len":
		l.mu.Lock()
		n := len(l.entries)
		l.mu.Unlock()
		r.Int(int64(n))
	case "reset":
		l.mu.Lock()
		l.entries = l.entries[:0]
		l.mu.Unlock()
		r.OK()
	case "get":
		count := int64(10)
		if len(ctx.Args) == 3 {
			n, err := strconv.ParseInt(string(ctx.Args[2]), 10, 64)
			if err != nil || n < -1 {
				r.Error("ERR count should be greater than or equal to -1")
				return
			}
			count = n
		}
		l.mu.Lock()
		ents := l.entries
		if count >= 0 && int64(len(ents)) > count {
			ents = ents[int64(len(ents))-count:]
		}
		ents = append([]slowEntry(nil), ents...)
		l.mu.Unlock()
		r.Array(len(ents))
		for i := len(ents) - 1; i >= 0; i-- { // newest first
			e := ents[i]
			r.Array(6)
			r.Int(e.id)
			r.Int(e.at)
			r.Int(e.us)
			r.Array(len(e.args))
			for _, a := range e.args {
				r.BulkString(a)
			}
			r.BulkString(e.addr)
			r.BulkString(e.name)
		}
	default:
		r.Error("ERR unknown subcommand '" + string(ctx.Args[1]) + "'. Try SLOWLOG HELP.")
	}
}

// latencyMonitor is LATENCY's per-event samples.
type latencyMonitor struct {
	mu     sync.Mutex
	events map[string]*latencyEvent
}

type latencySample struct{ at, ms int64 }

type latencyEvent struct {
	samples []latencySample // oldest first, at most latHistory
	max     int64
}

func (m *latencyMonitor) add(event string, d time.Duration) {
	ms := int64(d / time.Millisecond)
	now := time.Now().Unix()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == nil {
		m.events = map[string]*latencyEvent{}
	}
	ev := m.events[event]
	if ev == nil {
		ev = &latencyEvent{}
		m.events[event] = ev
	}
	ev.max = max(ev.max, ms)
	if n := len(ev.samples); n > 0 && ev.samples[n-1].at == now {
		ev.samples[n-1].ms = max(ev.samples[n-1].ms, ms)
		return
	}
	ev.samples = append(ev.samples, latencySample{now, ms})
	if len(ev.samples) > latHistory {
		ev.samples = append(ev.samples[:0], ev.samples[1:]...)
	}
}

func (s *Server) latencyCmd(ctx *command.Ctx, sub string) {
	m := &s.ops.lat
	r := ctx.R
	m.mu.Lock()
	defer m.mu.Unlock()
	switch sub {
	case "latest":
		names := make([]string, 0, len(m.events))
		for k := range m.events {
			names = append(names, k)
		}
		sortStrings(names)
		r.Array(len(names))
		for _, k := range names {
			ev := m.events[k]
			last := ev.samples[len(ev.samples)-1]
			r.Array(4)
			r.BulkString(k)
			r.Int(last.at)
			r.Int(last.ms)
			r.Int(ev.max)
		}
	case "history":
		ev := m.events[strings.ToLower(string(ctx.Args[2]))]
		if ev == nil {
			r.Array(0)
			return
		}
		r.Array(len(ev.samples))
		for _, smp := range ev.samples {
			r.Array(2)
			r.Int(smp.at)
			r.Int(smp.ms)
		}
	case "reset":
		n := 0
		if len(ctx.Args) == 2 {
			n = len(m.events)
			clear(m.events)
		}
		for _, a := range ctx.Args[2:] {
			if _, ok := m.events[string(a)]; ok {
				delete(m.events, string(a))
				n++
			}
		}
		r.Int(int64(n))
	default:
		r.Error("ERR unknown subcommand '" + string(ctx.Args[1]) + "'. Try LATENCY HELP.")
	}
}
