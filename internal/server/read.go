package server

import (
	"io"
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
		n, err := c.in.Fill(c.nc)
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
