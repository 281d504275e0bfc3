package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/probly/probly/internal/app"
)

// Option errors of `serve` exit 2 before anything starts.
func TestServeOptionErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:0"}, "protected mode"},
		{[]string{"--addr", "127.0.0.1:0", "--metrics-addr", "0.0.0.0:0"}, "--metrics-addr"},
		{[]string{"--protected-mode", "maybe"}, "--protected-mode must be yes or no"},
		{[]string{"--unixsocketperm", "800"}, "--unixsocketperm must be octal permission bits"},
		{[]string{"--unixsocketperm", "1777"}, "--unixsocketperm must be octal permission bits"},
		{[]string{"--addr", "127.0.0.1:0", "--metrics-addr", "off", "--tls-cert", "x.pem"}, "--tls-cert and --tls-key"},
		{[]string{"--addr", "127.0.0.1:0", "--metrics-addr", "off", "--maxmemory", "lots"}, "maxmemory"},
		{[]string{"--addr", "127.0.0.1:0", "--metrics-addr", "off", "--proto-max-bulk-len", "1"}, "proto-max-bulk-len"},
		{[]string{"--addr", "127.0.0.1:0", "--metrics-addr", "off", "--bf-max-filter-bytes", "1.5mb"}, "bf-max-filter-bytes \"1.5mb\": argument must be a memory value"},
		{[]string{"--addr", "127.0.0.1:0", "--metrics-addr", "off", "--cf-max-filter-bytes", "lots"}, "cf-max-filter-bytes \"lots\": argument must be a memory value"},
		{[]string{"--addr", "127.0.0.1:0", "--metrics-addr", "off", "--timeout", "-1"}, "timeout \"-1\": argument must be between 0 and 2147483647 inclusive"},
		{[]string{"--addr", "127.0.0.1:0", "--metrics-addr", "off", "--maxmemory-clients", "101%"}, "maxmemory-clients \"101%\": percentage argument must be less or equal to 100"},
		// Memory values with units are accepted by every byte-sized flag:
		// the start fails only at the bad flag applied after them.
		{[]string{"--addr", "127.0.0.1:0", "--metrics-addr", "off", "--maxmemory", "64mb", "--proto-max-bulk-len", "2mb",
			"--client-query-buffer-limit", "1gb", "--bf-max-filter-bytes", "1mb", "--cf-max-filter-bytes", "64kb",
			"--metrics-max-filters", "x"}, "metrics-max-filters"},
		{[]string{"--addr", "127.0.0.1:0", "--metrics-addr", "off", "--follow", "/nonexistent/follow.json"}, "--follow /nonexistent/follow.json"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(t, "", append([]string{"serve", "--dir", dir}, c.args...)...)
		// A bad option value the server finds (app.ErrInvalidOptions)
		// prints only the error: the usage text would bury it.
		optErr := !strings.Contains(c.want, "protected-mode") && !strings.Contains(c.want, "unixsocketperm")
		if code != ExitUsage || !strings.Contains(stderr, c.want) || optErr && strings.Contains(stderr, "Usage:") {
			t.Errorf("serve %v: exit %d, stderr %q; want exit %d mentioning %q (without the usage text: %v)", c.args, code, stderr, ExitUsage, c.want, optErr)
		}
	}
}

// Every flag is documented in the help.
func TestServeHelpListsFlags(t *testing.T) {
	code, out, _ := runCLI(t, "", "serve", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, f := range []string{"--addr", "--dir", "--appendfsync", "--requirepass", "--metrics-addr", "--metrics-max-filters",
		"--tls-cert", "--tls-key", "--protected-mode", "--maxmemory", "--maxclients", "--proto-max-bulk-len",
		"--proto-max-multibulk-len", "--client-query-buffer-limit", "--maxmemory-clients", "--timeout",
		"--bf-max-filter-bytes", "--cf-max-filter-bytes", "--unixsocket", "--unixsocketperm", "/metrics", "/healthz", "/readyz"} {
		if !strings.Contains(out, f) {
			t.Errorf("serve --help lacks %s", f)
		}
	}
}

// Every serve flag is a directive of the configuration file with the
// flag's name; the command line overrides the file; save lines add up;
// other directives go to the server's CONFIG parameters.
func TestServeConfigFileDirectives(t *testing.T) {
	dir := t.TempDir()
	cmd := newServeCmd()
	values := map[string]string{
		"addr": "127.0.0.1:7001", "dir": filepath.Join(dir, "data"), "appendfsync": "always", "requirepass": "p w",
		"metrics-addr": "off", "tls-cert": "c.pem", "tls-key": "k.pem", "follow": "f.json", "protected-mode": "no",
		"aclfile": filepath.Join(dir, "users.acl"), "unixsocket": filepath.Join(dir, "probly.sock"), "unixsocketperm": "770",
	}
	for _, f := range serveConfigFlags {
		values[f.name] = f.def + "0"
	}
	values["maxmemory"], values["timeout"], values["save"] = "2mb", "9", "900 1 300 10"
	var text strings.Builder
	text.WriteString("# every flag\n")
	n := 0
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if fl.Name == "help" {
			return
		}
		n++
		v, ok := values[fl.Name]
		if !ok {
			t.Errorf("flag --%s has no value in this test", fl.Name)
		}
		if fl.Name == "save" {
			text.WriteString("save 900 1\nsave 300 10\n")
			return
		}
		text.WriteString(fl.Name + " \"" + v + "\"\n")
	})
	text.WriteString("bf-error-rate 0.02\n")
	path := filepath.Join(dir, "probly.conf")
	if err := os.WriteFile(path, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags([]string{"--timeout", "7"}); err != nil {
		t.Fatal(err)
	}
	var o app.Options
	where, err := applyConfigFile(cmd, path, &o)
	if err != nil {
		t.Fatal(err)
	}
	values["timeout"] = "7" // the command line wins
	for name, v := range values {
		if got := cmd.Flags().Lookup(name).Value.String(); got != v {
			t.Errorf("--%s = %q after the file, want %q", name, got, v)
		}
	}
	if _, ok := where["timeout"]; ok || len(where) != n-1 {
		t.Errorf("positions %v: want every flag but timeout (%d)", where, n-1)
	}
	if o.ConfigFile != path || len(o.FileConfig) != 1 || o.FileConfig[0].Name != "bf-error-rate" || o.FileConfig[0].Line != n+3 {
		t.Errorf("ConfigFile %q, FileConfig %+v", o.ConfigFile, o.FileConfig)
	}
}

// Errors in the configuration file exit 2 naming the file and line.
func TestServeConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]string{
		"addr 127.0.0.1:0\nmetrics-addr off\nno-such 1\n":         "probly.conf:3: unknown directive \"no-such\"",
		"addr 127.0.0.1:0\nmetrics-addr off\nmaxmemory lots\n":    "probly.conf:3: maxmemory \"lots\": argument must be a memory value",
		"addr 127.0.0.1:0\nmetrics-addr off\nappendfsync often\n": "probly.conf:3: appendfsync must be always, everysec or no",
		"addr 127.0.0.1:0\ndir \"x\n":                             "probly.conf:2: unbalanced quotes",
	} {
		path := filepath.Join(dir, "probly.conf")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(t, "", "serve", "--dir", filepath.Join(dir, "data"), path)
		if code != ExitUsage || !strings.Contains(stderr, want) || strings.Contains(stderr, "Usage:") {
			t.Errorf("file %q: exit %d, stderr %q; want exit %d mentioning %q", text, code, stderr, ExitUsage, want)
		}
	}
	code, _, stderr := runCLI(t, "", "serve", filepath.Join(dir, "missing.conf"))
	if code != ExitUsage || !strings.Contains(stderr, "missing.conf") {
		t.Errorf("missing file: exit %d, %q", code, stderr)
	}
}

// redis.conf's bind and port make the listen address, and tls-cert-file /
// tls-key-file are the TLS flags; addr (file or command line) wins.
func TestServeConfigFileRedisNames(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		text string
		args []string
		want map[string]string
	}{
		{"bind 127.0.0.2 -::1\nport 7002\ntls-cert-file c.pem\ntls-key-file k.pem\n", nil,
			map[string]string{"addr": "127.0.0.2:7002", "tls-cert": "c.pem", "tls-key": "k.pem"}},
		{"port 7003\n", nil, map[string]string{"addr": "127.0.0.1:7003"}},
		{"bind ::1\n", nil, map[string]string{"addr": "[::1]:6379"}},
		{"bind * -::*\n", nil, map[string]string{"addr": ":6379"}},
		{"port 7004\naddr 127.0.0.3:7005\n", nil, map[string]string{"addr": "127.0.0.3:7005"}},
		{"port 7004\n", []string{"--addr", "127.0.0.4:7006"}, map[string]string{"addr": "127.0.0.4:7006"}},
	} {
		path := filepath.Join(dir, "probly.conf")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := newServeCmd()
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatal(err)
		}
		var o app.Options
		if _, err := applyConfigFile(cmd, path, &o); err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		for name, want := range c.want {
			if got := cmd.Flags().Lookup(name).Value.String(); got != want {
				t.Errorf("%q %v: --%s = %q, want %q", c.text, c.args, name, got, want)
			}
		}
	}
	path := filepath.Join(dir, "bad.conf")
	if err := os.WriteFile(path, []byte("# x\nport 70000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := applyConfigFile(newServeCmd(), path, &app.Options{}); err == nil || !strings.Contains(err.Error(), "bad.conf:2: port \"70000\"") {
		t.Errorf("port 70000: %v", err)
	}
}
