package app

import (
	"net"
	"strconv"
	"strings"

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
