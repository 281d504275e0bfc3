package server

import (
	"io"
	"runtime"
	"sync/atomic"

	"github.com/probly/probly/internal/resp"
)

// Reading requests: each connection owns a resp.Parser (internal/resp),
// which frames, bounds and splits requests in its own read buffer. The
// serve loop reads once (one read(2)), runs every complete command the
// buffer then holds, and writes all their replies in one write(2).
//
// Arguments alias the parser's buffer: they are valid until the command's
// handler returns (command.Ctx.Args). What outlives the handler copies
// them: the transaction queue (tx.go), the key space (map keys are Go
// strings, values are copied by their constructors), the AOF (records are
// encoded into its buffer during Append), WATCH (keys as strings).
// The server's and the app's tests run with ScrubInput set, so anything
// that kept arguments would read overwritten bytes.

// ScrubInput, for tests only, makes every connection's parser overwrite
// consumed bytes before reusing its buffer (resp.Parser.Scrub). Set it
// before connections are accepted; it costs a pass over every byte read.
var ScrubInput = false

// limits are read atomically once per batch, so CONFIG SET takes effect
// on live connections at their next read.
type limits struct {
	maxBulk  atomic.Int64
	maxArgs  atomic.Int64
	maxQuery atomic.Int64
}

// load returns the current limits for a parser.
func (l *limits) load() resp.Limits {
	return resp.Limits{MaxBulk: l.maxBulk.Load(), MaxArgs: l.maxArgs.Load(), MaxQuery: l.maxQuery.Load()}
}

// read reads once from the connection into the parser's buffer. A read
// that fails because of the reaper's idle check on a client that is not
// idle is retried (retryRead).
func (c *client) read() error {
	c.observeBuffer()
	for {
		n, err := c.fill()
		if n > 0 {
			c.s.stats.in.Add(uint64(n))
			c.touch() // bytes arriving are an interaction
			c.observeBuffer()
			return nil // an error with data comes back on the next read
		}
		if err == nil {
			continue
		}
		if c.retryRead(err) {
			continue
		}
		return err
	}
}

// fill reads once into the parser's buffer. A connection with nothing
// buffered waits for its socket without holding a read buffer: it gives
// the buffer back to the parser's pool (resp.Parser.Release) and waits on
// its descriptor (syscall.RawConn.Read), taking a buffer again only when
// the socket has bytes (rawReader.attempt). So an idle connection holds no
// read buffer, and a busy one takes and returns one per batch (a per-CPU
// pool, no allocation). The system calls are those of net.Conn's Read:
// read(2) at once, and on EAGAIN a wait for the poller and read(2) again.
// A connection without a descriptor (TLS, tests) reads through Read with
// its buffer held.
func (c *client) fill() (int, error) {
	r := &c.rd
	if r.raw == nil || c.in.Partial() {
		return c.in.Fill(c.nc)
	}
	c.in.Release()
	c.observeBuffer()
	if r.pipelined {
		runtime.Gosched() // yieldPipelined
	}
	r.n, r.err = 0, nil
	if err := r.raw.Read(r.try); err != nil {
		return 0, err
	}
	return r.n, r.err
}

// yieldPipelined: after a batch of pipelined commands a connection
// yields (runtime.Gosched) twice: before its durability wait (settle), so
// that the other runnable connections append their records and one
// write(2) of the AOF covers all of them, and before it reads again
// (fill), so that by then its client has usually sent the next batch and
// the read finds bytes instead of failing with EAGAIN and parking the
// goroutine (a read, a park and a poller wake-up saved). A lone client
// pays one trip through the scheduler per batch. Measured at -P 16 with
// 50 clients and the server on one core (docs/BENCHMARKS.md, issue 18):
// 4–14 % less server CPU per command against the same binary without the
// yields in two A/B runs, within the noise against the base binary in a
// third. Batches of one command (-P 1) do not yield: there the
// measurements were mixed.

// Buffer statistics for CLIENT LIST (valid on the connection's own
// goroutine, e.g. in a command handler of that connection).

// queryBuf returns the bytes buffered and not yet run (qbuf) and the room
// left in the read buffer (qbuf-free).
func (c *client) queryBuf() (used, free int) { return c.in.Buffered(), c.in.Free() }

// argvMem returns the bytes of the running command's arguments (argv-mem).
func (c *client) argvMem() int { return c.in.ArgBytes() }

// countingWriter counts bytes written to the connection.
type countingWriter struct {
	w   io.Writer
	out *atomic.Uint64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.out.Add(uint64(n))
	return n, err
}
