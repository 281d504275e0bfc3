// Package server runs probly's Redis-protocol server: it accepts TCP (or
// TLS, via Serve with a tls listener) connections, parses RESP2/RESP3
// requests and dispatches them through a command.Table.
//
// What it promises:
//
//   - Each connection is served by one goroutine that reads a batch of
//     pipelined commands, executes them in order, waits once for the
//     batch's writes to be durable (Persister.Wait with the highest
//     sequence number any command in the batch wrote) and only then flushes
//     all the batch's replies in one write. The AOF records are buffered
//     and written in that wait (one write(2) per batch, shared with other
//     connections), so no reply reaches a client before the record it
//     acknowledges is in the file; with appendfsync always, before it is
//     fsynced, and a pipeline shares one fsync.
//   - A malformed or hostile request (huge or negative lengths, oversized
//     inline lines, garbage) costs only its own connection: it gets
//     "-ERR Protocol error: …" and is closed. Limits: proto-max-bulk-len
//     (512 MiB), proto-max-multibulk-len (arguments per command),
//     client-query-buffer-limit (bytes per command) and maxclients, all
//     changeable with CONFIG SET. A panic in a handler is recovered, logged
//     without key or value content, and closes only that connection.
//   - A command named POST or Host: (any case; an HTTP request's lines,
//     which a web page can make a browser send to a loopback server) ends
//     the connection, as in Redis: nothing more of it runs, no reply of
//     its batch is sent, and a warning without request content is logged
//     (at most once a minute). Commands before it in the batch have run.
//   - Before AUTH (with a password set), Redis's limits also apply: at
//     most 10 arguments per command ("Protocol error: unauthenticated
//     multibulk length") and 16 KiB per argument ("… unauthenticated bulk
//     length"), then the connection is closed; such a connection's
//     requests are parsed one command at a time, so a command pipelined
//     behind AUTH is read under the limits AUTH's success lifted.
//   - Input buffers: a connection's read buffer that grew past 32 KiB (a
//     large request arriving) counts in used_memory (and so against
//     maxmemory) and in maxmemory-clients (CONFIG SET; bytes or a % of
//     maxmemory; 0 = none, the default); over it, the connections with the
//     largest buffers are closed. Such a buffer is replaced after its
//     command, and the memory of released buffers of 1 MiB or more is
//     returned to the OS (debug.FreeOSMemory, at most every 3 s).
//   - timeout (CONFIG SET, seconds; 0 = never, the default): a client idle
//     for longer is closed, checked every 250 ms; a client whose command
//     is running is not idle.
//   - TLS: a connection's handshake runs under a deadline
//     (Options.HandshakeTimeout, 10 s) before it counts against
//     maxclients; unfinished handshakes are bounded separately
//     (Options.MaxHandshakes, 1000; the oldest is closed to make room).
//   - maxmemory: commands flagged denyoom are refused with Redis's OOM
//     error while the key space's exact memory (keyspace.Store.Used) plus
//     outstanding reservations is above the limit, and a command that
//     would add a known amount (SET, SETRANGE, filter creation …) is
//     refused unless that amount fits (Ctx.Reserve; see memory.go); reads
//     and deletes keep working.
//   - With a write guard (SetWriteGuard, set by `serve --follow`), a
//     write of a guarded key is refused with "READONLY You can't write
//     against a read only replica." and changes nothing.
//   - Nothing of a key's or a value's content reaches the log.
//   - Dispatch follows Redis 7's order: unknown command / unknown
//     subcommand, then arity, then NOAUTH.
//   - Shutdown stops accepting, lets every connection finish the batch it
//     is executing (replies included) and closes the connections.
//   - Transactions (MULTI/EXEC/DISCARD/WATCH/UNWATCH, tx.go): every
//     command holds the store's command gate shared while it runs; EXEC
//     holds it exclusively, so a transaction never interleaves with
//     another command.
//
// Requests are parsed by internal/resp's Parser (read.go): bounded,
// incremental, with Redis 7's framing and error texts; a command's
// arguments alias the connection's read buffer and are valid until its
// handler returns (command.Ctx.Args). Replies are buffered in the
// connection's resp.Writer (reply.go). Per batch of pipelined commands:
// one read(2), one write(2).
//
// Cost: one goroutine per idle connection; over TCP and Unix sockets an
// idle connection holds no read buffer (it waits on its descriptor and
// takes a pooled 4–32 KiB buffer when bytes arrive, read.go; TLS
// connections keep theirs), and a reply buffer of up to 32 KiB (larger
// buffers of either kind are dropped after their batch). One housekeeping goroutine per
// server (clients.go) wakes every 250 ms.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/probly/probly/internal/acl"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/resp"
)

// Persister is the persistence engine as the server sees it.
type Persister interface {
	// Wait blocks until every log record up to seq is as durable as the
	// appendfsync policy promises: at least written to the file (records
	// may be buffered in memory until then), and fsynced with
	// appendfsync always.
	Wait(seq uint64) error
	// Snapshot writes a snapshot synchronously (SAVE).
	Snapshot(*keyspace.Store) error
	// BGSnapshot starts a snapshot in the background (BGSAVE).
	BGSnapshot(*keyspace.Store) error
	// InProgress reports whether a background snapshot is running.
	InProgress() bool
	// LastSave is the time of the last successful snapshot.
	LastSave() time.Time
	// LastSaveOK reports whether the last snapshot attempt succeeded.
	LastSaveOK() bool
	// LastWriteOK reports whether the AOF accepts writes: false from a
	// failed AOF write (ENOSPC, a failed fsync) for as long as writes are
	// refused because of it, true again once they are accepted
	// (aof_last_write_status).
	LastWriteOK() bool
	// AOFSize is the current size of the append-only log in bytes.
	AOFSize() int64
	// Changes is the number of mutations since the last snapshot.
	Changes() uint64
	// LastSeq is the sequence number of the last record appended to the
	// log (0 before the first): what Wait may be asked for. It is read
	// after every batch, so it must be cheap (an atomic load).
	LastSeq() uint64
	// Written is the highest sequence number up to which the log has
	// no record buffered (each is in the file, or was dropped and Wait
	// reports its error): when it is below a batch's wait, the batch
	// yields before waiting so that other connections' records share the
	// write. A hint, read after every batch (an atomic load).
	Written() uint64
}

// ShutdownSaver is implemented by a Persister that tells a shutdown's
// snapshot from SAVE's in its logs and metrics: SHUTDOWN writes its
// snapshot with ShutdownSnapshot (as Snapshot) when the Persister has it.
type ShutdownSaver interface {
	ShutdownSnapshot(*keyspace.Store) error
}

// Defaults for Options.
const (
	DefaultAddr           = "127.0.0.1:6379"
	DefaultMaxClients     = 10000     // Redis maxclients
	DefaultMaxBulkLen     = 512 << 20 // Redis proto-max-bulk-len
	DefaultMaxArgs        = 1 << 20   // arguments per command
	DefaultMaxQueryBuffer = 1 << 30   // bytes per command (Redis client-query-buffer-limit)
	DefaultVersion        = "dev"     // probly_version when Options.Version is empty
	maxClientsMsg         = "ERR max number of clients reached"
	noAuthMsg             = "NOAUTH Authentication required."
	oomMsg                = command.ErrOOM
	readOnlyMsg           = "READONLY You can't write against a read only replica."
)

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown.
var ErrServerClosed = errors.New("server: closed")

// Options configure a Server. Store and Table are required.
type Options struct {
	Addr        string // listen address for ListenAndServe; default 127.0.0.1:6379
	RequirePass string // password of the default user; "" = no AUTH needed
	// ACLFile, if set, is the aclfile (Redis format) loaded at start
	// (an error if it cannot be) and by ACL LOAD, and written by ACL SAVE.
	ACLFile string
	Logger  *slog.Logger
	Store   *keyspace.Store
	Config  *config.Registry // default: a new empty registry
	Table   *command.Table
	Persist Persister // nil = no persistence (SAVE/BGSAVE fail)

	MaxClients     int    // default DefaultMaxClients; CONFIG SET maxclients
	MaxBulkLen     int64  // default DefaultMaxBulkLen; CONFIG SET proto-max-bulk-len
	MaxArgs        int    // default DefaultMaxArgs; CONFIG SET proto-max-multibulk-len
	MaxQueryBuffer int64  // default DefaultMaxQueryBuffer; CONFIG SET client-query-buffer-limit
	MaxMemory      uint64 // bytes; 0 = no limit (the default); CONFIG SET maxmemory
	Version        string
	// Observer, if set, is told about every command (metrics).
	Observer Observer
	// WriteGuard, if set, makes keys read-only to clients: see
	// SetWriteGuard.
	WriteGuard func(key []byte) bool
	// HandshakeTimeout bounds a TLS handshake (default
	// DefaultHandshakeTimeout); MaxHandshakes bounds the handshakes in
	// progress (default DefaultMaxHandshakes). See handshake.go.
	HandshakeTimeout time.Duration
	MaxHandshakes    int
}

// Observer is told about every command the server dispatches, through
// one Recorder per connection (so the command path touches no memory
// shared between connections).
type Observer interface {
	// Recorder is called once per connection, on its goroutine.
	Recorder() Recorder
}

// Recorder records one connection's commands. It is used only by that
// connection's goroutine.
type Recorder interface {
	// Command is called right after a command ran. name is the registered
	// command name ("bf.add", "config|get") or "unknown"; d is the time
	// spent dispatching and executing it (not reading the request, waiting
	// for fsync or writing the reply); failed reports an error reply. It
	// must be cheap and must not block.
	Command(name string, d time.Duration, failed bool)
	// Flush publishes what was recorded; called after every batch of
	// pipelined commands and when the connection closes.
	Flush()
}

// UnknownCommand is the name given to Observer for commands that are not
// in the table.
const UnknownCommand = "unknown"

// Server is a running (or ready to run) Redis-protocol server. It
// implements command.Server.
type Server struct {
	log      *slog.Logger
	addr     string
	pass     string // requirepass (CONFIG requirepass); passMu guards it
	passMu   sync.Mutex
	acl      *acl.Registry // users (acl.go)
	aclStats aclStats
	store    *keyspace.Store
	cfg      *config.Registry
	table    *command.Table
	persist  Persister
	version  string
	start    time.Time
	runID    string

	lim        limits
	maxClients atomic.Int64
	closing    atomic.Bool
	obs        Observer
	mem        memTracker
	guard      func(key []byte) bool // SetWriteGuard; nil = every key writable
	execSpec   *command.Spec         // EXEC's, which takes the command gate itself

	mu         sync.Mutex
	ln         net.Listener
	conns      map[*client]struct{}
	handshakes handshakeList // unfinished TLS handshakes (handshake.go)
	wg         sync.WaitGroup

	// Connection housekeeping (clients.go).
	clock         atomic.Int64  // coarse clock: ms since start, advanced by the reaper
	idleTimeout   atomic.Int64  // CONFIG timeout, seconds; 0 = none
	keepAlive     atomic.Int64  // CONFIG tcp-keepalive, seconds; 0 = off (netconfig.go)
	clientsMax    atomic.Uint64 // maxmemory-clients in bytes (0 = none or a percentage)
	clientsPct    atomic.Int64  // maxmemory-clients as a % of maxmemory (0 = bytes)
	evictCh       chan struct{} // wakes the reaper to evict clients
	released      atomic.Uint64 // bytes of large read buffers released since the last FreeOSMemory
	freeing       atomic.Bool   // a FreeOSMemory is running
	attacks       atomic.Uint64 // cross-protocol requests seen
	attackLogged  atomic.Int64  // time since start of the last cross-protocol warning
	stopReap      chan struct{}
	stopReapOnce  sync.Once
	hsTimeout     time.Duration
	maxHandshakes int

	nextID    atomic.Int64
	connected atomic.Int64
	stats     counters
	outPeak   peakSlots // INFO client_recent_max_output_buffer (reply.go)

	extraInfo []extraInfoSection // AddInfoSection (info.go)
	ops       opsState           // CLIENT, MONITOR, SLOWLOG, LATENCY, commandstats (ops.go)
}

type counters struct {
	conns, cmds, rejected, in, out, errors atomic.Uint64
	evicted, hsDropped                     atomic.Uint64
	reset                                  atomic.Pointer[resetPoint] // CONFIG RESETSTAT (resetstat.go)
	batches                                atomic.Uint64              // batches of pipelined commands (INFO total_reads_processed)
}

// Stats are the server's counters, for metrics: they only grow (CONFIG
// RESETSTAT resets what INFO shows, not these).
type Stats struct {
	ConnectedClients    int64
	TotalConnections    uint64
	TotalCommands       uint64
	RejectedConnections uint64
	NetInputBytes       uint64
	NetOutputBytes      uint64
	ErrorReplies        uint64
	// EvictedClients counts connections closed by maxmemory-clients;
	// DroppedHandshakes the TLS handshakes closed to make room for newer
	// ones (Options.MaxHandshakes).
	EvictedClients    uint64
	DroppedHandshakes uint64
	// Batches counts batches of pipelined commands (one read, one write).
	Batches uint64
	// ACLDenied* count ACL denials by reason: commands the user may not
	// run, keys outside its patterns, failed AUTH/HELLO AUTH.
	ACLDeniedCommands, ACLDeniedKeys, ACLDeniedAuth uint64
}

// New validates opts and returns a Server. It registers the server-owned
// CONFIG parameters (maxclients, proto-max-bulk-len,
// proto-max-multibulk-len, client-query-buffer-limit, maxmemory,
// maxmemory-clients, timeout, databases) in opts.Config unless they are
// already registered. A limit outside the range CONFIG SET accepts is an
// error.
func New(opts Options) (*Server, error) {
	if opts.Store == nil {
		return nil, errors.New("server: Options.Store is required")
	}
	if opts.Table == nil {
		return nil, errors.New("server: Options.Table is required")
	}
	s := &Server{
		log:     opts.Logger,
		addr:    opts.Addr,
		pass:    opts.RequirePass,
		store:   opts.Store,
		cfg:     opts.Config,
		table:   opts.Table,
		version: opts.Version,
		start:   time.Now(),
		conns:   map[*client]struct{}{},
		obs:     opts.Observer,
		guard:   opts.WriteGuard,

		execSpec: opts.Table.Lookup([]byte("exec")),

		evictCh:       make(chan struct{}, 1),
		stopReap:      make(chan struct{}),
		hsTimeout:     opts.HandshakeTimeout,
		maxHandshakes: opts.MaxHandshakes,
	}
	if s.hsTimeout <= 0 {
		s.hsTimeout = DefaultHandshakeTimeout
	}
	if s.maxHandshakes <= 0 {
		s.maxHandshakes = DefaultMaxHandshakes
	}
	if opts.Persist != nil {
		s.SetPersist(opts.Persist)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.addr == "" {
		s.addr = DefaultAddr
	}
	if s.cfg == nil {
		s.cfg = config.New()
	}
	if s.version == "" {
		s.version = DefaultVersion
	}
	var id [20]byte
	_, _ = rand.Read(id[:])
	s.runID = hex.EncodeToString(id[:])

	maxBulk := opts.MaxBulkLen
	if maxBulk <= 0 {
		maxBulk = DefaultMaxBulkLen
	}
	maxQuery := opts.MaxQueryBuffer
	if maxQuery <= 0 {
		maxQuery = DefaultMaxQueryBuffer
	}
	s.mem.init(s.store)
	s.acl = acl.New(s.table)
	s.initOps()
	if err := s.registerConfig(limitValues{
		maxClients: int64(orDefault(opts.MaxClients, DefaultMaxClients)),
		maxBulk:    maxBulk,
		maxArgs:    int64(orDefault(opts.MaxArgs, DefaultMaxArgs)),
		maxQuery:   maxQuery,
		maxMemory:  opts.MaxMemory,
	}); err != nil {
		return nil, err
	}
	if err := s.initACL(opts); err != nil { // after requirepass (acl.go)
		return nil, err
	}
	return s, nil
}

func orDefault(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

// limitValues are the start-up values of the server's limits.
type limitValues struct {
	maxClients, maxBulk, maxArgs, maxQuery int64
	maxMemory                              uint64
}

// Ranges of the limit parameters (CONFIG SET and Options).
const (
	minMaxBulkLen  = 1 << 20 // Redis: proto-max-bulk-len ≥ 1mb
	minQueryBuffer = 1 << 20 // Redis: client-query-buffer-limit ≥ 1mb
	maxMaxArgs     = 1<<31 - 1
	maxMaxClients  = 1<<32 - 1 // Redis: maxclients is an unsigned int
	maxTimeout     = 1<<31 - 1 // Redis: timeout is an int of seconds
	maxInt64       = 1<<63 - 1
)

// registerConfig registers the server's parameters with their start-up
// values as defaults. A parameter already registered (by an embedding
// program) is left alone, and so is the limit behind it.
func (s *Server) registerConfig(v limitValues) error {
	u2i := func(dst func(int64)) func(uint64) { return func(n uint64) { dst(int64(n)) } }
	params := []config.Param{
		config.IntParam("maxclients", strconv.FormatInt(v.maxClients, 10), 1, maxMaxClients, s.maxClients.Store),
		config.MemoryParam("proto-max-bulk-len", strconv.FormatInt(v.maxBulk, 10), minMaxBulkLen, maxInt64, u2i(s.lim.maxBulk.Store)),
		config.IntParam("proto-max-multibulk-len", strconv.FormatInt(v.maxArgs, 10), 1, maxMaxArgs, s.lim.maxArgs.Store),
		config.MemoryParam("client-query-buffer-limit", strconv.FormatInt(v.maxQuery, 10), minQueryBuffer, maxInt64, u2i(s.lim.maxQuery.Store)),
		config.MemoryParam("maxmemory", strconv.FormatUint(v.maxMemory, 10), 0, maxInt64, s.mem.setLimit),
		policyParam(), // memory.go
		s.clientsParam(),
		config.IntParam("timeout", "0", 0, maxTimeout, s.idleTimeout.Store),
		s.requirePassParam(s.pass),
		config.IntParam("acllog-max-len", strconv.Itoa(acl.DefaultLogLen), 0, maxInt64, func(n int64) { s.acl.Log.SetMax(int(min(n, 1<<30))) }),
		{Name: "databases", Default: "1", Immutable: true, Set: func(v string) error {
			if v != "1" {
				return errors.New("probly has one database: databases can only be 1")
			}
			return nil
		}},
	}
	params = append(params, s.opsParams()...) // slowlog-*, latency-monitor-threshold (slowlog.go)
	params = append(params, s.netParams()...) // tcp-keepalive, cluster-enabled, notify-keyspace-events (netconfig.go)
	for _, p := range params {
		if _, exists := s.cfg.Get(p.Name); exists {
			continue
		}
		if err := p.Set(p.Default); err != nil {
			return fmt.Errorf("server: %s %s: %v", p.Name, p.Default, err)
		}
		s.cfg.Register(p)
	}
	return nil
}

// ListenAndServe listens on Options.Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Serve accepts connections on ln until Shutdown (then it returns
// ErrServerClosed) or a permanent accept error. It may be called once.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	if s.ln != nil {
		s.mu.Unlock()
		return errors.New("server: Serve called twice")
	}
	s.ln = ln
	s.clock.Store(int64(time.Since(s.start) / time.Millisecond))
	go s.reap(s.stopReap)
	s.mu.Unlock()
	s.log.Info("listening", "addr", ln.Addr().String())

	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return ErrServerClosed
			}
			var te interface{ Temporary() bool }
			if errors.As(err, &te) && te.Temporary() {
				// EMFILE and friends: back off instead of spinning.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", err, "delay", delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		s.accept(nc)
	}
}

// SetPersist attaches the persistence engine (when it is opened after the
// server was created). It must be called before Serve.
func (s *Server) SetPersist(p Persister) {
	s.persist = p
}

// SetWriteGuard makes the keys owns reports true for read-only to clients
// (the keys `serve --follow` keeps in step with a change stream, which a
// client write would make diverge). It must be called before Serve; nil
// (the default) makes every key writable.
//
// A write command (command.FlagWrite) that writes an owned key is then
// refused with Redis's replica error, "READONLY You can't write against a
// read only replica.", and changes nothing; reads of owned keys and writes
// of other keys work as before. The keys a command writes are those of
// command.Spec.WriteRange: every key it names unless its WriteKeys says
// otherwise (PFMERGE writes only its destination, so merging an owned key
// into another key works). A write command that names no key (FLUSHALL,
// FLUSHDB) may write every key, so it is refused whenever a guard is set:
// setting one says that some keys are owned.
//
// The check is in dispatch, the one path of client commands, after the
// arity, NOAUTH and OOM checks (Redis's order). Commands run through the
// table directly (AOF replay, the follower's own writes) are not checked.
// Inside MULTI the check is made when a command is queued: a refused one
// makes EXEC answer EXECABORT, so a transaction is refused whole (tx.go).
//
// owns is called on the connection goroutines, concurrently, once per
// written key of every write command: it must be safe for concurrent use,
// cheap and allocation-free, and must not block.
func (s *Server) SetWriteGuard(owns func(key []byte) bool) { s.guard = owns }

// Serving reports whether Serve is accepting connections: it has been
// called and Shutdown has not (readiness).
func (s *Server) Serving() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ln != nil && !s.closing.Load()
}

// Addr returns the listening address, or nil before Serve.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// accept serves a new connection: a TLS one after its handshake
// (handshake.go), any other at once.
func (s *Server) accept(nc net.Conn) {
	setKeepAlive(nc, s.keepAlive.Load())
	if hs, ok := nc.(handshaker); ok {
		s.startHandshake(hs)
		return
	}
	if c := s.admit(nc); c != nil {
		go c.serve()
	}
}

// admit registers a connection as a client, or refuses it (maxclients,
// Shutdown) and returns nil.
func (s *Server) admit(nc net.Conn) *client {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		nc.Close()
		return nil
	}
	if s.connected.Load() >= s.maxClients.Load() {
		s.mu.Unlock()
		s.stats.rejected.Add(1)
		go func() {
			// A deadline for both directions: over TLS the write runs the
			// handshake first.
			_ = nc.SetDeadline(time.Now().Add(time.Second))
			_, _ = nc.Write([]byte("-" + maxClientsMsg + "\r\n"))
			nc.Close()
		}()
		return nil
	}
	c := newClient(s, nc)
	s.conns[c] = struct{}{}
	s.connected.Add(1)
	s.stats.conns.Add(1)
	s.wg.Add(1)
	s.mu.Unlock()
	return c
}

func (s *Server) remove(c *client) {
	s.ops.mon.drop(c)
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.connected.Add(-1)
	s.wg.Done()
}

// Shutdown stops accepting connections, lets every connection finish the
// batch of commands it is executing (and flush its replies), then closes
// them. If ctx ends first, the remaining connections are closed forcibly
// and ctx.Err() is returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing.Store(true)
	s.stopReapOnce.Do(func() { close(s.stopReap) })
	if s.ln != nil {
		s.ln.Close()
	}
	s.closeHandshakes()
	for c := range s.conns {
		// Wake connections blocked reading; one that is executing a batch
		// finishes it and then sees closing.
		c.wake()
	}
	s.mu.Unlock()

	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.conns {
			c.nc.Close()
		}
		s.mu.Unlock()
		return ctx.Err()
	}
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	return Stats{
		ConnectedClients:    s.connected.Load(),
		TotalConnections:    s.stats.conns.Load(),
		TotalCommands:       s.stats.cmds.Load(),
		RejectedConnections: s.stats.rejected.Load(),
		NetInputBytes:       s.stats.in.Load(),
		NetOutputBytes:      s.stats.out.Load(),
		ErrorReplies:        s.stats.errors.Load(),
		EvictedClients:      s.stats.evicted.Load(),
		DroppedHandshakes:   s.stats.hsDropped.Load(),
		Batches:             s.stats.batches.Load(),
		ACLDeniedCommands:   s.aclStats.command.Load(),
		ACLDeniedKeys:       s.aclStats.key.Load(),
		ACLDeniedAuth:       s.aclStats.auth.Load(),
	}
}

// --- command.Server ---

var _ command.Server = (*Server)(nil)

// errSaveRunning is Redis's reply text for SAVE/BGSAVE during a snapshot;
// the server sends an error's text as the reply, so it keeps Redis's
// capital letter.
var errSaveRunning = command.ErrSnapshotRunning

// Save writes a snapshot synchronously.
func (s *Server) Save() error { return s.save(false) }

// save is Save; shutdown marks SHUTDOWN's snapshot (ShutdownSaver).
func (s *Server) save(shutdown bool) error {
	if s.persist == nil {
		return errors.New("persistence is disabled")
	}
	if s.persist.InProgress() {
		return errSaveRunning
	}
	if ss, ok := s.persist.(ShutdownSaver); ok && shutdown {
		return s.busy(ss.ShutdownSnapshot(s.store))
	}
	return s.busy(s.persist.Snapshot(s.store))
}

// busy turns the failure of a snapshot that lost the race with another
// one (an automatic snapshot that started after the InProgress check) into
// Redis's reply for a running background save.
func (s *Server) busy(err error) error {
	if err != nil && s.persist.InProgress() {
		return errSaveRunning
	}
	return err
}

// BGSave starts a background snapshot.
func (s *Server) BGSave() error {
	if s.persist == nil {
		return errors.New("persistence is disabled")
	}
	if s.persist.InProgress() {
		return errSaveRunning
	}
	return s.busy(s.persist.BGSnapshot(s.store))
}

// LastSave returns the unix time of the last successful snapshot (the
// start time if there was none).
func (s *Server) LastSave() int64 {
	if s.persist != nil {
		if t := s.persist.LastSave(); !t.IsZero() {
			return t.Unix()
		}
	}
	return s.start.Unix()
}

// Table returns the command table.
func (s *Server) Table() *command.Table { return s.table }

// Flush removes every key and logs FLUSHALL at that cut.
func (s *Server) Flush() (uint64, error) {
	return s.store.FlushLog([]byte("FLUSHALL"))
}

// --- connections ---

type client struct {
	s   *Server
	rec Recorder // nil without an Observer
	// user is the ACL user of conn.User (userName), cached (acl.go).
	user     *acl.User
	userName string
	clock    time.Duration // monotonic time (since s.start) of the last command's end
	nc       net.Conn
	in       resp.Parser // requests (read.go); arguments alias its buffer
	rd       rawReader   // reads in through the descriptor (read.go)
	wr       resp.Writer // replies of the batch (reply.go)
	out      outState    // what CLIENT LIST shows of wr (reply.go)
	reply    resp.Reply
	conn     command.Conn
	ctx      command.Ctx
	res      reservation // the running command's maxmemory reservations
	policy   command.Policy
	// abort is set by a cross-protocol request: close without replying.
	abort bool
	// wrote is set when a write command was answered without an error
	// (exec), or ran inside an EXEC, since the last settle, whether or
	// not it logged (settle).
	wrote bool
	// gated is set while the running command holds the command gate
	// shared (Admit takes it, dispatch releases it).
	gated bool
	tx    txState   // MULTI/EXEC/WATCH (tx.go)
	ops   clientOps // what CLIENT LIST shows of it, MONITOR, CLIENT REPLY (ops.go)

	// Housekeeping (clients.go). bufCap is in's buffer capacity at the
	// last read (this goroutine only); held is what the connection counts
	// in the input-buffer total; last is the coarse clock at its last
	// interaction; poked (under pokeMu) marks the reaper's read deadline.
	bufCap  int
	bufHeld int64 // the input-buffer part of held (setHeld)
	held    atomic.Int64
	last    atomic.Int64
	evicted atomic.Bool
	pokeMu  sync.Mutex
	poked   bool
	// laddr is CLIENT LIST's laddr; unix marks a Unix-socket client
	// (connAddrs, clientcmd.go).
	laddr string
	unix  bool
}

func newClient(s *Server, nc net.Conn) *client {
	c := &client{s: s, nc: nc}
	c.conn = command.Conn{
		ID:     s.nextID.Add(1),
		Proto:  2,
		Authed: s.authedAtStart(),
	}
	c.conn.Addr, c.laddr, c.unix = connAddrs(nc)
	c.conn.Login = c.login
	c.conn.Tx = c
	c.ops.created = time.Now()
	c.ops.multi.Store(-1)
	c.ops.proto.Store(2)
	c.ops.multiN, c.ops.protoN = -1, 2
	c.in.Scrub = ScrubInput
	c.rd.init(nc, &c.in)
	c.last.Store(s.now())
	c.wr.SetOutput(countingWriter{w: nc, out: &s.stats.out})
	c.reply = resp.Reply{W: &c.wr, Proto: 2}
	if s.obs != nil {
		c.rec = s.obs.Recorder()
	}
	c.res.m = &s.mem
	c.ctx = command.Ctx{R: &c.reply, Store: s.store, Config: s.cfg, Conn: &c.conn, Server: s,
		ReserveMem: c.res.reserve}
	c.policy = command.Policy{Admit: c, Unknown: c.unknown} // Queue: set by MULTI (tx.go)
	return c
}

func (c *client) serve() {
	defer c.s.remove(c)
	defer c.endTx() // unregisters the watched keys
	defer c.closeBuffers()
	defer c.nc.Close()
	if c.rec != nil {
		defer c.rec.Flush()
	}
	defer c.flushOps()
	defer func() {
		c.res.releaseAll() // a handler that panicked did not release
		if r := recover(); r != nil {
			c.s.log.Error("panic while serving a connection; closing it",
				"conn_id", c.conn.ID, "panic", describePanic(r), "stack", string(debug.Stack()))
		}
	}()
	for c.batch() {
	}
}

// batch reads once from the connection, runs every complete command the
// read buffer then holds, waits for their writes' durability and writes
// all their replies at once. It reports false when the connection is to
// be closed.
func (c *client) batch() bool {
	if c.read() != nil {
		return false // EOF, reset, deadline (Shutdown, idle timeout)
	}
	c.in.Limits = c.s.lim.load()
	var maxSeq uint64
	n := 0
	errs := c.reply.Errors
	c.clock = time.Since(c.s.start) // every command is timed (client.finished)
	total := 0
	flushed := c.reply.BulkBytes
	var perr error
	for {
		c.in.Limits.Unauth = !c.conn.Authed // AUTH lifts them for the next command
		args, err := c.in.Next()
		if args == nil {
			perr = err
			break
		}
		// A pipeline of large replies (GET of big strings) is sent in
		// parts instead of being held whole in memory.
		if c.reply.BulkBytes-flushed > replyFlushBytes {
			if !c.settle(n, maxSeq) {
				return false
			}
			n, maxSeq, flushed = 0, 0, c.reply.BulkBytes
		}
		c.exec(args)
		n++
		total++
		maxSeq = max(maxSeq, c.ctx.Seq)
		if c.conn.Close {
			break // QUIT: the rest of the pipeline is discarded
		}
	}
	c.s.stats.cmds.Add(uint64(total))
	c.s.stats.batches.Add(1)
	c.s.stats.errors.Add(c.reply.Errors - errs)
	c.flushOps()
	if c.rec != nil {
		c.rec.Flush()
	}
	if c.abort {
		return false // an HTTP request: no reply, close (crossProtocol)
	}
	// A large read buffer is released before the replies go out, so a
	// client that got its reply sees it gone from used_memory.
	if c.bufCap > countedBuf && perr == nil {
		c.shrinkBuffer()
	}
	if !c.settle(n, maxSeq) || c.conn.Close || c.s.closing.Load() {
		return false
	}
	if perr != nil {
		c.readError(perr)
		return false
	}
	c.touch()
	return true
}

// replyFlushBytes is how many bulk bytes of replies a pipelined batch may
// buffer before they are sent (after the durability wait for the commands
// answered so far).
const replyFlushBytes = 4 << 20

// settle makes the last n commands' writes durable as the appendfsync
// policy promises (up to log sequence maxSeq, the highest they reported)
// and then flushes their replies. It reports false when the connection
// should close.
//
// The persistence engine buffers AOF records (as Redis's AOF buffer) and
// writes them in Wait, so this is where a batch's records reach the file:
// one write(2) for the batch, shared with every other connection's
// records buffered meanwhile, before any reply of the batch is sent.
//
// It waits for more than the batch's own records: for every record the
// log had received when the batch's commands were done (Persister.LastSeq,
// one atomic load), as Redis sends no reply before the AOF write of every
// command run before it. A reply can rest on another connection's record
// that is still buffered: BF.ADD answering 0 because another connection
// just added the item, GET or BF.EXISTS seeing it, DEL answering 0 for a
// key just deleted. Sent before that record is written, a kill -9 would
// take back what the reply said. When the log has nothing buffered, the
// wait returns at once.
func (c *client) settle(n int, maxSeq uint64) bool {
	if p := c.s.persist; p != nil && n > 0 {
		maxSeq = max(maxSeq, p.LastSeq())
		if maxSeq > 0 {
			if n > 1 && p.Written() < maxSeq {
				// A pipelined batch lets the other runnable connections
				// log their batches first, so one write(2) of the AOF
				// covers them all (read.go, yieldPipelined).
				runtime.Gosched()
			}
			err := p.Wait(maxSeq)
			if err != nil && !c.wrote {
				// Only reads, waiting for another connection's record
				// that could not be written (its client got the error):
				// they are answered, as Redis answers reads after a
				// failed AOF write. A batch that ran a write command
				// fails even if it logged nothing itself: BF.ADD
				// answering 0 or SET NX nil would acknowledge a state
				// that a kill -9 before the next snapshot takes back.
				err = nil
			}
			if err != nil {
				// The batch's writes are not durable as promised (a write or
				// an fsync failed): no reply of this batch may claim success.
				// Drop the buffered replies and answer every command with an
				// error; the log refuses further writes until a snapshot (a
				// failed write) or a restart (a failed fsync).
				c.s.log.Error("waiting for durability failed; failing the batch",
					"conn_id", c.conn.ID, "seq", maxSeq, "err", err)
				msg := durabilityError(err)
				c.wr.Reset()
				for range n {
					c.wr.WriteError(msg)
				}
				c.s.stats.errors.Add(uint64(n))
			}
		}
	}
	c.wrote = false
	c.rd.pipelined = n > 1
	return c.flushReplies()
}

// durabilityErr answers every command of a pipeline whose writes could
// not be made durable (fsync failure). Redis exits in this case with
// appendfsync always; probly keeps serving reads of later batches.
const durabilityErr = "MISCONF Errors writing to the AOF file: fsync failed; write not acknowledged"

// durabilityError is the reply for a failed durability wait: it names the
// system error (Redis: "MISCONF Errors writing to the AOF file: No space
// left on device") when there is one, and never a file name or key.
func durabilityError(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return "MISCONF Errors writing to the AOF file: " + errno.Error() + "; write not acknowledged"
	}
	return durabilityErr
}

// readError answers a protocol error as Redis does (the reply, then the
// connection is closed by the caller).
func (c *client) readError(err error) {
	c.s.log.Debug("protocol error; closing connection", "conn_id", c.conn.ID, "err", redactProtoError(err.Error()))
	c.wr.WriteError("ERR " + err.Error())
	_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	_ = c.wr.Flush()
}

// exec runs one command and reports it to the Recorder. Commands of a
// batch are timed back to back from one monotonic clock reading each
// (time.Since on the server's start time reads only the monotonic
// clock): a command's duration ends where the next one's starts.
func (c *client) exec(args [][]byte) {
	c.ctx.Seq = 0
	// The reply's start: finished drops the reply from there (CLIENT
	// REPLY OFF|SKIP, and the CLIENT REPLY command itself) or reads
	// EXEC's own reply there.
	errs, mark := c.reply.Errors, c.wr.Len()
	name, o := c.dispatch(args)
	now := time.Since(c.s.start)
	failed := c.reply.Errors != errs
	if o.Ran && !failed && o.Spec.Writes() {
		c.wrote = true // a write answered, logged or not (settle)
	}
	c.finished(name, &o, args, now-c.clock, failed, mark)
	c.clock = now
}

// dispatch runs one command through command.Table.Run with the
// server's admission checks (admit) and returns its registered name (or
// UnknownCommand) and outcome.
func (c *client) dispatch(args [][]byte) (string, command.Outcome) {
	if isExec(args[0]) && (len(args) != 1 || !c.conn.Authed) {
		c.refuseExec(len(args))
		return "exec", command.Outcome{Spec: c.s.execSpec}
	}
	c.ctx.Args = args
	o := c.run()
	c.ctx.Args = nil
	if c.tx.multi && !o.Ran && !o.Queued {
		c.tx.failed = true // refused while queuing: EXEC aborts
	}
	if !o.Ran {
		if o.Spec == nil {
			return UnknownCommand, o
		}
		return o.Spec.Name, o
	}
	c.res.releaseAll() // the growth is in Store.Used now
	if o.Silent {
		c.s.log.Error("command wrote no reply", "command", o.Spec.Name, "conn_id", c.conn.ID)
	}
	c.reply.Proto = c.conn.Proto
	return o.Spec.Name, o
}

// unknown is the server's command.Policy.Unknown: an unknown name that is
// the first word of an HTTP request line ("POST", "Host:") ends the
// connection without a reply (crossProtocol).
func (c *client) unknown(ctx *command.Ctx) bool {
	if !isHTTP(ctx.Args[0]) {
		return false
	}
	c.crossProtocol()
	return true
}

// run runs c.ctx.Args through the table and releases the command gate if
// Admit took it, also when the handler panics.
func (c *client) run() command.Outcome {
	defer c.ungate()
	return c.s.table.Run(&c.ctx, &c.policy)
}

// ungate releases the command gate if the running command holds it.
func (c *client) ungate() {
	if c.gated {
		c.gated = false
		c.s.store.SharedDoneAt(c.s.store.SharedSlot(uint64(c.conn.ID)))
	}
}

// Admit is the server's command.Policy.Admit: AUTH, no_multi inside
// MULTI, maxmemory and the write guard, in that order, between the arity
// check and the handler. A command it admits takes the command gate
// shared (dispatch releases it), except EXEC, which takes it exclusively
// itself, and blocking commands, which touch no key and must not hold up
// a transaction while they wait.
func (c *client) Admit(ctx *command.Ctx, spec *command.Spec) string {
	c.s.ops.pause.wait(spec.Writes(), c.s.stopReap) // CLIENT PAUSE (clientcmd.go)
	if msg := c.admit(spec, ctx.Args); msg != "" {
		return msg
	}
	if spec.Flags&command.FlagBlocking == 0 && spec != c.s.execSpec {
		c.s.store.SharedAt(c.s.store.SharedSlot(uint64(c.conn.ID)))
		c.gated = true
	}
	return ""
}

func (c *client) admit(spec *command.Spec, args [][]byte) string {
	switch {
	case !c.conn.Authed && spec.Flags&command.FlagNoAuth == 0:
		return noAuthMsg
	case c.tx.multi && spec.Flags&command.FlagNoMulti != 0:
		return errNoMulti
	}
	if msg := c.aclDenied(spec, args); msg != "" {
		return msg
	}
	switch {
	// Inside MULTI every command but EXEC, DISCARD, QUIT and RESET is
	// refused over maxmemory (Redis: the queue itself takes memory).
	case (spec.Flags&command.FlagDenyOOM != 0 || c.tx.multi && queuesUnderOOM(spec)) && c.s.mem.over():
		return oomMsg
	// The write guard (SetWriteGuard): one branch when none is set.
	case c.s.guard != nil && spec.Writes() && writesGuarded(c.s.guard, spec, args):
		return readOnlyMsg
	}
	return ""
}

// writesGuarded reports whether spec called with args writes a key owns
// reports true for, or may write every key (it names none).
func writesGuarded(owns func([]byte) bool, spec *command.Spec, args [][]byte) bool {
	first, last, step := spec.WriteRange(len(args))
	if first == 0 {
		return true
	}
	for i := first; i <= last; i += step {
		if owns(args[i]) {
			return true
		}
	}
	return false
}

// redactProtoError removes the client byte that some protocol errors
// quote ("expected '$', got 'x'") so the log holds no request content.
func redactProtoError(msg string) string {
	if i := strings.Index(msg, ", got "); i >= 0 {
		return msg[:i]
	}
	return msg
}

// describePanic renders a recovered value without user data: runtime
// errors carry only indexes and types; anything else is reported by type.
func describePanic(r any) string {
	if e, ok := r.(runtime.Error); ok {
		return e.Error()
	}
	return fmt.Sprintf("%T", r)
}
