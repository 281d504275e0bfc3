package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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

// The maxmemory tests use a 20 MiB limit and 8 MiB writes: two fit, a
// third does not.
const (
	mmLimit   = 20 << 20
	mmOffset  = 8<<20 - 1 // SETRANGE k 8388607 x makes an 8 MiB string
	mmSetLen  = ":8388608\r\n"
	mmClients = 40
)

// startFull runs a server with the real command families (strings, BF,
// CF, HLL) and maxmemory 20mb.
func startFull(t *testing.T) *env {
	t.Helper()
	return startFullWith(t, func(o *Options) { o.MaxMemory = mmLimit })
}

// startFullWith runs a server with the real command families; tweak
// adjusts the options.
func startFullWith(t *testing.T, tweak func(*Options)) *env {
	t.Helper()
	e := &env{log: &fakeLog{}, cfg: config.New(), logs: &commandtest.LogSink{}}
	e.store = keyspace.New(e.log)
	table := command.NewTable()
	generic.Register(table, e.cfg)
	str.Register(table, e.cfg)
	bf.Register(table, e.cfg)
	cf.Register(table, e.cfg)
	pf.Register(table, e.cfg)
	opts := Options{Store: e.store, Config: e.cfg, Table: table, Logger: slog.New(slog.NewTextHandler(e.logs, nil))}
	tweak(&opts)
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	e.srv, e.addr = srv, ln.Addr().String()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-served; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	return e
}

// mmConn is a connection usable from any goroutine (errors are returned,
// not reported through t).
type mmConn struct {
	c  net.Conn
	br *bufio.Reader
}

func (e *env) dial(t *testing.T) *mmConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", e.addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &mmConn{c: c, br: bufio.NewReaderSize(c, 1<<16)}
}

// pipeline sends every command in one write and reads one reply each.
func (m *mmConn) pipeline(cmds ...[]string) ([]string, error) {
	var b strings.Builder
	for _, args := range cmds {
		b.WriteString(cmd(args...))
	}
	_ = m.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(m.c, b.String()); err != nil {
		return nil, err
	}
	out := make([]string, len(cmds))
	for i := range out {
		s, err := readReply(m.br)
		if err != nil {
			return out, err
		}
		out[i] = s
	}
	return out, nil
}

func (m *mmConn) do(args ...string) (string, error) {
	r, err := m.pipeline(args)
	if err != nil {
		return "", err
	}
	return r[0], nil
}

// concurrently runs one command per connection, all released at once, and
// returns the replies.
func concurrently(t *testing.T, conns []*mmConn, argsFor func(i int) []string) []string {
	t.Helper()
	replies := make([]string, len(conns))
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			replies[i], errs[i] = c.do(argsFor(i)...)
		}()
	}
	close(gate)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	return replies
}

// checkAccounting: used memory never exceeds the limit (every command in
// these tests reserves its growth) and the exact counter matches a walk.
func (e *env) checkAccounting(t *testing.T) {
	t.Helper()
	used, walk := e.store.Used(), e.store.MemoryUsage()
	if used != walk {
		t.Fatalf("Used() = %d, MemoryUsage() = %d", used, walk)
	}
	if used > mmLimit {
		t.Fatalf("used memory %d over maxmemory %d", used, mmLimit)
	}
}

// The adversarial repro: 40 connections each SETRANGE a new 8 MiB string
// at the same time under maxmemory 20mb. Before the fix every one was
// accepted (the check read a total recomputed every 100 ms). Now at most
// two fit, the rest get the OOM error, used memory stays under the limit,
// refused connections stay usable, and DEL frees room for writes again.
func TestMaxMemoryConcurrentSetRange(t *testing.T) {
	e := startFull(t)
	conns := make([]*mmConn, mmClients)
	for i := range conns {
		conns[i] = e.dial(t)
	}
	replies := concurrently(t, conns, func(i int) []string {
		return []string{"SETRANGE", "c" + strconv.Itoa(i), strconv.Itoa(mmOffset), "x"}
	})
	var accepted []int
	for i, r := range replies {
		switch r {
		case mmSetLen:
			accepted = append(accepted, i)
		case oomReply:
		default:
			t.Fatalf("connection %d: %q", i, r)
		}
	}
	// Two fit; a refusal can also come while an accepted command's growth
	// is counted both as used and as still reserved (a few microseconds).
	if len(accepted) < 1 || len(accepted) > 2 {
		t.Fatalf("%d of %d 8 MiB SETRANGEs accepted under maxmemory 20mb", len(accepted), mmClients)
	}
	e.checkAccounting(t)

	// A refused connection is still usable: reads, DEL, PING.
	r := conns[(accepted[0]+1)%mmClients]
	if got, _ := r.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after OOM: %q", got)
	}
	if got, _ := r.do("STRLEN", "c"+strconv.Itoa(accepted[0])); got != mmSetLen {
		t.Fatalf("STRLEN after OOM: %q", got)
	}
	if got, _ := r.do("SETRANGE", "more", strconv.Itoa(mmOffset), "x"); len(accepted) == 2 && got != oomReply {
		t.Fatalf("third 8 MiB string: %q", got)
	}
	before := e.store.Used()
	for _, i := range accepted {
		if got, _ := r.do("DEL", "c"+strconv.Itoa(i)); got != ":1\r\n" {
			t.Fatalf("DEL: %q", got)
		}
	}
	e.store.Update([]byte("more"), func(tx *keyspace.Txn) { tx.Delete() })
	if after := e.store.Used(); after >= before || after > 1<<20 {
		t.Fatalf("Used after DEL: %d (before %d)", after, before)
	}
	// Writes succeed again, at once.
	replies = concurrently(t, conns[:2], func(i int) []string {
		return []string{"SETRANGE", "again" + strconv.Itoa(i), strconv.Itoa(mmOffset), "x"}
	})
	for _, got := range replies {
		if got != mmSetLen {
			t.Fatalf("after DEL: %q", got)
		}
	}
	e.checkAccounting(t)
}

// One connection pipelining 30 such SETRANGEs: exactly the first two are
// accepted (each command's growth is in Used before the next one runs).
func TestMaxMemoryPipelined(t *testing.T) {
	e := startFull(t)
	var cmds [][]string
	for i := range 30 {
		cmds = append(cmds, []string{"SETRANGE", "p" + strconv.Itoa(i), strconv.Itoa(mmOffset), "x"})
	}
	replies, err := e.dial(t).pipeline(cmds...)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range replies {
		want := oomReply
		if i < 2 {
			want = mmSetLen
		}
		if r != want {
			t.Fatalf("reply %d = %q, want %q", i, r, want)
		}
	}
	e.checkAccounting(t)
	// APPEND and SET are held to the same rule.
	c := e.dial(t)
	if got, _ := c.do("APPEND", "p0", strings.Repeat("y", 4<<20)); got != oomReply {
		t.Fatalf("APPEND over the limit: %q", got)
	}
	if got, _ := c.do("SET", "s", strings.Repeat("y", 4<<20)); got != oomReply {
		t.Fatalf("SET over the limit: %q", got)
	}
	if got, _ := c.do("SET", "s", "small"); got != "+OK\r\n" {
		t.Fatalf("small SET under the limit: %q", got)
	}
	e.checkAccounting(t)
}

// Big filters created concurrently (BF.RESERVE, BF.INSERT autocreate,
// CF.RESERVE, CF.INSERT autocreate, about 4 MiB each) are reserved before
// they are allocated: at most what fits is created.
func TestMaxMemoryConcurrentFilters(t *testing.T) {
	e := startFull(t)
	conns := make([]*mmConn, 24)
	for i := range conns {
		conns[i] = e.dial(t)
	}
	replies := concurrently(t, conns, func(i int) []string {
		k := "f" + strconv.Itoa(i)
		switch i % 4 {
		case 0:
			return []string{"BF.RESERVE", k, "0.001", "2000000"}
		case 1:
			return []string{"BF.INSERT", k, "CAPACITY", "2000000", "ERROR", "0.001", "ITEMS", "a"}
		case 2:
			return []string{"CF.RESERVE", k, "4000000", "BUCKETSIZE", "2"}
		default:
			return []string{"CF.INSERT", k, "CAPACITY", "8000000", "ITEMS", "a"}
		}
	})
	created := 0
	for i, r := range replies {
		switch r {
		case "+OK\r\n", "*1\r\n:1\r\n":
			created++
		case oomReply, noRoomReply:
		default:
			t.Fatalf("connection %d: %q", i, r)
		}
	}
	if created < 1 || created > 5 {
		t.Fatalf("%d filters of ~4 MiB created under maxmemory 20mb", created)
	}
	e.checkAccounting(t)
	if got := e.store.Len(); got != created {
		t.Fatalf("%d keys, %d creations acknowledged", got, created)
	}
}

// Random concurrent string writes of every kind: at no point does used
// memory pass the limit, and the counter stays exact.
func TestMaxMemoryConcurrentMixed(t *testing.T) {
	e := startFull(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		c := e.dial(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 60 {
				k := "m" + strconv.Itoa(r.IntN(12))
				n := r.IntN(3 << 20)
				var args []string
				switch r.IntN(5) {
				case 0: // payloads smaller than the offsets: cheap to send
					args = []string{"SET", k, strings.Repeat("v", n/32)}
				case 1:
					args = []string{"APPEND", k, strings.Repeat("a", n/32)}
				case 2:
					args = []string{"SETRANGE", k, strconv.Itoa(n), "r"}
				case 3:
					args = []string{"DEL", k}
				default:
					args = []string{"BF.RESERVE", k, "0.01", strconv.Itoa(1 + n/2)}
				}
				got, err := c.do(args...)
				if err != nil {
					errs <- err
					return
				}
				if strings.HasPrefix(got, "-") && got != oomReply && got != noRoomReply && got != bfNoGrowthReply &&
					got != cfNoGrowthReply && !strings.HasPrefix(got, "-WRONGTYPE") && got != "-ERR item exists\r\n" {
					errs <- fmt.Errorf("%s: %q", args[0], got)
					return
				}
				if u := e.store.Used(); u > mmLimit {
					errs <- fmt.Errorf("used memory %d over the limit after %s", u, args[0])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	e.checkAccounting(t)
	if got := infoField(t, e.raw(t), "memory", "used_memory"); got != strconv.FormatUint(e.store.MemoryUsage(), 10) {
		t.Fatalf("INFO used_memory %s, MemoryUsage %d", got, e.store.MemoryUsage())
	}
}

// The reservation counter returns to zero after every command, including
// refused ones, so nothing leaks.
func TestMaxMemoryReservationsReleased(t *testing.T) {
	e := startFull(t)
	c := e.dial(t)
	for _, args := range [][]string{
		{"SETRANGE", "a", strconv.Itoa(mmOffset), "x"},
		{"SETRANGE", "b", "30000000", "x"},
		{"BF.RESERVE", "f", "0.001", "2000000"},
		{"CF.RESERVE", "g", "40000000"},
		{"PFADD", "h", "a"},
	} {
		if _, err := c.do(args...); err != nil {
			t.Fatal(err)
		}
		if r := e.srv.mem.reserved.Load(); r != 0 {
			t.Fatalf("after %s: %d bytes still reserved", args[0], r)
		}
	}
	e.checkAccounting(t)
}
