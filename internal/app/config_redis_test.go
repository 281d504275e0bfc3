package app

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command/commandtest"
)

// Differential test against redis-server 7: CONFIG GET of the memory
// settings after CONFIG SET with and without units (bytes, as Redis
// answers), and CONFIG SET's error replies for bad values of the settings
// both have, byte for byte, in RESP2 and RESP3.
func TestConfigDifferentialRedis(t *testing.T) {
	redisAddr := commandtest.StartRedis(t)
	s := runApp(t, Options{}, true)
	type step []string
	var steps []step
	memory := []string{"maxmemory", "proto-max-bulk-len", "client-query-buffer-limit", "auto-aof-rewrite-min-size", "hll-sparse-max-bytes", "maxmemory-clients"}
	for _, v := range []string{"2mb", "3MB", "1gb", "1g", "5000k", "64kb", "1048576", "2097152b", "1536kb"} {
		for _, name := range memory {
			steps = append(steps, step{"CONFIG", "SET", name, v}, step{"CONFIG", "GET", name})
		}
	}
	steps = append(steps, step{"CONFIG", "SET", "maxmemory-clients", "10%"}, step{"CONFIG", "GET", "maxmemory-clients"},
		step{"CONFIG", "SET", "maxmemory", "0"}, step{"CONFIG", "SET", "maxmemory-clients", "0"},
		step{"CONFIG", "SET", "proto-max-bulk-len", "512mb"}, step{"CONFIG", "SET", "client-query-buffer-limit", "1gb"},
		step{"CONFIG", "SET", "hll-sparse-max-bytes", ""}, step{"CONFIG", "GET", "hll-sparse-max-bytes"},
		step{"CONFIG", "SET", "hll-sparse-max-bytes", "3000"}, step{"CONFIG", "SET", "auto-aof-rewrite-min-size", "64mb"},
		step{"CONFIG", "GET", "maxmemory"}, step{"CONFIG", "GET", "client-query-buffer-limit"},
		step{"CONFIG", "GET", "maxmemory-policy"}, step{"CONFIG", "SET", "maxmemory-policy", "NoEviction"},
		step{"CONFIG", "GET", "maxmemory-policy"}, step{"CONFIG", "GET", "timeout"}, step{"CONFIG", "GET", "maxclients"},
		// An exact name answers as spelled, a glob with the parameter's
		// own name; a parameter named twice keeps the first spelling.
		step{"CONFIG", "GET", "MAXCLIENTS"}, step{"CONFIG", "GET", "MaxMemory"}, step{"CONFIG", "GET", "MAXCLIENT*"},
		step{"CONFIG", "GET", "MAXCLIENTS", "maxclients"}, step{"CONFIG", "GET", "maxclients", "MAXCLIENTS"},
		step{"CONFIG", "GET", "MAXCLIENTS", "MAXCLIENT*"}, step{"CONFIG", "GET", "MAXCLIENT*", "MAXCLIENTS"},
		step{"CONFIG", "GET", "MAX[C]LIENTS"}, step{"CONFIG", "GET", "Timeout", "TIMEOUT", "timeout"},
		step{"CONFIG", "GET", "no-such-parameter"}, step{"CONFIG", "GET", "NO-SUCH*"})
	// (Several parameters in one CONFIG GET come in Redis's hash order;
	// probly sorts them.)
	// Not compared: values Redis takes by accident (maxmemory "" is 0, a
	// number over 64 bits wraps), which probly refuses; and
	// proto-max-multibulk-len, which Redis 7.0 does not have.
	bad := map[string][]string{
		"maxmemory":                   {"abc", "-1", "1.5mb", "1tb", "1 mb"},
		"proto-max-bulk-len":          {"1k", "x", "0"},
		"client-query-buffer-limit":   {"1k", "x"},
		"maxmemory-clients":           {"200%", "x", "-1", "5.5%"},
		"auto-aof-rewrite-min-size":   {"x", "-5"},
		"hll-sparse-max-bytes":        {"x", "-1"},
		"maxclients":                  {"x", "0", "4294967296", "-1", "1.5"},
		"timeout":                     {"-1", "x", "2147483648"},
		"auto-aof-rewrite-percentage": {"-1", "x", "2147483648"},
		"save":                        {"1", "a 1", "0 1", "1 -1"},
		"appendfsync":                 {"often", "EVERYSEC2"},
		"appendonly":                  {"maybe", ""},
		"dir":                         {"/tmp/elsewhere"},
		"databases":                   {"2"},
		"maxmemory-policy":            {"lru", "", "allkeys", "noeviction2"},
		"no-such-parameter":           {"1"},
	}
	for _, name := range sortedKeys(bad) {
		for _, v := range bad[name] {
			steps = append(steps, step{"CONFIG", "SET", name, v})
		}
	}
	steps = append(steps, step{"CONFIG", "SET", "maxmemory", "1mb", "timeout", "x"}, step{"CONFIG", "GET", "maxmemory"},
		step{"CONFIG", "REWRITE", "x"}, step{"CONFIG", "RESETSTAT", "x"}, step{"CONFIG", "RESETSTAT"},
		step{"CONFIG", "HELP"}, step{"CONFIG", "NOPE"})
	for _, proto := range []int{2, 3} {
		conns := []*commandtest.RawClient{commandtest.DialRaw(t, s.addr, proto), commandtest.DialRaw(t, redisAddr, proto)}
		for _, st := range steps {
			var got [2]string
			for i, c := range conns {
				r, err := c.Do(commandtest.Argv(st...))
				if err != nil {
					t.Fatalf("RESP%d %q: %v", proto, st, err)
				}
				got[i] = r
			}
			if got[0] != got[1] {
				t.Errorf("RESP%d %q:\nprobly: %q\nredis:  %q", proto, st, got[0], got[1])
			}
		}
		// CONFIG RESETSTAT: the counters restart (errors and commands above
		// were counted), the INFO that reads them counts itself.
		var stats [2]string
		for i, c := range conns {
			for _, st := range []step{{"CONFIG", "RESETSTAT"}, {"INFO", "stats"}} {
				r, err := c.Do(commandtest.Argv(st...))
				if err != nil {
					t.Fatal(err)
				}
				stats[i] = r
			}
		}
		for _, field := range []string{"total_connections_received", "total_commands_processed", "rejected_connections", "total_error_replies", "expired_keys"} {
			p, r := infoValue(stats[0], field), infoValue(stats[1], field)
			if p != r || p == "" {
				t.Errorf("RESP%d after CONFIG RESETSTAT: %s probly %q, redis %q", proto, field, p, r)
			}
		}
	}
}

// infoValue is the value of field in an INFO reply's text ("" if absent).
func infoValue(info, field string) string {
	_, rest, ok := strings.Cut(info, "\r\n"+field+":")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, "\r\n")
	return v
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CONFIG SET of RedisBloom's settings answers RedisBloom's texts
// (src/config.c: setFloatValue, setIntegerValue) inside Redis's CONFIG SET
// frame; a rate over the 0.25 cap is kept as the cap, as RedisBloom does.
func TestConfigSetRedisBloomWording(t *testing.T) {
	s := runApp(t, Options{}, true)
	c := commandtest.DialRaw(t, s.addr, 2)
	const frame = "-ERR CONFIG SET failed (possibly related to argument '%s') - %s\r\n"
	for _, tc := range []struct{ name, value, want string }{
		{"bf-error-rate", "0", "Value for `bf-error-rate` must be in the range (0.000000, 1.000000)"},
		{"bf-error-rate", "1.0", "Value for `bf-error-rate` must be in the range (0.000000, 1.000000)"},
		{"bf-error-rate", "abc", "Invalid value for `bf-error-rate`"},
		{"bf-initial-size", "0", "Value for `bf-initial-size` must be in the range [1, 1073741824]"},
		{"bf-initial-size", "4294967296", "Value for `bf-initial-size` must be in the range [1, 1073741824]"},
		{"bf-initial-size", "1.5", "Invalid value for `bf-initial-size`"},
		{"bf-expansion-factor", "-1", "Value for `bf-expansion-factor` must be in the range [0, 32768]"},
		{"bf-expansion-factor", "32769", "Value for `bf-expansion-factor` must be in the range [0, 32768]"},
		{"cf-bucket-size", "0", "Value for `cf-bucket-size` must be in the range [1, 255]"},
		{"cf-bucket-size", "256", "Value for `cf-bucket-size` must be in the range [1, 255]"},
		{"cf-initial-size", "0", "Value for `cf-initial-size` must be in the range [4, 1073741824]"},
		{"cf-initial-size", "4294967296", "Value for `cf-initial-size` must be in the range [4, 1073741824]"},
		{"cf-max-iterations", "65536", "Value for `cf-max-iterations` must be in the range [1, 65535]"},
		{"cf-expansion-factor", "32769", "Value for `cf-expansion-factor` must be in the range [0, 32768]"},
		{"cf-max-expansions", "0", "Value for `cf-max-expansions` must be in the range [1, 65536]"},
		{"cf-max-expansions", "x", "Invalid value for `cf-max-expansions`"},
		// probly's own budgets are memory values with Redis's wording.
		{"bf-max-filter-bytes", "lots", "argument must be a memory value"},
	} {
		got, err := c.Do(commandtest.Argv("CONFIG", "SET", tc.name, tc.value))
		if want := fmt.Sprintf(frame, tc.name, tc.want); err != nil || got != want {
			t.Errorf("CONFIG SET %s %s = %q %v, want %q", tc.name, tc.value, got, err, want)
		}
	}
	for _, kv := range [][3]string{{"bf-error-rate", "0.5", "0.25"}, {"bf-error-rate", "0.02", "0.02"}} {
		if got, _ := c.Do(commandtest.Argv("CONFIG", "SET", kv[0], kv[1])); got != "+OK\r\n" {
			t.Fatalf("CONFIG SET %s %s = %q", kv[0], kv[1], got)
		}
		want := fmt.Sprintf("*2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(kv[0]), kv[0], len(kv[2]), kv[2])
		if got, _ := c.Do(commandtest.Argv("CONFIG", "GET", kv[0])); got != want {
			t.Errorf("CONFIG GET %s after SET %s = %q, want %q", kv[0], kv[1], got, want)
		}
	}
}

// probly never evicts: CONFIG GET maxmemory-policy answers noeviction, as
// Redis's default; CONFIG SET accepts noeviction and refuses every other
// Redis policy (which Redis accepts) saying why. The per-filter budgets
// and maxmemory accept "auto", their serve flags' default, and then read
// back the bytes it stands for (the value they start with).
func TestConfigNoEvictionAndAuto(t *testing.T) {
	s := runApp(t, Options{}, true)
	c := commandtest.DialRaw(t, s.addr, 2)
	get := func(name string) string {
		t.Helper()
		r, err := c.Do(commandtest.Argv("CONFIG", "GET", name))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if got, want := get("maxmemory-policy"), "*2\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n"; got != want {
		t.Errorf("CONFIG GET maxmemory-policy = %q, want %q", got, want)
	}
	for _, p := range []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "ALLKEYS-LRU"} {
		want := "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - probly supports only noeviction: " +
			"it never evicts keys, so that no filter loses items\r\n"
		if got, err := c.Do(commandtest.Argv("CONFIG", "SET", "maxmemory-policy", p)); err != nil || got != want {
			t.Errorf("CONFIG SET maxmemory-policy %s = %q %v, want %q", p, got, err, want)
		}
	}
	if got, _ := c.Do(commandtest.Argv("CONFIG", "SET", "maxmemory-policy", "noeviction")); got != "+OK\r\n" {
		t.Errorf("CONFIG SET maxmemory-policy noeviction = %q", got)
	}
	for _, name := range []string{"bf-max-filter-bytes", "cf-max-filter-bytes", "maxmemory"} {
		start := get(name)
		for _, v := range []string{"64mb", "auto"} {
			if got, _ := c.Do(commandtest.Argv("CONFIG", "SET", name, v)); got != "+OK\r\n" {
				t.Errorf("CONFIG SET %s %s = %q", name, v, got)
			}
		}
		if got := get(name); got != start {
			t.Errorf("CONFIG GET %s after SET auto = %q, want the start-up value %q", name, got, start)
		}
	}
}

// Differential test against redis-server 7.0 of the connection, cluster
// and notification parameters: CONFIG GET of bind, protected-mode,
// tcp-keepalive, cluster-enabled and notify-keyspace-events, and CONFIG
// SET's replies (accepted values, the errors for values of the wrong form,
// the immutable ones, the order of the checks), byte for byte in RESP2 and
// RESP3. Both listen on 127.0.0.1, each on its own port; CONFIG GET port
// answers it. Then the values probly cannot honour, which Redis accepts
// (another port or address: Redis rebinds; protected-mode no; keyspace
// notifications): probly's refusals say why.
func TestConfigListenDifferentialRedis(t *testing.T) {
	redisAddr := commandtest.StartRedis(t)
	s := runApp(t, Options{}, true)
	ports := [2]string{}
	for i, a := range []string{s.addr, redisAddr} {
		_, ports[i], _ = strings.Cut(a, ":")
	}
	steps := [][]string{
		{"CONFIG", "GET", "bind"}, {"CONFIG", "GET", "protected-mode"}, {"CONFIG", "GET", "tcp-keepalive"},
		{"CONFIG", "GET", "cluster-enabled"}, {"CONFIG", "GET", "notify-keyspace-events"},
		{"CONFIG", "SET", "port", "abc"}, {"CONFIG", "SET", "port", "70000"}, {"CONFIG", "SET", "port", "-1"},
		{"CONFIG", "SET", "port", "1.5"}, {"CONFIG", "SET", "bind", "127.0.0.1"},
		{"CONFIG", "SET", "protected-mode", "YES"}, {"CONFIG", "GET", "protected-mode"},
		{"CONFIG", "SET", "protected-mode", "maybe"}, {"CONFIG", "SET", "protected-mode", ""},
		{"CONFIG", "SET", "notify-keyspace-events", ""}, {"CONFIG", "SET", "notify-keyspace-events", "Z"},
		{"CONFIG", "SET", "notify-keyspace-events", "KE?"}, {"CONFIG", "GET", "notify-keyspace-events"},
		{"CONFIG", "SET", "cluster-enabled", "yes"}, {"CONFIG", "SET", "cluster-enabled", "no"},
		{"CONFIG", "SET", "cluster-enabled", "maybe"}, {"CONFIG", "SET", "Cluster-Enabled", "no"},
		{"CONFIG", "SET", "databases", "1"},
		{"CONFIG", "SET", "tcp-keepalive", "60"}, {"CONFIG", "GET", "tcp-keepalive"},
		{"CONFIG", "SET", "tcp-keepalive", "0"}, {"CONFIG", "GET", "tcp-keepalive"},
		{"CONFIG", "SET", "tcp-keepalive", "2147483647"}, {"CONFIG", "SET", "tcp-keepalive", "2147483648"},
		{"CONFIG", "SET", "tcp-keepalive", "-1"}, {"CONFIG", "SET", "tcp-keepalive", "abc"},
		{"CONFIG", "SET", "tcp-keepalive", "300"},
		// The first unknown, immutable or repeated name is the reply,
		// before any value is checked.
		{"CONFIG", "SET", "no-such", "1", "cluster-enabled", "no"}, {"CONFIG", "SET", "cluster-enabled", "no", "no-such", "1"},
		{"CONFIG", "SET", "tcp-keepalive", "1", "TCP-KEEPALIVE", "2"}, {"CONFIG", "SET", "maxclients", "x", "cluster-enabled", "no"},
		{"CONFIG", "SET", "tcp-keepalive", "1", "tcp-keepalive", "2", "no-such", "1"},
		{"CONFIG", "GET", "tcp-keepalive"},
		{"CONFIG", "GET", "unixsocket"}, {"CONFIG", "GET", "unixsocketperm"},
		{"CONFIG", "SET", "unixsocket", "/tmp/x.sock"}, {"CONFIG", "SET", "unixsocketperm", "700"},
		{"CONFIG", "SET", "unixsocket", ""},
	}
	for _, proto := range []int{2, 3} {
		conns := [2]*commandtest.RawClient{commandtest.DialRaw(t, s.addr, proto), commandtest.DialRaw(t, redisAddr, proto)}
		do := func(i int, st []string) string {
			t.Helper()
			r, err := conns[i].Do(commandtest.Argv(st...))
			if err != nil {
				t.Fatalf("RESP%d %q: %v", proto, st, err)
			}
			return r
		}
		for _, st := range steps {
			if p, r := do(0, st), do(1, st); p != r {
				t.Errorf("RESP%d %q:\nprobly: %q\nredis:  %q", proto, st, p, r)
			}
		}
		// Each its own port: GET shows it, SET of it is accepted.
		for i := range conns {
			want := "*2\r\n$4\r\nport\r\n$" + fmt.Sprint(len(ports[i])) + "\r\n" + ports[i] + "\r\n"
			if proto == 3 {
				want = "%1" + want[2:]
			}
			if got := do(i, []string{"CONFIG", "GET", "port"}); got != want {
				t.Errorf("RESP%d server %d: CONFIG GET port = %q, want %q", proto, i, got, want)
			}
			if got := do(i, []string{"CONFIG", "SET", "port", ports[i]}); got != "+OK\r\n" {
				t.Errorf("RESP%d server %d: CONFIG SET port %s = %q", proto, i, ports[i], got)
			}
		}
	}
	c := commandtest.DialRaw(t, s.addr, 2)
	const frame = "-ERR CONFIG SET failed (possibly related to argument '%s') - %s\r\n"
	const restart = " (probly does not rebind its listener at run time): set --addr, or bind and port in the configuration file, and restart"
	for _, tc := range [][3]string{
		{"port", "1", "can't change the listen port" + restart},
		{"bind", "0.0.0.0", "can't change the listen address" + restart},
		{"bind", "127.0.0.1 -::1", "can't change the listen address" + restart},
		{"protected-mode", "no", "protected mode is checked when the server starts: set --protected-mode, or protected-mode in the configuration file, and restart"},
		{"notify-keyspace-events", "KEA", "probly does not publish keyspace notifications: notify-keyspace-events can only be empty"},
		{"notify-keyspace-events", "x", "probly does not publish keyspace notifications: notify-keyspace-events can only be empty"},
	} {
		r, err := c.Do(commandtest.Argv("CONFIG", "SET", tc[0], tc[1]))
		if want := fmt.Sprintf(frame, tc[0], tc[2]); err != nil || r != want {
			t.Errorf("CONFIG SET %s %q = %q (%v), want %q", tc[0], tc[1], r, err, want)
		}
	}
}
