package server

import (
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/probly/probly/internal/command"
)

// MONITOR, as Redis 7: after +OK the connection receives one line per
// command any client runs, "+<unix time>.<µs> [0 <client addr>] "cmd" "arg"…",
// arguments quoted as Redis's sdscatrepr. Commands refused before they
// ran and admin commands are not shown (Redis: CMD_ADMIN); the commands
// EXEC runs are shown when it runs them, before EXEC itself; AUTH's and
// HELLO AUTH's arguments are shown as "(redacted)". MONITOR is an admin command (and in ACL's @admin and
// @dangerous categories), so it shows arguments only to operators.
//
// Each monitor has a queue of at most monitorQueue lines written by its
// own goroutine; a monitor that falls that far behind is closed (Redis:
// the output buffer limit), so a slow monitor never slows the server.

const monitorQueue = 4096

type monitors struct {
	n    atomic.Int32 // len(list), read on every command
	mu   sync.Mutex
	list map[*client]chan []byte
}

func (c *client) startMonitor(ctx *command.Ctx) {
	if c.ops.monitor.Load() { // already monitoring: no reply, as Redis
		ctx.R.OK()
		c.ops.reply = replySkipOne
		return
	}
	ch := make(chan []byte, monitorQueue)
	m := &c.s.ops.mon
	m.mu.Lock()
	if m.list == nil {
		m.list = map[*client]chan []byte{}
	}
	m.list[c] = ch
	m.n.Store(int32(len(m.list)))
	m.mu.Unlock()
	c.ops.monitor.Store(true)
	ctx.R.OK()
	go c.writeMonitor(ch)
}

// writeMonitor sends the queued lines to the monitor until it is dropped.
// The connection's own replies are written by its goroutine; net.Conn
// serializes whole writes, so lines and replies never interleave.
func (c *client) writeMonitor(ch chan []byte) {
	for line := range ch {
		buf := line
		for more := true; more; {
			select {
			case l, ok := <-ch:
				if !ok {
					more = false
					break
				}
				buf = append(buf, l...)
			default:
				more = false
			}
		}
		n, err := c.nc.Write(buf)
		c.s.stats.out.Add(uint64(n))
		if err != nil {
			c.s.ops.mon.drop(c)
			return
		}
	}
}

// drop stops feeding c (it closed, or fell behind).
func (m *monitors) drop(c *client) {
	m.mu.Lock()
	if ch, ok := m.list[c]; ok {
		delete(m.list, c)
		close(ch)
		m.n.Store(int32(len(m.list)))
	}
	m.mu.Unlock()
}

// feed formats one command for the monitors (at: when it started).
func (m *monitors) feed(c *client, args [][]byte, at time.Time) {
	b := make([]byte, 0, 64)
	b = append(b, '+')
	b = strconv.AppendInt(b, at.Unix(), 10)
	b = append(b, '.')
	us := strconv.Itoa(at.Nanosecond() / 1000)
	for range 6 - len(us) {
		b = append(b, '0')
	}
	b = append(b, us...)
	b = append(b, " [0 "...)
	if c.unix { // Redis: "unix:<socket path>"
		b = append(b, "unix:"...)
		b = append(b, strings.TrimSuffix(c.conn.Addr, ":0")...)
	} else {
		b = append(b, c.conn.Addr...)
	}
	b = append(b, ']')
	redact := redactFrom(args)
	for i, a := range args {
		b = append(b, ' ')
		if i >= redact {
			a = []byte("(redacted)")
		}
		b = appendRepr(b, a)
	}
	b = append(b, '\r', '\n')
	var slow []*client
	m.mu.Lock()
	for mc, ch := range m.list {
		select {
		case ch <- b:
		default:
			slow = append(slow, mc)
		}
	}
	m.mu.Unlock()
	for _, mc := range slow {
		c.s.log.Warn("closing a MONITOR client that fell behind", "conn_id", mc.conn.ID)
		m.drop(mc)
		mc.kill()
	}
}

// redactFrom is the first argument MONITOR hides: AUTH's, and HELLO's
// after its AUTH token (Redis's redactClientCommandArgument).
func redactFrom(args [][]byte) int {
	switch string(lowerASCII(args[0])) {
	case "auth":
		return 1
	case "hello":
		for i := 1; i < len(args); i++ {
			if string(lowerASCII(args[i])) == "auth" {
				return i + 1 // user name and password, as Redis
			}
		}
	}
	return len(args)
}

func lowerASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, x := range b {
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		out[i] = x
	}
	return out
}

// appendRepr appends a quoted as Redis's sdscatrepr.
func appendRepr(b, a []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, x := range a {
		switch x {
		case '\\', '"':
			b = append(b, '\\', x)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if x >= ' ' && x <= '~' {
				b = append(b, x)
			} else {
				b = append(b, '\\', 'x', hex[x>>4], hex[x&15])
			}
		}
	}
	return append(b, '"')
}

func sortStrings(s []string) { sort.Strings(s) }

// sortedSpecs is every command and subcommand of t, sorted by name.
func sortedSpecs(t *command.Table) []*command.Spec {
	var out []*command.Spec
	for _, sp := range t.All() {
		out = append(out, sp)
		out = append(out, sp.Subcommands...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
