package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/config"
)

// serveConfigFlags are flags that set a CONFIG parameter of the same name
// at start-up (CONFIG SET can change them later; see docs/COMMANDS.md).
var serveConfigFlags = []struct{ name, def, usage string }{
	{"maxmemory", "auto", "memory limit of the key space (used_memory), a memory value (2gb, 512mb, bytes); 0 = no limit; " +
		"\"auto\" = a quarter of the memory available (cgroup limit or RAM). Over it, write commands get " +
		"\"OOM command not allowed when used memory > 'maxmemory'.\""},
	{"maxclients", "10000", "maximum number of client connections; more get \"ERR max number of clients reached\""},
	{"proto-max-bulk-len", "512mb", "largest bulk string in a request, a memory value (≥ 1mb); larger: protocol error, connection closed"},
	{"proto-max-multibulk-len", "1048576", "most arguments in one command; more: protocol error, connection closed"},
	{"client-query-buffer-limit", "1gb", "most bytes in one command, a memory value (≥ 1mb); more: protocol error, connection closed"},
	{"maxmemory-clients", "0", "most bytes all clients' input buffers (requests being received) may hold together, a memory value " +
		"or a percentage of maxmemory (\"10%\"); over it, the client with the largest is closed; 0 = no limit"},
	{"timeout", "0", "seconds a client may stay idle before it is closed; 0 = never"},
	{"bf-max-filter-bytes", "auto", "most bytes of bit arrays one Bloom key may hold, a memory value (64mb, 1gb, bytes); " +
		"\"auto\" = a quarter of the memory available, at least 128mb"},
	{"cf-max-filter-bytes", "auto", "most table bytes one cuckoo key may hold, a memory value (64mb, 1gb, bytes); " +
		"\"auto\" = a quarter of the memory available, at least 128mb"},
	{"metrics-max-filters", "100", "most filter keys with per-filter metrics (the largest by memory); 0 = none"},
	{"save", app.DefaultSave, "automatic snapshots: \"<seconds> <changes> …\" pairs, a snapshot when at least <changes> writes " +
		"happened and more than <seconds> passed since the last one (Redis 7 default); \"\" disables them"},
	{"auto-aof-rewrite-percentage", app.DefaultAutoAOFRewritePercentage, "snapshot (AOF rewrite) when the AOF to replay reaches " +
		"this % of dump.pdb's size; 0 disables"},
	{"auto-aof-rewrite-min-size", app.DefaultAutoAOFRewriteMinSize, "no automatic AOF rewrite while dump.pdb plus the AOF are " +
		"smaller than this (memory value)"},
}

func newServeCmd() *cobra.Command {
	var o app.Options
	var protected, unixPerm string
	c := &cobra.Command{
		Use:   "serve [CONFIG-FILE]",
		Short: "Run the Redis-protocol server (RedisBloom-compatible BF.* and CF.*, Redis PF* HyperLogLog)",
		Long: `serve listens for RESP2/RESP3 clients (redis-cli, go-redis, …) and keeps its
data in --dir: an append-only file replayed at start, plus snapshots written
by SAVE/BGSAVE and automatically (--save, --auto-aof-rewrite-*). SIGINT/SIGTERM
shut down gracefully. probly check-aof inspects and repairs a damaged AOF.

Metrics and health: an HTTP listener on --metrics-addr (loopback by default)
serves /metrics (Prometheus), /healthz (200 while the process runs) and
/readyz (503 until recovery has finished, the RESP listener accepts and,
with --follow, the follower has caught up; then 200). It starts before
recovery.

Security: --requirepass makes clients AUTH first; --aclfile keeps ACL users
(one per tenant: ACL SETUSER, ACL SAVE); --tls-cert/--tls-key turn on TLS
for RESP. Protected mode (on by default) refuses to start when --addr
is not a loopback address and no password is set, when --metrics-addr is
not a loopback address, or when --follow starts its embedded NATS server on
a non-loopback address; --protected-mode=no allows all three.

Limits: the flags named like CONFIG parameters (maxmemory, maxclients, …)
set those parameters at start; CONFIG SET changes them at run time, and
INFO and CONFIG GET show them. Byte-sized ones take memory values, as in
redis.conf: bytes or a number with b, k, kb, m, mb, g, gb (k = 1000,
kb = 1024). See docs/OPERATIONS.md.

Configuration file: CONFIG-FILE, in redis.conf syntax ("name value…" per
line, # comments, "…"/'…' quoting, include FILE), sets every flag above by
its name without dashes ("maxmemory 2gb", "addr 127.0.0.1:7000"; Redis's
bind, port, tls-cert-file and tls-key-file work too) and every
CONFIG parameter (bf-error-rate, hll-sparse-max-bytes, …); flags given on
the command line override it. An unknown directive or a bad value stops
the start with an error naming the file and line. CONFIG REWRITE writes
the current CONFIG values back to it, keeping its comments and order.`,
		Args: cobra.MaximumNArgs(1),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			where := map[string]config.Directive{} // flag → the file's directive that set it
			if len(args) == 1 {
				var err error
				if where, err = applyConfigFile(cmd, args[0], &o); err != nil {
					return err
				}
			}
			// bad reports a bad value of a flag, or of the file's directive
			// that set it (then without the usage text).
			bad := func(flag, format string, a ...any) error {
				if d, ok := where[flag]; ok {
					return usageError{err: fmt.Errorf("serve: %w", d.Errorf("%s "+format, append([]any{flag}, a...)...)), shown: true}
				}
				return usagef("serve: --%s "+format, append([]any{flag}, a...)...)
			}
			switch o.AppendFsync {
			case "always", "everysec", "no":
			default:
				return bad("appendfsync", "must be always, everysec or no, not %q", o.AppendFsync)
			}
			switch protected {
			case "yes":
			case "no":
				o.ProtectedModeOff = true
			default:
				return bad("protected-mode", "must be yes or no, not %q", protected)
			}
			if perm, err := strconv.ParseUint(unixPerm, 8, 32); err != nil || perm > 0o777 {
				return bad("unixsocketperm", "must be octal permission bits (700, 770, 777), not %q", unixPerm)
			} else {
				o.UnixSocketPerm = os.FileMode(perm)
			}
			for _, f := range serveConfigFlags {
				fl := cmd.Flags().Lookup(f.name)
				d, inFile := where[f.name]
				switch {
				case fl.Value.String() == "auto" && f.def == "auto":
					// The server's own default (maxmemory, the filter caps).
				case inFile:
					// Checked by the server with the file's position.
					d.Args = []string{fl.Value.String()}
					o.FileConfig = append(o.FileConfig, d)
				case fl.Changed:
					o.Config = append(o.Config, [2]string{f.name, fl.Value.String()})
				}
			}
			o.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			if o.RequirePass == "" {
				o.RequirePass = os.Getenv("PROBLY_REQUIREPASS")
			}
			err := app.Run(context.Background(), o)
			if errors.Is(err, app.ErrInvalidOptions) {
				// Exit 2 like a usage error, but print only the error:
				// the usage text would bury it (shown: nothing to add).
				return usageError{err: fmt.Errorf("serve: %w", err), shown: true}
			}
			return err
		}),
	}
	fl := c.Flags()
	fl.StringVar(&o.Addr, "addr", app.DefaultAddr, "RESP listen address host:port")
	fl.StringVar(&o.Dir, "dir", app.DefaultDir, "data directory (AOF and snapshots)")
	fl.StringVar(&o.AppendFsync, "appendfsync", app.DefaultAppendFsync, "fsync policy: always | everysec | no")
	fl.StringVar(&o.RequirePass, "requirepass", "", "password clients must AUTH with (or env PROBLY_REQUIREPASS)")
	fl.StringVar(&o.ACLFile, "aclfile", "", "ACL users file in Redis's format (ACL SAVE/LOAD); it must exist, and is loaded at start")
	fl.StringVar(&o.MetricsAddr, "metrics-addr", app.DefaultMetricsAddr, `HTTP address of /metrics, /healthz and /readyz; "" or "off" disables it`)
	fl.StringVar(&o.TLSCert, "tls-cert", "", "PEM certificate (chain) file; with --tls-key, clients must connect with TLS")
	fl.StringVar(&o.TLSKey, "tls-key", "", "PEM private key file of --tls-cert")
	fl.StringVar(&o.Follow, "follow", "", "JSON file mapping NATS JetStream subjects to BF/CF keys: the keys follow the change stream "+
		"(embedded NATS in --dir/nats unless the file sets \"url\"); format: {\"stream\": \"USERS\", \"keys\": "+
		"[{\"key\": \"users\", \"type\": \"bf\", \"add\": [\"users.created\"], \"delete\": [\"users.deleted\"]}]}")
	fl.StringVar(&o.UnixSocket, "unixsocket", "", "path of a Unix socket to listen on as well as --addr (plain RESP, never TLS), as Redis's unixsocket; a stale socket file there is replaced")
	fl.StringVar(&unixPerm, "unixsocketperm", "0", "permission bits of the --unixsocket file, in octal (700: only this user); 0 = as the umask gives")
	fl.StringVar(&protected, "protected-mode", "yes", "yes: refuse a non-loopback --addr without --requirepass, a non-loopback --metrics-addr and a non-loopback embedded NATS listener (--follow); no: allow them")
	for _, f := range serveConfigFlags {
		fl.String(f.name, f.def, f.usage)
	}
	return c
}

// applyConfigFile reads the configuration file at path (config.ParseFile)
// into the serve flags and o: a directive named like a flag sets that flag
// unless the command line gave it (flags win), several save lines add up
// as in redis.conf (save "" clears), and every other directive goes to
// o.FileConfig, which the server checks against its CONFIG parameters. It
// returns, per flag the file set, the (last) directive that set it.
func applyConfigFile(cmd *cobra.Command, path string, o *app.Options) (map[string]config.Directive, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	ds, err := config.ParseFile(path)
	if err != nil {
		return nil, usageError{err: fmt.Errorf("serve: %w", err), shown: true}
	}
	o.ConfigFile = path
	where := map[string]config.Directive{}
	var bind, port *config.Directive
	for _, d := range ds {
		switch d.Name {
		case "bind", "port":
			if d.Name == "bind" {
				bind = &d
			} else {
				port = &d
			}
			continue
		case "tls-cert-file", "tls-key-file":
			d.Name = strings.TrimSuffix(d.Name, "-file")
		}
		fl := cmd.Flags().Lookup(d.Name)
		if fl == nil || d.Name == "help" {
			o.FileConfig = append(o.FileConfig, d)
			continue
		}
		if fl.Changed {
			continue
		}
		v := d.Value()
		if _, again := where[d.Name]; again && d.Name == "save" && v != "" && fl.Value.String() != "" {
			v = fl.Value.String() + " " + v
		}
		if err := fl.Value.Set(v); err != nil {
			return nil, usageError{err: fmt.Errorf("serve: %w", d.Errorf("%s %q: %v", d.Name, v, err)), shown: true}
		}
		where[d.Name] = d
	}
	if bind != nil || port != nil {
		if err := bindPort(cmd, bind, port, where); err != nil {
			return nil, err
		}
	}
	return where, nil
}

// bindPort applies redis.conf's bind and port directives: the address is
// the first bind address (default the addr flag's host; * = every
// interface, which protected mode then checks) and the port
// (default the addr flag's port). An addr on the command line or in the
// file wins.
func bindPort(cmd *cobra.Command, bind, port *config.Directive, where map[string]config.Directive) error {
	fl := cmd.Flags().Lookup("addr")
	if _, set := where["addr"]; set || fl.Changed {
		return nil
	}
	host, p, err := net.SplitHostPort(fl.Value.String())
	if err != nil {
		return usagef("serve: --addr %q: %v", fl.Value.String(), err)
	}
	d := port
	if bind != nil {
		host, d = strings.TrimPrefix(bind.Args[0], "-"), bind
		if host == "*" || host == "::*" {
			host = "" // every interface
		}
	}
	if port != nil {
		if n, err := strconv.ParseUint(port.Value(), 10, 16); err != nil || len(port.Args) != 1 {
			return usageError{err: fmt.Errorf("serve: %w", port.Errorf("port %q: must be a TCP port, 0-65535", port.Value())), shown: true}
		} else {
			p = strconv.FormatUint(n, 10)
		}
	}
	if err := fl.Value.Set(net.JoinHostPort(host, p)); err != nil {
		return err
	}
	where["addr"] = *d
	return nil
}
