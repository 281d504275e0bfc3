package app

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/probly/probly/internal/command/commandtest"
)

// Operations commands (CLIENT, SHUTDOWN, FUNCTION, SLOWLOG, LATENCY, INFO
// field names) against redis-server 7, the oracle, and through redis-cli.

// opsPair is probly and redis-server side by side.
func opsPair(t *testing.T) (p, r *commandtest.RawClient) {
	t.Helper()
	raddr := commandtest.StartRedis(t)
	s := runApp(t, Options{}, true)
	return commandtest.DialRaw(t, s.addr, 2), commandtest.DialRaw(t, raddr, 2)
}

func doRaw(t *testing.T, c *commandtest.RawClient, args ...string) string {
	t.Helper()
	out, err := c.Do(commandtest.Argv(args...))
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out
}

// Replies that hold nothing process-dependent are byte-identical.
func TestOpsDifferentialRedis(t *testing.T) {
	p, r := opsPair(t)
	cases := [][]string{
		{"CLIENT", "GETNAME"},
		{"CLIENT", "SETNAME", "tenant-1"},
		{"CLIENT", "GETNAME"},
		{"CLIENT", "SETNAME", "a b"},
		{"CLIENT", "KILL", "1.2.3.4:5"},
		{"CLIENT", "KILL", "ID", "999999"},
		{"CLIENT", "KILL", "ID", "abc"},
		{"CLIENT", "KILL", "ID", "0"},
		{"CLIENT", "KILL", "TYPE", "foo"},
		{"CLIENT", "KILL", "TYPE", "pubsub"},
		{"CLIENT", "KILL", "foo", "bar"},
		{"CLIENT", "KILL", "ID", "1", "foo"},
		{"CLIENT", "KILL", "USER", "nobody"},
		{"CLIENT", "KILL", "USER", "default", "SKIPME", "maybe"},
		{"CLIENT", "KILL", "ADDR", "1.2.3.4:5", "SKIPME", "yes"},
		{"CLIENT", "KILL", "LADDR", "1.2.3.4:5"},
		{"CLIENT", "KILL"},
		{"CLIENT", "LIST", "TYPE", "foo"},
		{"CLIENT", "LIST", "TYPE", "pubsub"},
		{"CLIENT", "LIST", "ID", "abc"},
		{"CLIENT", "LIST", "ID", "999999"},
		{"CLIENT", "LIST", "foo"},
		{"CLIENT", "LIST", "TYPE", "normal", "ID", "1"},
		{"CLIENT", "REPLY", "foo"},
		{"CLIENT", "PAUSE"},
		{"CLIENT", "PAUSE", "abc"},
		{"CLIENT", "PAUSE", "-1"},
		{"CLIENT", "PAUSE", "10", "foo"},
		{"CLIENT", "UNPAUSE"},
		{"CLIENT", "NO-EVICT", "on"},
		{"CLIENT", "NO-EVICT", "maybe"},
		{"SHUTDOWN", "ABORT"},
		{"SHUTDOWN", "foo"},
		{"SHUTDOWN", "ABORT", "NOSAVE"},
		{"SHUTDOWN", "NOSAVE", "SAVE"},
		{"SHUTDOWN", "SAVE", "NOW", "FORCE", "ABORT"},
		{"FUNCTION", "FLUSH"},
		{"FUNCTION", "FLUSH", "ASYNC"},
		{"FUNCTION", "FLUSH", "sync"},
		{"FUNCTION", "FLUSH", "foo"},
		{"FUNCTION", "FLUSH", "a", "b"},
		{"FUNCTION", "LIST"},
		{"FUNCTION", "LIST", "WITHCODE"},
		{"FUNCTION", "LIST", "LIBRARYNAME", "x", "WITHCODE"},
		{"FUNCTION", "LIST", "LIBRARYNAME"},
		{"FUNCTION", "LIST", "foo"},
		{"FUNCTION", "LIST", "WITHCODE", "WITHCODE"},
		{"FUNCTION", "STATS"},
		{"FUNCTION", "STATS", "x"},
		{"SLOWLOG", "HELP"},
		{"SLOWLOG", "RESET"},
		{"SLOWLOG", "GET", "abc"},
		{"SLOWLOG", "GET", "-2"},
		{"SLOWLOG", "GET", "0"},
		{"SLOWLOG", "foo"},
		{"LATENCY", "LATEST"},
		{"LATENCY", "HISTORY", "command"},
		{"LATENCY", "RESET"},
		{"LATENCY", "foo"},
		{"LATENCY", "HISTORY"},
		{"CONFIG", "GET", "slowlog-log-slower-than"},
		{"CONFIG", "GET", "slowlog-max-len"},
		{"CONFIG", "GET", "latency-monitor-threshold"},
		{"SELECT", "0"},
		{"MONITOR", "x"},
	}
	for _, c := range cases {
		if got, want := doRaw(t, p, c...), doRaw(t, r, c...); got != want {
			t.Errorf("%q:\n probly %q\n redis  %q", c, got, want)
		}
	}
	// RESP3 FUNCTION STATS (a map with a null).
	p3, r3 := commandtest.DialRaw(t, laddr(t, p), 3), commandtest.DialRaw(t, laddr(t, r), 3)
	if got, want := doRaw(t, p3, "FUNCTION", "STATS"), doRaw(t, r3, "FUNCTION", "STATS"); got != want {
		t.Errorf("RESP3 FUNCTION STATS:\n probly %q\n redis  %q", got, want)
	}
	// CLIENT ID is an integer, and CLIENT LIST ID <it> lists one line.
	for name, c := range map[string]*commandtest.RawClient{"probly": p, "redis": r} {
		id := doRaw(t, c, "CLIENT", "ID")
		if !regexp.MustCompile(`^:[1-9][0-9]*\r\n$`).MatchString(id) {
			t.Fatalf("%s: CLIENT ID = %q", name, id)
		}
		one := doRaw(t, c, "CLIENT", "LIST", "ID", id[1:len(id)-2])
		if n := strings.Count(one, "id="); n != 1 || !strings.Contains(one, "id="+id[1:len(id)-2]+" ") {
			t.Errorf("%s: CLIENT LIST ID %s = %q", name, id, one)
		}
	}
}

// laddr recovers a RawClient's server address from CLIENT INFO.
func laddr(t *testing.T, c *commandtest.RawClient) string {
	t.Helper()
	m := regexp.MustCompile(` laddr=(\S+) `).FindStringSubmatch(doRaw(t, c, "CLIENT", "INFO"))
	if m == nil {
		t.Fatal("CLIENT INFO has no laddr")
	}
	return m[1]
}

// clientFields returns the field names of the first CLIENT LIST line.
func clientFields(reply string) []string {
	line := reply
	if i := strings.Index(line, "\r\n"); i >= 0 && strings.HasPrefix(line, "$") {
		line = line[i+2:]
	}
	line, _, _ = strings.Cut(line, "\n")
	var out []string
	for _, f := range strings.Fields(line) {
		k, _, _ := strings.Cut(f, "=")
		out = append(out, k)
	}
	return out
}

// CLIENT LIST and CLIENT INFO have Redis's fields in Redis's order. The
// oracle is Redis 7.0, whose lines also have rbs/rbp (dropped in 7.2) and
// lack lib-name/lib-ver (added in 7.2, which probly follows, as its
// CLIENT SETINFO).
func TestClientListFieldsRedis(t *testing.T) {
	p, r := opsPair(t)
	for _, cmd := range [][]string{{"CLIENT", "LIST"}, {"CLIENT", "INFO"}} {
		got := clientFields(doRaw(t, p, cmd...))
		var want []string
		for _, f := range clientFields(doRaw(t, r, cmd...)) {
			if f != "rbs" && f != "rbp" {
				want = append(want, f)
			}
		}
		if !contains(want, "lib-name") {
			want = append(want, "lib-name", "lib-ver")
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%v fields:\n probly %v\n redis  %v", cmd, got, want)
		}
	}
	// Values probly has: its own command, name and flags.
	doRaw(t, p, "CLIENT", "SETNAME", "op")
	doRaw(t, p, "MULTI")
	doRaw(t, p, "PING")
	info := doRaw(t, p, "CLIENT", "INFO") // queued: the reply is +QUEUED
	if info != "+QUEUED\r\n" {
		t.Fatalf("CLIENT INFO in MULTI = %q", info)
	}
	exec := doRaw(t, p, "EXEC")
	for _, want := range []string{" name=op ", " flags=x ", " multi=", " db=0 ", " cmd=client|info ", " user=default ", " resp=2 "} {
		if !strings.Contains(exec, want) {
			t.Errorf("CLIENT INFO inside EXEC lacks %q: %q", want, exec)
		}
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// infoNames returns the field names of one INFO section.
func infoNames(t *testing.T, c *commandtest.RawClient, section string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(doRaw(t, c, "INFO", section), "\r\n") {
		if k, _, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, "#") {
			out = append(out, k)
		}
	}
	return out
}

// INFO clients, stats, keyspace, errorstats and commandstats have Redis's
// field names in Redis's order (probly's own extra fields, listed here,
// come after Redis's in clients).
func TestInfoFieldNamesRedis(t *testing.T) {
	p, r := opsPair(t)
	for _, c := range []*commandtest.RawClient{p, r} {
		doRaw(t, c, "SET", "k", "v")
		doRaw(t, c, "GET", "k", "extra")           // arity: rejected
		doRaw(t, c, "PFADD", "k", "x")             // WRONGTYPE: failed
		doRaw(t, c, "CLIENT", "KILL", "ID", "abc") // ERR: failed
		doRaw(t, c, "CONFIG", "RESETSTAT")
		doRaw(t, c, "SET", "k", "v")
		doRaw(t, c, "GET", "k", "extra")
		doRaw(t, c, "PFADD", "k", "x")
		doRaw(t, c, "MULTI") // the queued commands count when EXEC runs them
		doRaw(t, c, "ECHO", "q")
		doRaw(t, c, "PFCOUNT", "k")
		doRaw(t, c, "EXEC")
	}
	// probly's own fields, and Redis 7.2's ACL counters (the oracle is 7.0).
	extras := map[string][]string{"clients": {"proto_max_bulk_len", "proto_max_multibulk_len", "client_query_buffer_limit", "pubsub_clients"},
		"stats": {"acl_access_denied_auth", "acl_access_denied_cmd", "acl_access_denied_key", "acl_access_denied_channel"}}
	for _, sec := range []string{"clients", "stats", "keyspace", "errorstats", "commandstats"} {
		var got []string
		for _, f := range infoNames(t, p, sec) {
			if !contains(extras[sec], f) {
				got = append(got, f)
			}
		}
		want := infoNames(t, r, sec)
		if sec == "commandstats" { // Redis lists them in its command table's hash order
			sort.Strings(got)
			sort.Strings(want)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("INFO %s field names:\n probly %v\n redis  %v", sec, got, want)
		}
	}
	// The commandstats and errorstats values that hold no timing agree.
	strip := regexp.MustCompile(`usec=\d+,usec_per_call=[\d.]+,`)
	for _, sec := range []string{"commandstats", "errorstats"} {
		got := sortedLines(strip.ReplaceAllString(doRaw(t, p, "INFO", sec), ""))
		want := sortedLines(strip.ReplaceAllString(doRaw(t, r, "INFO", sec), ""))
		if got != want {
			t.Errorf("INFO %s:\n probly %q\n redis  %q", sec, got, want)
		}
	}
}

// sortedLines is a bulk INFO reply's lines (without the length), sorted.
func sortedLines(reply string) string {
	_, body, _ := strings.Cut(reply, "\r\n")
	lines := strings.Split(body, "\r\n")
	sort.Strings(lines)
	return strings.Join(lines, "|")
}

// EVAL, EVALSHA and SCRIPT are unknown commands, worded as Redis words
// an unknown command.
func TestScriptingUnknown(t *testing.T) {
	s := runApp(t, Options{}, true)
	c := commandtest.DialRaw(t, s.addr, 2)
	for args, want := range map[string]string{
		"EVAL|return 1|0": "-ERR unknown command 'EVAL', with args beginning with: 'return 1' '0' \r\n",
		"EVALSHA|abc|0":   "-ERR unknown command 'EVALSHA', with args beginning with: 'abc' '0' \r\n",
		"SCRIPT|FLUSH":    "-ERR unknown command 'SCRIPT', with args beginning with: 'FLUSH' \r\n",
		"FUNCTION|LOAD|x": "-ERR unknown subcommand 'LOAD'. Try FUNCTION HELP.\r\n",
	} {
		if got := doRaw(t, c, strings.Split(args, "|")...); got != want {
			t.Errorf("%s = %q, want %q", args, got, want)
		}
	}
}

// With its port taken, serve fails before creating the data folder.
func TestServePortTakenCreatesNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := filepath.Join(t.TempDir(), "data")
	err = Run(context.Background(), Options{Addr: ln.Addr().String(), Dir: dir, MetricsAddr: "off"})
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("Run on a taken port = %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the data folder exists after the refused start: %v", err)
	}
}

// redisCLI returns redis-cli's path, or skips (fails with
// PROBLY_REQUIRE_REDIS=1, which .ci/run sets after installing it).
func redisCLI(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-cli")
	if err != nil {
		if os.Getenv("PROBLY_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-cli not found and PROBLY_REQUIRE_REDIS=1")
		}
		t.Skip("redis-cli not found: install redis-tools")
	}
	return bin
}

func cli(t *testing.T, bin, addr string, args ...string) string {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command(bin, append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %v: %v: %s", args, err, out)
	}
	return string(out)
}

// cliStream runs redis-cli with args until the test ends and returns its
// output lines.
func cliStream(t *testing.T, bin, addr string, args ...string) <-chan string {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, append([]string{"-h", host, "-p", port}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

// nextLine waits at most 10 s for a line.
func nextLine(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("redis-cli ended")
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no line from redis-cli in 10 s")
	}
	return ""
}

// redis-cli's -n 0, CLIENT LIST, SLOWLOG GET, MONITOR, --stat and
// SHUTDOWN NOSAVE work against probly as against Redis.
func TestRedisCLIOps(t *testing.T) {
	bin := redisCLI(t)
	s := runApp(t, Options{}, true)
	if got := cli(t, bin, s.addr, "-n", "0", "PING"); got != "PONG\n" {
		t.Errorf("redis-cli -n 0 PING = %q", got)
	}
	if got := cli(t, bin, s.addr, "CLIENT", "LIST"); !regexp.MustCompile(`^id=\d+ addr=127\.0\.0\.1:\d+ laddr=\S+ fd=\d+ name= .* cmd=client\|list user=default `).MatchString(got) {
		t.Errorf("redis-cli CLIENT LIST = %q", got)
	}
	cli(t, bin, s.addr, "CONFIG", "SET", "slowlog-log-slower-than", "0")
	cli(t, bin, s.addr, "SET", "slowkey", "v")
	if got := cli(t, bin, s.addr, "SLOWLOG", "GET", "1"); !regexp.MustCompile(`^\d+\n\d+\n\d+\nSET\nslowkey\nv\n127\.0\.0\.1:\d+\n\n$`).MatchString(got) {
		t.Errorf("redis-cli SLOWLOG GET 1 = %q", got)
	}

	// MONITOR: a line per command with its arguments, quoted as Redis.
	lines := cliStream(t, bin, s.addr, "MONITOR")
	if l := nextLine(t, lines); l != "OK" {
		t.Fatalf("MONITOR's first line = %q", l)
	}
	cli(t, bin, s.addr, "SET", "mon key", "a\"b\n")
	want := regexp.MustCompile(`^\d{10}\.\d{6} \[0 127\.0\.0\.1:\d+\] "SET" "mon key" "a\\"b\\n"$`)
	for !want.MatchString(nextLine(t, lines)) {
	}

	// --stat prints its header and a line of numbers.
	stat := cliStream(t, bin, s.addr, "--stat", "-i", "0.01") // its output is block-buffered into the pipe
	var header, row bool
	rowRE := regexp.MustCompile(`^\d+\s+\S+\s+\d+\s+\d+\s+\d+ \(\+\d+\)\s+\d+\s*$`)
	for i := 0; i < 10 && !(header && row); i++ {
		l := nextLine(t, stat)
		header = header || strings.Contains(l, "------- data ------")
		row = row || rowRE.MatchString(l)
	}
	if !header || !row {
		t.Errorf("redis-cli --stat printed no header or no data row (header %v, row %v)", header, row)
	}

	// SHUTDOWN NOSAVE: redis-cli exits without an error and Run returns.
	if got := cli(t, bin, s.addr, "SHUTDOWN", "NOSAVE"); got != "" {
		t.Errorf("redis-cli SHUTDOWN NOSAVE printed %q", got)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("Run after SHUTDOWN = %v", err)
		}
		s.cancel = nil
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after SHUTDOWN NOSAVE")
	}
	if c, err := net.Dial("tcp", s.addr); err == nil {
		c.Close()
		t.Error("the server still accepts after SHUTDOWN")
	}
}

// SHUTDOWN SAVE writes a snapshot, and what was written is there after a
// restart.
func TestShutdownSaveRestart(t *testing.T) {
	dir := t.TempDir()
	s := runApp(t, Options{Dir: dir}, true)
	c := commandtest.DialRaw(t, s.addr, 2)
	doRaw(t, c, "SET", "kept", "1")
	snap := filepath.Join(dir, "dump.pdb")
	var before time.Time
	if fi, err := os.Stat(snap); err == nil {
		before = fi.ModTime()
	}
	if out, err := c.Do(commandtest.Argv("SHUTDOWN", "SAVE")); err == nil {
		t.Fatalf("SHUTDOWN SAVE replied %q; Redis closes without a reply", out)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatal(err)
		}
		s.cancel = nil
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after SHUTDOWN SAVE")
	}
	fi, err := os.Stat(snap)
	if err != nil || !fi.ModTime().After(before) {
		t.Fatalf("SHUTDOWN SAVE wrote no snapshot (%v; mtime %v, before %v)", err, fi, before)
	}
	s2 := runApp(t, Options{Dir: dir}, true)
	c2 := commandtest.DialRaw(t, s2.addr, 2)
	if got := doRaw(t, c2, "GET", "kept"); got != "$1\r\n1\r\n" {
		t.Errorf("GET kept after SHUTDOWN SAVE and restart = %q", got)
	}
}
