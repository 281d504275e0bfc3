package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/follow"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/metrics"
	"github.com/probly/probly/internal/persist"
	"github.com/probly/probly/internal/server"
)

// DefaultMetricsAddr is the default of --metrics-addr: loopback only.
const DefaultMetricsAddr = "127.0.0.1:9121"

// ErrInvalidOptions wraps option errors found before anything starts:
// protected mode, an incomplete TLS pair, an unknown or invalid start-up
// CONFIG value.
var ErrInvalidOptions = errors.New("app: invalid options")

// ops is the operational side of Run: the RESP server object (created
// before recovery so every CONFIG parameter exists when the start-up
// values are applied), the TLS configuration, the metrics and the
// metrics/health HTTP listener.
type ops struct {
	log       *slog.Logger
	srv       *server.Server
	metrics   *metrics.Metrics
	tls       *tls.Config
	http      *http.Server
	recovered atomic.Bool
	follow    atomic.Pointer[follow.Follower] // --follow (follow.go)
}

// newOps checks the security options, builds the server and metrics,
// applies the start-up CONFIG values and starts the HTTP listener (so
// /healthz answers and /readyz says 503 while recovery runs).
func newOps(o Options, log *slog.Logger, table *command.Table, cfg *config.Registry, store *keyspace.Store) (*ops, error) {
	if err := checkProtectedMode(o); err != nil {
		return nil, err
	}
	op := &ops{log: log}
	if o.TLSCert != "" || o.TLSKey != "" {
		if o.TLSCert == "" || o.TLSKey == "" {
			return nil, fmt.Errorf("%w: --tls-cert and --tls-key must be given together", ErrInvalidOptions)
		}
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("app: loading the TLS certificate: %w", err)
		}
		op.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}

	op.metrics = metrics.New(metrics.Options{Table: table, Store: store, MaxFilters: metrics.DefaultMaxFilters})
	cfg.Register(op.metrics.ConfigParam())
	srv, err := server.New(server.Options{
		Addr: o.Addr, RequirePass: o.RequirePass, ACLFile: o.ACLFile, Logger: log,
		Store: store, Config: cfg, Table: table, Version: o.Version,
		MaxMemory: DefaultMaxMemory(), Observer: op.metrics,
	})
	if err != nil {
		return nil, err
	}
	op.srv = srv
	op.metrics.SetServer(srv)
	cfg.AcceptAuto("maxmemory", strconv.FormatUint(DefaultMaxMemory(), 10)) // --maxmemory auto

	cfg.SetFile(o.ConfigFile)
	for _, d := range o.FileConfig {
		if err := cfg.Set(d.Name, d.Value()); err != nil {
			if errors.Is(err, config.ErrUnknown) {
				return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, d.Errorf("unknown directive %q", d.Name))
			}
			return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, d.Errorf("%s %q: %v", d.Name, d.Value(), err))
		}
	}
	for _, kv := range o.Config {
		if err := cfg.Set(kv[0], kv[1]); err != nil {
			if errors.Is(err, config.ErrUnknown) {
				return nil, fmt.Errorf("%w: unknown parameter %q", ErrInvalidOptions, kv[0])
			}
			return nil, fmt.Errorf("%w: %s %q: %v", ErrInvalidOptions, kv[0], kv[1], err)
		}
	}

	ln := o.MetricsListener
	if ln == nil && o.MetricsAddr != "" && o.MetricsAddr != "off" {
		if ln, err = net.Listen("tcp", o.MetricsAddr); err != nil {
			return nil, fmt.Errorf("app: metrics listener: %w", err)
		}
	}
	if ln != nil {
		op.http = &http.Server{
			Handler:           op.httpHandler(),
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      2 * time.Minute,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		}
		log.Info("metrics listening", "addr", ln.Addr().String())
		go func() {
			if err := op.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("metrics listener stopped", "err", err)
			}
		}()
	}
	return op, nil
}

// ready is /readyz: recovery finished, the RESP server accepts and, with
// --follow, the followed keys have caught up.
func (op *ops) ready() bool {
	return op.recovered.Load() && op.srv.Serving() && op.followReady()
}

// attachPersist hands the persistence engine, opened by recovery, to the
// server (SAVE, INFO) and the metrics (AOF, snapshots). The fsync latency
// observer is passed to persist.Open instead (Options.OnFsync), so that it
// sees every fsync the counter counts, recovery's included.
func (op *ops) attachPersist(db *persist.DB) {
	op.srv.SetPersist(db)
	op.metrics.SetPersist(db)
}

// listener wraps the RESP listener in TLS when configured. The listener
// hands out connections before their handshake; the server completes each
// one on the connection's goroutine under a deadline, outside maxclients
// (server.DefaultHandshakeTimeout, server.DefaultMaxHandshakes), so a
// peer that never sends a ClientHello holds no client slot.
func (op *ops) listener(ln net.Listener) net.Listener {
	if op.tls == nil {
		return ln
	}
	return tls.NewListener(ln, op.tls)
}

// close stops the HTTP listener.
func (op *ops) close() {
	if op.http == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := op.http.Shutdown(ctx); err != nil {
		op.http.Close()
	}
}

// checkProtectedMode refuses, unless Options.ProtectedModeOff, to listen
// for RESP on a non-loopback address without a password, to serve the
// unauthenticated metrics endpoint (whose per-filter series carry key
// names) on a non-loopback address, and (--follow) to start the
// unauthenticated embedded NATS server on a non-loopback address.
func checkProtectedMode(o Options) error {
	if o.ProtectedModeOff {
		return nil
	}
	addr := o.Addr
	if o.Listener != nil {
		addr = o.Listener.Addr().String()
	}
	if o.RequirePass == "" && !isLoopback(addr) && !aclFileProtects(o.ACLFile) {
		return fmt.Errorf("%w: protected mode: --addr %s is not a loopback address and no password is set (--requirepass), "+
			"so anyone who can reach it could read and change every key; set --requirepass, listen on 127.0.0.1, "+
			"or pass --protected-mode=no", ErrInvalidOptions, addr)
	}
	maddr := o.MetricsAddr
	if o.MetricsListener != nil {
		maddr = o.MetricsListener.Addr().String()
	}
	if maddr != "" && maddr != "off" && !isLoopback(maddr) {
		return fmt.Errorf("%w: protected mode: --metrics-addr %s is not a loopback address; the metrics endpoint has no "+
			"authentication and its per-filter series are labelled with key names; listen on 127.0.0.1, "+
			"pass --metrics-addr=off, or pass --protected-mode=no", ErrInvalidOptions, maddr)
	}
	if err := follow.CheckProtectedMode(o.Follow, o.Dir, isLoopback); err != nil {
		return fmt.Errorf("%w: --follow %s: %w", ErrInvalidOptions, o.Follow, err)
	}
	return nil
}

// isLoopback reports whether every address host:port can bind to is a
// loopback address. An empty host (all interfaces), an unparsable address
// or a name that does not resolve only to loopback addresses is not.
func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil || host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap().IsLoopback()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !ip.Unmap().IsLoopback() {
			return false
		}
	}
	return true
}
