package server

import (
	"strings"
	"time"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/keyspace"
)

// Transactions (MULTI/EXEC/DISCARD, WATCH/UNWATCH), with Redis 7's
// semantics and replies:
//
//   - After MULTI every command is checked as if it were to run (unknown
//     name, arity, NOAUTH, OOM, READONLY, no_multi) and, if it passes,
//     copied into the connection's queue and answered +QUEUED. A refusal
//     is answered at once and makes EXEC answer EXECABORT and discard the
//     queue. EXEC, DISCARD, MULTI, WATCH, QUIT and RESET are never queued.
//   - EXEC holds the command gate exclusively (keyspace.Store.Exclusive)
//     while it runs the queue: every other command execution, from any
//     connection and from the follower, holds the gate shared for its own
//     run, so nothing interleaves with a transaction, on any key. Outside
//     EXEC the gate costs one uncontended RLock/RUnlock per command, and
//     commands of different connections (pipelined or not) run in
//     parallel as before.
//   - A runtime error of a queued command is its own reply inside EXEC's
//     array; the other commands still run (Redis does not roll back).
//   - WATCH registers keys with the store's watch registry
//     (keyspace/watch.go); any change of one of them (a write from any
//     connection, this one's included, the follower, a flush of an
//     existing key, an expiry) makes EXEC answer a null array and run
//     nothing. EXEC, DISCARD, UNWATCH, RESET and the connection's end drop
//     the watched keys.
//   - The AOF records a transaction's writes between MULTI and EXEC
//     records when the persistence engine implements TxLogger; a
//     transaction that writes nothing logs nothing.
//
// Memory: the queue holds copies of the queued commands' arguments; their
// size counts as client memory in used_memory (and so against maxmemory).

// TxLogger is implemented by a Persister that records a transaction as
// one unit: BeginTx is called (under the exclusive command gate) before
// EXEC runs its queue, EndTx after it. EndTx returns the sequence number
// of the record that ends the unit (0 when the transaction logged
// nothing), to wait on like any record.
type TxLogger interface {
	BeginTx()
	EndTx() (seq uint64, err error)
}

// Redis's transaction replies.
const (
	errExecAbort   = "EXECABORT Transaction discarded because of previous errors."
	execAbortOf    = "EXECABORT Transaction discarded because of: "
	errNoMulti     = "ERR Command not allowed inside a transaction"
	errNestedMulti = "ERR MULTI calls can not be nested"
	errWatchMulti  = "ERR WATCH inside MULTI is not allowed"
	errExecNoMulti = "ERR EXEC without MULTI"
	errDiscardNo   = "ERR DISCARD without MULTI"
)

// txState is a connection's transaction.
type txState struct {
	multi   bool          // between MULTI and EXEC/DISCARD
	failed  bool          // a command was refused while queuing: EXEC aborts
	execing bool          // EXEC is running the queue
	queue   [][][]byte    // the queued commands' arguments (copies)
	flags   command.Flags // union of the queued commands' flags
	bytes   uint64        // Σ queued argument bytes (counted as client memory)
	watch   keyspace.Watcher
	// watchBytes is what the watched keys cost (watchKeyBytes each),
	// counted as client memory as the queue is.
	watchBytes uint64
}

// Queued commands were checked when queued; EXEC re-checks only the
// ACL (execACL, acl.go).

// txControl reports whether spec is one of the commands that run at once
// inside MULTI instead of being queued.
func txControl(spec *command.Spec) bool {
	switch spec.Name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// queuesUnderOOM reports whether spec, inside MULTI, is refused over
// maxmemory whatever its flags (every command but EXEC, DISCARD, QUIT and
// RESET, as in Redis).
func queuesUnderOOM(spec *command.Spec) bool {
	switch spec.Name {
	case "exec", "discard", "quit", "reset":
		return false
	}
	return true
}

// queue is the server's command.Policy.Queue while MULTI is on: it copies
// the command into the queue and answers +QUEUED.
func (c *client) queue(ctx *command.Ctx, spec *command.Spec) bool {
	if txControl(spec) {
		return false
	}
	n := 0
	for _, a := range ctx.Args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	args := make([][]byte, len(ctx.Args))
	for i, a := range ctx.Args {
		buf = append(buf, a...)
		args[i] = buf[len(buf)-len(a):]
	}
	c.tx.queue = append(c.tx.queue, args)
	c.tx.flags |= spec.Flags
	size := uint64(n + 24*len(args))
	c.tx.bytes += size
	c.refreshHeld()
	ctx.R.SimpleString("QUEUED")
	return true
}

// refuseExec answers an EXEC that is refused before it runs (wrong arity,
// NOAUTH) as Redis does, in or out of MULTI: the transaction, if any, is
// discarded and the reply is EXECABORT with the refusal's reason.
func (c *client) refuseExec(argc int) {
	msg := noAuthMsg // Redis checks arity first
	if argc != 1 {
		msg = "wrong number of arguments for 'exec' command"
	}
	c.endTx()
	c.reply.Error(execAbortOf + msg)
}

// isExec reports whether name is EXEC in any case.
func isExec(name []byte) bool {
	return len(name) == 4 && name[0]|0x20 == 'e' && strings.EqualFold(string(name), "exec")
}

// endTx drops the queue and the watched keys and leaves MULTI.
func (c *client) endTx() {
	clear(c.tx.queue)
	c.tx.queue = c.tx.queue[:0]
	if cap(c.tx.queue) > 1024 {
		c.tx.queue = nil
	}
	c.tx.multi, c.tx.failed, c.tx.flags, c.tx.bytes = false, false, 0, 0
	c.policy.Queue = nil
	c.unwatch()
}

// unwatch drops the watched keys and their share of client memory.
func (c *client) unwatch() {
	if c.tx.watch.Watching() || c.tx.watch.Dirty() {
		c.s.store.Unwatch(&c.tx.watch)
	}
	c.tx.watchBytes = 0
	c.refreshHeld()
}

// watchKeyBytes is what watching one key costs: the key in the watcher's
// map and in the shard's watch registry, with their map entries.
func watchKeyBytes(key []byte) uint64 { return 2*uint64(len(key)) + 96 }

var _ command.Tx = (*client)(nil)

// Multi implements MULTI.
func (c *client) Multi(ctx *command.Ctx) {
	if c.tx.multi {
		ctx.R.Error(errNestedMulti)
		return
	}
	c.tx.multi = true
	c.policy.Queue = c.queue
	ctx.R.OK()
}

// Discard implements DISCARD.
func (c *client) Discard(ctx *command.Ctx) {
	if !c.tx.multi {
		ctx.R.Error(errDiscardNo)
		return
	}
	c.endTx()
	ctx.R.OK()
}

// Watch implements WATCH key [key ...].
func (c *client) Watch(ctx *command.Ctx) {
	if c.tx.multi {
		ctx.R.Error(errWatchMulti)
		return
	}
	for _, k := range ctx.Args[1:] {
		n := c.tx.watch.Keys()
		c.s.store.Watch(&c.tx.watch, k)
		if c.tx.watch.Keys() > n {
			c.tx.watchBytes += watchKeyBytes(k)
		}
	}
	c.refreshHeld()
	ctx.R.OK()
}

// Unwatch implements UNWATCH.
func (c *client) Unwatch(ctx *command.Ctx) {
	c.unwatch()
	ctx.R.OK()
}

// Reset is RESET's part: no transaction, no watched keys.
func (c *client) Reset() { c.endTx() }

// Executing reports whether EXEC is running its queue.
func (c *client) Executing() bool { return c.tx.execing }

// Queued is the queue's length inside MULTI (and while EXEC runs it),
// else -1.
func (c *client) Queued() int {
	if !c.tx.multi {
		return -1
	}
	return len(c.tx.queue)
}

// Exec implements EXEC: it runs the queue under the exclusive command
// gate, inside one AOF unit, and answers an array of the replies; or
// EXECABORT (a command was refused while queuing, or EXEC itself is
// refused), or a null array (a watched key changed).
func (c *client) Exec(ctx *command.Ctx) {
	if !c.tx.multi {
		ctx.R.Error(errExecNoMulti)
		return
	}
	if c.tx.failed {
		c.endTx()
		ctx.R.Error(errExecAbort)
		return
	}
	// Redis refuses EXEC as a denyoom command when its queue holds one.
	if c.tx.flags&command.FlagDenyOOM != 0 && c.s.mem.over() {
		c.endTx()
		ctx.R.Error(execAbortOf + oomMsg)
		return
	}
	s := c.s.store
	s.Exclusive()
	defer s.ExclusiveDone()
	if c.tx.watch.Dirty() || s.WatchedExpired(&c.tx.watch) {
		c.endTx()
		ctx.R.NullArray()
		return
	}
	c.unwatch()
	tl, _ := c.s.persist.(TxLogger)
	if tl != nil {
		tl.BeginTx()
	}
	ended := false
	defer func() {
		// A handler that panicked (a bug: the connection closes) must not
		// leave the unit open, or the log would absorb every later record
		// into it. The unit is closed as memory holds it.
		if !ended && tl != nil {
			_, _ = tl.EndTx()
		}
		c.tx.execing = false
	}()
	mark := c.wr.Len()
	c.tx.execing = true
	ctx.R.Array(len(c.tx.queue))
	var maxSeq uint64
	execPolicy := command.Policy{Admit: execACL{c}}
	for _, args := range c.tx.queue {
		ctx.Args = args
		start := time.Since(c.s.start)
		o := c.s.table.Run(ctx, &execPolicy)
		c.account(&o, args, time.Since(c.s.start)-start) // commandstats, SLOWLOG, MONITOR (ops.go)
		c.res.releaseAll()
		ctx.R.Proto = c.conn.Proto // HELLO inside the transaction
		maxSeq = max(maxSeq, o.Seq)
		if o.Ran && o.Spec.Writes() {
			c.wrote = true
		}
	}
	c.tx.execing = false
	ended = true
	if tl != nil {
		seq, err := tl.EndTx()
		if err != nil {
			// The unit has no end record: recovery drops it whole, so no
			// reply may say that any of it is durable.
			c.s.log.Error("closing a transaction in the AOF failed", "conn_id", c.conn.ID, "err", err)
			c.wr.Truncate(mark)
			ctx.R.Error("ERR " + err.Error())
		}
		maxSeq = max(maxSeq, seq)
	}
	c.endTx()
	ctx.Seq = maxSeq
}
