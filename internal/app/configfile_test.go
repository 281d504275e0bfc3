package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/probly/probly/internal/config"
)

// configFileValues are start-up values, as written in the file and as
// CONFIG GET then shows them (memory values in bytes), for the parameters
// a test can change without side effects. Parameters not listed are
// written to the file with their default value, so the file holds every
// directive the registry knows, those added later included.
var configFileValues = map[string][2]string{
	"maxmemory":                   {"64mb", "67108864"},
	"maxclients":                  {"500", "500"},
	"proto-max-bulk-len":          {"2mb", "2097152"},
	"proto-max-multibulk-len":     {"4096", "4096"},
	"client-query-buffer-limit":   {"4mb", "4194304"},
	"maxmemory-clients":           {"10%", "10%"},
	"timeout":                     {"300", "300"},
	"save":                        {"900 1 300 10", "900 1 300 10"},
	"auto-aof-rewrite-percentage": {"50", "50"},
	"auto-aof-rewrite-min-size":   {"32mb", "33554432"},
	"bf-error-rate":               {"0.02", "0.02"},
	"bf-initial-size":             {"200", "200"},
	"bf-expansion-factor":         {"4", "4"},
	"bf-max-filter-bytes":         {"64mb", "67108864"},
	"cf-bucket-size":              {"4", "4"},
	"cf-initial-size":             {"2048", "2048"},
	"cf-max-iterations":           {"30", "30"},
	"cf-expansion-factor":         {"2", "2"},
	"cf-max-expansions":           {"16", "16"},
	"cf-max-filter-bytes":         {"32mb", "33554432"},
	"hll-sparse-max-bytes":        {"4kb", "4096"},
	"metrics-max-filters":         {"20", "20"},
	"tcp-keepalive":               {"60", "60"},
}

func startWithFile(t *testing.T, dir, path string) *served {
	t.Helper()
	ds, err := config.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return runApp(t, Options{Dir: dir, ConfigFile: path, FileConfig: ds}, true)
}

func configAll(t *testing.T, s *served) map[string]string {
	t.Helper()
	m, err := newClient(t, s.addr, nil).ConfigGet(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A configuration file with every directive starts the server with its
// values; CONFIG SET, CONFIG REWRITE and a restart from the rewritten file
// give the same CONFIG GET values, and the file keeps its comments.
func TestConfigFileRewriteRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first := runApp(t, Options{Dir: dir}, true)
	defaults := configAll(t, first)
	first.stop(t)
	var b strings.Builder
	b.WriteString("# probly test configuration\n\n")
	names := make([]string, 0, len(defaults))
	for name := range defaults {
		names = append(names, name)
	}
	sort.Strings(names)
	want := map[string]string{}
	for _, name := range names {
		v, shown := defaults[name], defaults[name]
		if fv, ok := configFileValues[name]; ok {
			v, shown = fv[0], fv[1]
		}
		if name == "dir" {
			v, shown = dir, dir
		}
		if name == "port" {
			// Each runApp has its own listener, whose port CONFIG GET
			// shows; a file's port directive is the CLI's (it becomes
			// --addr, internal/cli), not the listener of Options.
			continue
		}
		want[name] = shown
		if v == "" {
			v = `""`
		}
		b.WriteString("# " + name + "\n" + name + " " + v + "\n")
	}
	path := filepath.Join(t.TempDir(), "probly.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startWithFile(t, dir, path)
	got := configAll(t, s)
	for name, w := range want {
		if got[name] != w {
			t.Errorf("from the file: CONFIG GET %s = %q, want %q", name, got[name], w)
		}
	}
	c := newClient(t, s.addr, nil)
	for _, kv := range [][2]string{{"maxmemory", "128mb"}, {"bf-error-rate", "0.05"}, {"timeout", "0"}, {"save", ""}, {"cf-max-filter-bytes", "3000"}} {
		if err := c.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatalf("CONFIG SET %s %s: %v", kv[0], kv[1], err)
		}
	}
	if err := c.Do(ctx, "CONFIG", "REWRITE").Err(); err != nil {
		t.Fatalf("CONFIG REWRITE: %v", err)
	}
	before := configAll(t, s)
	if before["maxmemory"] != "134217728" || before["save"] != "" || before["cf-max-filter-bytes"] != "3000" {
		t.Fatalf("after CONFIG SET: %v", before)
	}
	s.stop(t)
	text, _ := os.ReadFile(path)
	for _, line := range []string{"# probly test configuration\n", "# maxmemory\nmaxmemory 128mb\n", "# timeout\ntimeout 0\n", "# save\nsave \"\"\n"} {
		if !strings.Contains(string(text), line) {
			t.Errorf("rewritten file lacks %q:\n%s", line, text)
		}
	}
	after := configAll(t, startWithFile(t, dir, path))
	for name, v := range before {
		if after[name] != v && name != "port" {
			t.Errorf("after restart: CONFIG GET %s = %q, before %q", name, after[name], v)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d parameters after restart, %d before", len(after), len(before))
	}
}

// Without a configuration file CONFIG REWRITE answers Redis's error; an
// unknown directive or a bad value in the file stops the start with an
// error naming the file and line.
func TestConfigFileErrors(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, runApp(t, Options{}, true).addr, nil)
	if err := c.Do(ctx, "CONFIG", "REWRITE").Err(); err == nil || err.Error() != "ERR The server is running without a config file" {
		t.Errorf("CONFIG REWRITE without a file: %v", err)
	}
	for text, msg := range map[string]string{
		"# x\nmaxmemory 1mb\nno-such-thing 1\n": "probly.conf:3: unknown directive \"no-such-thing\"",
		"\nmaxmemory lots\n":                    "probly.conf:2: maxmemory \"lots\": argument must be a memory value",
		"bf-error-rate 2\n":                     "probly.conf:1: bf-error-rate \"2\": Value for `bf-error-rate` must be in the range (0.000000, 1.000000)",
		"maxmemory-policy allkeys-lru\n":        "probly.conf:1: maxmemory-policy \"allkeys-lru\": probly supports only noeviction",
		"maxmemory-policy lru\n":                "probly.conf:1: maxmemory-policy \"lru\": argument(s) must be one of the following: volatile-lru,",
		"cluster-enabled yes\n":                 "probly.conf:1: cluster-enabled \"yes\": probly has no cluster mode: cluster-enabled can only be no",
		"notify-keyspace-events Ex\n":           "probly.conf:1: notify-keyspace-events \"Ex\": probly does not publish keyspace notifications",
		"tcp-keepalive -5\n":                    "probly.conf:1: tcp-keepalive \"-5\": argument must be between 0 and 2147483647 inclusive",
	} {
		path := filepath.Join(t.TempDir(), "probly.conf")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		ds, err := config.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		err = Run(ctx, Options{Dir: t.TempDir(), ConfigFile: path, FileConfig: ds, MetricsAddr: "off"})
		if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), msg) {
			t.Errorf("file %q: %v, want ErrInvalidOptions mentioning %q", text, err, msg)
		}
	}
}
