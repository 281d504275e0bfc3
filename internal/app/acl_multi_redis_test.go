package app

import (
	"regexp"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command/commandtest"
)

// MULTI with ACL denials against redis-server 7 (issue 16): a command
// the user may not run is answered NOPERM when it is queued, flags the
// transaction and EXEC answers EXECABORT, running nothing; a queued
// command whose permission was revoked before EXEC is answered, inside
// EXEC's array, Redis's "ACLs rules changed" error while the others run;
// and ACL LOG records each denial with context "multi". Replies are
// compared byte for byte, in RESP2 and RESP3, except the NOPERM texts of
// a top-level denial, which Redis 7.2 (probly's model) words differently
// from 7.0 (normalized by noperm72).
func TestACLMultiDifferentialRedis(t *testing.T) {
	redisAddr := commandtest.StartRedis(t)
	s := runApp(t, Options{}, true)
	type step struct {
		user bool // run as u (else as the admin)
		args []string
	}
	steps := []step{
		{false, []string{"ACL", "SETUSER", "u", "reset", "on", ">p", "~a*", "+@all"}},
		{true, []string{"AUTH", "u", "p"}},
		// A denied key while queuing: EXECABORT, nothing runs.
		{true, []string{"MULTI"}},
		{true, []string{"SET", "b", "1"}},
		{true, []string{"SET", "a", "1"}},
		{true, []string{"EXEC"}},
		{false, []string{"EXISTS", "a", "b"}},
		// A denied command while queuing.
		{false, []string{"ACL", "SETUSER", "u", "-get"}},
		{true, []string{"MULTI"}},
		{true, []string{"SET", "a", "2"}},
		{true, []string{"GET", "a"}},
		{true, []string{"EXEC"}},
		{false, []string{"EXISTS", "a"}},
		// Key permission revoked between queuing and EXEC: that command
		// is refused inside EXEC, the others run.
		{false, []string{"ACL", "SETUSER", "u", "+get"}},
		{true, []string{"MULTI"}},
		{true, []string{"SET", "a1", "1"}},
		{true, []string{"SET", "a2", "1"}},
		{true, []string{"GET", "a1"}},
		{false, []string{"ACL", "SETUSER", "u", "resetkeys", "~a2"}},
		{true, []string{"EXEC"}},
		{false, []string{"EXISTS", "a1", "a2"}},
		// Command permission revoked between queuing and EXEC.
		{false, []string{"ACL", "SETUSER", "u", "allkeys"}},
		{true, []string{"MULTI"}},
		{true, []string{"SET", "c", "1"}},
		{true, []string{"INCR", "n"}},
		{false, []string{"ACL", "SETUSER", "u", "-incr"}},
		{true, []string{"EXEC"}},
		{false, []string{"EXISTS", "c", "n"}},
		// The user disabled between queuing and EXEC: the connection
		// stays authenticated, as in Redis.
		{false, []string{"ACL", "SETUSER", "u", "+incr"}},
		{true, []string{"MULTI"}},
		{true, []string{"INCR", "n"}},
		{false, []string{"ACL", "SETUSER", "u", "off"}},
		{true, []string{"EXEC"}},
		{false, []string{"GET", "n"}},
	}
	for _, proto := range []int{2, 3} {
		var logs [2]string
		var conns [2][2]*commandtest.RawClient // [server][admin, u]
		for i, addr := range []string{s.addr, redisAddr} {
			conns[i] = [2]*commandtest.RawClient{commandtest.DialRaw(t, addr, proto), commandtest.DialRaw(t, addr, proto)}
			for _, args := range [][]string{{"FLUSHALL"}, {"ACL", "DELUSER", "u"}, {"ACL", "LOG", "RESET"}} {
				if _, err := conns[i][0].Do(commandtest.Argv(args...)); err != nil {
					t.Fatal(err)
				}
			}
		}
		for n, st := range steps {
			who := 0
			if st.user {
				who = 1
			}
			var got [2]string
			for i := range conns {
				r, err := conns[i][who].Do(commandtest.Argv(st.args...))
				if err != nil {
					t.Fatalf("RESP%d step %d %q: server %d: %v", proto, n, st.args, i, err)
				}
				got[i] = r
			}
			if got[0] != noperm72(got[1]) {
				t.Errorf("RESP%d step %d %q:\n probly %q\n redis  %q", proto, n, st.args, got[0], got[1])
			}
		}
		for i := range conns {
			r, err := conns[i][0].Do(commandtest.Argv("ACL", "LOG"))
			if err != nil {
				t.Fatal(err)
			}
			logs[i] = aclLogSummary(t, r)
		}
		if logs[0] != logs[1] {
			t.Errorf("RESP%d ACL LOG (count reason context object username):\n probly %s\n redis  %s", proto, logs[0], logs[1])
		}
	}
}

// noperm72 turns Redis 7.0's NOPERM texts (the oracle installed here)
// into Redis 7.2's, which probly answers: a refused command at top level
// or queued, and the reason inside EXEC's "ACLs rules changed" error
// (7.2 words it with the same text as the top-level denial). Only the
// wording changes; which command is refused, where, must agree.
func noperm72(reply string) string {
	reply = strings.ReplaceAll(reply, "NOPERM this user has no permissions to access one of the keys used as arguments\r\n",
		"NOPERM No permissions to access a key\r\n")
	reply = strings.ReplaceAll(reply, "following reason: no permission to touch the specified keys\r\n",
		"following reason: No permissions to access a key\r\n")
	reply = noperm70Cmd.ReplaceAllString(reply, "NOPERM User u has no permissions to run the '$1' command\r\n")
	// EXEC's element for a queued command the user may no longer run:
	// 7.0 does not name the command; the only one revoked here is INCR.
	return strings.ReplaceAll(reply, "following reason: no permission to execute the command or subcommand\r\n",
		"following reason: User u has no permissions to run the 'incr' command\r\n")
}

var noperm70Cmd = regexp.MustCompile(`NOPERM this user has no permissions to run the '([a-z|]+)' command\r\n`)

// aclLogSummary lists, per ACL LOG entry, the fields that do not depend on
// the process (count, reason, context, object, username), from a RESP2
// or RESP3 reply.
func aclLogSummary(t *testing.T, reply string) string {
	t.Helper()
	var tokens []string
	lines := strings.Split(reply, "\r\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case l == "":
		case l[0] == '$' && l != "$-1":
			i++
			tokens = append(tokens, lines[i])
		case l[0] == ':' || l[0] == '+' || l[0] == ',':
			tokens = append(tokens, l[1:])
		}
	}
	var b strings.Builder
	for i := 0; i+1 < len(tokens); i++ {
		switch tokens[i] {
		case "count":
			b.WriteString("\n")
			fallthrough
		case "reason", "context", "object", "username":
			b.WriteString(tokens[i] + "=" + tokens[i+1] + " ")
			i++
		}
	}
	return b.String()
}
