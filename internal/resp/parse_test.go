package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// chunkReader returns at most n bytes per Read, like a network delivering
// segments.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

type countingReader struct {
	r     io.Reader
	calls int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.calls++
	return c.r.Read(p)
}

// parseAll runs a Parser over r to the end: the commands (each argument
// quoted) and the error that ended parsing (nil at EOF).
func parseAll(t testing.TB, r io.Reader, lim Limits) ([]string, error) {
	return parseAllRelease(t, r, lim, false)
}

// parseAllRelease is parseAll, calling Release before every Fill when
// release is set (as the server does before it waits for a socket).
func parseAllRelease(t testing.TB, r io.Reader, lim Limits, release bool) ([]string, error) {
	p := Parser{Limits: lim, Scrub: true}
	var out []string
	for {
		for {
			args, err := p.Next()
			if err != nil {
				return out, err
			}
			if args == nil {
				break
			}
			if lim.MaxArgs > 0 && int64(len(args)) > lim.MaxArgs {
				t.Fatalf("%d args over the limit %d", len(args), lim.MaxArgs)
			}
			var b strings.Builder
			for _, a := range args {
				b.WriteString(strconv.Quote(string(a)))
				b.WriteByte(' ')
			}
			out = append(out, b.String())
		}
		if release && p.Release() && p.Cap() != 0 {
			t.Fatalf("Release kept a buffer of %d bytes", p.Cap())
		}
		n, err := p.Fill(r)
		if n == 0 && err != nil {
			return out, nil
		}
	}
}

func cmd(args ...string) string {
	s := "*" + strconv.Itoa(len(args)) + "\r\n"
	for _, a := range args {
		s += "$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n"
	}
	return s
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  error
	}{
		{in: cmd("SET", "k", "v") + cmd("GET", "k"), want: []string{`"SET" "k" "v" `, `"GET" "k" `}},
		{in: "*0\r\n*-5\r\nPING\r\n", want: []string{`"PING" `}},
		{in: "\r\n\n   \r\nPING\n", want: []string{`"PING" `}},
		{in: "*1\r\n$+4\r\nPING\r\n", err: ErrInvalidBulk},
		{in: "*1\r\n$04\r\nPING\r\n", err: ErrInvalidBulk},
		{in: "*1\r\n$-0\r\n", err: ErrInvalidBulk},
		{in: "*1\r\n$-1\r\n", err: ErrInvalidBulk},
		{in: "*+1\r\n", err: ErrInvalidMulti},
		{in: "*\r\n", err: ErrInvalidMulti},
		{in: "*2147483648\r\n", err: ErrInvalidMulti},
		{in: "*1\r\n$9223372036854775807\r\n", err: ErrInvalidBulk},
		{in: "*1\r\n$99999999999999999999\r\n", err: ErrInvalidBulk},
		{in: "*1\r\nx4\r\nPING\r\n", err: ProtocolError("expected '$', got 'x'")},
		{in: "*1\r\n$4\r\nPINGxx" + cmd("GET", "k"), want: []string{`"PING" `, `"GET" "k" `}},
		{in: "*1\rx$4\rxPING\r\n", want: []string{`"PING" `}},
		{in: `ECHO a"b"` + "\r\n", want: []string{`"ECHO" "ab" `}},
		{in: `ECHO "\x41\a\b\n\q\x4" 'a\nb' 'it\'s'` + "\n", want: []string{`"ECHO" "A\a\b\nqx4" "a\\nb" "it's" `}},
		{in: `ECHO "a"b` + "\r\n", err: ErrUnbalanced},
		{in: `ECHO 'a` + "\r\n", err: ErrUnbalanced},
		{in: `ECHO "a\` + "\r\n", err: ErrUnbalanced},
		{in: "ECHO \"a\"\vb\r\n", want: []string{`"ECHO" "a" "b" `}},
		{in: "ECHO a\vb\r\n", want: []string{`"ECHO" "a\vb" `}},
		{in: "PING\x00\r\n", want: nil}, // waits, as Redis (strchr stops at NUL)
		{in: "ECHO " + strings.Repeat("x", 70000) + "\r\n", want: []string{`"ECHO" "` + strings.Repeat("x", 70000) + `" `}},
		{in: "ECHO " + strings.Repeat("x", 300000), err: ErrBigInline},
		{in: "*1" + strings.Repeat("1", 70000), err: ErrBigMultiCount},
		{in: "*1\r\n$1" + strings.Repeat("1", 70000), err: ErrBigBulkCount},
		{in: "*11\r\n", err: nil},
	} {
		got, err := parseAll(t, chunkReader{strings.NewReader(tc.in), 16384}, Limits{})
		if !errors.Is(err, tc.err) || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%.40q: %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestParseLimits(t *testing.T) {
	for _, tc := range []struct {
		in  string
		lim Limits
		err error
	}{
		{cmd("a", "b", "c"), Limits{MaxArgs: 2}, ErrInvalidMulti},
		{cmd("abc"), Limits{MaxBulk: 2}, ErrInvalidBulk},
		{cmd("abc", "def"), Limits{MaxQuery: 5}, ErrQueryLimit},
		{"*11\r\n", Limits{Unauth: true}, ErrUnauthMulti},
		{"*1\r\n$16385\r\n", Limits{Unauth: true}, ErrUnauthBulk},
		{"*10\r\n$16384\r\n", Limits{Unauth: true}, nil},
	} {
		_, err := parseAll(t, strings.NewReader(tc.in), tc.lim)
		if !errors.Is(err, tc.err) {
			t.Errorf("%q %+v: %v, want %v", tc.in, tc.lim, err, tc.err)
		}
	}
}

// A huge declared bulk holds only the bytes received.
func TestParseNoPrealloc(t *testing.T) {
	var p Parser
	r := strings.NewReader("*1\r\n$536870912\r\nabc")
	for {
		if _, err := p.Fill(r); err != nil {
			break
		}
		if args, err := p.Next(); args != nil || err != nil {
			t.Fatal(args, err)
		}
	}
	if p.Cap() > InitialBuffer {
		t.Fatalf("buffer of %d bytes", p.Cap())
	}
}

// A many-argument command arriving in small segments is parsed in time
// linear in its size: each byte is examined once, and the buffer doubles,
// so the reads are about size/segment.
func TestManyArgsLinear(t *testing.T) {
	const nargs = 100000
	var b bytes.Buffer
	b.WriteString("*" + strconv.Itoa(nargs) + "\r\n")
	for i := 0; i < nargs; i++ {
		b.WriteString("$3\r\nabc\r\n")
	}
	b.WriteString(cmd("PING"))
	cr := &countingReader{r: chunkReader{bytes.NewReader(b.Bytes()), 1460}}
	got, err := parseAll(t, cr, Limits{})
	if err != nil || len(got) != 2 || got[1] != `"PING" ` {
		t.Fatalf("%d commands, %v", len(got), err)
	}
	if max := b.Len()/1460 + 10; cr.calls > max {
		t.Fatalf("%d reads for %d bytes", cr.calls, b.Len())
	}
}

// Every split of a pipeline into two reads, and one-byte reads, parse as
// one read does.
func TestParseSplitEverywhere(t *testing.T) {
	in := cmd("SET", "key", "value") + "ECHO \"a\\x41\" 'b'\r\n" + "*0\r\n" + cmd("GET", "key") + "PING\n"
	want, err := parseAll(t, strings.NewReader(in), Limits{})
	if err != nil || len(want) != 4 {
		t.Fatal(want, err)
	}
	for i := 1; i < len(in); i++ {
		got, err := parseAll(t, io.MultiReader(strings.NewReader(in[:i]), strings.NewReader(in[i:])), Limits{})
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("split at %d: %q, %v", i, got, err)
		}
	}
	got, err := parseAll(t, iotest.OneByteReader(strings.NewReader(in)), Limits{})
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("one-byte reads: %q, %v", got, err)
	}
}

// FuzzParse: parsing never panics, respects the limits, holds a buffer
// bounded by the input, and gives the same commands and error whatever the
// read sizes (for inputs below the 64 KiB line limit, where Redis too is
// independent of read sizes).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		cmd("PING"), "*1\r\n$9223372036854775807\r\n", "*1\r\n$9223372036854775806\r\nab",
		"*-5\r\n", "*0\r\n", "PING\r\n", "echo \"a b\\x41\" 'c\\'d'\r\n", "ECHO a\"b\"\r\n",
		"*2\r\n$4\r\nECHO\r\n$-7\r\n", "*2\r\n$4\r\nPING\r\nXX",
		cmd("SET", "k", "v") + cmd("PING"), "\x00\xff*$\r\n", "*1\r\n$04\r\nPING\r\n",
	} {
		f.Add([]byte(s), uint8(3))
	}
	lim := Limits{MaxBulk: 1 << 16, MaxArgs: 1 << 16, MaxQuery: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		whole, werr := parseAll(t, bytes.NewReader(data), lim)
		p := Parser{Limits: lim}
		r := bytes.NewReader(data)
		for {
			if _, err := p.Fill(r); err != nil {
				break
			}
			for {
				args, err := p.Next()
				if args == nil || err != nil {
					break
				}
				for _, a := range args {
					if int64(len(a)) > lim.MaxBulk && len(data) <= InlineMax {
						t.Fatalf("argument of %d bytes", len(a))
					}
				}
			}
			if p.Cap() > 4*(len(data)+InitialBuffer) {
				t.Fatalf("buffer of %d bytes for %d input bytes", p.Cap(), len(data))
			}
		}
		if len(data) > InlineMax {
			return
		}
		parts, perr := parseAll(t, chunkReader{bytes.NewReader(data), int(chunk%16) + 1}, lim)
		if fmt.Sprint(parts) != fmt.Sprint(whole) || fmt.Sprint(perr) != fmt.Sprint(werr) {
			t.Fatalf("reads of %d: %q, %v; one read: %q, %v", chunk%16+1, parts, perr, whole, werr)
		}
		rel, rerr := parseAllRelease(t, chunkReader{bytes.NewReader(data), int(chunk%16) + 1}, lim, true)
		if fmt.Sprint(rel) != fmt.Sprint(whole) || fmt.Sprint(rerr) != fmt.Sprint(werr) {
			t.Fatalf("reads of %d with Release: %q, %v; one read: %q, %v", chunk%16+1, rel, rerr, whole, werr)
		}
		unauth := lim
		unauth.Unauth = true
		ua, uerr := parseAll(t, bytes.NewReader(data), unauth)
		if uerr == nil && fmt.Sprint(ua) != fmt.Sprint(whole) {
			t.Fatalf("before AUTH: %q, after: %q", ua, whole)
		}
		for i := range min(len(ua), len(whole)) {
			if ua[i] != whole[i] {
				t.Fatalf("before AUTH command %d is %q, after %q", i, ua[i], whole[i])
			}
		}
	})
}

// A large bulk arriving in pieces ends in a buffer of about its size (not
// the next doubling), and a long pipeline is read in growing pieces.
func TestParseBufferGrowth(t *testing.T) {
	big := cmd("SET", "k", strings.Repeat("v", 1_000_000))
	var p Parser
	r := chunkReader{strings.NewReader(big), 65536}
	for {
		if _, err := p.Fill(r); err != nil {
			t.Fatal(err)
		}
		args, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		if args != nil {
			break
		}
	}
	if p.Cap() > len(big)+InitialBuffer {
		t.Fatalf("buffer of %d bytes for a %d-byte command", p.Cap(), len(big))
	}
	pipe := strings.Repeat(cmd("PING"), 10000)
	cr := &countingReader{r: strings.NewReader(pipe)}
	got, err := parseAll(t, cr, Limits{})
	if err != nil || len(got) != 10000 {
		t.Fatal(len(got), err)
	}
	if max := len(pipe)/pipelineBuffer + 8; cr.calls > max {
		t.Fatalf("%d reads for a %d-byte pipeline", cr.calls, len(pipe))
	}
}

// Release gives the buffer back only when nothing is buffered: a partial
// command keeps it (and its bytes), an idle parser holds none, and the
// next Fill takes a buffer of the size it had, from the pool without an
// allocation.
func TestParseRelease(t *testing.T) {
	var p Parser
	if p.Release() {
		t.Fatal("Release without a buffer")
	}
	half := cmd("ECHO", "hello")
	r := strings.NewReader(half[:9])
	if _, err := p.Fill(r); err != nil {
		t.Fatal(err)
	}
	if args, err := p.Next(); args != nil || err != nil {
		t.Fatalf("partial command: %q, %v", args, err)
	}
	if p.Release() || p.Cap() != InitialBuffer || p.Buffered() != 9 {
		t.Fatalf("Release with a partial command: cap %d, buffered %d", p.Cap(), p.Buffered())
	}
	r = strings.NewReader(half[9:])
	if _, err := p.Fill(r); err != nil {
		t.Fatal(err)
	}
	if args, err := p.Next(); len(args) != 2 || string(args[1]) != "hello" || err != nil {
		t.Fatalf("completed command: %q, %v", args, err)
	}
	if !p.Release() || p.Cap() != 0 || p.Buffered() != 0 || p.Free() != 0 {
		t.Fatalf("Release when idle: cap %d", p.Cap())
	}
	// A pipeline that fills the buffer grows it; after a Release the next
	// Fill takes a buffer of the grown size.
	pipe := strings.Repeat(cmd("PING"), 2*InitialBuffer/len(cmd("PING")))
	cr := strings.NewReader(pipe)
	for cr.Len() > 0 || p.Partial() {
		if _, err := p.Fill(cr); err != nil {
			t.Fatal(err)
		}
		for {
			args, err := p.Next()
			if err != nil {
				t.Fatal(err)
			}
			if args == nil {
				break
			}
		}
	}
	grown := p.Cap()
	if grown <= InitialBuffer || poolClass(grown) < 0 {
		t.Fatalf("buffer of %d bytes after a %d-byte pipeline", grown, len(pipe))
	}
	p.Release()
	ping := []byte(cmd("PING"))
	br := bytes.NewReader(ping)
	if _, err := p.Fill(br); err != nil || p.Cap() != grown {
		t.Fatalf("Fill after Release: cap %d, want %d (%v)", p.Cap(), grown, err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		p.Release()
		br.Reset(ping)
		if _, err := p.Fill(br); err != nil {
			t.Fatal(err)
		}
		if args, err := p.Next(); len(args) != 1 || err != nil {
			t.Fatalf("%q, %v", args, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per Release and Fill", allocs)
	}
}
