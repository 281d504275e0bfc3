// Package commandtest holds the test harness shared by the command-family
// packages (bf, cf, pf, str): a dispatcher that runs one command the way
// the server does, an argument-vector builder, a recording
// keyspace.Logger, the redis-server helpers of the differential tests and
// a goroutine-safe log sink (LogSink). It is meant for tests only.
package commandtest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/resp"
)

// Option adjusts the command.Ctx that Run builds, before the handler runs.
type Option func(*command.Ctx)

// Replay sets Ctx.Replay (the call runs as recovery would re-apply it).
func Replay(replay bool) Option {
	return func(ctx *command.Ctx) { ctx.Replay = replay }
}

// ReserveMem sets Ctx.ReserveMem (the server's maxmemory admission).
func ReserveMem(f func(n uint64) bool) Option {
	return func(ctx *command.Ctx) { ctx.ReserveMem = f }
}

// Run runs args through command.Table.Run, the path every caller takes
// (internal records allowed, as replay and the follower run them; no
// AUTH, maxmemory or write-guard checks), and returns the exact reply
// bytes and the AOF sequence the handler wrote. opts adjust the Ctx
// before the command runs.
func Run(tab *command.Table, store *keyspace.Store, cfg *config.Registry, proto int, args [][]byte, opts ...Option) (reply string, seq uint64) {
	reply, o := RunOutcome(tab, store, cfg, proto, args, opts...)
	return reply, o.Seq
}

// RunOutcome is Run that returns the command's Outcome as well.
func RunOutcome(tab *command.Table, store *keyspace.Store, cfg *config.Registry, proto int, args [][]byte, opts ...Option) (string, command.Outcome) {
	var w resp.Writer
	ctx := &command.Ctx{Args: args, R: resp.New(&w, proto), Store: store, Config: cfg}
	for _, o := range opts {
		o(ctx)
	}
	o := tab.Run(ctx, &command.Policy{Internal: true})
	return string(w.Bytes()), o
}

// Argv converts strings to a command's argument vector.
func Argv(args ...string) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(a)
	}
	return out
}

// Logger is a keyspace.Logger that records every logged mutation (deep
// copies). The zero value is ready to use. It is safe for concurrent use.
type Logger struct {
	mu   sync.Mutex
	recs [][][]byte
	fail error
}

// Append records args and returns its sequence number (the record count),
// or fails with the error set by SetFail.
func (l *Logger) Append(args [][]byte) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return 0, l.fail
	}
	cp := make([][]byte, len(args))
	for i, a := range args {
		cp[i] = append([]byte(nil), a...)
	}
	l.recs = append(l.recs, cp)
	return uint64(len(l.recs)), nil
}

// SetFail makes every later Append fail with err (nil: succeed again).
func (l *Logger) SetFail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fail = err
}

// Records returns the records logged so far.
func (l *Logger) Records() [][][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][][]byte(nil), l.recs...)
}

// Take returns the records logged so far and forgets them.
func (l *Logger) Take() [][][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.recs
	l.recs = nil
	return out
}

// Discard is a keyspace.Logger that keeps nothing and returns increasing
// sequence numbers: a logger of zero cost, for benchmarks that measure the
// command path alone. The zero value is ready to use. It is not safe for
// concurrent use.
type Discard struct{ seq uint64 }

// Append counts the record and forgets it.
func (d *Discard) Append([][]byte) (uint64, error) {
	d.seq++
	return d.seq, nil
}

// Bencher runs one command repeatedly the way the server does
// (command.Table.Run into a reused reply buffer), reusing its Ctx and reply
// buffer, so that a benchmark's allocs/op counts the handler's allocations
// only (Run itself allocates nothing).
type Bencher struct {
	tab *command.Table
	ctx command.Ctx
	w   resp.Writer
}

// NewBencher returns a Bencher for the command called name in tab. It
// panics if the command is unknown.
func NewBencher(tab *command.Table, store *keyspace.Store, cfg *config.Registry, proto int, name string) *Bencher {
	if tab.Lookup([]byte(name)) == nil {
		panic("commandtest: unknown command " + name)
	}
	b := &Bencher{tab: tab}
	b.ctx = command.Ctx{R: resp.New(&b.w, proto), Store: store, Config: cfg}
	return b
}

// Do runs args (args[0] is the command name) and returns the reply bytes,
// valid until the next Do.
func (b *Bencher) Do(args [][]byte) []byte {
	b.w.Reset()
	b.ctx.Args = args
	b.tab.Run(&b.ctx, &benchPolicy)
	return b.w.Bytes()
}

var benchPolicy = command.Policy{Internal: true}

// RandInts yields the items redis-benchmark's __rand_int__ placeholder
// produces with -r n: 12-digit zero-padded decimal numbers drawn uniformly
// from [0, n), from a fixed seed (so runs are comparable).
type RandInts struct {
	state uint64
	n     uint64
	buf   [12]byte
}

// NewRandInts returns a generator of numbers in [0, n) from seed.
func NewRandInts(n, seed uint64) *RandInts {
	return &RandInts{state: seed*0x9e3779b97f4a7c15 + 1, n: n}
}

// Next returns the next item; the slice is reused by the following call.
func (r *RandInts) Next() []byte {
	// splitmix64
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	v := z % r.n
	for i := len(r.buf) - 1; i >= 0; i-- {
		r.buf[i] = byte('0' + v%10)
		v /= 10
	}
	return r.buf[:]
}

// OOMReply is the reply of a write refused by maxmemory.
const OOMReply = "-" + command.ErrOOM + "\r\n"

// Replies of a Bloom or cuckoo filter that does not fit maxmemory's room:
// RedisBloom's errors for a filter over its per-filter budget, for a
// creation (NoRoomReply), a Bloom growth and a cuckoo growth.
const (
	NoRoomReply     = "-ERR Insufficient memory to create filter\r\n"
	BFNoGrowthReply = "-ERR problem inserting into filter\r\n"
	CFNoGrowthReply = "-ERR Insufficient memory\r\n"
)

// refusedReply reports whether reply is a maxmemory refusal (OOMReply, or
// a filter's no-room reply).
func refusedReply(reply string) bool {
	switch reply {
	case OOMReply, NoRoomReply, BFNoGrowthReply, CFNoGrowthReply:
		return true
	}
	return false
}

// Refusal reports whether msg, an error reply's text as clients return it
// (no "-", no CRLF), is a maxmemory refusal: Redis's OOM error, or a
// filter's no-room reply.
func Refusal(msg string) bool { return refusedReply("-" + msg + "\r\n") }

// RunReserve runs one command (RESP2; as a replay if replay) with a
// Ctx.ReserveMem that admits reservations while their sum stays within
// room, and returns the reply and the bytes asked for.
func RunReserve(tab *command.Table, store *keyspace.Store, cfg *config.Registry, replay bool, room uint64, args ...string) (reply string, asked uint64) {
	reply, _ = Run(tab, store, cfg, 2, Argv(args...), Replay(replay),
		ReserveMem(func(n uint64) bool { asked += n; return asked <= room }))
	return reply, asked
}

// valueState describes key's value for before/after comparisons.
func valueState(store *keyspace.Store, key string) string {
	out := "<missing>"
	store.View([]byte(key), func(v keyspace.Value) {
		if v != nil {
			out = fmt.Sprintf("%s/%d", v.TypeName(), v.MemoryUsage())
		}
	})
	return out
}

// CheckReserve runs args (a command whose key is args[1]) first with every
// maxmemory reservation refused: a command that creates a value must
// answer OOM (a filter: its no-room reply) and change and log nothing. Then (or if it reserved nothing)
// it must succeed with the reply want, and what it reserved must be
// exactly the growth of store.Used, which must equal store.MemoryUsage.
func CheckReserve(t testing.TB, tab *command.Table, store *keyspace.Store, cfg *config.Registry, log *Logger, want string, args ...string) {
	t.Helper()
	used, recs, st := store.Used(), len(log.Records()), valueState(store, args[1])
	got, asked := RunReserve(tab, store, cfg, false, 0, args...)
	if refusedReply(got) {
		if store.Used() != used || len(log.Records()) != recs || valueState(store, args[1]) != st {
			t.Fatalf("%s refused but changed something", args[0])
		}
		got, asked = RunReserve(tab, store, cfg, false, ^uint64(0), args...)
	} else if asked != 0 {
		t.Fatalf("%s asked for %d bytes, was refused, and answered %q", args[0], asked, got)
	}
	if got != want {
		t.Fatalf("%s = %q, want %q", args[0], got, want)
	}
	grew := int64(store.Used() - used)
	if grew > 0 && uint64(grew) != asked || grew <= 0 && asked != 0 {
		t.Fatalf("%s reserved %d bytes, Used grew by %d", args[0], asked, grew)
	}
	if got, want := store.Used(), store.MemoryUsage(); got != want {
		t.Fatalf("Used %d, MemoryUsage %d", got, want)
	}
}

// LogSink is a goroutine-safe io.Writer that keeps everything written to
// it, for the slog handlers of servers under test (which log from many
// goroutines). The zero value is ready to use.
type LogSink struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails.
func (s *LogSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *LogSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
