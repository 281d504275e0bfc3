package server

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/testutil"
)

// tset key size stores a testValue of size bytes: a denyoom write.
var tsetSpec = &command.Spec{Name: "tset", Arity: 3, Flags: command.FlagWrite | command.FlagDenyOOM,
	FirstKey: 1, LastKey: 1, Step: 1, Handler: func(c *command.Ctx) {
		n, err := strconv.ParseUint(string(c.Args[2]), 10, 64)
		if err != nil {
			c.R.Error("ERR value is not an integer or out of range")
			return
		}
		c.Store.Update(c.Args[1], func(tx *keyspace.Txn) { tx.Set(&testValue{typ: "string", size: n}) })
		c.R.OK()
	}}

// tget key: a readonly command that is not denyoom.
var tgetSpec = &command.Spec{Name: "tget", Arity: 2, Flags: command.FlagReadonly,
	FirstKey: 1, LastKey: 1, Step: 1, Handler: func(c *command.Ctx) {
		found := false
		c.Store.View(c.Args[1], func(v keyspace.Value) { found = v != nil })
		c.R.Bool(found)
	}}

func infoField(t *testing.T, r *raw, section, field string) string {
	t.Helper()
	s := r.do("INFO", section)
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO %s has no %s: %q", section, field, s)
	return ""
}

func configGet(t *testing.T, r *raw, name string) string {
	t.Helper()
	got := r.do("CONFIG", "GET", name)
	parts := strings.Split(got, "\r\n")
	if len(parts) < 5 {
		t.Fatalf("CONFIG GET %s = %q", name, got)
	}
	return parts[4]
}

// Every limit is registered, shown in CONFIG GET and INFO with its default.
func TestLimitsInConfigAndInfo(t *testing.T) {
	e := start(t, nil)
	r := e.raw(t)
	for _, c := range []struct{ param, section, field, want string }{
		{"maxclients", "clients", "maxclients", "10000"},
		{"proto-max-bulk-len", "clients", "proto_max_bulk_len", "536870912"},
		{"proto-max-multibulk-len", "clients", "proto_max_multibulk_len", "1048576"},
		{"client-query-buffer-limit", "clients", "client_query_buffer_limit", "1073741824"},
		{"maxmemory", "memory", "maxmemory", "0"},
	} {
		if got := configGet(t, r, c.param); got != c.want {
			t.Errorf("CONFIG GET %s = %q, want %q", c.param, got, c.want)
		}
		if got := infoField(t, r, c.section, c.field); got != c.want {
			t.Errorf("INFO %s = %q, want %q", c.field, got, c.want)
		}
	}
	// Memory units, and the new value shows in INFO at once.
	if got := r.do("CONFIG", "SET", "maxmemory", "2mb", "proto-max-bulk-len", "1mb", "client-query-buffer-limit", "3mb"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := infoField(t, r, "memory", "maxmemory"); got != "2097152" {
		t.Errorf("maxmemory after CONFIG SET 2mb = %s", got)
	}
	if got := infoField(t, r, "clients", "proto_max_bulk_len"); got != "1048576" {
		t.Errorf("proto_max_bulk_len = %s", got)
	}
	if got := infoField(t, r, "clients", "client_query_buffer_limit"); got != "3145728" {
		t.Errorf("client_query_buffer_limit = %s", got)
	}
	for _, c := range []struct{ args []string }{
		{[]string{"maxmemory", "lots"}},
		{[]string{"proto-max-bulk-len", "1000"}},
		{[]string{"proto-max-multibulk-len", "0"}},
		{[]string{"client-query-buffer-limit", "-1"}},
		{[]string{"maxclients", "0"}},
	} {
		got := r.do(append([]string{"CONFIG", "SET"}, c.args...)...)
		if !strings.HasPrefix(got, "-ERR CONFIG SET failed (possibly related to argument '"+c.args[0]+"') - argument must be") &&
			!strings.HasPrefix(got, "-ERR CONFIG SET failed (possibly related to argument '"+c.args[0]+"') - argument couldn't") {
			t.Errorf("CONFIG SET %v = %q", c.args, got)
		}
	}
}

// Options outside CONFIG SET's ranges are refused by New.
func TestNewRejectsBadLimits(t *testing.T) {
	for _, o := range []Options{{MaxBulkLen: 10}, {MaxQueryBuffer: 10}, {MaxArgs: 1 << 31}} {
		o.Store, o.Table = keyspace.New(nil), command.NewTable()
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

// expectOtherClientFine checks another connection is unaffected and a new
// one is admitted.
func expectOtherClientFine(t *testing.T, e *env, other *raw) {
	t.Helper()
	if got := other.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("other client: %q", got)
	}
	if got := e.raw(t).do("ECHO", "x"); got != "$1\r\nx\r\n" {
		t.Fatalf("new client: %q", got)
	}
}

// busyClient is an already-connected client that keeps sending commands
// from its own goroutine (a write, TSET, and a read of it, TGET, or ECHO
// and TGET with writes false) and checks every reply while another
// connection crosses a limit: the violation must not disturb it, neither
// during nor after. The server must have tsetSpec and tgetSpec.
type busyClient struct {
	t    *testing.T
	r    *raw
	stop chan struct{}
	done chan error
	ops  atomic.Int64
}

func startBusy(t *testing.T, e *env, writes bool) *busyClient {
	t.Helper()
	r := e.raw(t)
	if got := r.do("PING"); got != "+PONG\r\n" { // admitted before the violation
		t.Fatalf("busy client: %q", got)
	}
	if got := r.do("TSET", "busy", "1"); got != "+OK\r\n" {
		t.Fatalf("busy client: %q", got)
	}
	b := &busyClient{t: t, r: r, stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		b.done <- func() error {
			for i := 0; ; i++ {
				select {
				case <-b.stop:
					return nil
				default:
				}
				first, want := cmd("ECHO", strconv.Itoa(i)), "$"+strconv.Itoa(len(strconv.Itoa(i)))+"\r\n"+strconv.Itoa(i)+"\r\n"
				if writes {
					first, want = cmd("TSET", "busy", strconv.Itoa(i)), "+OK\r\n"
				}
				if _, err := r.c.Write([]byte(first + cmd("TGET", "busy"))); err != nil {
					return fmt.Errorf("busy client, op %d: %v", i, err)
				}
				_ = r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
				for _, w := range []string{want, ":1\r\n"} {
					got, err := readReply(r.br)
					if err != nil || got != w {
						return fmt.Errorf("busy client, op %d: %q, %v (want %q)", i, got, err, w)
					}
				}
				b.ops.Add(1)
			}
		}()
	}()
	t.Cleanup(func() { b.finish() })
	b.progress() // running
	return b
}

// progress waits until the busy client has completed two more round
// trips than now: it is being served at this point of the test.
func (b *busyClient) progress() {
	b.t.Helper()
	target := b.ops.Load() + 2
	deadline := time.Now().Add(10 * time.Second)
	for b.ops.Load() < target {
		select {
		case err := <-b.done:
			b.done <- err
			b.t.Fatalf("busy client stopped: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("busy client made no progress in 10 s (%d ops)", b.ops.Load())
		}
		time.Sleep(time.Millisecond)
	}
}

// finish stops the busy client and fails the test on any bad reply.
func (b *busyClient) finish() {
	b.t.Helper()
	select {
	case <-b.stop:
		return
	default:
	}
	close(b.stop)
	if err := <-b.done; err != nil {
		b.t.Fatal(err)
	}
}

// The protocol limits below (argument count, bulk length, query buffer)
// close the offending connection after the error reply, as Redis does: the
// violation is in the request's framing (a header announcing too much), so
// the rest of that connection's byte stream cannot be resynchronised.
// Every such test checks that an already-connected client keeps being
// served while the violation is read, answered and the connection closed,
// and afterwards (docs/OPERATIONS.md, "Limits").

// The argument-count limit: protocol error, the offending connection is
// closed, the commands before it ran, other clients are unaffected.
func TestLimitMaxArgs(t *testing.T) {
	e := start(t, nil, tsetSpec, tgetSpec)
	other := e.raw(t)
	other.do("PING")
	busy := startBusy(t, e, true)
	admin := e.raw(t)
	if got := admin.do("CONFIG", "SET", "proto-max-multibulk-len", "3"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := admin.do("ECHO", "abc"); got != "$3\r\nabc\r\n" { // 2 args: fine
		t.Fatal(got)
	}
	r := e.raw(t)
	r.send(cmd("PING"))
	if got := r.read(); got != "+PONG\r\n" {
		t.Fatalf("command before the violation: %q", got)
	}
	r.send(cmd("PING") + "*4\r\n$6\r\nCLIENT\r\n")
	busy.progress()
	if got := r.read(); got != "+PONG\r\n" {
		t.Fatalf("command before the violation: %q", got)
	}
	if got := r.read(); got != "-ERR Protocol error: invalid multibulk length\r\n" {
		t.Fatalf("4 arguments with proto-max-multibulk-len 3: %q", got)
	}
	busy.progress()
	r.expectClosed()
	busy.progress()
	busy.finish()
	expectOtherClientFine(t, e, other)
	if got := infoField(t, admin, "clients", "proto_max_multibulk_len"); got != "3" {
		t.Fatalf("INFO proto_max_multibulk_len = %s", got)
	}
}

// The bulk-length limit, with the same guarantees; the other client is
// served while the offending command is half sent, after its violating
// header and after the close.
func TestLimitMaxBulkLen(t *testing.T) {
	e := start(t, func(o *Options) { o.MaxBulkLen = 1 << 20 }, tsetSpec, tgetSpec)
	other := e.raw(t)
	other.do("PING")
	busy := startBusy(t, e, true)
	r := e.raw(t)
	if got := r.do("ECHO", strings.Repeat("a", 1<<20)); len(got) != 1<<20+12 {
		t.Fatalf("ECHO of exactly proto-max-bulk-len: %d bytes", len(got))
	}
	r.send("*2\r\n$4\r\nECHO\r\n")
	busy.progress()
	r.send("$1048577\r\n")
	busy.progress()
	if got := r.read(); got != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("over-limit bulk = %q", got)
	}
	r.expectClosed()
	busy.progress()
	busy.finish()
	expectOtherClientFine(t, e, other)
}

// The per-command size limit: the other client is served while 600 KiB of
// the offending command are buffered, and after it is refused and closed.
func TestLimitQueryBuffer(t *testing.T) {
	e := start(t, nil, tsetSpec, tgetSpec)
	other := e.raw(t)
	other.do("PING")
	busy := startBusy(t, e, true)
	r := e.raw(t)
	if got := r.do("CONFIG", "SET", "client-query-buffer-limit", "1mb"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	half := strings.Repeat("b", 600<<10)
	r.send("*3\r\n$4\r\nECHO\r\n$" + strconv.Itoa(len(half)) + "\r\n" + half + "\r\n")
	busy.progress()
	r.send("$" + strconv.Itoa(len(half)) + "\r\n")
	busy.progress()
	if got := r.read(); got != "-ERR Protocol error: query buffer limit exceeded\r\n" {
		t.Fatalf("over-limit command = %q", got)
	}
	r.expectClosed()
	busy.progress()
	busy.finish()
	expectOtherClientFine(t, e, other)
}

// maxclients: the extra connection gets the error and is closed (it was
// never admitted, as in Redis); the connected ones keep working, on the
// connection that lowered the limit too; a refused client that retries
// once a slot is free, or after the limit is raised, is admitted.
func TestLimitMaxClientsRuntime(t *testing.T) {
	e := start(t, nil, tsetSpec, tgetSpec)
	a := e.raw(t)
	busy := startBusy(t, e, true)
	if got := a.do("CONFIG", "SET", "maxclients", "2"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	for i := 0; i < 2; i++ {
		b := e.raw(t)
		_ = b.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if got, err := b.br.ReadString('\n'); got != "-ERR max number of clients reached\r\n" {
			t.Fatalf("third client: %q %v", got, err)
		}
		b.expectClosed()
		busy.progress()
		if got := a.do("PING"); got != "+PONG\r\n" {
			t.Fatalf("connected client after a refusal: %q", got)
		}
	}
	if got := infoField(t, a, "clients", "maxclients"); got != "2" {
		t.Fatalf("INFO maxclients = %s", got)
	}
	if got := infoField(t, a, "stats", "rejected_connections"); got != "2" {
		t.Fatalf("rejected_connections = %s", got)
	}
	if got := a.do("TSET", "a", "1"); got != "+OK\r\n" {
		t.Fatalf("write on the connected client: %q", got)
	}
	// A slot frees when a client leaves: the retrying client is admitted.
	busy.finish()
	busy.r.c.Close()
	testutil.Eventually(t, 5*time.Second, func() bool { return e.srv.Stats().ConnectedClients < 2 })
	c := e.raw(t)
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("retry after a slot freed: %q", got)
	}
	// Raising the limit admits more at once.
	a.do("CONFIG", "SET", "maxclients", "10")
	if got := e.raw(t).do("PING"); got != "+PONG\r\n" {
		t.Fatalf("after raising maxclients: %q", got)
	}
	if got := a.do("TGET", "a"); got != ":1\r\n" {
		t.Fatalf("connected client at the end: %q", got)
	}
}

const oomReply = "-OOM command not allowed when used memory > 'maxmemory'.\r\n"

// maxmemory: over the limit denyoom commands get Redis's OOM error, other
// commands (reads, DEL, CONFIG) work on the same connection and on others
// (a reader keeps being served throughout); the connection stays open and
// usable; freeing memory lets writes through again.
func TestLimitMaxMemory(t *testing.T) {
	e := start(t, nil, tsetSpec, tgetSpec)
	r, other := e.raw(t), e.raw(t)
	other.do("PING")
	busy := startBusy(t, e, false) // key "busy": 5 bytes
	if got := r.do("CONFIG", "SET", "maxmemory", "1000"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := r.do("TSET", "a", "600"); got != "+OK\r\n" {
		t.Fatalf("under the limit: %q", got)
	}
	// 606 bytes used (keys + values) is under 1000: tset (which reserves
	// nothing) is admitted and takes the total over the limit; the
	// accounting is exact, so the very next write is refused.
	if got := r.do("TSET", "b", "600"); got != "+OK\r\n" {
		t.Fatalf("still under the limit when it ran: %q", got)
	}
	if got := r.do("TSET", "c", "1"); got != oomReply {
		t.Fatalf("over maxmemory: %q", got)
	}
	busy.progress()
	// Same connection: reads and deletes work; other client too.
	if got := r.do("TGET", "a"); got != ":1\r\n" {
		t.Fatalf("read over maxmemory: %q", got)
	}
	if got := other.do("TSET", "d", "1"); got != oomReply {
		t.Fatalf("other client's write: %q", got)
	}
	if got := other.do("TGET", "b"); got != ":1\r\n" {
		t.Fatalf("other client's read: %q", got)
	}
	if got := infoField(t, r, "memory", "used_memory"); got != "1207" {
		t.Fatalf("used_memory = %s", got)
	}
	if got := r.do("DEL", "b"); got != ":1\r\n" {
		t.Fatalf("DEL over maxmemory: %q", got)
	}
	// Freeing memory lets the next write through at once.
	if got := r.do("TSET", "c", "1"); got != "+OK\r\n" {
		t.Fatalf("after freeing memory: %q", got)
	}
	// Lowering the limit takes effect with the next command.
	r.do("CONFIG", "SET", "maxmemory", "10")
	if got := r.do("TSET", "e", "1"); got != oomReply {
		t.Fatalf("after lowering maxmemory: %q", got)
	}
	r.do("CONFIG", "SET", "maxmemory", "0")
	if got := r.do("TSET", "e", "1"); got != "+OK\r\n" {
		t.Fatalf("maxmemory 0 = no limit: %q", got)
	}
	if n := infoField(t, r, "stats", "total_error_replies"); n == "0" {
		t.Fatal("total_error_replies did not count the OOM errors")
	}
	busy.progress()
	busy.finish()
	if got := other.do("TGET", "a"); got != ":1\r\n" {
		t.Fatalf("other client at the end: %q", got)
	}
}

type obsCall struct {
	name   string
	failed bool
}

type fakeObserver struct {
	mu    sync.Mutex
	calls []obsCall
}

func (o *fakeObserver) Recorder() Recorder { return o }
func (o *fakeObserver) Flush()             {}

func (o *fakeObserver) Command(name string, d time.Duration, failed bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d < 0 {
		panic("negative duration")
	}
	o.calls = append(o.calls, obsCall{name, failed})
}

func TestObserver(t *testing.T) {
	obs := &fakeObserver{}
	e := start(t, func(o *Options) { o.Observer = obs; o.RequirePass = "pw" })
	r := e.raw(t)
	r.do("PING")        // NOAUTH: error
	r.do("AUTH", "pw")  // ok
	r.do("PING")        // ok
	r.do("NOSUCH", "x") // unknown
	r.do("CONFIG", "GET", "maxclients")
	r.do("CONFIG", "NOPE")
	r.do("ECHO") // arity
	want := []obsCall{{"ping", true}, {"auth", false}, {"ping", false}, {UnknownCommand, true},
		{"config|get", false}, {"config", true}, {"echo", true}}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.calls) != len(want) {
		t.Fatalf("calls = %v", obs.calls)
	}
	for i := range want {
		if obs.calls[i] != want[i] {
			t.Errorf("call %d = %v, want %v", i, obs.calls[i], want[i])
		}
	}
}

func TestRedactProtoError(t *testing.T) {
	if got := redactProtoError("Protocol error: expected '$', got 's'"); got != "Protocol error: expected '$'" {
		t.Fatal(got)
	}
	if got := redactProtoError("Protocol error: invalid bulk length"); got != "Protocol error: invalid bulk length" {
		t.Fatal(got)
	}
}
