package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/testutil"
)

var ctx = context.Background()

func TestPingEchoGoRedis(t *testing.T) {
	e := start(t, nil)
	for _, proto := range []int{2, 3} {
		c := e.client(t, proto, "")
		if v, err := c.Ping(ctx).Result(); err != nil || v != "PONG" {
			t.Fatalf("proto %d PING = %q, %v", proto, v, err)
		}
		if v, err := c.Echo(ctx, "hello\r\nworld").Result(); err != nil || v != "hello\r\nworld" {
			t.Fatalf("proto %d ECHO = %q, %v", proto, v, err)
		}
		if v, err := c.Do(ctx, "PING", "x").Text(); err != nil || v != "x" {
			t.Fatalf("PING x = %q, %v", v, err)
		}
	}
}

func TestRawBasics(t *testing.T) {
	e := start(t, nil)
	r := e.raw(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "+PONG\r\n"},
		{[]string{"ping", "hi"}, "$2\r\nhi\r\n"},
		{[]string{"PING", "a", "b"}, "-ERR wrong number of arguments for 'ping' command\r\n"},
		{[]string{"EcHo", "x"}, "$1\r\nx\r\n"},
		{[]string{"ECHO"}, "-ERR wrong number of arguments for 'echo' command\r\n"},
		{[]string{"FOO", "a", "b"}, "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n"},
		{[]string{"foo"}, "-ERR unknown command 'foo', with args beginning with: \r\n"},
		{[]string{"foo", "a\r\nb"}, "-ERR unknown command 'foo', with args beginning with: 'a  b' \r\n"},
		{[]string{"SELECT", "0"}, "+OK\r\n"},
		{[]string{"SELECT", "1"}, "-ERR DB index is out of range\r\n"},
		{[]string{"SELECT", "x"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"CLIENT"}, "-ERR wrong number of arguments for 'client' command\r\n"},
		{[]string{"CLIENT", "FOO"}, "-ERR unknown subcommand 'FOO'. Try CLIENT HELP.\r\n"},
		{[]string{"client", "setname"}, "-ERR wrong number of arguments for 'client|setname' command\r\n"},
		{[]string{"CLIENT", "GETNAME"}, "$-1\r\n"},
		{[]string{"CLIENT", "SETNAME", "a b"}, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"CLIENT", "SETNAME", "conn1"}, "+OK\r\n"},
		{[]string{"CLIENT", "GETNAME"}, "$5\r\nconn1\r\n"},
		{[]string{"CLIENT", "SETINFO", "LIB-NAME", "go-redis(,go1.26)"}, "+OK\r\n"},
		{[]string{"CLIENT", "SETINFO", "lib-ver", "9.22.0"}, "+OK\r\n"},
		{[]string{"CLIENT", "SETINFO", "foo", "x"}, "-ERR Unrecognized option 'foo'\r\n"},
		{[]string{"CLIENT", "SETINFO", "LIB-NAME", "a b"}, "-ERR LIB-NAME cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"AUTH", "x"}, "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n"},
		{[]string{"AUTH", "default", "anything"}, "+OK\r\n"},
		{[]string{"AUTH", "bob", "x"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"HELLO", "4"}, "-NOPROTO unsupported protocol version\r\n"},
		{[]string{"HELLO", "x"}, "-ERR Protocol version is not an integer or out of range\r\n"},
		{[]string{"HELLO", "3", "FOO"}, "-ERR Syntax error in HELLO option 'FOO'\r\n"},
		{[]string{"FLUSHALL", "x"}, "-ERR syntax error\r\n"},
		{[]string{"SCAN", "x"}, "-ERR invalid cursor\r\n"},
		{[]string{"SCAN", "0", "COUNT", "0"}, "-ERR syntax error\r\n"},
		{[]string{"SCAN", "0", "COUNT", "x"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"SCAN", "0", "MATCH"}, "-ERR syntax error\r\n"},
		{[]string{"TYPE", "nokey"}, "+none\r\n"},
		{[]string{"MEMORY", "USAGE", "nokey"}, "$-1\r\n"},
		{[]string{"MODULE", "LIST"}, "*1\r\n*8\r\n$4\r\nname\r\n$2\r\nbf\r\n$3\r\nver\r\n:80400\r\n$4\r\npath\r\n$0\r\n\r\n$4\r\nargs\r\n*0\r\n"},
		{[]string{"SAVE"}, "-ERR persistence is disabled\r\n"},
		{[]string{"COMMAND", "FOO"}, "-ERR unknown subcommand 'FOO'. Try COMMAND HELP.\r\n"},
		{[]string{"COMMAND", "INFO", "nosuch"}, "*1\r\n$-1\r\n"},
	}
	for _, c := range cases {
		if got := r.do(c.args...); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.args, got, c.want)
		}
	}
	id := r.do("CLIENT", "ID")
	if !strings.HasPrefix(id, ":") {
		t.Fatalf("CLIENT ID = %q", id)
	}
	// Inline (telnet) commands work too.
	r.send("PING\r\necho  \"a b\"\r\n")
	if got := r.read(); got != "+PONG\r\n" {
		t.Fatalf("inline PING = %q", got)
	}
	if got := r.read(); got != "$3\r\na b\r\n" {
		t.Fatalf("inline ECHO = %q", got)
	}
}

func TestHello(t *testing.T) {
	e := start(t, nil)
	r := e.raw(t)
	id := strings.TrimSuffix(strings.TrimPrefix(r.do("CLIENT", "ID"), ":"), "\r\n")
	mods := "*1\r\n%4\r\n$4\r\nname\r\n$2\r\nbf\r\n$3\r\nver\r\n:80400\r\n$4\r\npath\r\n$0\r\n\r\n$4\r\nargs\r\n*0\r\n"
	want3 := "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.4.0\r\n$5\r\nproto\r\n:3\r\n" +
		"$2\r\nid\r\n:" + id + "\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n" + mods
	if got := r.do("HELLO", "3"); got != want3 {
		t.Fatalf("HELLO 3:\n got %q\nwant %q", got, want3)
	}
	// Now in RESP3: null is "_", maps stay maps.
	if got := r.do("CLIENT", "GETNAME"); got != "_\r\n" {
		t.Fatalf("RESP3 GETNAME = %q", got)
	}
	want2 := strings.Replace(strings.Replace(want3, "%7", "*14", 1), ":3\r\n", ":2\r\n", 1)
	want2 = strings.Replace(want2, "%4", "*8", 1)
	if got := r.do("HELLO", "2", "SETNAME", "me"); got != want2 {
		t.Fatalf("HELLO 2:\n got %q\nwant %q", got, want2)
	}
	if got := r.do("CLIENT", "GETNAME"); got != "$2\r\nme\r\n" {
		t.Fatalf("GETNAME after HELLO SETNAME = %q", got)
	}

	// go-redis parses HELLO in both protocols.
	for _, proto := range []int{2, 3} {
		c := e.client(t, proto, "")
		m, err := c.Do(ctx, "HELLO", proto).Result()
		if err != nil {
			t.Fatalf("go-redis HELLO %d: %v", proto, err)
		}
		// RESP3 gives a map (printed "k:v"), RESP2 a flat array ("k v").
		s := strings.ReplaceAll(fmt.Sprint(m), ":", " ")
		for _, w := range []string{"server redis", "version 7.4.0", "proto " + strconv.Itoa(proto), "mode standalone", "role master", "name bf"} {
			if !strings.Contains(s, w) {
				t.Errorf("HELLO %d reply %s lacks %q", proto, s, w)
			}
		}
	}
}

func TestAuth(t *testing.T) {
	e := start(t, func(o *Options) { o.RequirePass = "s3cret" })
	r := e.raw(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "-NOAUTH Authentication required.\r\n"},
		{[]string{"DBSIZE"}, "-NOAUTH Authentication required.\r\n"},
		// Unknown command and arity come before NOAUTH, as in Redis 7.
		{[]string{"FOO"}, "-ERR unknown command 'FOO', with args beginning with: \r\n"},
		{[]string{"ECHO"}, "-ERR wrong number of arguments for 'echo' command\r\n"},
		{[]string{"HELLO", "3"}, "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n"},
		{[]string{"AUTH", "wrong"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"AUTH", "other", "s3cret"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"AUTH", "a", "b", "c"}, "-ERR syntax error\r\n"},
		{[]string{"HELLO", "2", "AUTH", "default", "nope"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"PING"}, "-NOAUTH Authentication required.\r\n"},
		{[]string{"AUTH", "s3cret"}, "+OK\r\n"},
		{[]string{"PING"}, "+PONG\r\n"},
	}
	for _, c := range cases {
		if got := r.do(c.args...); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.args, got, c.want)
		}
	}
	r2 := e.raw(t)
	if got := r2.do("HELLO", "3", "AUTH", "default", "s3cret"); !strings.HasPrefix(got, "%7\r\n") {
		t.Fatalf("HELLO 3 AUTH = %q", got)
	}
	if got := r2.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after HELLO AUTH = %q", got)
	}
	// QUIT is allowed before AUTH.
	r3 := e.raw(t)
	if got := r3.do("QUIT"); got != "+OK\r\n" {
		t.Fatalf("QUIT = %q", got)
	}
	r3.expectClosed()

	for _, proto := range []int{2, 3} {
		good := e.client(t, proto, "s3cret")
		if err := good.Ping(ctx).Err(); err != nil {
			t.Fatalf("proto %d with password: %v", proto, err)
		}
		bad := e.client(t, proto, "")
		if err := bad.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			t.Fatalf("proto %d without password: err = %v", proto, err)
		}
		wrong := e.client(t, proto, "nope")
		if err := wrong.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
			t.Fatalf("proto %d wrong password: err = %v", proto, err)
		}
	}
}

func TestGoRedisClientCommands(t *testing.T) {
	e := start(t, nil)
	for _, proto := range []int{2, 3} {
		c := e.client(t, proto, "")
		if err := c.Do(ctx, "CLIENT", "SETNAME", "abc").Err(); err != nil {
			t.Fatal(err)
		}
		// go-redis sent CLIENT SETINFO on connect; CLIENT INFO shows it.
		info, err := c.Do(ctx, "CLIENT", "INFO").Text()
		if err != nil || !strings.Contains(info, "lib-name=go-redis") || !strings.Contains(info, "resp="+strconv.Itoa(proto)) {
			t.Fatalf("CLIENT INFO = %q, %v", info, err)
		}
		if id, err := c.ClientID(ctx).Result(); err != nil || id <= 0 {
			t.Fatalf("CLIENT ID = %d, %v", id, err)
		}
		if err := c.Do(ctx, "SELECT", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if n, err := c.Do(ctx, "COMMAND", "COUNT").Int(); err != nil || n < 20 {
			t.Fatalf("COMMAND COUNT = %d, %v", n, err)
		}
		cmds, err := c.Command(ctx).Result()
		if err != nil {
			t.Fatalf("COMMAND: %v", err)
		}
		del := cmds["del"]
		if del == nil || del.Arity != -2 || del.FirstKeyPos != 1 || del.LastKeyPos != -1 || del.StepCount != 1 {
			t.Fatalf("COMMAND del = %+v", del)
		}
		if ex := cmds["exists"]; ex == nil || !ex.ReadOnly {
			t.Fatalf("COMMAND exists = %+v", ex)
		}
		if _, err := c.Do(ctx, "COMMAND", "DOCS").Result(); err != nil {
			t.Fatalf("COMMAND DOCS: %v", err)
		}
		docs, err := c.Do(ctx, "COMMAND", "DOCS", "ping", "client|setname", "nosuch").Result()
		if err != nil || !strings.Contains(fmt.Sprint(docs), "connection") {
			t.Fatalf("COMMAND DOCS ping = %v, %v", docs, err)
		}
		list, err := c.Do(ctx, "COMMAND", "LIST", "FILTERBY", "PATTERN", "client|*").StringSlice()
		if err != nil || len(list) < 4 || !strings.HasPrefix(list[0], "client|") {
			t.Fatalf("COMMAND LIST = %v, %v", list, err)
		}
		if tm, err := c.Time(ctx).Result(); err != nil || time.Since(tm).Abs() > time.Minute {
			t.Fatalf("TIME = %v, %v", tm, err)
		}
	}
}

func TestKeyCommands(t *testing.T) {
	e := start(t, nil)
	for i := 0; i < 50; i++ {
		e.set("k"+strconv.Itoa(i), "MBbloom--")
	}
	e.set("dir/a/b", "MBbloomCF")
	e.set("hll", "string")
	for _, proto := range []int{2, 3} {
		c := e.client(t, proto, "")
		if n, err := c.DBSize(ctx).Result(); err != nil || n != 52 {
			t.Fatalf("DBSIZE = %d, %v", n, err)
		}
		if n, err := c.Exists(ctx, "k1", "k1", "nokey", "hll").Result(); err != nil || n != 3 {
			t.Fatalf("EXISTS = %d, %v", n, err)
		}
		for k, want := range map[string]string{"k1": "MBbloom--", "dir/a/b": "MBbloomCF", "hll": "string", "nokey": "none"} {
			if got, err := c.Type(ctx, k).Result(); err != nil || got != want {
				t.Fatalf("TYPE %s = %q, %v", k, got, err)
			}
		}
		if ks, err := c.Keys(ctx, "dir*").Result(); err != nil || len(ks) != 1 || ks[0] != "dir/a/b" {
			t.Fatalf("KEYS dir* = %v, %v", ks, err)
		}
		if ks, err := c.Keys(ctx, "k[1-2]?").Result(); err != nil || len(ks) != 20 {
			t.Fatalf("KEYS k[1-2]? = %v, %v", ks, err)
		}
		if ks, err := c.Keys(ctx, "*").Result(); err != nil || len(ks) != 52 {
			t.Fatalf("KEYS * = %d, %v", len(ks), err)
		}
		// Full SCAN iteration returns every key.
		seen := map[string]bool{}
		var cursor uint64
		for iter := 0; ; iter++ {
			ks, next, err := c.Scan(ctx, cursor, "", 5).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range ks {
				seen[k] = true
			}
			if cursor = next; cursor == 0 {
				break
			}
			if iter > 1000 {
				t.Fatal("SCAN does not terminate")
			}
		}
		if len(seen) != 52 {
			t.Fatalf("SCAN saw %d keys", len(seen))
		}
		var typed []string
		cursor = 0
		for {
			ks, next, err := c.ScanType(ctx, cursor, "*", 1000, "MBbloomCF").Result()
			if err != nil {
				t.Fatal(err)
			}
			typed = append(typed, ks...)
			if cursor = next; cursor == 0 {
				break
			}
		}
		if len(typed) != 1 || typed[0] != "dir/a/b" {
			t.Fatalf("SCAN TYPE = %v", typed)
		}
		if v, err := c.MemoryUsage(ctx, "hll").Result(); err != nil || v != 13 {
			t.Fatalf("MEMORY USAGE = %d, %v", v, err)
		}
	}
	c := e.client(t, 3, "")
	if n, err := c.Del(ctx, "k1", "k2", "nokey", "k1").Result(); err != nil || n != 2 {
		t.Fatalf("DEL = %d, %v", n, err)
	}
	if n, err := c.Unlink(ctx, "k3").Result(); err != nil || n != 1 {
		t.Fatalf("UNLINK = %d, %v", n, err)
	}
	if got := e.log.records(); strings.Join(got, ",") != "DEL k1,DEL k2,DEL k3" {
		t.Fatalf("log records = %q", got)
	}
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if n := e.store.Len(); n != 0 {
		t.Fatalf("after FLUSHALL %d keys", n)
	}
	e.set("x", "string")
	if err := c.FlushDBAsync(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if got := e.log.records(); strings.Join(got[3:], ",") != "FLUSHALL,FLUSHALL" {
		t.Fatalf("log records = %q", got)
	}
	if n, _ := c.DBSize(ctx).Result(); n != 0 {
		t.Fatalf("DBSIZE after FLUSHDB = %d", n)
	}
}

func TestConfig(t *testing.T) {
	e := start(t, nil)
	for _, proto := range []int{2, 3} {
		c := e.client(t, proto, "")
		m, err := c.ConfigGet(ctx, "bf-*").Result()
		if err != nil || len(m) != 2 || m["bf-error-rate"] != "0.01" || m["bf-initial-size"] != "100" {
			t.Fatalf("proto %d CONFIG GET bf-* = %v, %v", proto, m, err)
		}
		m, err = c.ConfigGet(ctx, "nothing*").Result()
		if err != nil || len(m) != 0 {
			t.Fatalf("CONFIG GET nothing = %v, %v", m, err)
		}
	}
	r := e.raw(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"CONFIG", "GET", "bf-error-rate"}, "*2\r\n$13\r\nbf-error-rate\r\n$4\r\n0.01\r\n"},
		{[]string{"CONFIG", "SET", "bf-error-rate", "0.02"}, "+OK\r\n"},
		// As Redis 7.0: an exact name answers as spelled, and a parameter
		// two patterns name keeps the first spelling.
		{[]string{"CONFIG", "GET", "BF-ERROR-RATE", "bf-error-*"}, "*2\r\n$13\r\nBF-ERROR-RATE\r\n$4\r\n0.02\r\n"},
		{[]string{"CONFIG", "GET", "bf-error-*", "BF-ERROR-RATE"}, "*2\r\n$13\r\nbf-error-rate\r\n$4\r\n0.02\r\n"},
		{[]string{"CONFIG", "SET", "foo", "1"}, "-ERR Unknown option or number of arguments for CONFIG SET - 'foo'\r\n"},
		{[]string{"CONFIG", "SET", "bf-error-rate", "2"}, "-ERR CONFIG SET failed (possibly related to argument 'bf-error-rate') - error rate must be in (0,1)\r\n"},
		{[]string{"CONFIG", "SET", "bf-error-rate"}, "-ERR wrong number of arguments for 'config|set' command\r\n"},
		{[]string{"CONFIG", "SET", "bf-error-rate", "0.1", "bf-initial-size"}, "-ERR syntax error\r\n"},
		// Atomic: the first value is rolled back when the second fails.
		{[]string{"CONFIG", "SET", "bf-error-rate", "0.05", "bf-initial-size", "abc"}, "-ERR CONFIG SET failed (possibly related to argument 'bf-initial-size') - argument couldn't be parsed into an integer\r\n"},
		{[]string{"CONFIG", "GET", "bf-error-rate"}, "*2\r\n$13\r\nbf-error-rate\r\n$4\r\n0.02\r\n"},
		{[]string{"CONFIG", "SET", "bf-error-rate", "0.03", "bf-initial-size", "200"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "bf-initial-size"}, "*2\r\n$15\r\nbf-initial-size\r\n$3\r\n200\r\n"},
		{[]string{"CONFIG", "GET", "maxclients"}, "*2\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n"},
		{[]string{"CONFIG", "SET", "databases", "16"}, "-ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config\r\n"},
		{[]string{"CONFIG", "RESETSTAT"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET"}, "-ERR wrong number of arguments for 'config|get' command\r\n"},
	}
	for _, c := range cases {
		if got := r.do(c.args...); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.args, got, c.want)
		}
	}
	r.do("HELLO", "3")
	if got := r.do("CONFIG", "GET", "bf-error-rate"); got != "%1\r\n$13\r\nbf-error-rate\r\n$4\r\n0.03\r\n" {
		t.Fatalf("RESP3 CONFIG GET = %q", got)
	}
}

func TestInfo(t *testing.T) {
	e := start(t, nil)
	e.set("a", "string")
	for _, proto := range []int{2, 3} {
		c := e.client(t, proto, "")
		all, err := c.Info(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"# Server\r\n", "redis_version:7.4.0\r\n", "redis_mode:standalone\r\n", "arch_bits:64\r\n",
			"# Clients\r\nconnected_clients:", "# Memory\r\nused_memory:", "rdb_bgsave_in_progress:0\r\n",
			"total_commands_processed:", "role:master\r\n", "cluster_enabled:0\r\n",
			"module:name=bf,ver=80400,api=1,filters=0,usedby=[],using=[],options=[]\r\n",
			"db0:keys=1,expires=0,avg_ttl=0\r\n", "\r\n\r\n# Clients\r\n", "tcp_port:" + e.addr[strings.LastIndex(e.addr, ":")+1:] + "\r\n"} {
			if !strings.Contains(all, w) {
				t.Errorf("proto %d INFO lacks %q", proto, w)
			}
		}
		one, err := c.Info(ctx, "server").Result()
		if err != nil || !strings.HasPrefix(one, "# Server\r\n") || strings.Contains(one, "# Clients") {
			t.Fatalf("INFO server = %q, %v", one, err)
		}
		two, err := c.Info(ctx, "keyspace", "CLUSTER").Result()
		if err != nil || two != "# Cluster\r\ncluster_enabled:0\r\n\r\n# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n" {
			t.Fatalf("INFO keyspace cluster = %q, %v", two, err)
		}
	}
	r := e.raw(t)
	r.do("HELLO", "3")
	if got := r.do("INFO", "cluster"); got != "=34\r\ntxt:# Cluster\r\ncluster_enabled:0\r\n\r\n" {
		t.Fatalf("RESP3 INFO = %q", got)
	}
	if got := r.do("INFO", "nosuchsection"); got != "=4\r\ntxt:\r\n" {
		t.Fatalf("INFO unknown = %q", got)
	}
}

func TestPipelining(t *testing.T) {
	e := start(t, nil)
	r := e.raw(t)
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString(cmd("ECHO", strconv.Itoa(i)))
	}
	r.send(b.String())
	for i := 0; i < 100; i++ {
		s := strconv.Itoa(i)
		if got, want := r.read(), "$"+strconv.Itoa(len(s))+"\r\n"+s+"\r\n"; got != want {
			t.Fatalf("reply %d = %q, want %q", i, got, want)
		}
	}
	c := e.client(t, 3, "")
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := 0; i < 100; i++ {
			p.Echo(ctx, i)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, cm := range cmds {
		if v := cm.(*redis.StringCmd).Val(); v != strconv.Itoa(i) {
			t.Fatalf("pipelined reply %d = %q", i, v)
		}
	}
}

// TestHostileInput sends malformed requests; each connection gets an
// error or is closed, and the server keeps serving others. (What Redis
// skips or waits for is in TestRESPAgainstRedis.)
func TestHostileInput(t *testing.T) {
	e := start(t, nil)
	probe := e.client(t, 2, "")
	big := strings.Repeat("x", 70*1024)
	cases := []struct {
		in, want string // want "" = any error reply or a reset
	}{
		{"*1\r\n$9223372036854775807\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"*1\r\n$9223372036854775806\r\nab", "-ERR Protocol error: invalid bulk length\r\n"},
		{"*2\r\n$4\r\nECHO\r\n$-7\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"*2\r\n$4\r\nECHO\r\n$536870913\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"*99999999999999999999\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"*2000000\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"*1x\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"*2\r\n$4\r\nPING\r\nXX\r\n", "-ERR Protocol error: expected '$', got 'X'\r\n"},
		{"*1\r\n$" + strings.Repeat("0", 100) + "\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"*1\r\n$" + strings.Repeat("0", 70000), "-ERR Protocol error: too big bulk count string\r\n"},
		{"PING \"unbalanced\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
		{big, ""},
	}
	for i, c := range cases {
		r := e.raw(t)
		r.send(c.in)
		_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(r.br)
		switch {
		case c.want != "" && (err != nil || string(got) != c.want):
			t.Errorf("case %d %.40q: got %q, %v; want %q then close", i, c.in, got, err, c.want)
		case c.want == "" && err == nil && !strings.HasPrefix(string(got), "-"):
			t.Errorf("case %d %.40q: got %q, want an error then close", i, c.in, got)
		case err != nil && !errors.Is(err, syscall.ECONNRESET):
			t.Errorf("case %d %.40q: connection not closed: %v", i, c.in, err)
		}
		if err := probe.Ping(ctx).Err(); err != nil {
			t.Fatalf("server stopped answering after case %d: %v", i, err)
		}
	}
	// Garbage that parses as inline commands gets errors; the connection
	// stays usable, as with Redis.
	g := e.raw(t)
	g.send("\xff\xfe*$\r\n\r\n$$$\r\n")
	if got := g.read(); !strings.HasPrefix(got, "-ERR unknown command '") {
		t.Fatalf("garbage line 1 = %q", got)
	}
	if got := g.read(); got != "-ERR unknown command '$$$', with args beginning with: \r\n" {
		t.Fatalf("garbage line 2 = %q", got)
	}
	if got := g.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after garbage = %q", got)
	}

	// Commands complete before the violation still run and answer.
	r := e.raw(t)
	r.send(cmd("ECHO", "ok") + "*1\r\n$9223372036854775807\r\n")
	if got := r.read(); got != "$2\r\nok\r\n" {
		t.Fatalf("reply before violation = %q", got)
	}
	if got := r.read(); got != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("violation reply = %q", got)
	}
	r.expectClosed()
}

func TestMaxBulkLenConfig(t *testing.T) {
	e := start(t, nil)
	r := e.raw(t)
	if got := r.do("CONFIG", "SET", "proto-max-bulk-len", "1048576"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET proto-max-bulk-len = %q", got)
	}
	if got := r.do("ECHO", strings.Repeat("a", 1<<20)); len(got) != 1<<20+12 {
		t.Fatalf("ECHO of max bulk: %d bytes", len(got))
	}
	r.send("*2\r\n$4\r\nECHO\r\n$1048577\r\n")
	if got := r.read(); got != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("over-limit bulk = %q", got)
	}
}

func TestQuit(t *testing.T) {
	e := start(t, nil)
	r := e.raw(t)
	r.send(cmd("PING") + cmd("QUIT") + cmd("PING"))
	if got := r.read(); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
	if got := r.read(); got != "+OK\r\n" {
		t.Fatalf("QUIT = %q", got)
	}
	r.expectClosed()
}

// TestDurabilityWait proves replies are held until Persist.Wait returns
// and that a pipelined batch waits once for its highest sequence number.
func TestDurabilityWait(t *testing.T) {
	p := &fakePersist{gate: make(chan struct{})}
	e := start(t, func(o *Options) { o.Persist = p })
	e.set("a", "string")
	r := e.raw(t)
	r.send(cmd("DEL", "a"))
	_ = r.c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if b, err := r.br.ReadByte(); err == nil {
		t.Fatalf("got reply byte %q before Wait returned", b)
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("read: %v", err)
	}
	if w := p.waitCalls(); len(w) != 1 || w[0] != 1 {
		t.Fatalf("Wait calls = %v, want [1]", w)
	}
	close(p.gate)
	if got := r.read(); got != ":1\r\n" {
		t.Fatalf("DEL = %q", got)
	}

	// A read-only batch does not wait.
	p.mu.Lock()
	p.gate, p.waits = nil, nil
	p.mu.Unlock()
	if got := r.do("EXISTS", "a"); got != ":0\r\n" || len(p.waitCalls()) != 0 {
		t.Fatalf("EXISTS = %q, waits %v", got, p.waitCalls())
	}

	// A pipeline of writes shares waits; the last wait covers the maximum.
	for i := 0; i < 10; i++ {
		e.set("p"+strconv.Itoa(i), "string")
	}
	var b strings.Builder
	for i := 0; i < 10; i++ {
		b.WriteString(cmd("DEL", "p"+strconv.Itoa(i)))
	}
	r.send(b.String())
	for i := 0; i < 10; i++ {
		if got := r.read(); got != ":1\r\n" {
			t.Fatalf("pipelined DEL %d = %q", i, got)
		}
	}
	w := p.waitCalls()
	if len(w) == 0 || len(w) >= 10 || w[len(w)-1] != 11 {
		t.Fatalf("Wait calls for a 10-command pipeline = %v; want fewer than 10 ending in 11", w)
	}
	t.Logf("10 pipelined DELs -> %d Wait call(s) %v", len(w), w)
}

// TestBatchWaitsForEarlierRecords: a batch's replies wait for every record
// the log received before its commands were done, not only its own, as
// Redis sends no reply before the AOF write of every earlier command. A
// reply resting on another connection's buffered record (DEL answering 0
// for a key that connection just deleted, EXISTS not finding it) must not
// go out before that record is written: a kill -9 would take it back. With
// nothing logged yet, a batch does not wait.
func TestBatchWaitsForEarlierRecords(t *testing.T) {
	p := &fakePersist{gate: make(chan struct{})}
	e := start(t, func(o *Options) { o.Persist = p })
	p.mu.Lock()
	p.log = e.log
	p.mu.Unlock()
	e.set("a", "string")

	// Nothing logged yet: a write that logs nothing does not wait.
	first := e.raw(t)
	if got := first.do("DEL", "missing"); got != ":0\r\n" || len(p.waitCalls()) != 0 {
		t.Fatalf("DEL missing = %q, waits %v; want :0 and no wait", got, p.waitCalls())
	}

	// A deletes a; its batch waits for record 1 (held by the gate).
	a := e.raw(t)
	a.send(cmd("DEL", "a"))
	deadline := time.Now().Add(5 * time.Second)
	for len(p.waitCalls()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("A's batch never waited")
		}
		time.Sleep(time.Millisecond)
	}
	// B's DEL finds a gone (logs nothing) and C's EXISTS does not find
	// it: both rest on A's record, so neither may answer before it is
	// written.
	b, c := e.raw(t), e.raw(t)
	b.send(cmd("DEL", "a"))
	c.send(cmd("EXISTS", "a"))
	for _, r := range []*raw{a, b, c} {
		_ = r.c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if by, err := r.br.ReadByte(); err == nil {
			t.Fatalf("got reply byte %q before record 1 was written", by)
		} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
			t.Fatalf("read: %v", err)
		}
		_ = r.c.SetReadDeadline(time.Time{})
	}
	if w := p.waitCalls(); len(w) != 3 || w[0] != 1 || w[1] != 1 || w[2] != 1 {
		t.Fatalf("Wait calls = %v, want three waits for record 1", w)
	}
	close(p.gate)
	for r, want := range map[*raw]string{a: ":1\r\n", b: ":0\r\n", c: ":0\r\n"} {
		if got := r.read(); got != want {
			t.Fatalf("reply %q, want %q", got, want)
		}
	}
}

// TestOthersFailedRecordDoesNotFailBatch: when the record a batch waits
// for only because another connection logged it could not be written
// (that connection got the error), a batch of reads is answered, as Redis
// answers reads after a failed AOF write; a batch that ran a write
// command, logged or not, gets the durability error.
func TestOthersFailedRecordDoesNotFailBatch(t *testing.T) {
	p := &fakePersist{waitErr: syscall.ENOSPC, failFrom: 2}
	e := start(t, func(o *Options) { o.Persist = p })
	p.mu.Lock()
	p.log = e.log
	p.mu.Unlock()
	e.set("a", "string")
	e.set("b", "string")
	r := e.raw(t)
	if got := r.do("DEL", "a"); got != ":1\r\n" { // record 1, written
		t.Fatalf("DEL a = %q", got)
	}
	// Another connection's record 2, which could not be written.
	if _, err := e.log.Append([][]byte{[]byte("DEL"), []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if got := r.do("EXISTS", "b"); got != ":1\r\n" {
		t.Fatalf("EXISTS b after another connection's failed record = %q, want :1", got)
	}
	if w := p.waitCalls(); len(w) != 2 || w[1] != 2 {
		t.Fatalf("Wait calls = %v; want the read to wait for record 2", w)
	}
	want := "-MISCONF Errors writing to the AOF file: " + syscall.ENOSPC.Error() + "; write not acknowledged\r\n"
	// A write that logs nothing may rest on the failed record (BF.ADD
	// answering 0, DEL answering 0): it is not acknowledged either.
	if got := r.do("DEL", "missing"); got != want {
		t.Fatalf("DEL missing after another connection's failed record = %q, want %q", got, want)
	}
	if got := r.do("DEL", "b"); got != want { // its own record 3 fails
		t.Fatalf("DEL b with its own record failed = %q, want %q", got, want)
	}
	// A read in the same batch as such a write fails with it.
	r.send(cmd("EXISTS", "b") + cmd("DEL", "missing"))
	for i := range 2 {
		if got := r.read(); got != want {
			t.Fatalf("reply %d of a batch with a write = %q, want %q", i, got, want)
		}
	}
}

// TestUnreportedRecordWaits: a command that logs through the store without
// reporting the sequence number still has its batch wait for its record,
// inside MULTI/EXEC too.
func TestUnreportedRecordWaits(t *testing.T) {
	quiet := &command.Spec{Name: "quietlog", Arity: 2, Flags: command.FlagWrite, FirstKey: 1, LastKey: 1, Step: 1,
		Handler: func(c *command.Ctx) {
			// Logs through the store and drops the sequence number.
			c.Store.Update(c.Args[1], func(tx *keyspace.Txn) {
				tx.Set(&testValue{typ: "string", size: 1})
				_ = tx.Log([]byte("SET"), c.Args[1], []byte("x"))
			})
			c.R.OK()
		}}
	p := &fakePersist{}
	e := start(t, func(o *Options) { o.Persist = p }, quiet)
	p.mu.Lock()
	p.log = e.log
	p.mu.Unlock()
	r := e.raw(t)
	if got := r.do("QUIETLOG", "k"); got != "+OK\r\n" {
		t.Fatalf("QUIETLOG = %q", got)
	}
	last := p.LastSeq()
	if w := p.waitCalls(); last == 0 || len(w) != 1 || w[0] != last {
		t.Fatalf("QUIETLOG logged up to %d and waited for %v; want one wait for %d", last, w, last)
	}
	r.send(cmd("MULTI") + cmd("QUIETLOG", "k2") + cmd("DEL", "missing") + cmd("EXEC"))
	for _, want := range []string{"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*2\r\n+OK\r\n:0\r\n"} {
		if got := r.read(); got != want {
			t.Fatalf("transaction reply %q, want %q", got, want)
		}
	}
	last = p.LastSeq()
	if w := p.waitCalls(); len(w) != 2 || w[1] != last {
		t.Fatalf("EXEC: log at %d, waits %v; want a second wait for %d", last, w, last)
	}
}

// TestDurabilityFailureFailsBatch: when the durability wait fails (an
// fsync error with appendfsync always), no command of the batch is
// acknowledged: each gets the MISCONF error instead of its reply, and the
// connection keeps working.
func TestDurabilityFailureFailsBatch(t *testing.T) {
	p := &fakePersist{waitErr: errors.New("fsync: input/output error")}
	e := start(t, func(o *Options) { o.Persist = p })
	e.set("a", "string")
	e.set("b", "string")
	r := e.raw(t)
	r.send(cmd("DEL", "a") + cmd("EXISTS", "b") + cmd("DEL", "b"))
	for i := 0; i < 3; i++ {
		if got := r.read(); got != "-"+durabilityErr+"\r\n" {
			t.Fatalf("reply %d = %q, want the durability error", i, got)
		}
	}
	// A read-only batch does not wait, so it succeeds.
	if got := r.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after failure = %q", got)
	}
}

func TestSaveCommands(t *testing.T) {
	p := &fakePersist{last: time.Unix(1700000000, 0)}
	e := start(t, func(o *Options) { o.Persist = p })
	r := e.raw(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"SAVE"}, "+OK\r\n"},
		{[]string{"BGSAVE"}, "+Background saving started\r\n"},
		{[]string{"BGSAVE", "SCHEDULE"}, "+Background saving started\r\n"},
		{[]string{"BGSAVE", "x"}, "-ERR syntax error\r\n"},
		{[]string{"BGREWRITEAOF"}, "+Background append only file rewriting started\r\n"},
		{[]string{"BGREWRITEAOF", "x"}, "-ERR wrong number of arguments for 'bgrewriteaof' command\r\n"},
		{[]string{"LASTSAVE"}, ":1700000000\r\n"},
	}
	for _, c := range cases {
		if got := r.do(c.args...); got != c.want {
			t.Errorf("%q: got %q want %q", c.args, got, c.want)
		}
	}
	for _, cmd := range []string{"BGSAVE", "SAVE"} {
		// An automatic snapshot starts between the check and the call.
		p.mu.Lock()
		p.lateRival = true
		p.mu.Unlock()
		if got := r.do(cmd); got != "-ERR Background save already in progress\r\n" {
			t.Fatalf("%s losing the race with an automatic snapshot = %q", cmd, got)
		}
		p.mu.Lock()
		p.inProgress = false
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.inProgress, p.snapErr = true, nil
	p.mu.Unlock()
	if got := r.do("BGSAVE"); got != "-ERR Background save already in progress\r\n" {
		t.Fatalf("BGSAVE while running = %q", got)
	}
	// In probly a snapshot is the AOF rewrite (INFO aof_rewrite_in_progress).
	if got := r.do("BGREWRITEAOF"); got != "-ERR Background append only file rewriting already in progress\r\n" {
		t.Fatalf("BGREWRITEAOF while a snapshot runs = %q", got)
	}
	info := r.do("INFO", "persistence")
	for _, w := range []string{"rdb_bgsave_in_progress:1\r\n", "rdb_changes_since_last_save:7\r\n", "aof_enabled:1\r\n", "aof_current_size:1234\r\n", "rdb_last_save_time:1700000000\r\n"} {
		if !strings.Contains(info, w) {
			t.Errorf("INFO persistence lacks %q: %q", w, info)
		}
	}
	p.mu.Lock()
	p.inProgress, p.snapErr = false, errors.New("disk full")
	p.mu.Unlock()
	if got := r.do("SAVE"); got != "-ERR disk full\r\n" {
		t.Fatalf("failing SAVE = %q", got)
	}
}

func TestPanicRecovery(t *testing.T) {
	boom := &command.Spec{Name: "boom", Arity: 2, Handler: func(c *command.Ctx) {
		panic("secret-value-" + string(c.Args[1]))
	}}
	oob := &command.Spec{Name: "oob", Arity: 1, Handler: func(c *command.Ctx) {
		var s []int
		_ = s[len(c.Args)+3]
	}}
	e := start(t, nil, boom, oob)
	probe := e.client(t, 2, "")
	for _, args := range [][]string{{"BOOM", "k3y"}, {"OOB"}} {
		r := e.raw(t)
		r.send(cmd(args...))
		r.expectClosed()
		if err := probe.Ping(ctx).Err(); err != nil {
			t.Fatalf("server died: %v", err)
		}
	}
	logs := e.logs.String()
	if strings.Contains(logs, "k3y") || strings.Contains(logs, "secret-value") {
		t.Fatalf("log leaked content: %s", logs)
	}
	if !strings.Contains(logs, "panic=string") || !strings.Contains(logs, "index out of range") {
		t.Fatalf("panics not logged: %s", logs)
	}
}

func TestShutdownFinishesInFlight(t *testing.T) {
	started := make(chan struct{})
	slow := &command.Spec{Name: "slow", Arity: 1, Handler: func(c *command.Ctx) {
		close(started)
		time.Sleep(300 * time.Millisecond)
		c.R.SimpleString("DONE")
	}}
	e := start(t, nil, slow)
	idle := e.raw(t)
	if got := idle.do("PING"); got != "+PONG\r\n" {
		t.Fatal(got)
	}
	r := e.raw(t)
	r.send(cmd("SLOW"))
	<-started
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	begin := time.Now()
	if err := e.srv.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if time.Since(begin) < 100*time.Millisecond {
		t.Fatal("Shutdown did not wait for the in-flight command")
	}
	if got := r.read(); got != "+DONE\r\n" {
		t.Fatalf("in-flight reply = %q", got)
	}
	r.expectClosed()
	idle.expectClosed()
	if c, err := net.DialTimeout("tcp", e.addr, time.Second); err == nil {
		c.Close()
		t.Fatal("still accepting after Shutdown")
	}
}

func TestMaxClients(t *testing.T) {
	e := start(t, func(o *Options) { o.MaxClients = 2 })
	a, b := e.raw(t), e.raw(t)
	a.do("PING")
	b.do("PING")
	c := e.raw(t)
	_ = c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, _ := io.ReadAll(c.br)
	if string(got) != "-ERR max number of clients reached\r\n" {
		t.Fatalf("third client got %q", got)
	}
	a.do("QUIT")
	a.expectClosed()
	// The slot is freed once the server notices the close.
	testutil.Eventually(t, 5*time.Second, func() bool { return e.srv.Stats().ConnectedClients < 2 })
	if got := e.raw(t).do("PING"); got != "+PONG\r\n" {
		t.Fatalf("after a slot freed: %q", got)
	}
	if s := e.srv.Stats(); s.RejectedConnections != 1 || s.TotalConnections != 3 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestConcurrentClients(t *testing.T) {
	e := start(t, nil)
	c := e.client(t, 3, "")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := fmt.Sprintf("g%d-%d", g, i)
				e.set(k, "string")
				if n, err := c.Del(ctx, k).Result(); err != nil || n != 1 {
					errs <- fmt.Errorf("DEL %s = %d, %v", k, n, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	recs := e.log.records()
	sort.Strings(recs)
	if len(recs) != 1600 {
		t.Fatalf("%d records", len(recs))
	}
	if info, _ := c.Info(ctx, "stats").Result(); !strings.Contains(info, "total_commands_processed:") {
		t.Fatal(info)
	}
}

// keyspace.Value assertion for the test type.
var _ keyspace.Value = (*testValue)(nil)

// TestSilentHandlerGetsAnError: a handler that writes no reply (a bug)
// still answers, so the client and the pipeline stay in step.
func TestSilentHandlerGetsAnError(t *testing.T) {
	silent := &command.Spec{Name: "silent", Arity: 1, Flags: command.FlagFast, Handler: func(*command.Ctx) {}}
	e := start(t, nil, silent)
	r := e.raw(t)
	r.send(cmd("SILENT") + cmd("PING"))
	if got := r.read(); got != "-ERR internal error: silent produced no reply\r\n" {
		t.Fatalf("SILENT = %q", got)
	}
	if got := r.read(); got != "+PONG\r\n" {
		t.Fatalf("PING after SILENT = %q", got)
	}
}

// TestLargeRepliesFlushedInParts: a pipeline of large replies is answered
// completely and in order although it is flushed in several parts, and the
// durability wait happens before each part that follows a write.
func TestLargeRepliesFlushedInParts(t *testing.T) {
	big := strings.Repeat("x", 3<<20)
	bigCmd := &command.Spec{Name: "big", Arity: 1, Flags: command.FlagReadonly, Handler: func(c *command.Ctx) { c.R.BulkString(big) }}
	p := &fakePersist{}
	e := start(t, func(o *Options) { o.Persist = p }, bigCmd)
	e.set("a", "string")
	r := e.raw(t)
	var b strings.Builder
	b.WriteString(cmd("DEL", "a"))
	for i := 0; i < 6; i++ {
		b.WriteString(cmd("BIG"))
	}
	b.WriteString(cmd("PING"))
	r.send(b.String())
	if got := r.read(); got != ":1\r\n" {
		t.Fatalf("DEL = %q", got)
	}
	for i := 0; i < 6; i++ {
		if got := r.read(); got != "$"+strconv.Itoa(len(big))+"\r\n"+big+"\r\n" {
			t.Fatalf("BIG %d: %d bytes", i, len(got))
		}
	}
	if got := r.read(); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
	if w := p.waitCalls(); len(w) != 1 || w[0] == 0 {
		t.Fatalf("Wait calls = %v, want one wait for the DEL before the first flush", w)
	}
}

// TestInternalCommandsRefused: log-record commands ("_..." names) run only
// in recovery and the follower; a client gets "unknown command".
func TestInternalCommandsRefused(t *testing.T) {
	called := false
	internal := &command.Spec{Name: "_x.create", Arity: -1, Flags: command.FlagWrite, Handler: func(c *command.Ctx) { called = true; c.R.OK() }}
	e := start(t, nil, internal)
	r := e.raw(t)
	if got := r.do("_X.CREATE", "k"); got != "-ERR unknown command '_X.CREATE', with args beginning with: 'k' \r\n" || called {
		t.Fatalf("_X.CREATE = %q (handler called: %v)", got, called)
	}
	if got := r.do("COMMAND", "INFO", "_x.create"); got != r.do("COMMAND", "INFO", "nosuchcommand") {
		t.Fatalf("COMMAND INFO _x.create = %q", got)
	}
}
