package server

import (
	"errors"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/probly/probly/internal/config"
)

// Connection housekeeping: the idle timeout, input-buffer accounting and
// client eviction (maxmemory-clients), returning freed buffers to the OS,
// and the cross-protocol (HTTP) check. The periodic work runs on one
// goroutine, the reaper (Redis's clientsCron); a connection's own path pays
// one atomic load and one atomic store per batch of commands (its
// last-interaction time) and a field read per network read (its read
// buffer's size).

const (
	// reapInterval is the reaper's period: the resolution of the idle
	// timeout and of the coarse clock connections read.
	reapInterval = 250 * time.Millisecond
	// countedBuf: a connection's read buffer counts as input-buffer memory
	// (used_memory, maxmemory-clients) once its capacity is above this,
	// and is replaced by a fresh one at the next command boundary. Up to
	// it, it is the fixed cost of a connection (the parser starts at 4 KiB
	// and pipelining may take it to 32 KiB).
	countedBuf = 32 << 10
	// Returning memory to the OS: read buffers of at least freeOSBuf
	// count as released when dropped; once freeOSBytes of them have been
	// released, the reaper calls debug.FreeOSMemory (a full collection),
	// at most once per freeOSInterval and at most freeOSShare of the time
	// (after a call that took d, the next waits 20·d). Smaller buffers are
	// left to the runtime, which reuses their memory for the next ones.
	freeOSBuf      = 1 << 20
	freeOSBytes    = 4 << 20
	freeOSInterval = 3 * time.Second
	freeOSShare    = 20
	// attackLogInterval spaces the cross-protocol warnings (as Redis, one
	// a minute at most).
	attackLogInterval = time.Minute
)

// observeBuffer keeps the connection's share of the input-buffer total
// current with its read buffer's size (called around every read).
func (c *client) observeBuffer() {
	n := c.in.Cap()
	if n == c.bufCap {
		return
	}
	c.bufCap = n
	var held int64
	if n > countedBuf {
		held = int64(n)
	}
	c.setHeld(held)
}

// setHeld sets the input-buffer bytes this connection counts (buf) and
// with them its total in the client-memory total (the buffer plus the
// transaction queue and the watched keys, txState.bytes and watchBytes),
// and asks the reaper to evict clients when the total is over
// maxmemory-clients. The transaction code calls refreshHeld after it
// changes its share.
func (c *client) setHeld(buf int64) {
	c.bufHeld = buf
	held := buf + int64(c.tx.bytes+c.tx.watchBytes)
	old := c.held.Load() // only this goroutine writes it
	if held == old {
		return
	}
	c.held.Store(held)
	total := c.s.mem.clients.Add(uint64(held - old))
	if held > old {
		if l := c.s.clientsLimit(); l > 0 && total > l {
			select {
			case c.s.evictCh <- struct{}{}:
			default:
			}
		}
	}
}

// refreshHeld recounts the connection's client memory after its
// transaction state changed.
func (c *client) refreshHeld() { c.setHeld(c.bufHeld) }

// shrinkBuffer replaces a read buffer that grew past countedBuf by a
// fresh small one when what it holds unconsumed fits (resp.Parser.Shrink).
// Called after a batch. The reply buffer follows the same policy
// (flushReplies).
func (c *client) shrinkBuffer() {
	old := c.in.Shrink()
	if old == 0 {
		return
	}
	c.s.dropped(old)
	c.observeBuffer()
}

// dropped counts a connection buffer of size bytes that was let go: one
// of freeOSBuf or more counts toward returning memory to the OS.
func (s *Server) dropped(size int) {
	if size >= freeOSBuf {
		s.released.Add(uint64(size))
	}
}

// closeBuffers gives back the connection's share of the input-buffer
// total when it ends.
func (c *client) closeBuffers() {
	if c.bufCap >= freeOSBuf {
		c.s.released.Add(uint64(c.bufCap))
	}
	c.setHeld(0)
}

// clientsLimit is the effective maxmemory-clients in bytes (0 = none): a
// byte value, or a percentage of maxmemory (none without maxmemory).
func (s *Server) clientsLimit() uint64 {
	if pct := s.clientsPct.Load(); pct > 0 {
		return s.mem.limit.Load() / 100 * uint64(pct)
	}
	return s.clientsMax.Load()
}

// clientsParam is maxmemory-clients: a memory value or a percentage
// 0%–100% of maxmemory, as Redis 7.
func (s *Server) clientsParam() config.Param {
	return config.Param{Name: "maxmemory-clients", Default: "0", Memory: true, Set: func(v string) error {
		const bad = "argument must be a memory or percent value"
		if num, ok := strings.CutSuffix(v, "%"); ok {
			pct, err := strconv.ParseUint(num, 10, 64)
			if err != nil || num == "" || (len(num) > 1 && num[0] == '0') {
				return errors.New(bad)
			}
			if pct > 100 {
				return errors.New("percentage argument must be less or equal to 100")
			}
			s.clientsMax.Store(0)
			s.clientsPct.Store(int64(pct))
			return nil
		}
		n, err := config.ParseMemory(v)
		if err != nil || n > maxInt64 {
			return errors.New(bad)
		}
		s.clientsPct.Store(0)
		s.clientsMax.Store(n)
		return nil
	}}
}

// --- the reaper ---

// reap runs until stop is closed: it advances the coarse clock, closes
// idle clients, evicts clients over maxmemory-clients and returns freed
// memory to the OS.
func (s *Server) reap(stop <-chan struct{}) {
	t := time.NewTicker(reapInterval)
	defer t.Stop()
	var nextFree atomic.Int64 // time since start before which FreeOSMemory waits
	armed := false
	for {
		select {
		case <-stop:
			return
		case <-s.evictCh:
			s.evictClients()
		case <-t.C:
			s.clock.Store(int64(time.Since(s.start) / time.Millisecond))
			s.outPeak.advance(s.now())
			if s.idleTimeout.Load() > 0 {
				s.closeIdle()
			}
			s.evictClients()
			// Buffers are counted as released just before their
			// connection's goroutine ends: wait one more tick, so that
			// they are garbage by the time memory is returned.
			if armed && int64(time.Since(s.start)) >= nextFree.Load() && !s.freeing.Load() {
				armed = false
				s.released.Store(0)
				s.freeing.Store(true)
				go func() {
					begin := time.Since(s.start)
					debug.FreeOSMemory()
					took := time.Since(s.start) - begin
					nextFree.Store(int64(begin + max(freeOSInterval, freeOSShare*took)))
					s.log.Debug("returned free memory to the OS", "took", took)
					s.freeing.Store(false)
				}()
			} else if !armed && s.released.Load() >= freeOSBytes {
				armed = true
			}
		}
	}
}

// now is the coarse clock: milliseconds since start, advanced by the
// reaper.
func (s *Server) now() int64 { return s.clock.Load() }

// touch records an interaction (the end of a batch, or request bytes
// arriving for a command still incomplete).
func (c *client) touch() { c.last.Store(c.s.now()) }

// idle reports whether the client has been idle for longer than the
// timeout (false without one).
func (c *client) idle() bool {
	t := c.s.idleTimeout.Load()
	return t > 0 && c.s.now()-c.last.Load() > t*1000
}

// closeIdle wakes every client idle for longer than the timeout: its read
// deadline is set to now, and the read that fails decides (retryRead).
// A connection executing a batch does not read, so it is not closed: it
// re-checks when it reads next, after updating its interaction time.
func (s *Server) closeIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.idle() {
			c.poke()
		}
	}
}

// poke sets the connection's read deadline to now, marking it so that
// the failed read checks for idleness instead of ending the connection.
func (c *client) poke() {
	c.pokeMu.Lock()
	defer c.pokeMu.Unlock()
	if c.s.closing.Load() {
		return
	}
	c.poked = true
	_ = c.nc.SetReadDeadline(time.Now())
}

// wake is Shutdown's poke: the connection's read fails and is not retried.
func (c *client) wake() {
	c.pokeMu.Lock()
	defer c.pokeMu.Unlock()
	_ = c.nc.SetReadDeadline(time.Now())
}

// retryRead is called by the guard when a network read fails with no
// data. It reports true (read again) when the failure is the reaper's
// deadline on a client that turned out not to be idle (it was executing,
// or interacted since).
func (c *client) retryRead(err error) bool {
	var te interface{ Timeout() bool }
	if !errors.As(err, &te) || !te.Timeout() {
		return false
	}
	c.pokeMu.Lock()
	defer c.pokeMu.Unlock()
	if !c.poked || c.s.closing.Load() {
		return false
	}
	c.poked = false
	if c.idle() {
		c.s.log.Debug("closing idle client", "conn_id", c.conn.ID, "timeout_s", c.s.idleTimeout.Load())
		return false
	}
	_ = c.nc.SetReadDeadline(time.Time{})
	return true
}

// evictClients closes the clients with the largest input buffers until
// the total of the others is within maxmemory-clients (Redis evicts from
// the largest down, too).
func (s *Server) evictClients() {
	limit := s.clientsLimit()
	if limit == 0 || s.mem.clients.Load() <= limit {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var big []*client
	var total uint64
	for c := range s.conns {
		if h := c.held.Load(); h > 0 && !c.evicted.Load() {
			big = append(big, c)
			total += uint64(h)
		}
	}
	sort.Slice(big, func(i, j int) bool { return big[i].held.Load() > big[j].held.Load() })
	for _, c := range big {
		if total <= limit {
			break
		}
		h := uint64(c.held.Load())
		total -= min(h, total)
		c.evicted.Store(true)
		s.stats.evicted.Add(1)
		s.log.Info("evicting client: input buffers over maxmemory-clients",
			"conn_id", c.conn.ID, "input_buffer_bytes", h, "maxmemory_clients", limit)
		_ = c.nc.Close()
	}
}

// --- cross-protocol requests ---

// isHTTP reports whether a command name is "POST" or "Host:", in any
// case: the first words of an HTTP request's lines, which a web page can
// make a browser send to a local server (Redis refuses them the same way).
// It runs before every command, so it rejects other names on their
// length and second byte ('o' in both) before comparing.
func isHTTP(name []byte) bool {
	if n := len(name); n < 4 || n > 5 || name[1]|0x20 != 'o' {
		return false
	}
	if len(name) == 4 {
		return strings.EqualFold(string(name), "post")
	}
	return strings.EqualFold(string(name), "host:")
}

// crossProtocol ends a connection that sent an HTTP request: nothing more
// of it runs, the replies of the commands before it in the batch are
// dropped (as Redis, which sends nothing) and the connection is closed.
// The warning names no request content and is logged at most once a
// minute.
func (c *client) crossProtocol() {
	c.abort = true
	c.conn.Close = true
	n := c.s.attacks.Add(1)
	now := time.Since(c.s.start)
	last := c.s.attackLogged.Load()
	if (last == 0 || now-time.Duration(last) >= attackLogInterval) && c.s.attackLogged.CompareAndSwap(last, int64(now)) {
		c.s.log.Warn("possible cross-protocol attack: a client sent an HTTP request (a command named POST or Host:); "+
			"closed its connection without running it", "conn_id", c.conn.ID, "addr", c.conn.Addr, "total_since_start", n)
	}
}
