package server

import (
	"bytes"
	"io"
	"sync/atomic"
)

// protoError is a client protocol violation. Its text is sent to the client
// as "-ERR <text>" before the connection is closed, as Redis does.
type protoError string

func (e protoError) Error() string { return "Protocol error: " + string(e) }

const (
	// maxHeaderLen bounds a "*<n>\r" or "$<n>\r" header line. Redis allows
	// 64 KiB; no real client sends more than ~21 bytes.
	maxHeaderLen = 64
	// maxInlineLen is Redis's PROTO_INLINE_MAX_SIZE.
	maxInlineLen = 64 * 1024
)

// Guard states.
const (
	gStart   = iota // at the start of a command
	gInline         // inside an inline (telnet) command line
	gMulti          // reading the "*<count>" header
	gDollar         // expecting '$' of the next bulk
	gBulkHdr        // reading the "$<len>" header
	gBody           // skipping a bulk payload
	gCR             // expecting '\r' after a payload
	gLF             // expecting '\n' after a payload
)

// guard sits between a connection and redcon's Reader. It follows the RESP
// request framing incrementally (headers are parsed byte by byte, payloads
// are skipped by count, so it costs O(headers) per read) and enforces the
// limits before redcon sees the bytes: redcon's parser computes i+size+2
// on the bulk length and panics on values near MaxInt64, and it buffers
// unbounded inline lines and bulks.
//
// On a violation Read first returns the bytes before the offending one (so
// complete commands that preceded it still run; the offending header never
// reaches redcon complete, so redcon only waits for more) and the protoError
// on the next call. See Read for how it batches bytes.
//
// While the connection has not authenticated (authed points to false),
// Redis's unauthenticated limits apply as well (at most 10 arguments per
// command, 16 KiB per argument) and Read hands redcon one command at a
// time, keeping what follows it in pend: redcon parses every complete
// command it has been given, so bytes after an AUTH must not be scanned
// (or limited) before that AUTH has run.
//
// The framing it accepts is a subset of what redcon accepts (same header
// grammar, strconv.Atoi numbers), so both always agree on command
// boundaries. Differences from Redis: "*0" and "*-1" headers are protocol
// errors here (Redis skips them).
type guard struct {
	r   io.Reader
	lim *limits
	in  *atomic.Uint64 // total input bytes counter
	// authed, if set, is the connection's authentication state (read on
	// the connection's goroutine only); nil = authenticated.
	authed *bool
	// c, if set, is the connection: it is told before every read (its
	// read buffer's size, for input-buffer accounting) and about read
	// timeouts (the idle timeout).
	c *client

	err    error
	pend   []byte // bytes read but not yet scanned or delivered
	state  uint8
	hdr    [maxHeaderLen]byte
	hdrLen int
	inline int   // bytes of the current inline line
	args   int64 // bulks left in the current multibulk
	body   int64 // payload bytes left in the current bulk
	query  int64 // bytes declared so far by the current multibulk
}

// Redis's limits for a client that has not authenticated (networking.c).
const (
	unauthMaxArgs = 10
	unauthMaxBulk = 16 * 1024
)

// limits are read atomically on every header so CONFIG SET takes effect on
// live connections.
type limits struct {
	maxBulk  atomic.Int64
	maxArgs  atomic.Int64
	maxQuery atomic.Int64
}

// Read fills p until it ends on a command boundary or is full. redcon's
// parser restarts from the beginning of an incomplete command on every
// read, so handing it a large command in network-sized pieces would cost
// O(args²) (a 1M-argument command in 1460-byte segments took minutes);
// returning only at boundaries or with a full buffer (which redcon then
// doubles) bounds the restarts per command to O(log size). Blocking for the
// rest of a started command is harmless: redcon could not use a partial
// command anyway. Before authentication it returns after the first
// complete command (see guard).
//
// A read error that arrives with data is held back until the data has been
// consumed (redcon drops the bytes of a read that also returns an error).
func (g *guard) Read(p []byte) (int, error) {
	if g.c != nil {
		g.c.observeBuffer() // redcon grows its buffer just before reading
	}
	one := g.authed != nil && !*g.authed
	total := 0
	for total < len(p) {
		var n int
		var err error
		fromPend := len(g.pend) > 0
		switch {
		case fromPend:
			n = copy(p[total:], g.pend)
		case g.err != nil:
			err = g.err
		default:
			n, err = g.r.Read(p[total:])
			if n > 0 {
				g.in.Add(uint64(n))
			} else if err != nil && g.c != nil && g.c.retryRead(err) {
				continue // an idle-timeout check found the client active
			}
		}
		if n > 0 {
			b := p[total : total+n]
			k, perr := g.scan(b, one)
			switch {
			case perr != nil:
				g.pend, err = nil, perr
			case fromPend:
				g.pend = g.pend[k:]
			case k < n:
				// One command delivered before authentication: keep the
				// rest for the next Read, which sees the new state.
				g.pend = append([]byte(nil), b[k:]...)
			}
			total += k
			if g.c != nil && g.state != gStart {
				g.c.touch() // a request still arriving is an interaction
			}
		}
		if err != nil {
			if total == 0 {
				return 0, err
			}
			g.err = err
			break
		}
		if g.state == gStart {
			break // a boundary (before AUTH: the one command delivered)
		}
	}
	return total, nil
}

// scan advances the framing state over b. On a violation it returns the
// number of bytes before the offending byte and the error.
//
// With one set it stops after the first command that ends in b and
// returns its end.
func (g *guard) scan(b []byte, one bool) (int, error) {
	i := 0
	for i < len(b) {
		switch g.state {
		case gStart:
			if b[i] != '*' {
				g.state, g.inline = gInline, 0
				continue // the byte belongs to the inline line
			}
			g.state, g.hdrLen, g.query = gMulti, 0, 0
			i++
		case gInline:
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				g.inline += len(b) - i
				if g.inline > maxInlineLen {
					return i, protoError("too big inline request")
				}
				i = len(b)
				continue
			}
			if g.inline+j > maxInlineLen {
				return i, protoError("too big inline request")
			}
			i += j + 1
			g.state = gStart
			if one {
				return i, nil
			}
		case gMulti, gBulkHdr:
			c := b[i]
			if c != '\n' {
				if g.hdrLen == len(g.hdr) {
					if g.state == gMulti {
						return i, protoError("too big mbulk count string")
					}
					return i, protoError("too big bulk count string")
				}
				g.hdr[g.hdrLen] = c
				g.hdrLen++
				i++
				continue
			}
			n, ok := g.header()
			if g.state == gMulti {
				if !ok || n <= 0 || n > g.lim.maxArgs.Load() {
					return i, protoError("invalid multibulk length")
				}
				if n > unauthMaxArgs && g.authed != nil && !*g.authed {
					return i, protoError("unauthenticated multibulk length")
				}
				g.args, g.state = n, gDollar
			} else {
				if !ok || n < 0 || n > g.lim.maxBulk.Load() {
					return i, protoError("invalid bulk length")
				}
				if n > unauthMaxBulk && g.authed != nil && !*g.authed {
					return i, protoError("unauthenticated bulk length")
				}
				g.query += n
				if g.query > g.lim.maxQuery.Load() {
					return i, protoError("query buffer limit exceeded")
				}
				g.body, g.state = n, gBody
			}
			i++
		case gDollar:
			if b[i] != '$' {
				return i, protoError("expected '$', got '" + string(b[i]) + "'")
			}
			g.state, g.hdrLen = gBulkHdr, 0
			i++
		case gBody:
			skip := int64(len(b) - i)
			if skip > g.body {
				skip = g.body
			}
			i += int(skip)
			g.body -= skip
			if g.body == 0 {
				g.state = gCR
			}
		case gCR:
			if b[i] != '\r' {
				return i, protoError("invalid bulk length")
			}
			g.state = gLF
			i++
		case gLF:
			if b[i] != '\n' {
				return i, protoError("invalid bulk length")
			}
			g.args--
			i++
			if g.args == 0 {
				g.state = gStart
				if one {
					return i, nil
				}
			} else {
				g.state = gDollar
			}
		}
	}
	return len(b), nil
}

// header parses the collected header line, which must end in '\r'. It
// accepts what strconv.Atoi (redcon's parser) accepts: an optional sign and
// at least one decimal digit; values beyond ±2^62 are rejected (any limit
// is far below).
func (g *guard) header() (int64, bool) {
	if g.hdrLen < 2 || g.hdr[g.hdrLen-1] != '\r' {
		return 0, false
	}
	d := g.hdr[:g.hdrLen-1]
	neg := false
	if d[0] == '+' || d[0] == '-' {
		neg = d[0] == '-'
		d = d[1:]
	}
	if len(d) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
		if n > 1<<62 {
			return 0, false
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

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
