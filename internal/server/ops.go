package server

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/probly/probly/internal/command"
)

// Per-command bookkeeping after a command ran (finished): INFO
// commandstats and errorstats, the slow log, the latency monitor, the
// MONITOR feed, the Observer (metrics) and CLIENT REPLY. It is the one
// place a command's duration is used; everything that wants it reads it
// here.

// opsState is the server-wide part (Server.ops).
type opsState struct {
	stats  map[*command.Spec]*cmdStat // every registered spec; read-only after New
	errMu  sync.Mutex
	errs   map[string]uint64 // errorstats: error code → count
	slow   slowlog
	lat    latencyMonitor
	mon    monitors
	pause  pauseState
	slowNs atomic.Int64 // slowlog-log-slower-than in ns; <0 disables
	latNs  atomic.Int64 // latency-monitor-threshold in ns; 0 disables
	shut   shutdownReq
}

// cmdStat is one command's INFO commandstats counters.
type cmdStat struct {
	calls, ns, rejected, failed atomic.Uint64
}

// localStat is a connection's counts for one command since its last
// batch; flushOps adds them to the shared cmdStat, so the command path
// touches no memory shared with other connections.
type localStat struct {
	spec                        *command.Spec
	st                          *cmdStat
	calls, ns, rejected, failed uint64
}

// clientOps is the per-connection part (client.ops). The fields read by
// other connections (CLIENT LIST, KILL) are atomics or under mu.
type clientOps struct {
	created time.Time
	cmd     atomic.Pointer[string] // the last command's name (a Spec's Name)
	multi   atomic.Int32           // commands queued in MULTI, -1 outside
	proto   atomic.Int32
	monitor atomic.Bool
	killed  atomic.Bool

	// Copies of Conn's name, library and ACL user ("" is default),
	// written by the connection's goroutine under mu, read by others
	// under mu.
	mu      sync.Mutex
	name    string
	libName string
	libVer  string
	user    string

	// Own goroutine only.
	reply   replyMode
	local   map[*command.Spec]*localStat
	last    *localStat // the last command's (pipelines repeat commands)
	lastCmd *string    // what cmd holds
	multiN  int32      // what multi holds
	protoN  int32      // what proto holds
}

type replyMode uint8

const (
	replyOn      replyMode = iota
	replyOff               // CLIENT REPLY OFF: no reply until ON
	replySkip              // CLIENT REPLY SKIP ran: no reply for it and the next command
	replySkipOne           // the command after SKIP: no reply
)

// initOps builds the commandstats counters for every registered command
// and registers the diagnostics parameters. Called from New.
func (s *Server) initOps() {
	s.ops.stats = map[*command.Spec]*cmdStat{}
	for _, sp := range s.table.All() {
		s.ops.stats[sp] = &cmdStat{}
		for _, sub := range sp.Subcommands {
			s.ops.stats[sub] = &cmdStat{}
		}
	}
	s.ops.errs = map[string]uint64{}
	s.ops.slow.max = 128
	s.ops.shut.init()
}

// finished is called once after every command a client sent, on its
// connection's goroutine: name is the registered name (UnknownCommand if
// none), o the outcome, args the request (valid only until it returns),
// d the time spent dispatching and running it, failed whether its reply
// holds an error, mark the reply buffer's length before the command.
//
// It feeds INFO commandstats/errorstats, SLOWLOG, LATENCY, MONITOR and the
// Observer (metrics): the one place a command's duration is used. The
// commandstats counts are the connection's own until flushOps (after each
// batch); per command it costs two atomic loads and a few plain adds. The
// slow log, the latency monitor, errorstats and MONITOR take locks only
// when they record something.
func (c *client) finished(name string, o *command.Outcome, args [][]byte, d time.Duration, failed bool, mark int) {
	if c.rec != nil {
		c.rec.Command(name, d, failed)
	}
	if o.Spec == c.s.execSpec && o.Failed {
		// EXEC failed only if its own reply is an error (EXECABORT …):
		// the errors of the commands it ran count as theirs, as Redis.
		b := c.wr.Bytes()
		top := *o
		top.Failed = len(b) > mark && b[mark] == '-'
		o = &top
	}
	c.account(o, args, d)
	if failed {
		c.s.countError(c.reply.FirstErr, o.Err)
	}
	c.publish()
	if c.ops.reply != replyOn {
		c.suppressReply(mark)
	}
}

// account records a command in commandstats, the slow log, the latency
// monitor and the MONITOR feed: for every command a client sent
// (finished) and for each command EXEC runs from its queue (tx.go), as
// Redis counts and shows those too.
func (c *client) account(o *command.Outcome, args [][]byte, d time.Duration) {
	s := c.s
	if ls := c.localStat(o.Spec); ls != nil {
		switch {
		case !o.Ran && !o.Queued:
			ls.rejected++
		case o.Ran:
			ls.calls++
			ls.ns += uint64(d)
			if o.Failed {
				ls.failed++
			}
		}
	}
	if !o.Ran {
		return
	}
	if c.ops.lastCmd != &o.Spec.Name {
		c.ops.lastCmd = &o.Spec.Name
		c.ops.cmd.Store(c.ops.lastCmd)
	}
	if ns := s.ops.slowNs.Load(); ns >= 0 && int64(d) >= ns && o.Spec.Flags&command.FlagSkipSlowlog == 0 {
		s.ops.slow.add(c, args, d)
	}
	if ns := s.ops.latNs.Load(); ns > 0 && int64(d) >= ns {
		ev := "command"
		if o.Spec.Flags&command.FlagFast != 0 {
			ev = "fast-command"
		}
		s.ops.lat.add(ev, d)
	}
	if s.ops.mon.n.Load() > 0 && o.Spec.Flags&command.FlagAdmin == 0 {
		s.ops.mon.feed(c, args, time.Now().Add(-d))
	}
}

// localStat returns the connection's counts for spec (nil for an
// unknown command).
func (c *client) localStat(spec *command.Spec) *localStat {
	if ls := c.ops.last; ls != nil && ls.spec == spec {
		return ls
	}
	if spec == nil {
		return nil
	}
	ls := c.ops.local[spec]
	if ls == nil {
		st := c.s.ops.stats[spec]
		if st == nil {
			return nil // a spec added to the table after New
		}
		if c.ops.local == nil {
			c.ops.local = map[*command.Spec]*localStat{}
		}
		ls = &localStat{spec: spec, st: st}
		c.ops.local[spec] = ls
	}
	c.ops.last = ls
	return ls
}

// flushOps adds the connection's command counts to INFO commandstats;
// called after every batch and when the connection closes.
func (c *client) flushOps() {
	for _, ls := range c.ops.local {
		if ls.calls|ls.rejected|ls.failed == 0 {
			continue
		}
		ls.st.calls.Add(ls.calls)
		ls.st.ns.Add(ls.ns)
		ls.st.rejected.Add(ls.rejected)
		ls.st.failed.Add(ls.failed)
		ls.calls, ls.ns, ls.rejected, ls.failed = 0, 0, 0, 0
	}
}

// countError counts an error reply in errorstats by its code (the first
// word: "ERR", "WRONGTYPE" …), as Redis does. At most 128 codes are kept
// (Redis's ERROR_STATS_NUMBER).
func (s *Server) countError(first, err string) {
	if err == "" {
		err = first
	}
	if err == "" {
		return
	}
	code, _, _ := strings.Cut(err, " ")
	s.ops.errMu.Lock()
	if _, ok := s.ops.errs[code]; ok || len(s.ops.errs) < 128 {
		s.ops.errs[code]++
	}
	s.ops.errMu.Unlock()
}

// publish makes what CLIENT LIST shows of the connection readable by
// other connections.
func (c *client) publish() {
	if m := int32(c.Queued()); m != c.ops.multiN {
		c.ops.multiN = m
		c.ops.multi.Store(m)
	}
	if p := int32(c.conn.Proto); p != c.ops.protoN {
		c.ops.protoN = p
		c.ops.proto.Store(p)
	}
	// This goroutine is the only writer of the copies, so it reads them
	// without the lock.
	if c.conn.Name == c.ops.name && c.conn.LibName == c.ops.libName && c.conn.LibVer == c.ops.libVer &&
		c.conn.User == c.ops.user {
		return
	}
	c.ops.mu.Lock()
	c.ops.name, c.ops.libName, c.ops.libVer, c.ops.user = c.conn.Name, c.conn.LibName, c.conn.LibVer, c.conn.User
	c.ops.mu.Unlock()
}

// suppressReply implements CLIENT REPLY OFF|SKIP: the command's reply is
// dropped from the buffer.
func (c *client) suppressReply(mark int) {
	c.wr.Truncate(mark)
	switch c.ops.reply {
	case replySkip:
		c.ops.reply = replySkipOne
	case replySkipOne:
		c.ops.reply = replyOn
	}
}

// resetOpsStats zeroes commandstats, errorstats (CONFIG RESETSTAT).
func (s *Server) resetOpsStats() {
	for _, st := range s.ops.stats {
		st.calls.Store(0)
		st.ns.Store(0)
		st.rejected.Store(0)
		st.failed.Store(0)
	}
	s.ops.errMu.Lock()
	clear(s.ops.errs)
	s.ops.errMu.Unlock()
}

// RunOps implements command.Ops: CLIENT LIST/KILL/PAUSE/UNPAUSE/REPLY,
// MONITOR, SLOWLOG, LATENCY, SHUTDOWN (clientcmd.go, slowlog.go,
// shutdown.go).
func (s *Server) RunOps(ctx *command.Ctx) {
	c, _ := ctx.Conn.Tx.(*client)
	if c == nil {
		ctx.R.Error("ERR this command needs a client connection")
		return
	}
	switch name := strings.ToLower(string(ctx.Args[0])); name {
	case "client":
		c.clientCmd(ctx, strings.ToLower(string(ctx.Args[1])))
	case "monitor":
		c.startMonitor(ctx)
	case "slowlog":
		s.slowlogCmd(ctx, strings.ToLower(string(ctx.Args[1])))
	case "latency":
		s.latencyCmd(ctx, strings.ToLower(string(ctx.Args[1])))
	case "shutdown":
		c.shutdownCmd(ctx)
	default:
		ctx.R.Error("ERR unknown command '" + name + "'")
	}
}

// infoCommandStats writes INFO commandstats: every command that was
// called or refused, in table order (sorted by name).
func (s *Server) infoCommandStats(b *infoBuf) {
	for _, sp := range sortedSpecs(s.table) {
		st := s.ops.stats[sp]
		calls, rej, failed := st.calls.Load(), st.rejected.Load(), st.failed.Load()
		if calls == 0 && rej == 0 && failed == 0 {
			continue
		}
		usec := st.ns.Load() / 1000
		per := 0.0
		if calls > 0 {
			per = float64(st.ns.Load()) / 1000 / float64(calls)
		}
		b.kv("cmdstat_"+sp.Name, "calls="+strconv.FormatUint(calls, 10)+",usec="+strconv.FormatUint(usec, 10)+
			",usec_per_call="+strconv.FormatFloat(per, 'f', 2, 64)+",rejected_calls="+strconv.FormatUint(rej, 10)+
			",failed_calls="+strconv.FormatUint(failed, 10))
	}
}

// infoErrorStats writes INFO errorstats, codes sorted as Redis's rax does.
func (s *Server) infoErrorStats(b *infoBuf) {
	s.ops.errMu.Lock()
	codes := make([]string, 0, len(s.ops.errs))
	for k := range s.ops.errs {
		codes = append(codes, k)
	}
	counts := make(map[string]uint64, len(codes))
	for _, k := range codes {
		counts[k] = s.ops.errs[k]
	}
	s.ops.errMu.Unlock()
	sortStrings(codes)
	for _, k := range codes {
		b.kv("errorstat_"+k, "count="+strconv.FormatUint(counts[k], 10))
	}
}
