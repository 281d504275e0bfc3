package server

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/bf"
	"github.com/probly/probly/internal/command/cf"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/command/generic"
	"github.com/probly/probly/internal/command/pf"
	"github.com/probly/probly/internal/command/str"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
)

// replayConn is a connection whose every Read delivers the same request
// bytes (one batch of pipelined commands) and which counts its reads and
// writes: a client of it runs the whole path from socket bytes in to
// reply bytes out without a socket.
type replayConn struct {
	discardConn
	req           []byte
	reads, writes int
	out           []byte // the last write
}

func (c *replayConn) Read(p []byte) (int, error) {
	c.reads++
	return copy(p, c.req), nil
}

func (c *replayConn) Write(p []byte) (int, error) {
	c.writes++
	c.out = append(c.out[:0], p...)
	return len(p), nil
}

// noScrub turns the tests' input scrubbing off for a benchmark.
func noScrub(b *testing.B) {
	ScrubInput = false
	b.Cleanup(func() { ScrubInput = true })
}

// pathServer returns a server with the generic, bf, cf, pf and string
// commands and no persistence.
func pathServer(tb testing.TB) *Server {
	tb.Helper()
	cfg := config.New()
	table := command.NewTable()
	for _, register := range []func(*command.Table, *config.Registry){generic.Register, bf.Register, cf.Register, pf.Register, str.Register} {
		register(table, cfg)
	}
	s, err := New(Options{Store: keyspace.New(&commandtest.Discard{}), Config: cfg, Table: table,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// pathClient returns a client over conn of a pathServer, with keys "bf"
// and "cf" reserved for 10M items, "hll" a dense HyperLogLog and "s" a
// string.
func pathClient(tb testing.TB, conn *replayConn) *client {
	tb.Helper()
	s := pathServer(tb)
	c := newClient(s, conn)
	c.exec(commandtest.Argv("BF.RESERVE", "bf", "0.01", "10000000"))
	c.exec(commandtest.Argv("CF.RESERVE", "cf", "10000000"))
	c.exec(commandtest.Argv("SET", "s", "value"))
	hll := []string{"PFADD", "hll"}
	for i := range 3000 {
		hll = append(hll, "e"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676)))
	}
	c.exec(commandtest.Argv(hll...))
	if c.reply.Errors != 0 {
		tb.Fatalf("setup: %d error replies", c.reply.Errors)
	}
	c.wr.Reset()
	return c
}

// pathCases are the commands of the allocation test and the benchmark;
// "%" in an argument is replaced by an 8-digit counter that changes with
// every batch (a new item each time).
var pathCases = []struct {
	name string
	args []string
}{
	{"BFAddNew", []string{"BF.ADD", "bf", "item%"}},
	{"BFExists", []string{"BF.EXISTS", "bf", "item%"}},
	{"CFAddNew", []string{"CF.ADD", "cf", "item%"}},
	{"CFExists", []string{"CF.EXISTS", "cf", "item%"}},
	{"PFAdd", []string{"PFADD", "hll", "item%"}},
	{"Get", []string{"GET", "s"}},
	{"SetExisting", []string{"SET", "s", "v%"}},
	{"Ping", []string{"PING"}},
}

// pathRequest returns p copies of the command, and the offsets of the
// counters in it.
func pathRequest(args []string, p int) ([]byte, []int) {
	var b []byte
	var at []int
	for range p {
		b = append(b, "*"+itoa(len(args))+"\r\n"...)
		for _, a := range args {
			a = strings.Replace(a, "%", "00000000", 1)
			b = append(b, "$"+itoa(len(a))+"\r\n"...)
			if i := strings.Index(a, "00000000"); i >= 0 {
				at = append(at, len(b)+i)
			}
			b = append(b, a+"\r\n"...)
		}
	}
	return b, at
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// bump writes the counter n (8 digits, different in each command of the
// batch) at each offset.
func bump(req []byte, at []int, n int) {
	for j, o := range at {
		v := n*len(at) + j
		for k := 7; k >= 0; k-- {
			req[o+k] = byte('0' + v%10)
			v /= 10
		}
	}
}

// TestPathAllocs: from the request bytes of a batch of 16 pipelined
// commands read from the connection to their replies written to it, the
// server reads once, writes once, and allocates nothing on the BF.ADD,
// BF.EXISTS, CF.ADD, CF.EXISTS, PFADD (dense), GET, SET (of a key that
// holds a string of about the new value's size, whose buffer it reuses)
// and PING paths.
func TestPathAllocs(t *testing.T) {
	for _, tc := range pathCases {
		conn := &replayConn{}
		c := pathClient(t, conn)
		var at []int
		conn.req, at = pathRequest(tc.args, 16)
		n := 0
		errs := c.reply.Errors
		reads, writes := conn.reads, conn.writes
		allocs := testing.AllocsPerRun(100, func() {
			n++
			bump(conn.req, at, n)
			if !c.batch() {
				t.Fatal("batch ended the connection")
			}
		}) / 16
		if c.reply.Errors != errs {
			t.Fatalf("%s: %d error replies; last batch %q", tc.name, c.reply.Errors-errs, conn.out)
		}
		batches := n
		if conn.reads-reads != batches || conn.writes-writes != batches {
			t.Errorf("%s: %d reads and %d writes for %d batches", tc.name, conn.reads-reads, conn.writes-writes, batches)
		}
		if allocs > 0 {
			t.Errorf("%s: %.2f allocations per command, want 0", tc.name, allocs)
		}
		t.Logf("%s: %.2f allocations per command", tc.name, allocs)
	}
}

// The buffer figures CLIENT LIST reports (qbuf, qbuf-free, argv-mem)
// follow the parser: a partial command stays buffered, the last complete
// command's arguments are counted.
func TestQueryBufStats(t *testing.T) {
	conn := &replayConn{}
	c := pathClient(t, conn)
	partial := "*2\r\n$4\r\nECHO\r\n$5\r\nab"
	conn.req = []byte(cmd("ECHO", "hello") + partial)
	if !c.batch() {
		t.Fatal("batch ended the connection")
	}
	used, free := c.queryBuf()
	if used != len(partial) || free != c.in.Cap()-len(conn.req) {
		t.Fatalf("qbuf %d, qbuf-free %d; want %d, %d", used, free, len(partial), c.in.Cap()-len(conn.req))
	}
	if n := c.argvMem(); n != len("ECHO")+len("hello") {
		t.Fatalf("argv-mem %d", n)
	}
}

// BenchmarkPath measures one command on the whole server path (read,
// parse, dispatch, reply, write; without a socket) in batches of 1 and 16
// pipelined commands; ns/op is per command.
func BenchmarkPath(b *testing.B) {
	noScrub(b)
	for _, p := range []int{1, 16} {
		for _, tc := range pathCases {
			b.Run(tc.name+"/P"+itoa(p), func(b *testing.B) {
				conn := &replayConn{}
				c := pathClient(b, conn)
				var at []int
				conn.req, at = pathRequest(tc.args, p)
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					n++
					if n%p == 0 {
						bump(conn.req, at, n)
						c.batch()
					}
				}
			})
		}
	}
}
