package app

import (
	"bufio"
	"slices"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command/commandtest"
)

// ACL replies against redis-server 7 (issue 16.1): SETUSER (including
// its errors), GETUSER, LIST, CAT and WHOAMI, byte for byte, in RESP2 and
// RESP3. The rule sets are chosen so that Redis's description needs at
// most one single-command rule after the categories: Redis writes those
// in its hash table's order, which differs between processes.
func TestACLDifferentialRedis(t *testing.T) {
	addr := commandtest.StartRedis(t)
	s := runApp(t, Options{}, true)
	rules := [][]string{
		{"on", ">pw", "~t1:*", "+@string", "-set"},
		{"on", ">pw", "%R~r:*", "%W~w:*", "~t2:*", "&ch", "+@all", "-@dangerous", "+client|id", "-flushall"},
		{"reset", "+get", "+set", "-get"},
		{"reset", "+@string", "-get", "+get"},
		{"reset", "+@all", "-flushall"},
		{"reset", "+client|id", "+client"},
		{"reset", "+client", "+client|id", "-client|setname"},
		{"reset", "+@read", "-@read"},
		{"reset", "+get", "+@read"},
		{"reset", "+@all", "+get"},
		{"reset", "nocommands", "+config|get", "-config|get"},
		{"reset", "+@hyperloglog", "-pfadd", "+pfadd"},
		{"reset", "+GET", "+@STRING", "~A", "%R~A", "%W~b"},
		{"reset", "+@all", "-get", "-get", "allkeys", "allchannels"},
		{"reset", "on", "nopass", "skip-sanitize-payload", "+@keyspace"},
		{"reset", "#5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8", ">x", "<x"},
		{"reset", "+@connection", "+@transaction"},
		{"reset", "+@fast"},
		{"reset", "+@slow"},
		{"reset", "+@write", "+@read"},
		{"reset", "+@admin"},
		{"reset", "+get|x", "+get|y"},
		{"bogus"}, {"+nosuch"}, {"+@nosuch"}, {"#abc"}, {"+client|nosuch"}, {"%X~a"}, {"allkeys", "~a"},
		{"<nosuch"}, {"allchannels", "&x"}, {"-get|x"},
	}
	// known reports whether redis-server has the command or subcommand
	// (module commands and Redis 7.2's subcommands are probly's only).
	info := commandtest.DialRaw(t, addr, 2)
	known := func(name string) bool {
		r, err := info.Do(commandtest.Argv("COMMAND", "INFO", name))
		if err != nil {
			t.Fatal(err)
		}
		return r != "*1\r\n$-1\r\n" && r != "*1\r\n*-1\r\n"
	}
	for _, proto := range []int{2, 3} {
		rc := commandtest.DialRaw(t, addr, proto)
		pc := commandtest.DialRaw(t, s.addr, proto)
		both := func(args ...string) {
			t.Helper()
			want, err := rc.Do(commandtest.Argv(args...))
			if err != nil {
				t.Fatal(err)
			}
			got, err := pc.Do(commandtest.Argv(args...))
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("RESP%d %q:\n probly %q\n redis  %q", proto, strings.Join(args, " "), got, want)
			}
		}
		for i, r := range rules {
			name := "u" + string(rune('a'+i%26)) + string(rune('a'+i/26))
			both(append([]string{"ACL", "SETUSER", name}, r...)...)
			both("ACL", "GETUSER", name)
		}
		both("ACL", "LIST")
		both("ACL", "GETUSER", "default")
		both("ACL", "DRYRUN", "default", "get")
		both("ACL", "SETUSER", "a b")
		both("CONFIG", "GET", "acllog-max-len")
		both("CONFIG", "SET", "acllog-max-len", "-1")
		both("ACL", "USERS")
		both("ACL", "WHOAMI")
		both("ACL", "GETUSER", "nosuch")
		both("ACL", "DELUSER", "default")
		// ACL CAT: Redis 7.0's 21 categories, then RedisBloom's (which a
		// Redis 7.4 with RedisBloom 8 adds); a category's commands are
		// in Redis's hash order, so they are compared as sets, over the
		// commands probly has.
		want, _ := rc.Do(commandtest.Argv("ACL", "CAT"))
		got, _ := pc.Do(commandtest.Argv("ACL", "CAT"))
		wantCats, gotCats := elements(t, want), elements(t, got)
		if len(wantCats) != 21 || !slices.Equal(gotCats[:21], wantCats) ||
			!slices.Equal(gotCats[21:], []string{"bloom", "cuckoo", "topk", "cms", "tdigest"}) {
			t.Errorf("ACL CAT:\n probly %q\n redis  %q", gotCats, wantCats)
		}
		both("ACL", "CAT", "nosuch")
		tab, _ := Tables()
		for _, cat := range wantCats {
			want, _ := rc.Do(commandtest.Argv("ACL", "CAT", cat))
			got, _ := pc.Do(commandtest.Argv("ACL", "CAT", cat))
			var wantHere []string
			for _, name := range elements(t, want) {
				base, sub, isSub := strings.Cut(name, "|")
				if s := tab.Lookup([]byte(base)); s != nil && (!isSub || s.Sub([]byte(sub)) != nil) {
					wantHere = append(wantHere, name)
				}
			}
			var g []string
			for _, name := range elements(t, got) {
				if known(name) {
					g = append(g, name)
				}
			}
			slices.Sort(g)
			slices.Sort(wantHere)
			if !slices.Equal(g, wantHere) {
				t.Errorf("RESP%d ACL CAT %s:\n probly %q\n redis  %q", proto, cat, g, wantHere)
			}
		}
		both("ACL", "GENPASS", "0")
		both("ACL", "GENPASS", "4097")
		both("ACL", "DRYRUN", "nosuch", "get", "x")
		both("ACL", "DELUSER", "ua", "nosuch")

		// Key permissions, through ACL DRYRUN: allowed or not must agree
		// (Redis 7.0 words a denial "This user has…", 7.2 "User ro has…").
		both("ACL", "SETUSER", "ro", "reset", "on", "%R~r:*", "%W~w:*", "~rw:*", "+@all")
		for _, cmd := range []string{"GET r:1", "GET w:1", "SET w:1 x", "SET r:1 x", "SET w:1 x GET", "SET rw:1 x GET",
			"APPEND w:1 x", "APPEND r:1 x", "GETDEL w:1", "GETDEL rw:1", "EXISTS w:1", "EXISTS x", "COPY r:1 w:2",
			"COPY w:1 r:2", "MGET r:1 r:2 x", "DEL r:1", "DEL w:1", "RENAME w:1 w:2", "RENAME rw:1 w:2", "PFADD w:1 a",
			"PFCOUNT r:1 w:1", "PFMERGE w:1 r:2", "EXPIRE w:1 10", "TTL w:1", "TYPE w:1", "KEYS *", "SCAN 0", "FLUSHALL",
			"INCR w:1", "GETRANGE w:1 0 1", "SETRANGE w:1 0 x", "STRLEN w:1", "TOUCH w:1", "DUMP w:1", "RESTORE w:1 0 x"} {
			args := append([]string{"ACL", "DRYRUN", "ro"}, strings.Fields(cmd)...)
			want, _ := rc.Do(commandtest.Argv(args...))
			got, _ := pc.Do(commandtest.Argv(args...))
			if (want == "+OK\r\n") != (got == "+OK\r\n") {
				t.Errorf("RESP%d ACL DRYRUN ro %s:\n probly %q\n redis  %q", proto, cmd, got, want)
			}
		}
	}
}

// elements returns the bulk strings of a flat array reply.
func elements(t *testing.T, reply string) []string {
	t.Helper()
	br := bufio.NewReader(strings.NewReader(reply))
	head, _ := br.ReadString('\n')
	if len(head) < 3 || head[0] != '*' {
		t.Fatalf("not an array: %q", reply)
	}
	var out []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return out
		}
		if line[0] == '$' {
			v, _ := br.ReadString('\n')
			out = append(out, strings.TrimSuffix(v, "\r\n"))
		}
	}
}
