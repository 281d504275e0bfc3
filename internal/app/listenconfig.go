package app

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/probly/probly/internal/config"
)

// registerListenConfig exposes what the server listens on and checks at
// start to CONFIG GET, with Redis's names and forms: port (the port ln is
// bound to, so --addr 127.0.0.1:0 shows the one chosen), bind (the host of
// --addr; every interface, an empty host, is Redis's default "* -::*")
// and protected-mode (yes or no). probly does not rebind its listener at
// run time and checks protected mode only when it starts, so CONFIG SET
// accepts the current value (as Redis does) and refuses another with a
// reason saying so; a value of the wrong form gets Redis's reply first.
// Configuration files set them through the serve flags (bind, port,
// protected-mode directives; internal/cli), and CONFIG REWRITE writes the
// values back to the lines the file has.
func registerListenConfig(cfg *config.Registry, o Options, ln net.Listener) {
	host, port, _ := net.SplitHostPort(o.Addr)
	if o.Listener != nil {
		host, port, _ = net.SplitHostPort(ln.Addr().String())
	}
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		port = strconv.Itoa(a.Port)
	}
	if host == "" {
		host = "* -::*"
	}
	protected := "yes"
	if o.ProtectedModeOff {
		protected = "no"
	}
	const restart = " (probly does not rebind its listener at run time): set --addr, or bind and port in the configuration file, and restart"
	cfg.Register(config.Param{Name: "port", Default: port, Set: func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil:
			return config.Reason("argument couldn't be parsed into an integer")
		case n < 0 || n > 65535:
			return config.Reason("argument must be between 0 and 65535 inclusive")
		case strconv.FormatInt(n, 10) != port:
			return config.Reason("can't change the listen port" + restart)
		}
		return nil
	}})
	cfg.Register(config.Param{Name: "bind", Default: host, Set: func(v string) error {
		if strings.Join(strings.Fields(v), " ") != host {
			return config.Reason("can't change the listen address" + restart)
		}
		return nil
	}})
	// Redis's unixsocket and unixsocketperm: immutable; the permission
	// in octal, "0" when not set.
	for name, v := range map[string]string{"unixsocket": o.UnixSocket, "unixsocketperm": strconv.FormatUint(uint64(o.UnixSocketPerm), 8)} {
		cfg.Register(config.Param{Name: name, Default: v, Immutable: true, Set: func(s string) error {
			if s != v {
				return fmt.Errorf("%s can only be set at start-up (--%s)", name, name)
			}
			return nil
		}})
	}
	cfg.Register(config.Param{Name: "protected-mode", Default: protected, Show: strings.ToLower, Set: func(v string) error {
		switch v = strings.ToLower(v); {
		case v != "yes" && v != "no":
			return config.Reason("argument must be 'yes' or 'no'")
		case v != protected:
			return config.Reason("protected mode is checked when the server starts: set --protected-mode, or protected-mode in the configuration file, and restart")
		}
		return nil
	}})
}

// listenUnix listens on the Unix socket path (nil, nil for ""), as Redis's
// unixsocket: a socket file left there by a server that is gone is
// removed first (Redis removes any; probly refuses one a server still
// accepts on), any other file is an error; perm, if not 0, is set on the
// socket file. The listener removes the file when closed.
func listenUnix(path string, perm os.FileMode) (net.Listener, error) {
	if path == "" {
		return nil, nil
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSocket != 0 {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("app: unixsocket %s: another server listens on it", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("app: unixsocket %s: %w", path, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("app: unixsocket: %w", err)
	}
	if perm != 0 {
		if err := os.Chmod(path, perm); err != nil {
			ln.Close()
			return nil, fmt.Errorf("app: unixsocketperm %o: %w", perm, err)
		}
	}
	return ln, nil
}

// multiListener accepts the connections of several listeners (TCP and the
// Unix socket) as one, for server.Serve: Addr is the first one's, Close
// closes them all. A listener's accept error is handed to Accept like a
// connection; after one that is not temporary that listener is no longer
// read (Serve returns on it anyway). Each listener's goroutine waits until
// Accept takes what it accepted, so accepting is paced by the server.
type multiListener struct {
	lns  []net.Listener
	ch   chan accepted
	done chan struct{}
	once sync.Once
}

type accepted struct {
	nc  net.Conn
	err error
}

func newMultiListener(lns ...net.Listener) *multiListener {
	m := &multiListener{lns: lns, ch: make(chan accepted), done: make(chan struct{})}
	for _, ln := range lns {
		go m.run(ln)
	}
	return m
}

func (m *multiListener) run(ln net.Listener) {
	for {
		nc, err := ln.Accept()
		select {
		case m.ch <- accepted{nc, err}:
		case <-m.done:
			if nc != nil {
				nc.Close()
			}
			return
		}
		var te interface{ Temporary() bool }
		if err != nil && !(errors.As(err, &te) && te.Temporary()) {
			return
		}
	}
}

// Accept returns the next connection of any listener, or net.ErrClosed
// after Close.
func (m *multiListener) Accept() (net.Conn, error) {
	select {
	case a := <-m.ch:
		return a.nc, a.err
	case <-m.done:
		return nil, net.ErrClosed
	}
}

// Close closes every listener and returns the first error.
func (m *multiListener) Close() error {
	m.once.Do(func() { close(m.done) })
	var first error
	for _, ln := range m.lns {
		if err := ln.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Addr is the first listener's address.
func (m *multiListener) Addr() net.Addr { return m.lns[0].Addr() }
