package resp

import (
	"bytes"
	"io"
	"sync"

	"github.com/probly/probly/internal/command/argparse"
)

// Request parsing.
//
// Parser reads RESP requests as Redis 7's networking.c does (multibulk
// "*<n>\r\n$<len>\r\n<bytes>\r\n…" and inline "word word\r\n" commands),
// with Redis's protocol error texts, and bounded:
//
//   - Each byte is examined once: a command split across reads resumes
//     where the previous read stopped (header and line searches keep their
//     position), so a command costs O(its size) whatever the read sizes.
//   - Lengths and counts are checked against Limits as soon as their
//     header is complete, before anything is allocated for them; the read
//     buffer grows only with bytes actually received (doubling), so a
//     client declaring a 512 MiB bulk and sending 10 bytes holds 4 KiB.
//   - Arguments alias the read buffer: Next allocates nothing once the
//     buffer and the argument vector have grown to the connection's needs.
//
// Lifetime of arguments: the slices Next returns stay valid until the next
// call of Fill, Shrink or Reset (and only until the handler returns under
// the server's contract, command.Ctx.Args). Anything kept longer (a
// transaction queue, a map key, a log record buffered for later) must be
// copied. Each argument's capacity ends at its length, so an append to one
// never overwrites the next.
//
// Compatibility with Redis 7 (checked by a differential test against
// redis-server, internal/resp/redis_test.go):
//
//   - "*0" and negative counts ("*-5") are skipped without a reply.
//   - Numbers follow Redis's string2ll: no sign but '-', no leading zeros,
//     at most 20 characters; "$+4", "$04", "$-0", "*" are invalid.
//   - After a bulk payload the next two bytes are skipped unchecked (Redis
//     does not check that they are "\r\n"); after a header's '\r' one byte
//     is skipped unchecked.
//   - A header line or an inline line is searched for its terminator as a
//     C string: a NUL byte before the '\r' ('\n' for inline) hides the
//     terminator, and the request waits for more bytes until more than
//     64 KiB (PROTO_INLINE_MAX_SIZE) are buffered, then fails ("too big
//     inline request" / "too big mbulk count string" / "too big bulk count
//     string").
//   - An inline line is split as sdssplitargs does: double quotes with
//     \n \r \t \b \a \xHH and \<any> escapes, single quotes with only \',
//     a quote opening in the middle of a word (ECHO a"b" is "ab"), and a
//     closing quote that must be followed by a space or the end of the
//     line ("unbalanced quotes in request" otherwise). An empty line is
//     skipped. A line is refused only when more than 64 KiB are buffered
//     without its '\n', so a longer line that arrives with its '\n' in the
//     same reads runs (a 70 KB line does, as in Redis).
//
// A Parser is used by one goroutine.
type Parser struct {
	// Limits are checked as headers are parsed; the caller may change
	// them between calls of Next (CONFIG SET, AUTH).
	Limits Limits
	// Scrub, for tests, overwrites consumed bytes before the buffer is
	// reused, so that code keeping arguments past their lifetime reads
	// garbage and fails its tests instead of working by chance.
	Scrub bool

	buf  []byte
	r, w int // buf[r:w] is unconsumed: r is the start of the next command
	pos  int // inside a multibulk: the parse position (absolute)
	// seen: buf[hdr:seen] holds no terminator of the header or line being
	// searched (0 = nothing searched yet), so a search resumes there.
	seen  int
	multi int   // arguments still to read of the current multibulk (0: none started)
	bulk  int   // length of the bulk being read; -1: its header is not read yet
	query int64 // bytes declared so far by the current multibulk
	offs  []int // start, end of each argument read so far (absolute)
	// filled: the last read filled the buffer (see Fill).
	filled bool
	args   [][]byte
	// box carries buf to and from the buffer pools (Release); size is
	// the size of buffer the next Fill takes after a Release.
	box  *pooledBuf
	size int
}

// Limits bound one request.
type Limits struct {
	MaxBulk  int64 // bytes per argument (proto-max-bulk-len); 0 = Redis's 512 MiB
	MaxArgs  int64 // arguments per command (proto-max-multibulk-len); 0 = INT_MAX
	MaxQuery int64 // bytes declared by one command's bulks (client-query-buffer-limit); 0 = none
	// Unauth applies Redis's limits for a client that has not
	// authenticated: UnauthMaxArgs arguments and UnauthMaxBulk bytes each.
	Unauth bool
}

// Redis's request limits (server.h, networking.c).
const (
	InlineMax     = 64 << 10  // PROTO_INLINE_MAX_SIZE
	UnauthMaxArgs = 10        // arguments per command before AUTH
	UnauthMaxBulk = 16 << 10  // bytes per argument before AUTH
	DefaultBulk   = 512 << 20 // proto-max-bulk-len
	maxMulti      = 1<<31 - 1 // INT_MAX
	// InitialBuffer is the read buffer's starting (and Shrink's) size.
	InitialBuffer = 4 << 10
	// pipelineBuffer is the size up to which a buffer that reads fill
	// grows (the server counts larger ones as client memory).
	pipelineBuffer = 32 << 10
)

// ProtocolError is a request that breaks the protocol. Redis answers
// "-ERR " + Error() and closes the connection.
type ProtocolError string

func (e ProtocolError) Error() string { return "Protocol error: " + string(e) }

// Redis's protocol errors.
const (
	ErrInvalidMulti  = ProtocolError("invalid multibulk length")
	ErrInvalidBulk   = ProtocolError("invalid bulk length")
	ErrUnauthMulti   = ProtocolError("unauthenticated multibulk length")
	ErrUnauthBulk    = ProtocolError("unauthenticated bulk length")
	ErrBigInline     = ProtocolError("too big inline request")
	ErrBigMultiCount = ProtocolError("too big mbulk count string")
	ErrBigBulkCount  = ProtocolError("too big bulk count string")
	ErrUnbalanced    = ProtocolError("unbalanced quotes in request")
	// ErrQueryLimit is probly's: the bulks one command declares exceed
	// Limits.MaxQuery (Redis closes such a client without a reply).
	ErrQueryLimit = ProtocolError("query buffer limit exceeded")
)

// Next returns the next complete command in the buffer, nil when the
// buffer holds no complete command (Fill reads more), or a
// ProtocolError. After an error the Parser must not be used again.
// Cost: O(bytes newly examined); no allocation once the argument vector
// has grown to the command's argument count.
func (p *Parser) Next() ([][]byte, error) {
	for {
		if p.multi == 0 {
			if p.r == p.w {
				return nil, nil
			}
			if p.buf[p.r] != '*' {
				args, ok, err := p.inline()
				if !ok || err != nil {
					return nil, err
				}
				if len(args) == 0 {
					continue
				}
				return args, nil
			}
			n, valid, next, ok, err := p.header(p.r, ErrBigMultiCount)
			if !ok {
				return nil, err
			}
			if !valid || n > maxMulti || (p.Limits.MaxArgs > 0 && n > p.Limits.MaxArgs) {
				return nil, ErrInvalidMulti
			}
			if n > UnauthMaxArgs && p.Limits.Unauth {
				return nil, ErrUnauthMulti
			}
			if n <= 0 {
				p.r = next // "*0", "*-1": nothing to run
				continue
			}
			p.multi, p.bulk, p.pos, p.query = int(n), -1, next, 0
			p.offs = p.offs[:0]
		}
		for p.multi > 0 {
			if p.bulk < 0 {
				n, valid, next, ok, err := p.header(p.pos, ErrBigBulkCount)
				if !ok {
					return nil, err
				}
				if p.buf[p.pos] != '$' {
					return nil, ProtocolError("expected '$', got '" + string(p.buf[p.pos:p.pos+1]) + "'")
				}
				maxBulk := p.Limits.MaxBulk
				if maxBulk <= 0 {
					maxBulk = DefaultBulk
				}
				if !valid || n < 0 || n > maxBulk {
					return nil, ErrInvalidBulk
				}
				if n > UnauthMaxBulk && p.Limits.Unauth {
					return nil, ErrUnauthBulk
				}
				p.query += n
				if p.Limits.MaxQuery > 0 && p.query > p.Limits.MaxQuery {
					return nil, ErrQueryLimit
				}
				p.bulk, p.pos = int(n), next
			}
			if p.w-p.pos < p.bulk+2 {
				return nil, nil
			}
			p.offs = append(p.offs, p.pos, p.pos+p.bulk)
			p.pos += p.bulk + 2 // the two bytes after the payload are not checked (Redis)
			p.bulk = -1
			p.multi--
		}
		p.args = p.args[:0]
		for i := 0; i < len(p.offs); i += 2 {
			p.args = append(p.args, p.buf[p.offs[i]:p.offs[i+1]:p.offs[i+1]])
		}
		p.r = p.pos
		return p.args, nil
	}
}

// header finds the end of the "*<n>" or "$<n>" header at buf[at]: ok is
// false while it is incomplete (err is set when it can never complete
// within the limit); valid reports whether <n> is a number in Redis's
// string2ll syntax; next is where the bytes after the header start.
func (p *Parser) header(at int, tooBig ProtocolError) (n int64, valid bool, next int, ok bool, err error) {
	if at >= p.w {
		return 0, false, 0, false, nil
	}
	// Fast path: digits (after an optional '-') up to a '\r' that is
	// followed by one more byte, so the first terminator and no NUL.
	if p.seen == 0 {
		j := at + 1
		if j < p.w && p.buf[j] == '-' {
			j++
		}
		for j < p.w && j-at <= 21 && p.buf[j]-'0' <= 9 {
			j++
		}
		if j+1 < p.w && p.buf[j] == '\r' {
			n, valid = argparse.Int(p.buf[at+1 : j])
			return n, valid, j + 2, true, nil
		}
	}
	from := max(at+1, p.seen)
	cr := indexTerm(p.buf[from:p.w], '\r')
	if cr < 0 || p.buf[from+cr] == 0 {
		p.seen = p.w
		if cr >= 0 {
			p.seen = from + cr // a NUL hides the terminator for good
		}
		if p.w-at > InlineMax {
			return 0, false, 0, false, tooBig
		}
		return 0, false, 0, false, nil
	}
	cr += from
	if cr+1 >= p.w { // Redis needs the byte after '\r' (it does not check it)
		p.seen = cr
		return 0, false, 0, false, nil
	}
	p.seen = 0
	n, valid = argparse.Int(p.buf[at+1 : cr])
	return n, valid, cr + 2, true, nil
}

// indexTerm returns the index of the first term or NUL byte in b, or -1:
// Redis searches with strchr, which stops at a NUL.
func indexTerm(b []byte, term byte) int {
	i := bytes.IndexByte(b, term)
	if i < 0 {
		i = len(b)
	}
	if z := bytes.IndexByte(b[:i], 0); z >= 0 {
		return z
	}
	if i == len(b) {
		return -1
	}
	return i
}

// inline parses an inline command line at buf[r]: ok is false while its
// '\n' has not arrived.
func (p *Parser) inline() (args [][]byte, ok bool, err error) {
	from := max(p.r, p.seen)
	nl := indexTerm(p.buf[from:p.w], '\n')
	if nl < 0 || p.buf[from+nl] == 0 {
		p.seen = p.w
		if nl >= 0 {
			p.seen = from + nl
		}
		if p.w-p.r > InlineMax {
			return nil, false, ErrBigInline
		}
		return nil, false, nil
	}
	nl += from
	end := nl
	if end > p.r && p.buf[end-1] == '\r' {
		end--
	}
	line := p.buf[p.r:end]
	p.r, p.seen = nl+1, 0
	args, good := p.split(line)
	if !good {
		return nil, false, ErrUnbalanced
	}
	return args, true, nil
}

// split splits an inline line into p.args (SplitArgs).
func (p *Parser) split(line []byte) ([][]byte, bool) {
	var ok bool
	p.args, ok = SplitArgs(line, p.args[:0])
	return p.args, ok
}

// SplitArgs splits line into arguments as Redis's sdssplitargs does (for
// inline commands and redis.conf lines): blanks separate them, "…" quotes
// with \n \r \t \b \a \xHH escapes and '…' with \' may start anywhere in
// an argument, and a closing quote must be followed by a blank or the
// end. It appends them to args and returns it, false for unbalanced
// quotes. It decodes in place: the arguments alias line, which it
// overwrites (decoded text is never longer than its source); a NUL byte
// ends the line. Cost: O(len(line)), no allocation beyond args' growth.
func SplitArgs(line []byte, args [][]byte) ([][]byte, bool) {
	n := len(line)
	at := func(j int) byte {
		if j < n {
			return line[j]
		}
		return 0
	}
	i := 0
	for {
		for i < n && isSpace(line[i]) {
			i++
		}
		if i >= n {
			return args, true
		}
		start, w := i, i
		inq, insq := false, false
		for done := false; !done; {
			c := at(i)
			switch {
			case inq || insq:
				quote := byte('"')
				if insq {
					quote = '\''
				}
				switch {
				case inq && c == '\\' && at(i+1) == 'x' && isHex(at(i+2)) && isHex(at(i+3)):
					line[w] = unhex(at(i+2))<<4 | unhex(at(i+3))
					w++
					i += 3
				case inq && c == '\\' && at(i+1) != 0:
					i++
					line[w] = unescape(line[i])
					w++
				case insq && c == '\\' && at(i+1) == '\'':
					i++
					line[w] = '\''
					w++
				case c == quote:
					if next := at(i + 1); next != 0 && !isSpace(next) {
						return nil, false
					}
					done = true
				case c == 0:
					return nil, false
				default:
					line[w] = c
					w++
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					line[w] = c
					w++
				}
			}
			if at(i) != 0 {
				i++
			}
		}
		args = append(args, line[start:w:w])
	}
}

// unescape is the byte a backslash escape in double quotes stands for.
func unescape(e byte) byte {
	switch e {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return e
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// Fill reads once from r into the buffer (one Read call), after moving
// the unconsumed bytes to the front, or growing the buffer when little
// room is left at its end (doubling, or to the end of a large bulk being
// read), or when the last read filled it (doubling, up to 32 KiB). It invalidates the arguments Next returned. It
// returns what r.Read returned.
func (p *Parser) Fill(r io.Reader) (int, error) {
	if p.buf == nil {
		p.acquire()
	}
	switch free := len(p.buf) - p.w; {
	case p.r == p.w && p.multi == 0 && !(p.filled && len(p.buf) < pipelineBuffer):
		p.scrubRange(0, p.w)
		p.r, p.w, p.seen = 0, 0, 0
	case p.filled && len(p.buf) < pipelineBuffer:
		// The last read filled the buffer: more is probably waiting (a
		// long pipeline); read it in larger pieces.
		p.move(make([]byte, 2*len(p.buf)))
	case free > 0 && p.multi > 0 && p.bulk >= 0 && p.pos+p.bulk+2 <= len(p.buf):
		// The bulk being read ends within the buffer: read the rest.
	case free < len(p.buf)/4:
		if p.r > 0 && p.w-p.r <= len(p.buf)/2 {
			p.move(p.buf)
			break
		}
		size := 2 * len(p.buf)
		if p.multi > 0 && p.bulk >= 0 {
			// A large bulk: make room for the rest of it exactly, rather
			// than doubling past it.
			if need := p.pos + p.bulk + 2 - p.r; need > len(p.buf) && need < size {
				size = need + InitialBuffer/8
			}
		}
		p.move(make([]byte, size))
	}
	n, err := r.Read(p.buf[p.w:])
	p.filled = n == len(p.buf)-p.w
	p.w += n
	return n, err
}

// move moves the unconsumed bytes buf[r:w] to the front of dst (which
// may be buf) and rebases the positions.
func (p *Parser) move(dst []byte) {
	d := p.r
	n := copy(dst, p.buf[p.r:p.w])
	if &dst[0] == &p.buf[0] {
		p.scrubRange(n, p.w) // the stale bytes behind the moved ones
	} else {
		p.scrubRange(0, p.w)
	}
	p.buf = dst
	p.w -= d
	p.r = 0
	if p.multi > 0 {
		p.pos -= d
		for i := range p.offs {
			p.offs[i] -= d
		}
	}
	if p.seen > 0 {
		p.seen -= d
	}
}

// scrubRange overwrites buf[from:to] when Scrub is set.
func (p *Parser) scrubRange(from, to int) {
	if p.Scrub {
		for i := range p.buf[from:to] {
			p.buf[from+i] = 0xee
		}
	}
}

// Shrink replaces a buffer larger than InitialBuffer by a fresh one of
// InitialBuffer bytes when what it holds unconsumed fits in half of that,
// and drops an argument vector of more than 1024 entries. It reports the
// capacity released (0: nothing done).
func (p *Parser) Shrink() int {
	if cap(p.offs) > 2048 && p.multi == 0 {
		p.offs, p.args = nil, nil
	}
	old := len(p.buf)
	if old <= InitialBuffer || p.w-p.r > InitialBuffer/2 {
		return 0
	}
	p.move(make([]byte, InitialBuffer))
	return old
}

// Read buffers are pooled by size (InitialBuffer, doubled up to
// pipelineBuffer: the sizes Fill grows a buffer through), so a connection
// with nothing buffered can give its buffer back (Release) and take one
// of the same size at its next Fill, without an allocation once the pool
// holds one. A pooled buffer travels in a pooledBuf, which the parser
// keeps while it uses the buffer, so that putting it back does not
// allocate either.
type pooledBuf struct{ b []byte }

const poolClasses = 4 // 4, 8, 16 and 32 KiB

var bufPools [poolClasses]sync.Pool

// poolClass is the pool of buffers of n bytes, or -1.
func poolClass(n int) int {
	for k := range poolClasses {
		if n == InitialBuffer<<k {
			return k
		}
	}
	return -1
}

// acquire gives the parser a buffer of the size it had at its last
// Release (InitialBuffer at first).
func (p *Parser) acquire() {
	size := max(p.size, InitialBuffer)
	if k := poolClass(size); k >= 0 {
		if v, _ := bufPools[k].Get().(*pooledBuf); v != nil {
			p.buf, v.b, p.box = v.b, nil, v
			return
		}
	}
	p.buf = make([]byte, size)
}

// Release gives the read buffer back to the shared pool when it holds
// nothing (no command or part of one is buffered) and reports whether it
// did. Call it before waiting for a connection's next bytes, so that an
// idle connection holds no buffer: the next Fill takes a buffer of the
// same size from the pool. A buffer larger than the pooled sizes (a large
// request's) is dropped, and the next Fill starts at InitialBuffer. Like
// Fill, it invalidates the arguments Next returned. Cost: a pool Put
// (and a Get at the next Fill), no allocation in the steady state.
func (p *Parser) Release() bool {
	if p.buf == nil || p.Partial() {
		return false
	}
	p.scrubRange(0, p.w)
	p.r, p.w, p.seen = 0, 0, 0
	p.size = InitialBuffer
	if k := poolClass(len(p.buf)); k >= 0 {
		p.size = len(p.buf)
		if p.box == nil {
			p.box = &pooledBuf{}
		}
		p.box.b = p.buf
		bufPools[k].Put(p.box)
	}
	p.buf, p.box = nil, nil
	return true
}

// Cap is the read buffer's size in bytes.
func (p *Parser) Cap() int { return len(p.buf) }

// Buffered is the number of bytes read and not yet consumed by a
// complete command (Redis's qbuf).
func (p *Parser) Buffered() int { return p.w - p.r }

// Free is the room left after the buffered bytes (Redis's qbuf-free).
func (p *Parser) Free() int { return len(p.buf) - p.w }

// Partial reports whether a command has started arriving but is not
// complete.
func (p *Parser) Partial() bool { return p.multi > 0 || p.r < p.w }

// ArgBytes is the total length of the last command's arguments (Redis's
// argv-mem, without its per-argument overhead).
func (p *Parser) ArgBytes() int {
	n := 0
	for _, a := range p.args {
		n += len(a)
	}
	return n
}
