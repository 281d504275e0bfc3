package server

import (
	"bufio"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/testutil"
)

// rawConn is a plain connection for inline commands and exact reads.
type rawConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialConn(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{c: c, r: bufio.NewReader(c)}
}

func (rc *rawConn) send(t *testing.T, lines ...string) {
	t.Helper()
	if _, err := rc.c.Write([]byte(strings.Join(lines, "\r\n") + "\r\n")); err != nil {
		t.Fatal(err)
	}
}

// read reads exactly n bytes (10 s deadline).
func (rc *rawConn) read(t *testing.T, n int) string {
	t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := make([]byte, n)
	if _, err := io.ReadFull(rc.r, b); err != nil {
		t.Fatalf("read %d bytes: %v (got %q)", n, err, b)
	}
	return string(b)
}

func (rc *rawConn) line(t *testing.T) string {
	t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	l, err := rc.r.ReadString('\n')
	if err != nil {
		t.Fatalf("read line: %v (got %q)", err, l)
	}
	return l
}

// CLIENT REPLY OFF drops replies until ON; SKIP drops its own and the
// next command's.
func TestClientReply(t *testing.T) {
	e := start(t, nil)
	c := dialConn(t, e.addr)
	c.send(t, "CLIENT REPLY OFF", "PING", "ECHO x", "CLIENT REPLY ON", "PING")
	if got := c.read(t, len("+OK\r\n+PONG\r\n")); got != "+OK\r\n+PONG\r\n" {
		t.Fatalf("after OFF … ON: %q", got)
	}
	c.send(t, "CLIENT REPLY SKIP", "ECHO a", "ECHO b")
	if got := c.read(t, len("$1\r\nb\r\n")); got != "$1\r\nb\r\n" {
		t.Fatalf("after SKIP: %q", got)
	}
}

// CLIENT KILL closes the other connection; the old form answers +OK;
// SKIPME no kills the caller after its reply.
func TestClientKill(t *testing.T) {
	e := start(t, nil)
	a, b := commandtest.DialRaw(t, e.addr, 2), dialConn(t, e.addr)
	b.send(t, "CLIENT ID")
	bid := strings.TrimSpace(b.line(t))[1:]
	if got, _ := a.Do(commandtest.Argv("CLIENT", "KILL", "ID", bid)); got != ":1\r\n" {
		t.Fatalf("CLIENT KILL ID %s = %q", bid, got)
	}
	_ = b.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := b.r.ReadByte(); err == nil {
		t.Fatal("the killed connection is still open")
	}
	c := dialConn(t, e.addr)
	c.send(t, "CLIENT INFO")
	c.line(t)
	m := regexp.MustCompile(`addr=(\S+)`).FindStringSubmatch(c.line(t))
	if got, _ := a.Do(commandtest.Argv("CLIENT", "KILL", m[1])); got != "+OK\r\n" {
		t.Fatalf("CLIENT KILL %s = %q", m[1], got)
	}
	// Not itself by default; itself with SKIPME no, after the reply.
	aid, _ := a.Do(commandtest.Argv("CLIENT", "ID"))
	id := strings.TrimSpace(aid)[1:]
	if got, _ := a.Do(commandtest.Argv("CLIENT", "KILL", "ID", id)); got != ":0\r\n" {
		t.Fatalf("CLIENT KILL ID self = %q", got)
	}
	if got, _ := a.Do(commandtest.Argv("CLIENT", "KILL", "ID", id, "SKIPME", "no")); got != ":1\r\n" {
		t.Fatalf("CLIENT KILL ID self SKIPME no = %q", got)
	}
	if _, err := a.Do(commandtest.Argv("PING")); err == nil {
		t.Fatal("the connection that killed itself still answers")
	}
}

// CLIENT PAUSE WRITE holds writes and lets reads run; UNPAUSE releases
// them.
func TestClientPauseWrite(t *testing.T) {
	e := start(t, nil, &command.Spec{Name: "test.set", Arity: 2, Flags: command.FlagWrite, Handler: func(c *command.Ctx) {
		c.R.OK()
	}})
	admin, reader, writer := commandtest.DialRaw(t, e.addr, 2), commandtest.DialRaw(t, e.addr, 2), dialConn(t, e.addr)
	if got, _ := admin.Do(commandtest.Argv("CLIENT", "PAUSE", "60000", "WRITE")); got != "+OK\r\n" {
		t.Fatalf("CLIENT PAUSE = %q", got)
	}
	before := e.srv.stats.in.Load()
	writer.send(t, "TEST.SET k")
	if got, _ := reader.Do(commandtest.Argv("PING")); got != "+PONG\r\n" {
		t.Fatalf("a read during CLIENT PAUSE WRITE = %q", got)
	}
	// The server has read the write (its bytes are counted) …
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		return e.srv.stats.in.Load() >= before+uint64(len("TEST.SET k\r\n")+len("*1\r\n$4\r\nPING\r\n"))
	}) {
		t.Fatal("the server never read the write")
	}
	// … and it has not run.
	if st := e.srv.ops.stats[e.srv.table.Lookup([]byte("test.set"))]; st.calls.Load() != 0 {
		t.Fatalf("the write ran during the pause")
	}
	if got, _ := admin.Do(commandtest.Argv("CLIENT", "UNPAUSE")); got != "+OK\r\n" {
		t.Fatalf("CLIENT UNPAUSE = %q", got)
	}
	if got := writer.line(t); got != "+OK\r\n" {
		t.Fatalf("the paused write after UNPAUSE = %q", got)
	}
}

// MONITOR shows the commands others run, quoted as Redis, with AUTH's
// arguments redacted and admin commands left out.
func TestMonitorFeed(t *testing.T) {
	e := start(t, nil)
	m := dialConn(t, e.addr)
	m.send(t, "MONITOR")
	if got := m.line(t); got != "+OK\r\n" {
		t.Fatalf("MONITOR = %q", got)
	}
	c := commandtest.DialRaw(t, e.addr, 2)
	c.Do(commandtest.Argv("ECHO", "a\x00b\"\n\\é"))
	c.Do(commandtest.Argv("CONFIG", "GET", "maxclients")) // admin: not shown
	c.Do(commandtest.Argv("AUTH", "default", "secret"))
	c.Do(commandtest.Argv("HELLO", "2", "AUTH", "default", "secret"))
	c.Do(commandtest.Argv("MULTI"))
	c.Do(commandtest.Argv("ECHO", "queued"))
	c.Do(commandtest.Argv("EXEC"))
	c.Do(commandtest.Argv("PING"))
	line := func(cmd string) *regexp.Regexp {
		return regexp.MustCompile(`^\+\d{10}\.\d{6} \[0 127\.0\.0\.1:\d+\] ` + cmd + `\r\n$`)
	}
	// As redis-server 7 shows the same commands.
	want := []*regexp.Regexp{
		line(`"ECHO" "a\\x00b\\"\\n\\\\\\xc3\\xa9"`),
		line(`"AUTH" "\(redacted\)" "\(redacted\)"`),
		line(`"HELLO" "2" "AUTH" "\(redacted\)" "\(redacted\)"`),
		line(`"MULTI"`),
		line(`"ECHO" "queued"`),
		line(`"EXEC"`),
		line(`"PING"`),
	}
	for i, re := range want {
		if l := m.line(t); !re.MatchString(l) {
			t.Errorf("monitor line %d = %q, want %s", i, l, re)
		}
	}
	// The monitor is listed with flag O.
	list, _ := c.Do(commandtest.Argv("CLIENT", "LIST"))
	if !strings.Contains(list, " flags=O ") {
		t.Errorf("CLIENT LIST shows no monitor (flags=O): %q", list)
	}
}

// The slow log keeps 32 arguments of at most 128 bytes, worded as Redis
// (compared with redis-server).
func TestSlowlogEntriesRedis(t *testing.T) {
	raddr := commandtest.StartRedis(t)
	e := start(t, nil)
	args := []string{"DEL", strings.Repeat("k", 200)}
	for i := range 40 {
		args = append(args, "key"+strconv.Itoa(i))
	}
	entry := func(addr string) string {
		c := commandtest.DialRaw(t, addr, 2)
		c.Do(commandtest.Argv("CONFIG", "SET", "slowlog-log-slower-than", "0"))
		c.Do(commandtest.Argv("SLOWLOG", "RESET"))
		c.Do(commandtest.Argv(args...))
		c.Do(commandtest.Argv("CONFIG", "SET", "slowlog-log-slower-than", "-1"))
		got, _ := c.Do(commandtest.Argv("SLOWLOG", "GET", "-1"))
		n, _ := c.Do(commandtest.Argv("SLOWLOG", "LEN"))
		// id, time, duration and the address differ: keep the arguments
		// and the name.
		got = regexp.MustCompile(`:\d+\r\n`).ReplaceAllString(got, ":N\r\n")
		got = regexp.MustCompile(`\$\d+\r\n127\.0\.0\.1:\d+\r\n`).ReplaceAllString(got, "ADDR\r\n")
		return n + got
	}
	if got, want := entry(e.addr), entry(raddr); got != want {
		t.Errorf("slow log:\n probly %q\n redis  %q", got, want)
	}
	c := commandtest.DialRaw(t, e.addr, 2)
	c.Do(commandtest.Argv("CONFIG", "SET", "slowlog-max-len", "1"))
	if got, _ := c.Do(commandtest.Argv("SLOWLOG", "LEN")); got != ":1\r\n" {
		t.Errorf("SLOWLOG LEN after slowlog-max-len 1 = %q", got)
	}
}

// LATENCY records commands over latency-monitor-threshold.
func TestLatencyMonitor(t *testing.T) {
	e := start(t, nil, &command.Spec{Name: "test.slow", Arity: 1, Handler: func(c *command.Ctx) {
		time.Sleep(3 * time.Millisecond) // the command under measurement, not a test wait
		c.R.OK()
	}})
	c := commandtest.DialRaw(t, e.addr, 2)
	if got, _ := c.Do(commandtest.Argv("LATENCY", "LATEST")); got != "*0\r\n" {
		t.Fatalf("LATENCY LATEST before = %q", got)
	}
	c.Do(commandtest.Argv("CONFIG", "SET", "latency-monitor-threshold", "1"))
	c.Do(commandtest.Argv("TEST.SLOW"))
	got, _ := c.Do(commandtest.Argv("LATENCY", "LATEST"))
	if !regexp.MustCompile(`^\*1\r\n\*4\r\n\$7\r\ncommand\r\n:\d+\r\n:([3-9]|\d\d+)\r\n:([3-9]|\d\d+)\r\n$`).MatchString(got) {
		t.Fatalf("LATENCY LATEST = %q", got)
	}
	if got, _ := c.Do(commandtest.Argv("LATENCY", "HISTORY", "command")); !strings.HasPrefix(got, "*1\r\n*2\r\n:") {
		t.Errorf("LATENCY HISTORY command = %q", got)
	}
	if got, _ := c.Do(commandtest.Argv("LATENCY", "RESET")); got != ":1\r\n" {
		t.Errorf("LATENCY RESET = %q", got)
	}
}

// SHUTDOWN snapshots with SAVE, and by default when save points are
// configured; a failed snapshot keeps the server up unless FORCE.
func TestShutdownSave(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		save   string // the save parameter
		fail   bool   // the snapshot fails
		snaps  int
		closed bool
	}{
		{"nosave", []string{"SHUTDOWN", "NOSAVE"}, "3600 1", false, 0, true},
		{"default with save points", []string{"SHUTDOWN"}, "3600 1", false, 1, true},
		{"default without save points", []string{"SHUTDOWN"}, "", false, 0, true},
		{"save without save points", []string{"SHUTDOWN", "SAVE"}, "", false, 1, true},
		{"save fails", []string{"SHUTDOWN", "SAVE"}, "", true, 1, false},
		{"save fails, force", []string{"SHUTDOWN", "SAVE", "FORCE"}, "", true, 1, true},
		{"default fails", []string{"SHUTDOWN", "NOW"}, "1 1", true, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &fakePersist{}
			if tc.fail {
				p.snapErr = errSaveRunning
			}
			e := start(t, func(o *Options) {
				o.Persist = p
				o.Config.Register(config.Param{Name: "save", Default: tc.save, Set: func(string) error { return nil }})
			})
			c := commandtest.DialRaw(t, e.addr, 2)
			out, err := c.Do(commandtest.Argv(tc.args...))
			p.mu.Lock()
			snaps := p.snaps
			p.mu.Unlock()
			if snaps != tc.snaps {
				t.Errorf("%d snapshots, want %d", snaps, tc.snaps)
			}
			if tc.closed {
				if err == nil {
					t.Fatalf("replied %q; want the connection closed without a reply", out)
				}
				select {
				case <-e.srv.ShutdownRequested():
				default:
					t.Fatal("ShutdownRequested is not closed")
				}
				return
			}
			if out != "-ERR Errors trying to SHUTDOWN. Check logs.\r\n" {
				t.Fatalf("reply %q, %v", out, err)
			}
			select {
			case <-e.srv.ShutdownRequested():
				t.Fatal("a failed SHUTDOWN requested the shutdown")
			default:
			}
		})
	}
}
