package command

// Ops is implemented by a server that runs the commands about its own
// connections and diagnostics: CLIENT LIST/KILL/PAUSE/UNPAUSE/REPLY,
// MONITOR, SLOWLOG, LATENCY and SHUTDOWN. Their specs live with the other
// generic commands; their handler (OpsHandler) hands the whole command to
// RunOps, which parses c.Args and answers on c.R as Redis 7 does.
// Servers without connections (log replay, the follower) do not implement
// it.
type Ops interface {
	RunOps(c *Ctx)
}

// OpsHandler is the handler of the commands Ops runs: it calls the
// server's RunOps, or answers that the command needs a server.
func OpsHandler(c *Ctx) {
	if o, ok := c.Server.(Ops); ok {
		o.RunOps(c)
		return
	}
	c.R.Error("ERR this command needs a client connection")
}
