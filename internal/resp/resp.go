// Package resp is probly's side of the Redis protocol: Parser reads
// requests (parse.go: bounded, incremental, Redis 7's framing and error
// texts, arguments aliasing the read buffer), Writer buffers replies
// (writer.go) and Reply writes RESP2 and RESP3 replies through a Writer.
// Handlers write through Reply so the same code answers both protocol
// versions: RESP3-only types (booleans, maps, null) degrade to their RESP2
// forms as Redis does.
package resp

// Reply is the reply side of one client connection. It is owned by the
// connection's goroutine and is not safe for concurrent use.
type Reply struct {
	W     *Writer
	Proto int // 2 or 3
	// Errors counts the error replies written through Error (the server
	// reads it to tell a command's outcome for metrics).
	Errors uint64
	// FirstErr is the first error reply written through Error since it was
	// last cleared, at any depth (an element of an array counts): how
	// command.Run reports a command's error without parsing its reply.
	// Only its reader clears it; recording it does not allocate.
	FirstErr string
	// Writes counts every reply element written (the server checks that a
	// handler answered at all).
	Writes uint64
	// BulkBytes counts the payload bytes of bulk strings written (the
	// server flushes a long pipeline's replies early once they grow large).
	BulkBytes uint64
}

// New returns a Reply writing to w in protocol version proto (2 or 3).
func New(w *Writer, proto int) *Reply { return &Reply{W: w, Proto: proto} }

// SimpleString writes +s.
func (r *Reply) SimpleString(s string) {
	r.Writes++
	r.W.WriteSimpleString(s)
}

// OK writes +OK.
func (r *Reply) OK() {
	r.Writes++
	r.W.WriteRawString("+OK\r\n")
}

// Error writes -msg verbatim. msg carries its own code, e.g. "ERR not found"
// or "Bad capacity" (RedisBloom strings often have no ERR prefix).
func (r *Reply) Error(msg string) {
	r.Writes++
	r.Errors++
	if r.FirstErr == "" {
		r.FirstErr = msg
	}
	r.W.WriteError(msg)
}

// Int writes :n.
func (r *Reply) Int(n int64) {
	r.Writes++
	r.W.WriteInt(n)
}

// Bulk writes a binary-safe bulk string.
func (r *Reply) Bulk(b []byte) {
	r.Writes++
	r.BulkBytes += uint64(len(b))
	r.W.WriteBulk(b)
}

// BulkString writes a bulk string.
func (r *Reply) BulkString(s string) {
	r.Writes++
	r.BulkBytes += uint64(len(s))
	r.W.WriteBulkString(s)
}

// Null writes the null reply: $-1 in RESP2, _ in RESP3.
func (r *Reply) Null() {
	r.Writes++
	if r.Proto >= 3 {
		r.W.WriteRawString("_\r\n")
		return
	}
	r.W.WriteNull()
}

// NullArray writes *-1 in RESP2 and _ in RESP3.
func (r *Reply) NullArray() {
	r.Writes++
	if r.Proto >= 3 {
		r.W.WriteRawString("_\r\n")
		return
	}
	r.W.WriteArray(-1)
}

// Bool writes #t/#f in RESP3 and :1/:0 in RESP2.
func (r *Reply) Bool(b bool) {
	r.Writes++
	if r.Proto >= 3 {
		if b {
			r.W.WriteRawString("#t\r\n")
		} else {
			r.W.WriteRawString("#f\r\n")
		}
		return
	}
	if b {
		r.W.WriteRawString(":1\r\n")
	} else {
		r.W.WriteRawString(":0\r\n")
	}
}

// Array writes an array header of n elements.
func (r *Reply) Array(n int) {
	r.Writes++
	r.W.WriteArray(n)
}

// Map writes a map header of n key/value pairs: %n in RESP3, *2n in RESP2.
func (r *Reply) Map(n int) {
	r.Writes++
	if r.Proto >= 3 {
		r.W.WriteAggregate('%', n)
		return
	}
	r.W.WriteArray(2 * n)
}

// Set writes a set header of n elements: ~n in RESP3, *n in RESP2.
func (r *Reply) Set(n int) {
	r.Writes++
	if r.Proto >= 3 {
		r.W.WriteAggregate('~', n)
		return
	}
	r.W.WriteArray(n)
}

// Double writes a RESP3 double (,x) or, in RESP2, a bulk string, spelled
// as Redis 8 spells doubles (AppendDouble).
func (r *Reply) Double(f float64) {
	r.Writes++
	if r.Proto >= 3 {
		w := r.W
		w.b = AppendDouble(append(w.b, ','), f)
		w.b = append(w.b, '\r', '\n')
		return
	}
	var buf [40]byte
	r.W.WriteBulk(AppendDouble(buf[:0], f))
}

// Verbatim writes a RESP3 verbatim string of format "txt" (=len\r\ntxt:s)
// or, in RESP2, a bulk string, as Redis does for INFO and CLIENT INFO.
func (r *Reply) Verbatim(s string) {
	if r.Proto < 3 {
		r.BulkString(s)
		return
	}
	r.Writes++
	r.BulkBytes += uint64(len(s))
	w := r.W
	w.WriteAggregate('=', len(s)+4)
	w.b = append(w.b, "txt:"...)
	w.b = append(w.b, s...)
	w.b = append(w.b, '\r', '\n')
}
