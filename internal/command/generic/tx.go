package generic

import "github.com/probly/probly/internal/command"

// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH, and RESET (which
// ends a transaction among the rest of the connection state). The state
// lives in the server's connection (command.Conn.Tx); these handlers only
// hand over. Queuing (+QUEUED, and the refusals that make EXEC answer
// EXECABORT) is the server's Policy.Queue, since it must happen before a
// command's handler would run.

// errNoTx answers a transaction command on a connection without
// transaction state (never a client's: log replay, the follower).
const errNoTx = "ERR transactions are not supported here"

// txSpecs returns the transaction commands' declarations (Redis 7's
// COMMAND INFO and COMMAND DOCS).
func txSpecs() []*command.Spec {
	const (
		noscript = command.FlagNoScript
		load     = command.FlagLoading
		stale    = command.FlagStale
		fast     = command.FlagFast
		busy     = command.FlagAllowBusy
		noauth   = command.FlagNoAuth
	)
	tx := func(name string, arity int, flags command.Flags, h func(command.Tx, *command.Ctx), doc command.Doc) *command.Spec {
		doc.Group = command.GroupTransactions
		return &command.Spec{Name: name, Arity: arity, Flags: flags, ACL: command.ACLTransaction, Doc: doc,
			Handler: func(c *command.Ctx) {
				if c.Conn.Tx == nil {
					c.R.Error(errNoTx)
					return
				}
				h(c.Conn.Tx, c)
			}}
	}
	watch := tx("watch", -2, noscript|load|stale|fast|busy, command.Tx.Watch, command.Doc{
		Summary: "Watch the given keys to determine execution of the MULTI/EXEC block", Since: "2.2.0",
		Complexity: "O(1) for every key.",
		Args:       []command.Arg{{Name: "key", Type: command.ArgKey, Flags: command.ArgMultiple}}})
	watch.Keys = []command.KeySpec{{Flags: command.KeyRO, Begin: 1, LastKey: -1}}
	return []*command.Spec{
		tx("multi", 1, noscript|load|stale|fast|busy, command.Tx.Multi, command.Doc{
			Summary: "Mark the start of a transaction block", Since: "1.2.0", Complexity: "O(1)"}),
		tx("exec", 1, noscript|load|stale|command.FlagSkipSlowlog, command.Tx.Exec, command.Doc{
			Summary: "Execute all commands issued after MULTI", Since: "1.2.0",
			Complexity: "Depends on commands in the transaction"}),
		tx("discard", 1, noscript|load|stale|fast|busy, command.Tx.Discard, command.Doc{
			Summary: "Discard all commands issued after MULTI", Since: "2.0.0",
			Complexity: "O(N), when N is the number of queued commands"}),
		watch,
		tx("unwatch", 1, noscript|load|stale|fast|busy, command.Tx.Unwatch, command.Doc{
			Summary: "Forget about all watched keys", Since: "2.2.0", Complexity: "O(1)"}),
		{Name: "reset", Arity: 1, Flags: noscript | load | stale | fast | noauth | busy, ACL: command.ACLConnection,
			Handler: reset,
			Doc: command.Doc{Summary: "Reset the connection", Since: "6.2.0", Group: command.GroupConnection,
				Complexity: "O(1)"}},
	}
}

// reset implements RESET as Redis 7 does for the state probly keeps: it
// ends a transaction and drops the watched keys, returns to RESP2, clears
// the connection's name and, when a password is set, makes the
// connection unauthenticated again; then it answers +RESET.
func reset(c *command.Ctx) {
	if c.Conn.Tx != nil {
		c.Conn.Tx.Reset()
	}
	c.Conn.Proto = 2
	c.R.Proto = 2
	c.Conn.Name = ""
	c.Conn.Authed = c.Server == nil || c.Server.RequirePass() == ""
	c.Conn.User = "" // the default user
	c.R.SimpleString("RESET")
}
