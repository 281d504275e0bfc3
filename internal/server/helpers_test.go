package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/command/generic"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
)

// testValue is a minimal keyspace.Value.
type testValue struct {
	typ  string
	size uint64
}

func (v *testValue) TypeName() string      { return v.typ }
func (v *testValue) MemoryUsage() uint64   { return v.size }
func (v *testValue) Clone() keyspace.Value { c := *v; return &c }

// fakeLog records mutation records and hands out sequence numbers.
type fakeLog struct {
	mu   sync.Mutex
	seq  uint64
	recs []string
}

func (l *fakeLog) Append(args [][]byte) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = string(a)
	}
	l.recs = append(l.recs, strings.Join(parts, " "))
	l.seq++
	return l.seq, nil
}

func (l *fakeLog) records() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.recs...)
}

// fakePersist records Wait calls; Wait blocks while gate is open.
type fakePersist struct {
	mu         sync.Mutex
	waits      []uint64
	gate       chan struct{} // nil: Wait returns at once
	snapErr    error
	inProgress bool
	snaps      int
	bgsnaps    int
	last       time.Time
	waitErr    error // returned by Wait
	saveFailed bool  // LastSaveOK reports false
	writeErr   bool  // LastWriteOK reports false
	// lateRival makes the next Snapshot/BGSnapshot lose the race with a
	// snapshot that started after the server's InProgress check.
	lateRival bool
	log       *fakeLog // LastSeq's source
	// failFrom, if not 0, makes Wait fail (waitErr) only for sequence
	// numbers from failFrom on: the records before it were written.
	failFrom uint64
}

// rival reports the persist layer's own in-progress error once, as a
// snapshot started between InProgress and the call would (p.mu held).
func (p *fakePersist) rival() error {
	if !p.lateRival {
		return nil
	}
	p.lateRival, p.inProgress = false, true
	return errors.New("persist: snapshot already in progress")
}

func (p *fakePersist) Wait(seq uint64) error {
	p.mu.Lock()
	p.waits = append(p.waits, seq)
	g := p.gate
	p.mu.Unlock()
	if g != nil {
		<-g
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failFrom > 0 && seq < p.failFrom {
		return nil // records before failFrom were written
	}
	return p.waitErr
}

func (p *fakePersist) waitCalls() []uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]uint64(nil), p.waits...)
}

func (p *fakePersist) Snapshot(*keyspace.Store) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.snaps++
	if err := p.rival(); err != nil {
		return err
	}
	return p.snapErr
}

func (p *fakePersist) BGSnapshot(*keyspace.Store) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bgsnaps++
	return p.rival()
}

func (p *fakePersist) InProgress() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inProgress
}
func (p *fakePersist) LastSave() time.Time { return p.last }
func (p *fakePersist) LastSaveOK() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.saveFailed
}

func (p *fakePersist) LastWriteOK() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.writeErr
}

func (p *fakePersist) AOFSize() int64  { return 1234 }
func (p *fakePersist) Changes() uint64 { return 7 }

// Written is 0: the fake buffers nothing of its own, so a pipelined
// batch always yields before waiting.
func (p *fakePersist) Written() uint64 { return 0 }

// LastSeq is the sequence number of log's last record (set log to the
// env's fakeLog), 0 without one.
func (p *fakePersist) LastSeq() uint64 {
	p.mu.Lock()
	l := p.log
	p.mu.Unlock()
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

type env struct {
	srv   *Server
	addr  string
	store *keyspace.Store
	log   *fakeLog
	cfg   *config.Registry
	logs  *commandtest.LogSink
}

// start runs a server on 127.0.0.1:0 with the generic commands, a test
// config parameter pair and any extra specs; tweak adjusts the options.
func start(t *testing.T, tweak func(*Options), extra ...*command.Spec) *env {
	t.Helper()
	return startOn(t, nil, tweak, extra...)
}

// startOn is start with the listener wrapped by wrap (nil: plain TCP),
// e.g. tls.NewListener.
func startOn(t *testing.T, wrap func(net.Listener) net.Listener, tweak func(*Options), extra ...*command.Spec) *env {
	t.Helper()
	e := &env{log: &fakeLog{}, cfg: config.New(), logs: &commandtest.LogSink{}}
	e.store = keyspace.New(e.log)
	e.cfg.Register(config.Param{Name: "bf-error-rate", Default: "0.01", Set: func(s string) error {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f <= 0 || f >= 1 {
			return errors.New("error rate must be in (0,1)")
		}
		return nil
	}})
	e.cfg.Register(config.Param{Name: "bf-initial-size", Default: "100", Set: func(s string) error {
		if _, err := strconv.Atoi(s); err != nil {
			return errors.New("argument couldn't be parsed into an integer")
		}
		return nil
	}})
	table := command.NewTable()
	generic.Register(table, e.cfg)
	table.Add(extra...)
	opts := Options{
		Store:  e.store,
		Config: e.cfg,
		Table:  table,
		Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if tweak != nil {
		tweak(&opts)
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if wrap != nil {
		ln = wrap(ln)
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

func (e *env) client(t *testing.T, proto int, pass string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: e.addr, Protocol: proto, Password: pass,
		MaxRetries: -1, DialTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// set stores a test value directly.
func (e *env) set(key, typ string) {
	e.store.Update([]byte(key), func(tx *keyspace.Txn) { tx.Set(&testValue{typ: typ, size: 10}) })
}

// raw is a plain TCP connection speaking bytes.
type raw struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func (e *env) raw(t *testing.T) *raw {
	t.Helper()
	c, err := net.DialTimeout("tcp", e.addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &raw{t: t, c: c, br: bufio.NewReader(c)}
}

func (r *raw) send(s string) {
	r.t.Helper()
	if _, err := r.c.Write([]byte(s)); err != nil {
		r.t.Fatal(err)
	}
}

// cmd encodes args as a RESP multibulk.
func cmd(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// do sends one command and returns its raw reply.
func (r *raw) do(args ...string) string {
	r.t.Helper()
	r.send(cmd(args...))
	return r.read()
}

// read returns one complete raw RESP reply.
func (r *raw) read() string {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	s, err := readReply(r.br)
	if err != nil {
		r.t.Fatalf("reading reply: %v (got %q)", err, s)
	}
	return s
}

func readReply(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return line, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return line, fmt.Errorf("bad line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', '-', ':', '_', '#', ',', '(':
		return line, nil
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return line, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return line, err
		}
		return line + string(buf), nil
	case '*', '~', '>', '%':
		n, err := strconv.Atoi(body)
		if err != nil {
			return line, err
		}
		if line[0] == '%' {
			n *= 2
		}
		out := line
		for i := 0; i < n; i++ {
			s, err := readReply(br)
			out += s
			if err != nil {
				return out, err
			}
		}
		return out, nil
	}
	return line, fmt.Errorf("unknown type %q", line[0])
}

// expectClosed asserts the server closes the connection (after any
// replies it still had to send).
func (r *raw) expectClosed() {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	rest, err := io.ReadAll(r.br)
	if err != nil {
		r.t.Fatalf("connection not closed: %v (read %q)", err, rest)
	}
	if len(rest) != 0 {
		r.t.Fatalf("unexpected bytes before close: %q", rest)
	}
}

// Server tests run with scrubbed input buffers: a handler or a queue that
// kept arguments past its command would read overwritten bytes.
func init() { ScrubInput = true }
