package resp

import (
	"errors"
	"io"
	"strconv"
)

// Writer buffers RESP replies: every Write* method appends one RESP2
// element to an in-memory buffer, and Flush (or WriteTo) sends what is
// buffered in one Write call. The buffer is reused from one batch to the
// next, so writing a reply allocates only when the buffer has to grow;
// Shrink drops a buffer that a large reply made big.
//
// The encodings are the protocol's (Redis 7's networking.c):
//
//	WriteSimpleString("OK")  +OK\r\n       (CR and LF in the text become spaces)
//	WriteError("ERR x")      -ERR x\r\n    (CR and LF in the text become spaces)
//	WriteInt(-3)             :-3\r\n
//	WriteBulkString("ab")    $2\r\nab\r\n
//	WriteNull()              $-1\r\n       (the RESP2 null bulk string)
//	WriteArray(2)            *2\r\n        (then the 2 elements)
//	WriteAggregate('%', 1)   %1\r\n        (any type byte and a length)
//	WriteRaw(p)              p, verbatim
//
// Reply builds RESP3 types on top of it. The zero Writer is an empty
// buffer without a destination (Flush then fails; Bytes and WriteTo
// work). A Writer is owned by one goroutine: it is not safe for
// concurrent use, and no method retains its argument.
type Writer struct {
	b   []byte
	out io.Writer
}

// NewWriter returns a Writer whose Flush writes to out.
func NewWriter(out io.Writer) *Writer { return &Writer{out: out} }

// SetOutput makes out the destination of Flush.
func (w *Writer) SetOutput(out io.Writer) { w.out = out }

// errNoOutput is Flush's error for a Writer without a destination.
var errNoOutput = errors.New("resp: Writer has no output")

// WriteSimpleString appends a simple string, +s\r\n. A CR or LF inside s
// is written as a space, so the reply stays one line (what Redis does to
// the text of its formatted errors). Cost: O(len(s)).
func (w *Writer) WriteSimpleString(s string) { w.b = appendLine(w.b, '+', s) }

// WriteError appends an error, -msg\r\n; msg carries its own code ("ERR
// …", "WRONGTYPE …"). A CR or LF inside msg is written as a space, as
// Redis does for its formatted errors. Cost: O(len(msg)).
func (w *Writer) WriteError(msg string) { w.b = appendLine(w.b, '-', msg) }

// WriteInt appends an integer, :n\r\n.
func (w *Writer) WriteInt(n int64) { w.b = appendPrefix(w.b, ':', n) }

// WriteBulk appends a binary-safe bulk string, $len\r\nb\r\n. b is
// copied. Cost: O(len(b)).
func (w *Writer) WriteBulk(b []byte) {
	w.b = appendPrefix(w.b, '$', int64(len(b)))
	w.b = append(w.b, b...)
	w.b = append(w.b, '\r', '\n')
}

// WriteBulkString is WriteBulk for a string.
func (w *Writer) WriteBulkString(s string) {
	w.b = appendPrefix(w.b, '$', int64(len(s)))
	w.b = append(w.b, s...)
	w.b = append(w.b, '\r', '\n')
}

// WriteNull appends the RESP2 null bulk string, $-1\r\n.
func (w *Writer) WriteNull() { w.b = append(w.b, "$-1\r\n"...) }

// WriteArray appends an array header of n elements, *n\r\n (n = -1: the
// RESP2 null array); the caller then writes the n elements.
func (w *Writer) WriteArray(n int) { w.b = appendPrefix(w.b, '*', int64(n)) }

// WriteAggregate appends a type byte and a length, kind n\r\n: the
// header of a RESP3 map ('%'), set ('~'), push ('>') or of any other
// length-prefixed type.
func (w *Writer) WriteAggregate(kind byte, n int) { w.b = appendPrefix(w.b, kind, int64(n)) }

// WriteRaw appends p verbatim: p must be complete RESP. p is copied.
func (w *Writer) WriteRaw(p []byte) { w.b = append(w.b, p...) }

// WriteRawString is WriteRaw for a string.
func (w *Writer) WriteRawString(s string) { w.b = append(w.b, s...) }

// Len is the number of bytes buffered: a mark that Truncate can return
// to. Cost: O(1).
func (w *Writer) Len() int { return len(w.b) }

// Cap is the buffer's capacity in bytes (the memory it holds).
func (w *Writer) Cap() int { return cap(w.b) }

// Truncate drops what was written after mark (an earlier Len), without
// copying. A mark beyond the buffered length is ignored; a negative one
// panics.
func (w *Writer) Truncate(mark int) {
	if mark < len(w.b) {
		w.b = w.b[:mark]
	}
}

// Bytes returns the buffered bytes. They alias the buffer: valid until
// the next Write*, Truncate, Reset, Flush or Shrink.
func (w *Writer) Bytes() []byte { return w.b }

// Reset empties the buffer and keeps its memory for the next replies.
func (w *Writer) Reset() { w.b = w.b[:0] }

// Flush writes the buffered bytes to the output (NewWriter, SetOutput) in
// one Write call and empties the buffer, also when the write fails (the
// replies cannot be sent then; the connection is to be closed). Nothing
// buffered: no Write call. Without an output it fails and keeps the
// buffer.
func (w *Writer) Flush() error {
	if len(w.b) == 0 {
		return nil
	}
	if w.out == nil {
		return errNoOutput
	}
	_, err := w.WriteTo(w.out)
	return err
}

// WriteTo writes the buffered bytes to dst in one Write call and empties
// the buffer, as bytes.Buffer.WriteTo does (io.WriterTo); it returns the
// bytes written. The buffer is emptied also when the write fails.
func (w *Writer) WriteTo(dst io.Writer) (int64, error) {
	n, err := dst.Write(w.b)
	if err == nil && n != len(w.b) {
		err = io.ErrShortWrite
	}
	w.b = w.b[:0]
	return int64(n), err
}

// Shrink drops the buffer's memory if it is empty and its capacity is
// above limit (the next reply starts a small buffer), and returns the
// capacity dropped (0 if none). The caller decides the limit (the server
// applies the one policy it uses for read buffers).
func (w *Writer) Shrink(limit int) int {
	c := cap(w.b)
	if len(w.b) != 0 || c <= limit {
		return 0
	}
	w.b = nil
	return c
}

// appendPrefix appends kind, n in decimal and CRLF: a length or an
// integer line.
func appendPrefix(b []byte, kind byte, n int64) []byte {
	if n >= 0 && n <= 9 {
		return append(b, kind, byte('0'+n), '\r', '\n')
	}
	b = append(b, kind)
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

// appendLine appends kind, s with CR and LF replaced by spaces, and CRLF.
func appendLine(b []byte, kind byte, s string) []byte {
	b = append(b, kind)
	start := len(b)
	b = append(b, s...)
	for i := start; i < len(b); i++ {
		if b[i] == '\r' || b[i] == '\n' {
			b[i] = ' '
		}
	}
	return append(b, '\r', '\n')
}
