package server

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/probly/probly/internal/acl"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
)

// ACL: the server keeps the users (acl.Registry, created in New with the
// default user that requirepass configures) and checks every client
// command against its connection's user in admit, the one admission
// point, after NOAUTH: a denied command is answered Redis 7.2's NOPERM
// error and does not run; inside MULTI it is refused when queued, so
// EXEC answers EXECABORT. Every denial and failed AUTH goes to the ACL
// LOG, to the acl-denial counters of Stats (metrics) and to the debug
// log, which names the user, the command and the reason but never a key
// (nor, for a failed AUTH, the user name the client sent).

// ACL returns the server's users (ACL commands; generic.ACLServer).
func (s *Server) ACL() *acl.Registry { return s.acl }

// aclStats counts denials by reason.
type aclStats struct{ command, key, auth atomic.Uint64 }

// initACL loads the aclfile, if any, once CONFIG requirepass configured
// the default user: the file's users, default included, win over
// requirepass, as in Redis, where the file is loaded last.
func (s *Server) initACL(opts Options) error {
	if opts.ACLFile != "" {
		s.acl.SetFile(opts.ACLFile)
		if err := s.acl.Load(); err != nil {
			return fmt.Errorf("server: aclfile: %w", err)
		}
	}
	return nil
}

// requirePassParam is CONFIG requirepass: setting it gives the default
// user that one password ("" = nopass), as Redis does.
func (s *Server) requirePassParam(initial string) config.Param {
	return config.Param{Name: "requirepass", Default: initial, Set: func(v string) error {
		s.passMu.Lock()
		s.pass = v
		s.passMu.Unlock()
		if s.acl != nil {
			s.acl.SetRequirePass(v)
		}
		return nil
	}}
}

// RequirePass returns "" when the default user accepts any password
// (nopass: no AUTH needed), else the password requirepass set (or
// "(acl)" when the default user's passwords were set by ACL rules only).
func (s *Server) RequirePass() string {
	if d := s.acl.Default(); d == nil || d.NoPass() {
		return ""
	}
	s.passMu.Lock()
	defer s.passMu.Unlock()
	if s.pass == "" {
		return "(acl)"
	}
	return s.pass
}

// authedAtStart reports whether a new connection starts authenticated:
// the default user is on and nopass (Redis's clientSetDefaultAuth).
func (s *Server) authedAtStart() bool {
	d := s.acl.Default()
	return d != nil && d.Enabled() && d.NoPass()
}

// login is the connection's command.Conn.Login.
func (c *client) login(user, pass string) bool {
	u, ok := c.s.acl.Authenticate(user, pass)
	if !ok {
		c.s.aclStats.auth.Add(1)
		c.s.acl.Log.Add("auth", c.aclContext(), "AUTH", user, c.aclClientInfo([][]byte{[]byte("auth")}), time.Now())
		// Not the user name: a client may have sent anything there.
		c.s.log.Debug("ACL: authentication failed", "conn_id", c.conn.ID)
		return false
	}
	c.user, c.userName = u, u.Name()
	c.conn.User, c.conn.Authed = u.Name(), true
	return true
}

// aclUser returns the connection's user, following Conn.User (AUTH,
// RESET), or nil when the user was deleted.
func (c *client) aclUser() *acl.User {
	name := c.conn.User
	if name == "" {
		name = "default"
	}
	if c.user == nil || c.userName != name {
		c.user, c.userName = c.s.acl.Lookup(name), name
	}
	if c.user == nil || c.user.Deleted() {
		return nil
	}
	return c.user
}

// aclDenied checks spec with args against the connection's user and
// returns the error reply for a denial ("" = allowed). A connection
// whose user was deleted is closed without a reply, as Redis closes it
// at ACL DELUSER.
func (c *client) aclDenied(spec *command.Spec, args [][]byte) string {
	u := c.aclUser()
	if u == nil {
		// Redis kills the connection at DELUSER: nothing more of it runs
		// or is answered.
		c.abort, c.conn.Close = true, true
		return "ERR the user of this connection was deleted"
	}
	d, i := u.Check(spec, args)
	if d == acl.Allowed {
		return ""
	}
	object := spec.Name
	if d == acl.DeniedKey {
		c.s.aclStats.key.Add(1)
		object = string(args[i])
	} else {
		c.s.aclStats.command.Add(1)
	}
	c.s.acl.Log.Add(d.Reason(), c.aclContext(), object, u.Name(), c.aclClientInfo(args), time.Now())
	c.s.log.Debug("ACL: command denied", "conn_id", c.conn.ID, "user", u.Name(), "command", spec.Name, "reason", d.Reason())
	return acl.DenialMessage(d, u.Name(), spec)
}

func (c *client) aclContext() string {
	if c.tx.multi {
		return "multi"
	}
	return "toplevel"
}

// aclClientInfo is the ACL LOG's client-info: the connection's CLIENT
// LIST line (every field, as Redis; redis-py parses them all) for the
// command args being refused.
func (c *client) aclClientInfo(args [][]byte) string {
	return strings.TrimSuffix(c.line(args), "\n")
}

// execACL re-checks each queued command when EXEC runs it, as Redis
// does: the user's rules may have changed since it was queued. A denied
// command does not run; its element of EXEC's reply is Redis's error.
type execACL struct{ c *client }

func (e execACL) Admit(ctx *command.Ctx, spec *command.Spec) string {
	msg := e.c.aclDenied(spec, ctx.Args)
	if msg == "" || e.c.conn.Close {
		return msg
	}
	return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. " +
		"This command is no longer allowed for the following reason: " + strings.TrimPrefix(msg, "NOPERM ")
}

// infoACLStats writes Redis 7.2's INFO stats ACL counters from st (the
// counters since CONFIG RESETSTAT, which resets them as Redis does).
func infoACLStats(b *infoBuf, st Stats) {
	b.kv("acl_access_denied_auth", st.ACLDeniedAuth)
	b.kv("acl_access_denied_cmd", st.ACLDeniedCommands)
	b.kv("acl_access_denied_key", st.ACLDeniedKeys)
	b.kv("acl_access_denied_channel", 0)
}
