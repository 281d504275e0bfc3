package server

import (
	"strings"
	"sync"

	"github.com/probly/probly/internal/command"
)

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], as Redis 7. SAVE writes a
// snapshot first, and so does SHUTDOWN without NOSAVE or SAVE when save
// points are configured (the save parameter is not empty); if it fails
// the server keeps running and answers "ERR Errors trying to SHUTDOWN.
// Check logs." unless FORCE is given. NOSAVE writes no snapshot. Either
// way the append-only log is flushed, fsynced and closed by the graceful
// shutdown (SIGTERM's path), as Redis does with AOF on. NOW (do not wait for replicas) changes
// nothing, as probly has none; ABORT answers "ERR No shutdown in
// progress." since a shutdown never waits. On success the client gets no
// reply and its connection closes; the embedding program sees
// ShutdownRequested and shuts the server down gracefully.

// shutdownReq is the one-shot signal of a SHUTDOWN.
type shutdownReq struct {
	once sync.Once
	ch   chan struct{}
}

func (r *shutdownReq) init() { r.ch = make(chan struct{}) }

// ShutdownRequested is closed when a client's SHUTDOWN succeeded: the
// program should then call Shutdown (and close its persistence) as it
// does for SIGTERM.
func (s *Server) ShutdownRequested() <-chan struct{} { return s.ops.shut.ch }

// SaveOnShutdown reports whether a shutdown that neither NOSAVE nor SAVE
// qualifies writes a snapshot: save points are configured (the save
// parameter is not empty), as Redis decides for SHUTDOWN and for SIGTERM
// and SIGINT.
func (s *Server) SaveOnShutdown() bool {
	v, ok := s.cfg.Get("save")
	return ok && strings.TrimSpace(v) != ""
}

func (c *client) shutdownCmd(ctx *command.Ctx) {
	var nosave, save, force, abort, other bool
	for _, a := range ctx.Args[1:] {
		switch strings.ToLower(string(a)) {
		case "nosave":
			nosave = true
		case "save":
			save = true
		case "now":
			other = true
		case "force":
			force, other = true, true
		case "abort":
			abort = true
		default:
			ctx.R.Error(errSyntax)
			return
		}
	}
	if abort && (nosave || save || other) || nosave && save {
		ctx.R.Error(errSyntax)
		return
	}
	if abort {
		ctx.R.Error("ERR No shutdown in progress.")
		return
	}
	if !save && !nosave {
		save = c.s.SaveOnShutdown()
	}
	if save {
		if err := c.s.save(true); err != nil {
			c.s.log.Error("SHUTDOWN SAVE: the snapshot failed", "err", err, "force", force)
			if !force {
				ctx.R.Error("ERR Errors trying to SHUTDOWN. Check logs.")
				return
			}
		}
	}
	c.s.log.Info("SHUTDOWN requested by a client", "conn_id", c.conn.ID, "save", save)
	ctx.R.OK() // dropped: the connection closes without a reply, as Redis
	c.abort = true
	c.conn.Close = true
	c.s.ops.shut.once.Do(func() { close(c.s.ops.shut.ch) })
}
