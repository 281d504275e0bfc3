package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/follow"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/persist"
)

// follower is the running --follow, or nil.
type follower struct{ f *follow.Follower }

// close stops the follower (nil-safe, idempotent).
func (f *follower) close() {
	if f != nil {
		f.f.Close()
	}
}

// endWaits ends blocked FOLLOW.WAIT calls with the current position
// (nil-safe); called when shutdown begins, before connections drain.
func (f *follower) endWaits() {
	if f != nil {
		f.f.EndWaits()
	}
}

// startFollow starts `serve --follow`: after recovery, with the AOF
// attached, before serving. It loads the configuration, starts the
// follower (embedded NATS or a connection to the configured URL), makes
// the followed keys answer "maybe" until it has caught up, makes them and
// the position key read-only to clients (server.SetWriteGuard), and adds
// its INFO section, metrics and /readyz condition. Without Options.Follow
// it returns nil.
func startFollow(ctx context.Context, o Options, log *slog.Logger, table *command.Table, cfg *config.Registry,
	store *keyspace.Store, db *persist.DB, op *ops) (*follower, error) {
	if o.Follow == "" {
		return nil, nil
	}
	c, err := follow.LoadConfig(o.Follow, o.Dir)
	if err != nil {
		return nil, fmt.Errorf("%w: --follow %s: %v", ErrInvalidOptions, o.Follow, err)
	}
	f, err := follow.New(c, follow.Deps{Table: table, Config: cfg, Store: store, Server: op.srv, Wait: db.Wait, Logger: log})
	if err != nil {
		return nil, err
	}
	f.WrapReads(table)
	op.srv.SetWriteGuard(f.Owns) // followed keys are read-only to clients
	if err := f.Start(ctx); err != nil {
		return nil, err
	}
	op.srv.AddInfoSection("follow", "Follow", f.Info)
	if err := op.metrics.Registry().Register(f.Collector()); err != nil {
		f.Close()
		return nil, fmt.Errorf("app: follow metrics: %w", err)
	}
	op.follow.Store(f)
	log.Info("following", "stream", c.Stream, "consumer", c.Consumer, "applied", f.Applied())
	return &follower{f}, nil
}

// followReady is the --follow part of readiness.
func (op *ops) followReady() bool {
	f := op.follow.Load()
	return f == nil || f.Ready()
}

// httpHandler is the metrics mux, with /readyz also showing the follower's
// state, applied position and lag under --follow.
func (op *ops) httpHandler() http.Handler {
	mux := op.metrics.Mux(op.ready)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := op.follow.Load()
		if f == nil || r.URL.Path != "/readyz" {
			mux.ServeHTTP(w, r)
			return
		}
		code, body := http.StatusServiceUnavailable, "not ready\n"
		if op.ready() {
			code, body = http.StatusOK, "ready\n"
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body + f.Readyz()))
	})
}
