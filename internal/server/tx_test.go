package server

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/testutil"
)

// Watched keys are unregistered when the connection ends, and the queue's
// memory is given back: nothing leaks.
func TestTxWatchUnregisteredOnClose(t *testing.T) {
	e := start(t, nil)
	a, b := e.raw(t), e.raw(t)
	if r := a.do("WATCH", "x", "y", "z", "x"); r != "+OK\r\n" {
		t.Fatalf("WATCH = %q", r)
	}
	if r := b.do("WATCH", "x"); r != "+OK\r\n" {
		t.Fatalf("WATCH = %q", r)
	}
	if n := e.store.Watched(); n != 3 {
		t.Fatalf("%d keys watched, want 3", n)
	}
	for _, args := range [][]string{{"MULTI"}, {"PING", "hello"}, {"DEL", "x"}} {
		a.do(args...)
	}
	if e.srv.mem.clients.Load() == 0 {
		t.Fatal("the queued commands are not counted as client memory")
	}
	a.c.Close()
	if !testutil.Eventually(t, 5*time.Second, func() bool { return e.store.Watched() == 1 }) {
		t.Fatalf("%d keys still watched after the connection closed, want 1", e.store.Watched())
	}
	// What is left is b's one watched key.
	if n, want := e.srv.mem.clients.Load(), watchKeyBytes([]byte("x")); n != want {
		t.Fatalf("%d bytes of client memory left after the connection with a queue closed, want %d (b's watch)", n, want)
	}
	if r := b.do("UNWATCH"); r != "+OK\r\n" {
		t.Fatalf("UNWATCH = %q", r)
	}
	if n := e.store.Watched(); n != 0 {
		t.Fatalf("%d keys watched after UNWATCH, want 0", n)
	}
	if n := e.srv.mem.clients.Load(); n != 0 {
		t.Fatalf("%d bytes of client memory left after UNWATCH", n)
	}
}

// A change made to the store directly (as the follower's apply and the
// expiry of a key do, outside any client) dirties a watch; so does FLUSHALL
// of a watched key that exists, but not of one that is missing (Redis).
func TestTxWatchDirtiedOutsideClients(t *testing.T) {
	e := start(t, nil)
	c := e.raw(t)
	exec := func() string {
		c.do("MULTI")
		c.do("PING")
		return c.do("EXEC")
	}
	c.do("WATCH", "k")
	e.set("k", "t")
	if r := exec(); r != "*-1\r\n" {
		t.Fatalf("EXEC after a store write of a watched key = %q, want a null array", r)
	}
	c.do("WATCH", "k")
	if r := exec(); r != "*1\r\n+PONG\r\n" {
		t.Fatalf("EXEC with nothing changed = %q", r)
	}
	c.do("WATCH", "missing")
	e.raw(t).do("FLUSHALL") // removes k, but missing was never there
	if r := exec(); r != "*1\r\n+PONG\r\n" {
		t.Fatalf("EXEC after FLUSHALL of a missing watched key = %q", r)
	}
	e.set("k", "t")
	c.do("WATCH", "k")
	e.raw(t).do("FLUSHALL")
	if r := exec(); r != "*-1\r\n" {
		t.Fatalf("EXEC after FLUSHALL of a watched key = %q, want a null array", r)
	}
	// RESP3: the null is _.
	c.do("HELLO", "3")
	c.do("WATCH", "k")
	e.set("k", "t")
	if r := exec(); r != "_\r\n" {
		t.Fatalf("RESP3 EXEC of a dirty transaction = %q, want _", r)
	}
}

// QUIT inside MULTI answers +OK and closes; the queue is not run. RESET
// ends the transaction.
func TestTxQuitAndReset(t *testing.T) {
	e := start(t, nil)
	e.set("k", "t")
	c := e.raw(t)
	c.do("MULTI")
	if r := c.do("DEL", "k"); r != "+QUEUED\r\n" {
		t.Fatalf("DEL inside MULTI = %q", r)
	}
	if r := c.do("QUIT"); r != "+OK\r\n" {
		t.Fatalf("QUIT = %q", r)
	}
	c.expectClosed()
	d := e.raw(t)
	if r := d.do("EXISTS", "k"); r != ":1\r\n" {
		t.Fatalf("EXISTS after QUIT inside MULTI = %q: the queue ran", r)
	}
	d.do("WATCH", "k")
	d.do("MULTI")
	d.do("DEL", "k")
	if r := d.do("RESET"); r != "+RESET\r\n" {
		t.Fatalf("RESET = %q", r)
	}
	if r := d.do("EXEC"); r != "-ERR EXEC without MULTI\r\n" {
		t.Fatalf("EXEC after RESET = %q", r)
	}
	if n := e.store.Watched(); n != 0 {
		t.Fatalf("%d keys watched after RESET", n)
	}
	if r := d.do("EXISTS", "k"); r != ":1\r\n" {
		t.Fatalf("EXISTS after RESET = %q", r)
	}
}

// A command refused by the write guard while queuing (READONLY on a
// followed key) makes EXEC abort; nothing runs.
func TestTxReadOnlyKeyAbortsExec(t *testing.T) {
	e := start(t, func(o *Options) { o.WriteGuard = func(k []byte) bool { return string(k) == "owned" } })
	e.set("other", "t")
	c := e.raw(t)
	c.do("MULTI")
	if r := c.do("DEL", "other"); r != "+QUEUED\r\n" {
		t.Fatalf("DEL other = %q", r)
	}
	if r := c.do("DEL", "owned"); r != "-"+readOnlyMsg+"\r\n" {
		t.Fatalf("DEL owned = %q", r)
	}
	if r := c.do("EXEC"); r != "-"+errExecAbort+"\r\n" {
		t.Fatalf("EXEC = %q", r)
	}
	if r := c.do("EXISTS", "other"); r != ":1\r\n" {
		t.Fatalf("EXISTS other = %q: the aborted transaction ran", r)
	}
}

// EXEC waits for commands already running on other connections and runs
// alone: a transaction sent while another connection's command holds the
// command gate does not run until that command ends.
func TestTxExecWaitsForRunningCommands(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	block := &command.Spec{Name: "test.block", Arity: 1, Handler: func(c *command.Ctx) {
		close(started)
		<-release
		note("block")
		c.R.OK()
	}}
	mark := &command.Spec{Name: "test.mark", Arity: 1, Handler: func(c *command.Ctx) {
		note("mark")
		c.R.OK()
	}}
	e := start(t, nil, block, mark)
	a, b := e.raw(t), e.raw(t)
	a.send(cmd("TEST.BLOCK"))
	<-started
	b.do("MULTI")
	b.do("TEST.MARK")
	replied := make(chan string, 1)
	go func() {
		_ = b.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		r, _ := readReply(b.br)
		replied <- r
	}()
	b.send(cmd("EXEC"))
	select {
	case r := <-replied:
		t.Fatalf("EXEC answered %q while another connection's command was running", r)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	if r := <-replied; r != "*1\r\n+OK\r\n" {
		t.Fatalf("EXEC = %q", r)
	}
	if r := a.read(); r != "+OK\r\n" {
		t.Fatalf("TEST.BLOCK = %q", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 2 || order[0] != "block" || order[1] != "mark" {
		t.Fatalf("order %v, want [block mark]", order)
	}
}

// BGSAVE inside MULTI is scheduled after the transaction (Redis's reply).
func TestTxBGSaveScheduled(t *testing.T) {
	p := &fakePersist{}
	e := start(t, func(o *Options) { o.Persist = p })
	c := e.raw(t)
	c.do("MULTI")
	c.do("BGSAVE")
	if r := c.do("EXEC"); r != "*1\r\n+Background saving scheduled\r\n" {
		t.Fatalf("EXEC = %q", r)
	}
	if r := c.do("BGSAVE"); r != "+Background saving started\r\n" {
		t.Fatalf("BGSAVE outside MULTI = %q", r)
	}
	c.do("MULTI")
	c.do("BGREWRITEAOF")
	if r := c.do("EXEC"); r != "*1\r\n+Background append only file rewriting scheduled\r\n" {
		t.Fatalf("EXEC of BGREWRITEAOF = %q", r)
	}
}

// Watched keys count as client memory, as Redis counts them in a client's
// multi-state memory: they show in mem_clients_normal, UNWATCH and the
// end of the connection give them back, and a client that watches more
// than maxmemory-clients allows is closed.
func TestTxWatchCountsAsClientMemory(t *testing.T) {
	e := start(t, nil)
	a := e.raw(t)
	watch := func(c *raw, prefix string, n int) string { return c.do(watchArgs(prefix, n)...) }
	if r := watch(a, "k", 20000); r != "+OK\r\n" {
		t.Fatalf("WATCH = %q", r)
	}
	// 20,000 keys of 9 bytes: at least 2·9 + 96 bytes each.
	if m := e.srv.ClientsMemory(); m < 20000*(2*9+96) {
		t.Fatalf("client memory %d after watching 20,000 keys", m)
	}
	a.do("UNWATCH")
	if m := e.srv.ClientsMemory(); m != 0 {
		t.Fatalf("client memory %d after UNWATCH", m)
	}
	b := e.raw(t)
	watch(b, "b", 1000)
	b.c.Close()
	if !testutil.Eventually(t, 5*time.Second, func() bool { return e.srv.ClientsMemory() == 0 }) {
		t.Fatalf("client memory %d after the watching client left", e.srv.ClientsMemory())
	}

	a.do("CONFIG", "SET", "maxmemory-clients", "2mb")
	c := e.raw(t)
	for i := 0; ; i++ {
		if i == 100 {
			t.Fatal("a client watching 100×2,000 keys was not closed under maxmemory-clients 2mb")
		}
		if _, err := c.c.Write([]byte(cmd(watchArgs(fmt.Sprintf("c%d", i), 2000)...))); err != nil {
			break // closed by the reaper
		}
		_ = c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if r, err := readReply(c.br); err != nil || r != "+OK\r\n" {
			break // closed by the reaper
		}
	}
	if got := infoField(t, a, "stats", "evicted_clients"); got != "1" {
		t.Fatalf("evicted_clients = %s", got)
	}
}

func watchArgs(prefix string, n int) []string {
	args := []string{"WATCH"}
	for i := range n {
		args = append(args, fmt.Sprintf("%s-%07d", prefix, i))
	}
	return args
}
