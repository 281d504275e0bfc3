package resp

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

// TestWriterEncodings: every Write* method's exact bytes, edge cases
// included (the bytes tidwall/redcon's Writer produced, which the server
// sent before this Writer replaced it).
func TestWriterEncodings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(*Writer)
		want  string
	}{
		{"simple", func(w *Writer) { w.WriteSimpleString("OK") }, "+OK\r\n"},
		{"simple empty", func(w *Writer) { w.WriteSimpleString("") }, "+\r\n"},
		{"simple CRLF", func(w *Writer) { w.WriteSimpleString("a\r\nb\rc\nd") }, "+a  b c d\r\n"},
		{"simple binary", func(w *Writer) { w.WriteSimpleString("\x00\xff") }, "+\x00\xff\r\n"},
		{"error", func(w *Writer) { w.WriteError("ERR no such key") }, "-ERR no such key\r\n"},
		{"error CRLF", func(w *Writer) { w.WriteError("ERR unknown command 'a\r\nb'") }, "-ERR unknown command 'a  b'\r\n"},
		{"error leading LF", func(w *Writer) { w.WriteError("\nERR x\n") }, "- ERR x \r\n"},
		{"error empty", func(w *Writer) { w.WriteError("") }, "-\r\n"},
		{"int 0", func(w *Writer) { w.WriteInt(0) }, ":0\r\n"},
		{"int 9", func(w *Writer) { w.WriteInt(9) }, ":9\r\n"},
		{"int 10", func(w *Writer) { w.WriteInt(10) }, ":10\r\n"},
		{"int -1", func(w *Writer) { w.WriteInt(-1) }, ":-1\r\n"},
		{"int max", func(w *Writer) { w.WriteInt(math.MaxInt64) }, ":9223372036854775807\r\n"},
		{"int min", func(w *Writer) { w.WriteInt(math.MinInt64) }, ":-9223372036854775808\r\n"},
		{"bulk", func(w *Writer) { w.WriteBulk([]byte("hello")) }, "$5\r\nhello\r\n"},
		{"bulk nil", func(w *Writer) { w.WriteBulk(nil) }, "$0\r\n\r\n"},
		{"bulk binary", func(w *Writer) { w.WriteBulk([]byte("a\r\nb\x00")) }, "$5\r\na\r\nb\x00\r\n"},
		{"bulk 10", func(w *Writer) { w.WriteBulk([]byte("0123456789")) }, "$10\r\n0123456789\r\n"},
		{"bulk string", func(w *Writer) { w.WriteBulkString("a\nb") }, "$3\r\na\nb\r\n"},
		{"bulk string empty", func(w *Writer) { w.WriteBulkString("") }, "$0\r\n\r\n"},
		{"null", func(w *Writer) { w.WriteNull() }, "$-1\r\n"},
		{"array 0", func(w *Writer) { w.WriteArray(0) }, "*0\r\n"},
		{"array 2", func(w *Writer) { w.WriteArray(2); w.WriteInt(1); w.WriteBulkString("x") }, "*2\r\n:1\r\n$1\r\nx\r\n"},
		{"array 123", func(w *Writer) { w.WriteArray(123) }, "*123\r\n"},
		{"null array", func(w *Writer) { w.WriteArray(-1) }, "*-1\r\n"},
		{"aggregate map", func(w *Writer) { w.WriteAggregate('%', 1) }, "%1\r\n"},
		{"aggregate set", func(w *Writer) { w.WriteAggregate('~', 15) }, "~15\r\n"},
		{"raw", func(w *Writer) { w.WriteRaw([]byte("#t\r\n")) }, "#t\r\n"},
		{"raw string", func(w *Writer) { w.WriteRawString("_\r\n") }, "_\r\n"},
	} {
		var w Writer
		tc.write(&w)
		if got := string(w.Bytes()); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if w.Len() != len(tc.want) {
			t.Errorf("%s: Len %d, want %d", tc.name, w.Len(), len(tc.want))
		}
	}
}

// A simple string or an error that holds CR or LF is written on one line,
// and the caller's string is not changed.
func TestWriterLineDoesNotTouchInput(t *testing.T) {
	b := []byte("ERR a\nb")
	s := string(b)
	var w Writer
	w.WriteError(s)
	if s != "ERR a\nb" || string(b) != "ERR a\nb" {
		t.Fatalf("input changed: %q", s)
	}
}

// countWriter records its Write calls; fail makes them fail, short makes
// them write one byte less than asked.
type countWriter struct {
	calls int
	buf   bytes.Buffer
	fail  bool
	short bool
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.calls++
	switch {
	case c.fail:
		return 0, errors.New("broken pipe")
	case c.short && len(p) > 0:
		c.buf.Write(p[:len(p)-1])
		return len(p) - 1, nil
	}
	return c.buf.Write(p)
}

// Len, Truncate, Reset, Flush and WriteTo: marks without copies, one
// Write call per flush, the buffer emptied and reused.
func TestWriterBuffer(t *testing.T) {
	out := &countWriter{}
	w := NewWriter(out)
	w.WriteSimpleString("OK")
	mark := w.Len()
	w.WriteBulkString("dropped")
	before := &w.Bytes()[0]
	w.Truncate(mark)
	if got := string(w.Bytes()); got != "+OK\r\n" {
		t.Fatalf("after Truncate: %q", got)
	}
	if &w.Bytes()[0] != before {
		t.Fatal("Truncate copied the buffer")
	}
	w.Truncate(100) // beyond the end: ignored
	if w.Len() != mark {
		t.Fatalf("Truncate beyond the end changed Len to %d", w.Len())
	}
	w.WriteInt(7)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if out.calls != 1 || out.buf.String() != "+OK\r\n:7\r\n" || w.Len() != 0 {
		t.Fatalf("Flush: %d calls, wrote %q, Len %d", out.calls, out.buf.String(), w.Len())
	}
	if err := w.Flush(); err != nil || out.calls != 1 {
		t.Fatalf("Flush of nothing: err %v, %d calls (want no Write)", err, out.calls)
	}
	w.WriteSimpleString("PONG")
	if &w.Bytes()[0] != before {
		t.Fatal("the buffer was not reused after Flush")
	}
	w.Reset()
	if w.Len() != 0 || w.Cap() == 0 {
		t.Fatalf("Reset: Len %d, Cap %d", w.Len(), w.Cap())
	}

	var dst bytes.Buffer
	w.WriteInt(42)
	n, err := w.WriteTo(&dst)
	if err != nil || n != 5 || dst.String() != ":42\r\n" || w.Len() != 0 {
		t.Fatalf("WriteTo: %d, %v, %q, Len %d", n, err, dst.String(), w.Len())
	}
	var _ io.WriterTo = w
}

// A failed or short write is an error, and the buffer is emptied (its
// replies cannot be sent); a Writer without an output cannot Flush.
func TestWriterFlushErrors(t *testing.T) {
	w := NewWriter(&countWriter{fail: true})
	w.WriteSimpleString("OK")
	if err := w.Flush(); err == nil || w.Len() != 0 {
		t.Fatalf("failed write: err %v, Len %d", err, w.Len())
	}
	w = NewWriter(&countWriter{short: true})
	w.WriteSimpleString("OK")
	if err := w.Flush(); !errors.Is(err, io.ErrShortWrite) || w.Len() != 0 {
		t.Fatalf("short write: err %v, Len %d", err, w.Len())
	}
	var z Writer
	z.WriteSimpleString("OK")
	if err := z.Flush(); err == nil || z.Len() != 5 {
		t.Fatalf("no output: err %v, Len %d", err, z.Len())
	}
	z.SetOutput(io.Discard)
	if err := z.Flush(); err != nil || z.Len() != 0 {
		t.Fatalf("after SetOutput: err %v, Len %d", err, z.Len())
	}
}

// Shrink drops an empty buffer over the limit, and only that.
func TestWriterShrink(t *testing.T) {
	var w Writer
	w.WriteBulkString(strings.Repeat("x", 100<<10))
	if got := w.Shrink(32 << 10); got != 0 {
		t.Fatalf("Shrink of a buffer holding replies dropped %d bytes", got)
	}
	c := w.Cap()
	w.Reset()
	if got := w.Shrink(c); got != 0 {
		t.Fatalf("Shrink at the limit dropped %d bytes", got)
	}
	if got := w.Shrink(32 << 10); got != c || w.Cap() != 0 {
		t.Fatalf("Shrink: dropped %d (want %d), Cap %d", got, c, w.Cap())
	}
	w.WriteSimpleString("OK") // usable after Shrink
	if string(w.Bytes()) != "+OK\r\n" {
		t.Fatalf("after Shrink: %q", w.Bytes())
	}
}

// Once the buffer has grown, writing and flushing replies allocates
// nothing, through the Writer and through Reply in both protocols.
func TestWriterAllocs(t *testing.T) {
	w := NewWriter(io.Discard)
	val := []byte("value")
	for _, proto := range []int{2, 3} {
		r := New(w, proto)
		batch := func() {
			w.WriteSimpleString("OK")
			w.WriteError("ERR x")
			w.WriteInt(123456)
			w.WriteBulk(val)
			w.WriteBulkString("s")
			w.WriteNull()
			w.WriteArray(3)
			w.WriteAggregate('%', 2)
			w.WriteRaw(val)
			r.OK()
			r.SimpleString("PONG")
			r.Error("ERR e")
			r.FirstErr = ""
			r.Int(-5)
			r.Bulk(val)
			r.BulkString("x")
			r.Null()
			r.NullArray()
			r.Bool(true)
			r.Array(2)
			r.Map(3)
			r.Set(4)
			r.Double(1.5)
			r.Double(math.Inf(-1))
			r.Verbatim("txt")
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		batch()
		if a := testing.AllocsPerRun(100, batch); a != 0 {
			t.Errorf("RESP%d: %v allocations per batch", proto, a)
		}
	}
}

// TestReplyEncodings: every Reply method's bytes in RESP2 and RESP3, and
// its counters.
func TestReplyEncodings(t *testing.T) {
	for _, tc := range []struct {
		name         string
		write        func(*Reply)
		resp2, resp3 string
	}{
		{"OK", func(r *Reply) { r.OK() }, "+OK\r\n", "+OK\r\n"},
		{"simple", func(r *Reply) { r.SimpleString("PONG") }, "+PONG\r\n", "+PONG\r\n"},
		{"error", func(r *Reply) { r.Error("WRONGTYPE x") }, "-WRONGTYPE x\r\n", "-WRONGTYPE x\r\n"},
		{"int", func(r *Reply) { r.Int(-12) }, ":-12\r\n", ":-12\r\n"},
		{"bulk", func(r *Reply) { r.Bulk([]byte("ab")) }, "$2\r\nab\r\n", "$2\r\nab\r\n"},
		{"bulk string", func(r *Reply) { r.BulkString("") }, "$0\r\n\r\n", "$0\r\n\r\n"},
		{"null", func(r *Reply) { r.Null() }, "$-1\r\n", "_\r\n"},
		{"null array", func(r *Reply) { r.NullArray() }, "*-1\r\n", "_\r\n"},
		{"true", func(r *Reply) { r.Bool(true) }, ":1\r\n", "#t\r\n"},
		{"false", func(r *Reply) { r.Bool(false) }, ":0\r\n", "#f\r\n"},
		{"array", func(r *Reply) { r.Array(2) }, "*2\r\n", "*2\r\n"},
		{"map", func(r *Reply) { r.Map(2) }, "*4\r\n", "%2\r\n"},
		{"map 0", func(r *Reply) { r.Map(0) }, "*0\r\n", "%0\r\n"},
		{"map 12", func(r *Reply) { r.Map(12) }, "*24\r\n", "%12\r\n"},
		{"set", func(r *Reply) { r.Set(3) }, "*3\r\n", "~3\r\n"},
		{"set 10", func(r *Reply) { r.Set(10) }, "*10\r\n", "~10\r\n"},
		{"double", func(r *Reply) { r.Double(1.5) }, "$3\r\n1.5\r\n", ",1.5\r\n"},
		{"double int", func(r *Reply) { r.Double(5) }, "$1\r\n5\r\n", ",5\r\n"},
		{"double -inf", func(r *Reply) { r.Double(math.Inf(-1)) }, "$4\r\n-inf\r\n", ",-inf\r\n"},
		{"double nan", func(r *Reply) { r.Double(math.NaN()) }, "$3\r\nnan\r\n", ",nan\r\n"},
		{"double tiny", func(r *Reply) { r.Double(1e-7) }, "$4\r\n1e-7\r\n", ",1e-7\r\n"},
		{"verbatim", func(r *Reply) { r.Verbatim("a:b\r\n") }, "$5\r\na:b\r\n\r\n", "=9\r\ntxt:a:b\r\n\r\n"},
		{"verbatim empty", func(r *Reply) { r.Verbatim("") }, "$0\r\n\r\n", "=4\r\ntxt:\r\n"},
	} {
		for _, proto := range []int{2, 3} {
			var w Writer
			r := New(&w, proto)
			tc.write(r)
			want := tc.resp2
			if proto == 3 {
				want = tc.resp3
			}
			if got := string(w.Bytes()); got != want {
				t.Errorf("%s RESP%d: %q, want %q", tc.name, proto, got, want)
			}
			if r.Writes != 1 {
				t.Errorf("%s RESP%d: Writes %d, want 1", tc.name, proto, r.Writes)
			}
		}
	}
}

// Reply's counters: Errors and FirstErr follow error replies, BulkBytes
// the payload of bulk strings and verbatim strings.
func TestReplyCounters(t *testing.T) {
	var w Writer
	r := New(&w, 3)
	r.Error("ERR first")
	r.Error("ERR second")
	r.Bulk([]byte("abc"))
	r.BulkString("de")
	r.Verbatim("fgh")
	if r.Errors != 2 || r.FirstErr != "ERR first" || r.BulkBytes != 8 || r.Writes != 5 {
		t.Fatalf("Errors %d, FirstErr %q, BulkBytes %d, Writes %d", r.Errors, r.FirstErr, r.BulkBytes, r.Writes)
	}
}
