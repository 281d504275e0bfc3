package server

import (
	"slices"
	"strings"
	"sync/atomic"

	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
)

// Memory accounting for maxmemory.
//
// keyspace.Store.Used is the exact key-space total (Σ key length + value
// MemoryUsage), maintained by every Update in O(1), so the checks below
// read the live figure, never a stale one. Two checks apply:
//
//   - Admission (over): a command flagged denyoom is refused with Redis's
//     OOM error while Used plus every outstanding reservation is above
//     the limit, before its handler runs. This is Redis's check, and it is
//     what bounds commands whose growth is small or only known while they
//     run (BF.ADD adding a link, PFADD …).
//   - Reservation (Ctx.Reserve): a handler about to add a known number of
//     bytes (SET, APPEND, SETRANGE, filter creation, HLL promotion)
//     reserves them first; the reservation fails unless
//     Used + reserved + n ≤ limit. Concurrent commands therefore cannot
//     all pass a check made before any of them allocated: the second one
//     sees the first one's reservation. The reservation is released when
//     the handler returns, by which time the growth is in Used (a moment
//     of double counting, never of under-counting).
//
// Clients' input buffers (clients.go: a read buffer that grew past 32 KiB
// while a large request arrives) count as used memory too, in both checks
// and in UsedMemory, as Redis counts its clients' query buffers.
//
// Cost per write while a limit is set: three atomic loads for the
// admission check and, for reserving commands, one compare-and-swap and
// one add on the reservation counter. No lock: writes on independent keys
// stay parallel.
type memTracker struct {
	store *keyspace.Store
	limit atomic.Uint64 // bytes; 0 = no limit
	// reserved is written by every reserving command: on a cache line of
	// its own, away from limit (read by every denyoom command).
	_        [64]byte
	reserved atomic.Uint64 // Σ outstanding reservations
	_        [56]byte
	// clients is Σ client.held, written when a large request's buffer
	// grows or is released: a line of its own too.
	clients atomic.Uint64
	_       [56]byte
}

// used is the memory checked against the limit: the key space plus the
// clients' input buffers.
func (m *memTracker) used() uint64 { return m.store.Used() + m.clients.Load() }

func (m *memTracker) init(store *keyspace.Store) { m.store = store }

// setLimit is the maxmemory parameter's setter. Used is always current,
// so a lowered limit takes effect with the next command.
func (m *memTracker) setLimit(n uint64) { m.limit.Store(n) }

// over reports whether a set limit is exceeded by the memory in use plus
// the outstanding reservations.
func (m *memTracker) over() bool {
	l := m.limit.Load()
	if l == 0 {
		return false
	}
	used, r := m.used(), m.reserved.Load()
	return used > l || r > l-used
}

// reserve admits n more bytes if Used + reserved + n fits a set limit, and
// records them as reserved. It reports whether it admitted them and how
// many bytes it recorded (0 without a limit: nothing to release).
func (m *memTracker) reserve(n uint64) (ok bool, held uint64) {
	for {
		l := m.limit.Load()
		if l == 0 {
			return true, 0
		}
		r := m.reserved.Load()
		used := m.used()
		// used + r + n > l, without overflow.
		if used > l || r > l-used || n > l-used-r {
			return false, 0
		}
		if m.reserved.CompareAndSwap(r, r+n) {
			return true, n
		}
	}
}

// release returns n reserved bytes.
func (m *memTracker) release(n uint64) {
	if n != 0 {
		m.reserved.Add(-n)
	}
}

// reservation is one connection's share of the reserved bytes: what the
// command it is running has reserved so far. Only that connection's
// goroutine uses it.
type reservation struct {
	m    *memTracker
	held uint64
}

// reserve is the connection's command.Ctx.ReserveMem.
func (r *reservation) reserve(n uint64) bool {
	ok, held := r.m.reserve(n)
	r.held += held
	return ok
}

// releaseAll ends the running command's reservations.
func (r *reservation) releaseAll() {
	if r.held != 0 {
		r.m.release(r.held)
		r.held = 0
	}
}

// UsedMemory returns INFO's used_memory, the figure maxmemory is checked
// against: the key space's memory (Σ key lengths + value MemoryUsage,
// keyspace.Store.Used, exact and O(1)) plus the clients' input buffers
// (ClientsMemory).
func (s *Server) UsedMemory() uint64 { return s.mem.used() }

// ClientsMemory returns the bytes of clients' input buffers counted in
// used_memory (INFO mem_clients_normal): the read buffers of connections
// receiving a request larger than 32 KiB, at their capacity.
func (s *Server) ClientsMemory() uint64 { return s.mem.clients.Load() }

// MaxMemory returns the maxmemory limit in bytes (0 = none).
func (s *Server) MaxMemory() uint64 { return s.mem.limit.Load() }

// Redis 7's maxmemory-policy values, in the order of its CONFIG SET error.
var evictionPolicies = []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
	"allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}

// policyParam is CONFIG maxmemory-policy. probly never evicts: a filter
// evicted to make room would answer "not present" for keys that were
// added (a false negative), so over maxmemory writes get the OOM error,
// Redis's noeviction. noeviction (any case, as Redis's enum configs) is
// the one value accepted; another Redis policy is refused saying so, and
// anything else gets Redis's error for an invalid value.
func policyParam() config.Param {
	return config.Param{Name: "maxmemory-policy", Default: "noeviction",
		Set: func(v string) error {
			switch p := strings.ToLower(v); {
			case p == "noeviction":
				return nil
			case slices.Contains(evictionPolicies, p):
				return config.Reason("probly supports only noeviction: it never evicts keys, so that no filter loses items")
			}
			return config.Reason("argument(s) must be one of the following: " + strings.Join(evictionPolicies, ", "))
		},
		Show: func(string) string { return "noeviction" }}
}
