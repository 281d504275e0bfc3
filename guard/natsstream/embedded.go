package natsstream

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultListen is the client address of the embedded server: the NATS
// port, on loopback only.
const DefaultListen = "127.0.0.1:4222"

// EmbeddedOptions configure StartEmbedded.
type EmbeddedOptions struct {
	// Dir is where JetStream stores streams and consumers (created if
	// missing). Required.
	Dir string
	// Listen is the client address host:port; "" means DefaultListen, port
	// 0 picks a free port, and "off" accepts in-process connections only
	// (Connect).
	Listen string
	// MaxStore bounds JetStream's file storage in bytes; 0 = the server's
	// default (a share of the disk).
	MaxStore int64
	// SyncAlways makes JetStream fsync every message before acknowledging
	// its publish (slower); by default it fsyncs periodically, so a
	// process crash loses nothing but a machine crash may lose recent
	// messages.
	SyncAlways bool
	// Log, if true, lets nats-server log to stderr.
	Log bool
}

// Embedded is an in-process nats-server with JetStream.
type Embedded struct {
	srv *server.Server
}

// StartEmbedded starts an embedded server and waits until it accepts
// connections.
func StartEmbedded(o EmbeddedOptions) (*Embedded, error) {
	if o.Dir == "" {
		return nil, errors.New("natsstream: EmbeddedOptions.Dir is required")
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("natsstream: JetStream directory: %w", err)
	}
	opts := &server.Options{
		ServerName:        "probly-embedded",
		JetStream:         true,
		StoreDir:          o.Dir,
		JetStreamMaxStore: o.MaxStore,
		SyncAlways:        o.SyncAlways,
		NoSigs:            true,
		NoLog:             !o.Log,
	}
	switch o.Listen {
	case "off":
		opts.DontListen = true
	case "":
		o.Listen = DefaultListen
		fallthrough
	default:
		host, port, err := net.SplitHostPort(o.Listen)
		if err != nil {
			return nil, fmt.Errorf("natsstream: listen address %q: %w", o.Listen, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil || p < 0 || p > 65535 {
			return nil, fmt.Errorf("natsstream: listen address %q: bad port", o.Listen)
		}
		if p == 0 {
			p = server.RANDOM_PORT
		}
		opts.Host, opts.Port = host, p
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsstream: embedded server: %w", err)
	}
	if o.Log {
		srv.ConfigureLogger()
	}
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("natsstream: embedded server did not start (is %s in use, or %s locked by another server?)", o.Listen, o.Dir)
	}
	return &Embedded{srv: srv}, nil
}

// ClientURL is the URL clients dial ("" with Listen "off").
func (e *Embedded) ClientURL() string {
	if e.srv.Addr() == nil {
		return ""
	}
	return e.srv.ClientURL()
}

// Connect returns an in-process connection to the server and its JetStream
// context.
func (e *Embedded) Connect(opts ...nats.Option) (*nats.Conn, jetstream.JetStream, error) {
	opts = append([]nats.Option{nats.InProcessServer(e.srv), nats.Name("probly")}, opts...)
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("natsstream: connecting to the embedded server: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// Close shuts the server down (JetStream flushes its files) and waits for
// it to stop.
func (e *Embedded) Close() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}
