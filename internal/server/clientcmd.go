package server

import (
	"crypto/tls"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/probly/probly/internal/command"
)

// CLIENT LIST / INFO / KILL / PAUSE / UNPAUSE / REPLY, as Redis 7.

const (
	errSyntax       = "ERR syntax error"
	errNoSuchClient = "ERR No such client"
)

func (c *client) clientCmd(ctx *command.Ctx, sub string) {
	switch sub {
	case "list":
		c.s.clientList(ctx)
	case "info":
		ctx.R.Verbatim(c.line(ctx.Args))
	case "kill":
		c.clientKill(ctx)
	case "pause":
		c.s.clientPause(ctx)
	case "unpause":
		c.s.ops.pause.unpause()
		ctx.R.OK()
	case "reply":
		c.clientReply(ctx)
	default:
		ctx.R.Error("ERR unknown subcommand '" + sub + "'")
	}
}

// clients returns the connected clients sorted by ID.
func (s *Server) clients() []*client {
	s.mu.Lock()
	out := make([]*client, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].conn.ID < out[j].conn.ID })
	return out
}

// clientType is Redis's getClientTypeByName: -1 for an unknown name.
// probly's clients are all "normal" (no replicas, masters or pub/sub).
func clientType(name string) int {
	switch strings.ToLower(name) {
	case "normal":
		return 0
	case "slave", "replica":
		return 1
	case "pubsub":
		return 2
	case "master":
		return 3
	}
	return -1
}

// clientList is CLIENT LIST [TYPE type | ID id …] (Redis 7.0's forms).
func (s *Server) clientList(ctx *command.Ctx) {
	args := ctx.Args
	all := s.clients()
	var pick []*client
	switch {
	case len(args) == 2:
		pick = all
	case len(args) == 4 && strings.EqualFold(string(args[2]), "type"):
		t := clientType(string(args[3]))
		if t < 0 {
			ctx.R.Error("ERR Unknown client type '" + string(args[3]) + "'")
			return
		}
		if t == 0 {
			pick = all
		}
	case len(args) > 3 && strings.EqualFold(string(args[2]), "id"):
		ids := map[int64]bool{}
		for _, a := range args[3:] {
			id, err := strconv.ParseInt(string(a), 10, 64)
			if err != nil {
				ctx.R.Error("ERR Invalid client ID")
				return
			}
			ids[id] = true
		}
		for _, cl := range all {
			if ids[cl.conn.ID] {
				pick = append(pick, cl)
			}
		}
	default:
		ctx.R.Error(errSyntax)
		return
	}
	self, _ := ctx.Conn.Tx.(*client)
	var b strings.Builder
	for _, cl := range pick {
		var cur [][]byte
		if cl == self {
			cur = args
		}
		b.WriteString(cl.line(cur))
	}
	ctx.R.Verbatim(b.String())
}

// line is the connection's CLIENT LIST / CLIENT INFO line, fields in
// Redis 7.2's order. cur is the running command's arguments when the
// line describes the connection asking (argv-mem), nil otherwise. It may
// be called from any connection's goroutine.
func (c *client) line(cur [][]byte) string {
	s := c.s
	c.ops.mu.Lock()
	name, libName, libVer, user := c.ops.name, c.ops.libName, c.ops.libVer, c.ops.user
	c.ops.mu.Unlock()
	if cur != nil { // the asking connection: its own values are current
		name, libName, libVer, user = c.conn.Name, c.conn.LibName, c.conn.LibVer, c.conn.User
	}
	if user == "" {
		user = "default"
	}
	multi := int(c.ops.multi.Load())
	proto := int(c.ops.proto.Load())
	cmd := "NULL"
	if p := c.ops.cmd.Load(); p != nil {
		cmd = *p
	}
	if cur != nil {
		multi, proto = c.Queued(), c.conn.Proto
		if sp := s.table.Lookup(cur[0]); sp != nil {
			cmd = sp.Name
			if len(sp.Subcommands) > 0 && len(cur) > 1 {
				cmd = sp.Name + "|" + strings.ToLower(string(cur[1]))
			}
		}
	}
	flags := ""
	if c.ops.monitor.Load() {
		flags += "O"
	}
	if multi >= 0 {
		flags += "x"
	}
	if c.unix {
		flags += "U"
	}
	if flags == "" {
		flags = "N"
	}
	argv, qbuf, qfree := 0, 0, 0
	if cur != nil { // the parser's state is the asking goroutine's own
		argv = c.argvMem()
		qbuf, qfree = c.queryBuf()
	}
	held := c.held.Load()
	obl, oll, omem := c.outputBuf(cur != nil)
	// Redis installs a write handler (events "w") when a reply could not
	// be written at once, as for a client that does not read: here, a
	// write in progress. The asking connection has none (its replies
	// are written after this command).
	events := "r"
	if cur == nil && c.out.pending.Load() > 0 {
		events = "rw"
	}
	age := int64(time.Since(c.ops.created) / time.Second)
	idle := (s.now() - c.last.Load()) / 1000
	if cur != nil {
		idle = 0
	}
	laddr := c.laddr
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	itoa := strconv.Itoa
	return "id=" + i64(c.conn.ID) + " addr=" + c.conn.Addr + " laddr=" + laddr + " fd=" + itoa(connFD(c.nc)) +
		" name=" + name + " age=" + i64(age) + " idle=" + i64(max(idle, 0)) + " flags=" + flags +
		" db=0 sub=0 psub=0 ssub=0 multi=" + itoa(multi) +
		" qbuf=" + itoa(qbuf) + " qbuf-free=" + itoa(qfree) + " argv-mem=" + itoa(argv) + " multi-mem=0 obl=" + i64(obl) + " oll=" + i64(oll) + " omem=" + i64(omem) + " tot-mem=" + i64(held+int64(argv)+obl+omem) +
		" events=" + events + " cmd=" + cmd + " user=" + user + " redir=-1 resp=" + itoa(proto) +
		" lib-name=" + libName + " lib-ver=" + libVer + "\n"
}

// connAddrs returns the addr and laddr CLIENT LIST shows for a new
// connection, and whether it came in on a Unix socket: then both are the
// socket's path followed by ":0", as Redis shows them (and CLIENT KILL
// ADDR / LADDR match); otherwise the remote and local address ("" for a
// local address the connection does not have).
func connAddrs(nc net.Conn) (addr, laddr string, unix bool) {
	la := nc.LocalAddr()
	if u, ok := la.(*net.UnixAddr); ok {
		a := u.Name + ":0"
		return a, a, true
	}
	if la != nil {
		laddr = la.String()
	}
	return nc.RemoteAddr().String(), laddr, false
}

// connFD is the connection's file descriptor number, or -1 when it has
// none (a pipe in tests).
func connFD(nc net.Conn) int {
	if t, ok := nc.(*tls.Conn); ok {
		nc = t.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	_ = raw.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// killFilter is CLIENT KILL's filters (Redis 7.0).
type killFilter struct {
	id          int64
	addr, laddr string
	user        string
	typ         int // -1: any
	skipMe      bool
	hasAddrOnly bool // the old form, CLIENT KILL addr:port
}

func (c *client) clientKill(ctx *command.Ctx) {
	args := ctx.Args
	f := killFilter{typ: -1, skipMe: true}
	if len(args) == 3 {
		f.addr, f.hasAddrOnly, f.skipMe = string(args[2]), true, false
	} else {
		for i := 2; i < len(args); i += 2 {
			if i+1 >= len(args) {
				ctx.R.Error(errSyntax)
				return
			}
			opt, v := strings.ToLower(string(args[i])), string(args[i+1])
			switch opt {
			case "id":
				id, err := strconv.ParseInt(v, 10, 64)
				if err != nil || id <= 0 {
					ctx.R.Error("ERR client-id should be greater than 0")
					return
				}
				f.id = id
			case "type":
				if f.typ = clientType(v); f.typ < 0 {
					ctx.R.Error("ERR Unknown client type '" + v + "'")
					return
				}
			case "addr":
				f.addr = v
			case "laddr":
				f.laddr = v
			case "user":
				if c.s.acl.Lookup(v) == nil {
					ctx.R.Error("ERR No such user '" + v + "'")
					return
				}
				f.user = v
			case "skipme":
				switch strings.ToLower(v) {
				case "yes":
					f.skipMe = true
				case "no":
					f.skipMe = false
				default:
					ctx.R.Error(errSyntax)
					return
				}
			default:
				ctx.R.Error(errSyntax)
				return
			}
		}
	}
	killed := 0
	for _, cl := range c.s.clients() {
		if !f.match(cl, c) {
			continue
		}
		killed++
		if cl == c {
			c.conn.Close = true // after this reply, as Redis
			continue
		}
		cl.kill()
	}
	if f.hasAddrOnly {
		if killed == 0 {
			ctx.R.Error(errNoSuchClient)
			return
		}
		ctx.R.OK()
		return
	}
	ctx.R.Int(int64(killed))
}

func (f *killFilter) match(cl, self *client) bool {
	switch {
	case f.skipMe && cl == self,
		f.id != 0 && cl.conn.ID != f.id,
		f.addr != "" && cl.conn.Addr != f.addr,
		f.typ > 0, // every probly client is of type normal
		f.user != "" && cl.userOf() != f.user,
		f.laddr != "" && cl.laddr != f.laddr:
		return false
	}
	return true
}

// userOf is the connection's ACL user name as last published (any
// goroutine).
func (c *client) userOf() string {
	c.ops.mu.Lock()
	u := c.ops.user
	c.ops.mu.Unlock()
	if u == "" {
		return "default"
	}
	return u
}

// kill closes another connection (CLIENT KILL): its read fails and it
// ends; a batch it is executing fails to write its replies.
func (c *client) kill() {
	c.ops.killed.Store(true)
	_ = c.nc.Close()
}

func (c *client) clientReply(ctx *command.Ctx) {
	if len(ctx.Args) != 3 {
		ctx.R.Error(errSyntax)
		return
	}
	switch strings.ToLower(string(ctx.Args[2])) {
	case "on":
		c.ops.reply = replyOn
		ctx.R.OK()
	case "off": // the reply is written and dropped by finished
		c.ops.reply = replyOff
		ctx.R.OK()
	case "skip":
		if c.ops.reply != replyOff {
			c.ops.reply = replySkip
		}
		ctx.R.OK()
	default:
		ctx.R.Error(errSyntax)
	}
}

// pauseState is CLIENT PAUSE: until the deadline (or UNPAUSE) commands
// wait before they run: every command (ALL) or only those that may write
// (WRITE). A pause during a pause keeps the later deadline and the
// stricter mode, as Redis.
type pauseState struct {
	on    atomic.Bool
	mu    sync.Mutex
	until time.Time
	all   bool
	done  chan struct{} // closed when the pause ends early (UNPAUSE)
}

func (p *pauseState) pause(until time.Time, all bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on.Load() && time.Now().Before(p.until) {
		until = later(until, p.until)
		all = all || p.all
	} else {
		p.done = make(chan struct{})
	}
	p.until, p.all = until, all
	p.on.Store(true)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (p *pauseState) unpause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on.Load() {
		p.on.Store(false)
		close(p.done)
	}
}

// wait blocks a command while a pause applies to it (writes: it may
// write), or until stop is closed (Shutdown). Without a pause it costs
// one atomic load.
func (p *pauseState) wait(writes bool, stop <-chan struct{}) {
	for p.on.Load() {
		p.mu.Lock()
		if !p.on.Load() || !p.all && !writes {
			p.mu.Unlock()
			return
		}
		d := time.Until(p.until)
		if d <= 0 {
			p.on.Store(false)
			close(p.done)
			p.mu.Unlock()
			return
		}
		done := p.done
		p.mu.Unlock()
		t := time.NewTimer(d)
		select {
		case <-done:
		case <-t.C:
		case <-stop:
			t.Stop()
			return
		}
		t.Stop()
	}
}

func (s *Server) clientPause(ctx *command.Ctx) {
	args := ctx.Args
	ms, err := strconv.ParseInt(string(args[2]), 10, 64)
	if err != nil {
		ctx.R.Error("ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		ctx.R.Error("ERR timeout is negative")
		return
	}
	all := true
	if len(args) == 4 {
		switch strings.ToLower(string(args[3])) {
		case "write":
			all = false
		case "all":
		default:
			ctx.R.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	} else if len(args) > 4 {
		ctx.R.Error(errSyntax)
		return
	}
	s.ops.pause.pause(time.Now().Add(time.Duration(ms)*time.Millisecond), all)
	ctx.R.OK()
}
