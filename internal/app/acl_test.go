package app

import (
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/testutil"
)

// Two tenants restricted by ACL (issue 16.1), through go-redis (RESP2:
// AUTH user pass; RESP3: HELLO 3 AUTH user pass) and redis-cli: every
// command a tenant may not run, or that names a key outside its pattern,
// is answered NOPERM and changes nothing; ACL LOG shows the denials, the
// metrics count them, and neither the metrics nor the log hold a key.
const (
	tenant1Rules = "on >p1 ~t1:* +@bloom +ping"
	tenant2Rules = "on >p2 ~t2:* +@bloom +@string +@keyspace +@transaction -@dangerous +keys"
)

func TestACLTenants(t *testing.T) {
	var sink commandtest.LogSink
	s := runApp(t, Options{RequirePass: "adminpw", Logger: slog.New(slog.NewTextHandler(&sink, &slog.HandlerOptions{Level: slog.LevelDebug}))}, true)
	ctx := context.Background()
	admin := newClient(t, s.addr, func(o *redis.Options) { o.Password = "adminpw" })
	for _, u := range [][]string{{"t1", tenant1Rules}, {"t2", tenant2Rules}} {
		args := []any{"ACL", "SETUSER", u[0]}
		for _, r := range strings.Fields(u[1]) {
			args = append(args, r)
		}
		if err := admin.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	admin.BFAdd(ctx, "t1:f", "a")
	admin.BFAdd(ctx, "t2:f", "b")
	admin.Set(ctx, "t2:s", "v", 0)
	state := func() string {
		t.Helper()
		keys, err := admin.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(keys)
		out := strings.Join(keys, ",")
		for _, k := range keys {
			d, err := admin.Dump(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			out += "|" + k + "=" + d
		}
		return out
	}
	before := state()

	denied := []struct {
		user string
		args []any
		want string
	}{
		{"t1", []any{"BF.EXISTS", "t2:f", "b"}, "NOPERM No permissions to access a key"},
		{"t1", []any{"BF.ADD", "t2:f", "z"}, "NOPERM No permissions to access a key"},
		{"t1", []any{"BF.RESERVE", "t2:new", "0.01", "100"}, "NOPERM No permissions to access a key"},
		{"t1", []any{"DEL", "t2:f"}, "NOPERM User t1 has no permissions to run the 'del' command"},
		{"t1", []any{"SET", "t1:x", "1"}, "NOPERM User t1 has no permissions to run the 'set' command"},
		{"t1", []any{"FLUSHALL"}, "NOPERM User t1 has no permissions to run the 'flushall' command"},
		{"t1", []any{"KEYS", "*"}, "NOPERM User t1 has no permissions to run the 'keys' command"},
		{"t1", []any{"CONFIG", "SET", "maxmemory", "1"}, "NOPERM User t1 has no permissions to run the 'config|set' command"},
		{"t1", []any{"ACL", "SETUSER", "t1", "+@all"}, "NOPERM User t1 has no permissions to run the 'acl|setuser' command"},
		{"t2", []any{"DEL", "t1:f"}, "NOPERM No permissions to access a key"},
		{"t2", []any{"GET", "t1:f"}, "NOPERM No permissions to access a key"},
		{"t2", []any{"RENAME", "t2:s", "t1:s"}, "NOPERM No permissions to access a key"},
		{"t2", []any{"COPY", "t1:f", "t2:copy"}, "NOPERM No permissions to access a key"},
		{"t2", []any{"MSET", "t2:a", "1", "t1:a", "1"}, "NOPERM No permissions to access a key"},
		{"t2", []any{"BF.MADD", "t1:f", "q"}, "NOPERM No permissions to access a key"},
		{"t2", []any{"FLUSHDB"}, "NOPERM User t2 has no permissions to run the 'flushdb' command"},
		{"t2", []any{"PFADD", "t2:h", "x"}, "NOPERM User t2 has no permissions to run the 'pfadd' command"},
	}
	for _, proto := range []int{2, 3} {
		clients := map[string]*redis.Client{
			"t1": newClient(t, s.addr, func(o *redis.Options) { o.Protocol, o.Username, o.Password = proto, "t1", "p1" }),
			"t2": newClient(t, s.addr, func(o *redis.Options) { o.Protocol, o.Username, o.Password = proto, "t2", "p2" }),
		}
		for _, d := range denied {
			err := clients[d.user].Do(ctx, d.args...).Err()
			if err == nil || err.Error() != d.want {
				t.Errorf("RESP%d %s %v: %v, want %q", proto, d.user, d.args, err, d.want)
			}
		}
		// What each tenant may do still works.
		if err := clients["t1"].BFAdd(ctx, "t1:f", "a").Err(); err != nil {
			t.Errorf("t1 BF.ADD t1:f: %v", err)
		}
		if ok, err := clients["t1"].BFExists(ctx, "t1:f", "a").Result(); err != nil || !ok {
			t.Errorf("t1 BF.EXISTS t1:f: %v %v", ok, err)
		}
		if v, err := clients["t2"].Get(ctx, "t2:s").Result(); err != nil || v != "v" {
			t.Errorf("t2 GET t2:s: %q %v", v, err)
		}
		if who, err := clients["t2"].Do(ctx, "ACL", "WHOAMI").Result(); err == nil {
			t.Errorf("t2 ACL WHOAMI (not granted): %v", who)
		}
		// KEYS and SCAN are not filtered by the key patterns (as in Redis).
		keys, err := clients["t2"].Keys(ctx, "*").Result()
		if err != nil || !slices.Contains(keys, "t1:f") {
			t.Errorf("t2 KEYS * = %v, %v; want every key (Redis does not filter KEYS)", keys, err)
		}
		scanned, _, err := clients["t2"].Scan(ctx, 0, "*", 1000).Result()
		if err != nil || !slices.Contains(scanned, "t1:f") {
			t.Errorf("t2 SCAN = %v, %v; want every key", scanned, err)
		}
		// A denied command inside MULTI makes EXEC abort: nothing applies.
		_, err = clients["t2"].TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "t2:tx", "1", 0)
			p.Set(ctx, "t1:tx", "1", 0)
			return nil
		})
		if err == nil || !strings.HasPrefix(err.Error(), "EXECABORT") {
			t.Errorf("RESP%d MULTI with a denied key: %v, want EXECABORT", proto, err)
		}
	}
	if after := state(); after != before {
		t.Errorf("denied commands changed the data:\n before %s\n after  %s", before, after)
	}

	// redis-cli, as an operator would use it.
	if cli, err := exec.LookPath("redis-cli"); err == nil {
		host, port, _ := strings.Cut(s.addr, ":")
		out, _ := exec.Command(cli, "-h", host, "-p", port, "--user", "t1", "--pass", "p1", "--no-auth-warning",
			"BF.EXISTS", "t2:f", "b").CombinedOutput()
		if !strings.Contains(string(out), "NOPERM No permissions to access a key") {
			t.Errorf("redis-cli BF.EXISTS t2:f as t1: %q", out)
		}
		out, _ = exec.Command(cli, "-h", host, "-p", port, "--user", "t1", "--pass", "p1", "--no-auth-warning",
			"BF.EXISTS", "t1:f", "a").CombinedOutput()
		if strings.TrimSpace(string(out)) != "1" {
			t.Errorf("redis-cli BF.EXISTS t1:f as t1: %q", out)
		}
	}

	// ACL LOG: the denials, newest first, grouped by (reason, object, user).
	entries, err := admin.Do(ctx, "ACL", "LOG", "100").Slice()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int64{}
	for _, e := range entries {
		m := entryMap(t, e)
		seen[m["reason"].(string)+" "+m["object"].(string)+" "+m["username"].(string)] += m["count"].(int64)
	}
	for _, want := range []string{"key t2:f t1", "command flushall t1", "command acl|setuser t1", "key t1:f t2", "command pfadd t2"} {
		if seen[want] == 0 {
			t.Errorf("ACL LOG has no %q entry: %v", want, seen)
		}
	}
	if n := seen["key t2:f t1"]; n != 4 { // BF.EXISTS and BF.ADD, RESP2 and RESP3 (redis-cli adds one)
		if _, err := exec.LookPath("redis-cli"); err != nil || n != 5 {
			t.Errorf("ACL LOG count of t1's denials on t2:f = %d", n)
		}
	}
	if err := admin.Do(ctx, "ACL", "LOG", "RESET").Err(); err != nil {
		t.Fatal(err)
	}
	if n, _ := admin.Do(ctx, "ACL", "LOG").Slice(); len(n) != 0 {
		t.Errorf("ACL LOG after RESET: %v", n)
	}

	// Metrics count the denials by reason only; the log names no key.
	vals, _ := scrape(t, s)
	if vals[`probly_acl_denials_total{reason="key"}`] < 20 || vals[`probly_acl_denials_total{reason="command"}`] < 10 {
		t.Errorf("acl denial metrics: key %v command %v", vals[`probly_acl_denials_total{reason="key"}`], vals[`probly_acl_denials_total{reason="command"}`])
	}
	for _, line := range strings.Split(sink.String(), "\n") {
		if strings.Contains(line, "ACL") && (strings.Contains(line, "t2:f") || strings.Contains(line, "t1:f")) {
			t.Errorf("log line with a key: %s", line)
		}
	}
	if info, _ := admin.Info(ctx, "stats").Result(); !strings.Contains(info, "acl_access_denied_key:") || strings.Contains(info, "acl_access_denied_key:0\r\n") {
		t.Errorf("INFO stats ACL counters: %s", info)
	}
	if !strings.Contains(sink.String(), "ACL: command denied") {
		t.Error("no denial in the log")
	}

	// A wrong password is WRONGPASS and logged as an auth denial.
	bad := newClient(t, s.addr, func(o *redis.Options) { o.Username, o.Password = "t1", "wrong" })
	if err := bad.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS") {
		t.Errorf("AUTH t1 wrong: %v", err)
	}
	entries, _ = admin.Do(ctx, "ACL", "LOG").Slice()
	if len(entries) != 1 || entryMap(t, entries[0])["reason"] != "auth" || entryMap(t, entries[0])["object"] != "AUTH" {
		t.Errorf("ACL LOG after a failed AUTH: %v", entries)
	}
}

// entryMap turns an ACL LOG entry (a RESP2 flat array or a RESP3 map)
// into a map.
func entryMap(t *testing.T, e any) map[string]any {
	t.Helper()
	out := map[string]any{}
	switch v := e.(type) {
	case []any:
		for i := 0; i+1 < len(v); i += 2 {
			out[v[i].(string)] = v[i+1]
		}
	case map[any]any:
		for k, x := range v {
			out[k.(string)] = x
		}
	default:
		t.Fatalf("ACL LOG entry %T", e)
	}
	for _, f := range []string{"count", "reason", "context", "object", "username", "age-seconds", "client-info",
		"entry-id", "timestamp-created", "timestamp-last-updated"} {
		if _, ok := out[f]; !ok {
			t.Fatalf("ACL LOG entry without %s: %v", f, out)
		}
	}
	// client-info is the whole CLIENT LIST line: redis-py's acl_log()
	// parses it and fails on a missing field (qbuf, events, redir …).
	info, _ := out["client-info"].(string)
	for _, f := range []string{"id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub", "ssub",
		"multi", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "obl", "oll", "omem", "tot-mem", "events", "cmd",
		"user", "redir", "resp"} {
		if !strings.Contains(" "+info, " "+f+"=") {
			t.Fatalf("ACL LOG client-info without %s=: %q", f, info)
		}
	}
	return out
}

// ACL CAT bloom lists every BF command; the tenants' users survive a
// restart through the aclfile (ACL SAVE, then loaded at start).
func TestACLFileSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "users.acl")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o := Options{Dir: dir, ACLFile: file}
	s := runApp(t, o, true)
	c := newClient(t, s.addr, nil)
	cat, err := c.Do(ctx, "ACL", "CAT", "bloom").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	tab, _ := Tables()
	var bf []string
	for _, sp := range tab.Public() {
		if strings.HasPrefix(sp.Name, "bf.") {
			bf = append(bf, sp.Name)
		}
	}
	slices.Sort(cat)
	slices.Sort(bf)
	if len(bf) < 10 || !slices.Equal(cat, bf) {
		t.Errorf("ACL CAT bloom = %v, want the BF commands %v", cat, bf)
	}
	for _, args := range [][]any{
		append([]any{"ACL", "SETUSER", "t1"}, toAny(strings.Fields(tenant1Rules))...),
		append([]any{"ACL", "SETUSER", "t2"}, toAny(strings.Fields(tenant2Rules))...),
		{"ACL", "SETUSER", "default", ">adminpw", "resetpass", ">adminpw2"},
		{"ACL", "SAVE"},
	} {
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	list, err := c.Do(ctx, "ACL", "LIST").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	s.stop(t)

	s = runApp(t, o, true)
	c = newClient(t, s.addr, func(o *redis.Options) { o.Password = "adminpw2" })
	again, err := c.Do(ctx, "ACL", "LIST").StringSlice()
	if err != nil || !slices.Equal(again, list) {
		t.Fatalf("ACL LIST after restart = %q, %v; before %q", again, err, list)
	}
	t1 := newClient(t, s.addr, func(o *redis.Options) { o.Username, o.Password = "t1", "p1" })
	if err := t1.BFAdd(ctx, "t1:f", "x").Err(); err != nil {
		t.Errorf("t1 after restart: %v", err)
	}
	if err := t1.BFAdd(ctx, "t2:f", "x").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Errorf("t1 writing t2:f after restart: %v", err)
	}

	// ACL LOAD of a broken file changes nothing and says why, as Redis.
	if err := os.WriteFile(file, []byte("user t3 on bogus\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = c.Do(ctx, "ACL", "LOAD").Err()
	want := "ERR " + file + ":1: Syntax error. WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	if err == nil || err.Error() != want {
		t.Errorf("ACL LOAD of a bad file: %v\n want %s", err, want)
	}
	if now, _ := c.Do(ctx, "ACL", "LIST").StringSlice(); !slices.Equal(now, list) {
		t.Errorf("a failed ACL LOAD changed the users: %q", now)
	}
}

// CONFIG SET requirepass configures the default user; ACL DELUSER closes
// the deleted user's connections; RESET goes back to the default user.
func TestACLRequirePassAndDelUser(t *testing.T) {
	s := runApp(t, Options{}, true)
	ctx := context.Background()
	admin := newClient(t, s.addr, func(o *redis.Options) { o.PoolSize = 1 })
	if err := admin.ConfigSet(ctx, "requirepass", "pw").Err(); err != nil {
		t.Fatal(err)
	}
	fresh := newClient(t, s.addr, nil)
	if err := fresh.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOAUTH") {
		t.Errorf("PING without AUTH after CONFIG SET requirepass: %v", err)
	}
	withPass := newClient(t, s.addr, func(o *redis.Options) { o.Password = "pw" })
	if err := withPass.Ping(ctx).Err(); err != nil {
		t.Errorf("PING with the new password: %v", err)
	}
	if v, _ := withPass.ConfigGet(ctx, "requirepass").Result(); v["requirepass"] != "pw" {
		t.Errorf("CONFIG GET requirepass = %v", v)
	}
	if err := withPass.Do(ctx, "ACL", "SETUSER", "u", "on", ">x", "allkeys", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	raw := commandtest.DialRaw(t, s.addr, 2)
	for _, c := range [][]string{{"AUTH", "u", "x"}, {"ACL", "WHOAMI"}} {
		if r, err := raw.Do(commandtest.Argv(c...)); err != nil || r == "" || r[0] == '-' {
			t.Fatalf("%v: %q %v", c, r, err)
		}
	}
	if r, _ := raw.Do(commandtest.Argv("RESET")); r != "+RESET\r\n" {
		t.Fatalf("RESET: %q", r)
	}
	if r, _ := raw.Do(commandtest.Argv("PING")); !strings.HasPrefix(r, "-NOAUTH") {
		t.Errorf("PING after RESET (default user has a password): %q", r)
	}
	if r, _ := raw.Do(commandtest.Argv("AUTH", "u", "x")); r != "+OK\r\n" {
		t.Fatalf("AUTH u x: %q", r)
	}
	if n, err := withPass.Do(ctx, "ACL", "DELUSER", "u").Int(); err != nil || n != 1 {
		t.Fatalf("ACL DELUSER u: %d %v", n, err)
	}
	if r, err := raw.Do(commandtest.Argv("PING")); err == nil {
		t.Errorf("PING of a deleted user's connection answered %q; want the connection closed (Redis)", r)
	}
}

// Rules changed while the user's connections run commands: every reply
// is the old rules' or the new ones', never a torn mix (run with -race).
func TestACLConcurrentSetUser(t *testing.T) {
	s := runApp(t, Options{}, true)
	ctx := context.Background()
	admin := newClient(t, s.addr, nil)
	if err := admin.Do(ctx, "ACL", "SETUSER", "u", "on", ">x", "~a:*", "+@string").Err(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			rule := "+@string"
			if i%2 == 1 {
				rule = "-@string"
			}
			if err := admin.Do(ctx, "ACL", "SETUSER", "u", rule).Err(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	u := newClient(t, s.addr, func(o *redis.Options) { o.Username, o.Password, o.PoolSize = "u", "x", 4 })
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		err := u.Set(ctx, "a:1", "v", 0).Err()
		if err != nil && err.Error() != "NOPERM User u has no permissions to run the 'set' command" {
			t.Fatalf("SET while the rules change: %v", err)
		}
		if err := u.Set(ctx, "b:1", "v", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
			t.Fatalf("SET b:1 outside the pattern: %v", err)
		}
	}
	if n, _ := admin.Exists(ctx, "b:1").Result(); n != 0 {
		t.Error("a denied SET wrote b:1")
	}
}

// EXEC re-checks the ACL: a queued command the user lost the right to
// run meanwhile is answered NOPERM in EXEC's reply and does not run.
func TestACLRecheckedAtExec(t *testing.T) {
	s := runApp(t, Options{}, true)
	admin := commandtest.DialRaw(t, s.addr, 2)
	u := commandtest.DialRaw(t, s.addr, 2)
	for _, c := range []struct {
		rc   *commandtest.RawClient
		args []string
		want string
	}{
		{admin, []string{"ACL", "SETUSER", "u", "on", ">x", "allkeys", "+@all"}, "+OK\r\n"},
		{u, []string{"AUTH", "u", "x"}, "+OK\r\n"},
		{u, []string{"MULTI"}, "+OK\r\n"},
		{u, []string{"SET", "a", "1"}, "+QUEUED\r\n"},
		{u, []string{"SET", "b", "1"}, "+QUEUED\r\n"},
		{admin, []string{"ACL", "SETUSER", "u", "resetkeys", "~b"}, "+OK\r\n"},
		{u, []string{"EXEC"}, "*2\r\n-NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: No permissions to access a key\r\n+OK\r\n"},
		{admin, []string{"EXISTS", "a", "b"}, ":1\r\n"},
	} {
		if got, err := c.rc.Do(commandtest.Argv(c.args...)); err != nil || got != c.want {
			t.Fatalf("%v: %q, %v; want %q", c.args, got, err, c.want)
		}
	}
	out, _ := admin.Do(commandtest.Argv("ACL", "LOG"))
	if !strings.Contains(out, "$7\r\ncontext\r\n$5\r\nmulti\r\n") {
		t.Errorf("ACL LOG after the EXEC denial has no context multi: %q", out)
	}
}

// Protected mode accepts a non-loopback address without --requirepass
// when the aclfile gives the default user a password, and refuses it
// when the file leaves the default user nopass.
func TestACLFileProtectedMode(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open.acl")
	closed := filepath.Join(dir, "closed.acl")
	if err := os.WriteFile(open, []byte("user t1 on >x ~t1:* +@bloom\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(closed, []byte("user default on >adminpw ~* &* +@all\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := checkProtectedMode(Options{Listener: ln, ACLFile: open}); err == nil {
		t.Error("an aclfile whose default user is nopass passed protected mode")
	}
	if err := checkProtectedMode(Options{Listener: ln, ACLFile: closed}); err != nil {
		t.Errorf("an aclfile with a password for default: %v", err)
	}
	if err := checkProtectedMode(Options{Listener: ln, ACLFile: filepath.Join(dir, "missing.acl")}); err == nil {
		t.Error("a missing aclfile passed protected mode")
	}
}

// CLIENT LIST and CLIENT INFO name each connection's ACL user, and CLIENT
// KILL USER closes that user's connections (an unknown user is an error).
func TestACLClientListUser(t *testing.T) {
	s := runApp(t, Options{}, true)
	ctx := context.Background()
	admin := newClient(t, s.addr, nil)
	if err := admin.Do(ctx, "ACL", "SETUSER", "u1", "on", ">pw", "+@all", "~*").Err(); err != nil {
		t.Fatal(err)
	}
	u1 := newClient(t, s.addr, func(o *redis.Options) { o.Username, o.Password, o.PoolSize = "u1", "pw", 1 })
	if info, err := u1.ClientInfo(ctx).Result(); err != nil || info.User != "u1" {
		t.Fatalf("CLIENT INFO as u1: %+v, %v", info, err)
	}
	if !testutil.Eventually(t, 5*time.Second, func() bool {
		list, err := admin.ClientList(ctx).Result()
		return err == nil && strings.Contains(list, " user=u1 ") && strings.Contains(list, " user=default ")
	}) {
		t.Fatalf("CLIENT LIST: %q", admin.ClientList(ctx).Val())
	}
	if err := admin.Do(ctx, "CLIENT", "KILL", "USER", "nosuch").Err(); err == nil || err.Error() != "ERR No such user 'nosuch'" {
		t.Fatalf("CLIENT KILL USER nosuch: %v", err)
	}
	if n, err := admin.Do(ctx, "CLIENT", "KILL", "USER", "u1").Int(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL USER u1 = %d, %v; want 1", n, err)
	}
	if list := admin.ClientList(ctx).Val(); strings.Contains(list, " user=u1 ") {
		t.Fatalf("CLIENT LIST after the kill: %q", list)
	}
}
