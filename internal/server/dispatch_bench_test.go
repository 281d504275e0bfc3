package server

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/bf"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/command/generic"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
)

// discardConn is a net.Conn that reads nothing and discards what is
// written: a client of it runs the dispatch path without a socket.
type discardConn struct{}

func (discardConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (discardConn) Write(p []byte) (int, error)      { return len(p), nil }
func (discardConn) Close() error                     { return nil }
func (discardConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (discardConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (discardConn) SetDeadline(time.Time) error      { return nil }
func (discardConn) SetReadDeadline(time.Time) error  { return nil }
func (discardConn) SetWriteDeadline(time.Time) error { return nil }

// dispatchClient returns a client of a server with the generic and bf
// commands over a discarding connection, and key "bf" reserved for 10M
// items at 1 %.
func dispatchClient(tb testing.TB) *client {
	tb.Helper()
	cfg := config.New()
	store := keyspace.New(&commandtest.Discard{})
	table := command.NewTable()
	generic.Register(table, cfg)
	bf.Register(table, cfg)
	s, err := New(Options{Store: store, Config: cfg, Table: table, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	c := newClient(s, discardConn{})
	c.exec(commandtest.Argv("BF.RESERVE", "bf", "0.01", "10000000"))
	c.exec(commandtest.Argv("BF.ADD", "bf", "present"))
	if err := c.wr.Flush(); err != nil {
		tb.Fatal(err)
	}
	return c
}

// TestDispatchAllocs: running a command through the server's dispatch
// path allocates nothing beyond what the handler itself does (BF.EXISTS
// and BF.ADD of an item already present allocate nothing at all).
func TestDispatchAllocs(t *testing.T) {
	c := dispatchClient(t)
	exists := commandtest.Argv("BF.EXISTS", "bf", "present")
	add := commandtest.Argv("BF.ADD", "bf", "present")
	unknown := commandtest.Argv("NOSUCH")
	errs := c.reply.Errors
	for _, args := range [][][]byte{exists, add} {
		if a := testing.AllocsPerRun(200, func() {
			c.exec(args)
			c.wr.Reset()
		}); a != 0 {
			t.Fatalf("%s: %v allocations per command", args[0], a)
		}
	}
	if c.reply.Errors != errs {
		t.Fatalf("%d error replies", c.reply.Errors-errs)
	}
	c.exec(unknown)
	if c.reply.Errors != errs+1 {
		t.Fatal("unknown command not answered with an error")
	}
}

// BenchmarkDispatch measures one command through the server's dispatch
// path (lookup, checks, handler, reply into the write buffer), without
// the socket: BF.ADD of new items, BF.EXISTS, and an unknown command.
func BenchmarkDispatch(b *testing.B) {
	for _, bc := range []struct {
		name string
		args func(item []byte) [][]byte
	}{
		{"BFAdd", func(item []byte) [][]byte { return [][]byte{[]byte("BF.ADD"), []byte("bf"), item} }},
		{"BFExists", func(item []byte) [][]byte { return [][]byte{[]byte("BF.EXISTS"), []byte("bf"), item} }},
		{"Ping", func([]byte) [][]byte { return [][]byte{[]byte("PING")} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := dispatchClient(b)
			items := commandtest.NewRandInts(1<<30, 1)
			args := bc.args(nil)
			b.ReportAllocs()
			for b.Loop() {
				if len(args) > 2 {
					args[2] = items.Next()
				}
				c.exec(args)
				c.wr.Reset()
			}
		})
	}
}

// TestIsHTTP: the first words of HTTP request lines, in any case, and
// nothing else.
func TestIsHTTP(t *testing.T) {
	for name, want := range map[string]bool{
		"POST": true, "post": true, "PoSt": true, "Host:": true, "HOST:": true, "hOsT:": true,
		"": false, "P": false, "PING": false, "host": false, "hosts": false, "xost": false,
		"POSTS": false, "Post:": false, "GET": false, "po": false,
	} {
		if got := isHTTP([]byte(name)); got != want {
			t.Errorf("isHTTP(%q) = %v", name, got)
		}
	}
}
