package cli

import (
	"path/filepath"
	"strings"
	"testing"
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
		optErr := !strings.Contains(c.want, "protected-mode")
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
		"--bf-max-filter-bytes", "--cf-max-filter-bytes", "/metrics", "/healthz", "/readyz"} {
		if !strings.Contains(out, f) {
			t.Errorf("serve --help lacks %s", f)
		}
	}
}
