// Package generic implements the Redis core commands probly needs so that
// unmodified Redis clients (redis-cli, go-redis, redis-py, node-redis) work:
// connection commands (PING, ECHO, HELLO, AUTH, QUIT, SELECT, CLIENT),
// introspection (COMMAND, INFO, CONFIG, MEMORY USAGE, MODULE LIST, TIME),
// key-space commands (DBSIZE, DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN,
// FLUSHALL, FLUSHDB), key expiry (EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT,
// TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST; expire.go) and persistence
// commands (SAVE, BGSAVE, LASTSAVE).
//
// Replies and error strings follow Redis 7 byte for byte where clients can
// observe them; see /work/shared/spec/redis-compat.md and DESIGN.md
// ("Server"). There is a single database (SELECT 0 only).
//
// Mutations (DEL, UNLINK, FLUSHALL, FLUSHDB) log their records through the
// key space and set Ctx.Seq so the server waits for durability before
// replying. Each deleted key is logged as "DEL key" under that key's lock.
package generic

import (
	"crypto/subtle"
	"strconv"
	"strings"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/resp"
)

// Error strings shared by several commands (Redis shared.* objects).
const (
	errSyntax     = "ERR syntax error"
	errNotInteger = "ERR value is not an integer or out of range"
)

// Register adds the generic commands to t. cfg is the registry CONFIG
// GET/SET operate on at run time (handlers use Ctx.Config); Register itself
// adds no parameters, and cfg may be nil.
func Register(t *command.Table, cfg *config.Registry) {
	_ = cfg
	t.Add(specs()...)
	t.Add(opsSpecs()...)
	t.Add(keySpecs()...)
	t.Add(txSpecs()...)
	t.Add(expireSpecs()...)
	t.Add(aclSpecs()...)
}

// lower returns b lowercased as a string (option keywords).
func lower(b []byte) string { return strings.ToLower(string(b)) }

// verbatim writes a RESP3 verbatim string ("=", format "txt") or, in RESP2,
// a bulk string, as Redis does for INFO and CLIENT INFO.
func verbatim(r *resp.Reply, s string) { r.Verbatim(s) }

// help returns a handler answering a container's HELP subcommand.
func help(lines []string) func(*command.Ctx) {
	return func(c *command.Ctx) {
		c.R.Array(len(lines))
		for _, l := range lines {
			c.R.SimpleString(l)
		}
	}
}

// --- connection commands ---

func ping(c *command.Ctx) {
	switch len(c.Args) {
	case 1:
		c.R.SimpleString("PONG")
	case 2:
		c.R.Bulk(c.Args[1])
	default:
		c.R.Error(command.ArityError("ping"))
	}
}

func echo(c *command.Ctx) { c.R.Bulk(c.Args[1]) }

// checkPass reports whether user/pass authenticate the default user.
func checkPass(required, user, pass string) bool {
	if user != "default" {
		return false
	}
	if required == "" { // nopass: any password works
		return true
	}
	return subtle.ConstantTimeCompare([]byte(required), []byte(pass)) == 1
}

const (
	errWrongPass = "WRONGPASS invalid username-password pair or user is disabled."
	errNoPass    = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
)

// login authenticates the connection as user: through the server's ACL
// (Conn.Login) when there is one, else against requirepass.
func login(c *command.Ctx, required, user, pass string) bool {
	if c.Conn.Login != nil {
		return c.Conn.Login(user, pass)
	}
	if !checkPass(required, user, pass) {
		return false
	}
	c.Conn.Authed, c.Conn.User = true, user
	return true
}

func auth(c *command.Ctx) {
	required := c.Server.RequirePass()
	var user, pass string
	switch len(c.Args) {
	case 2:
		if required == "" {
			c.R.Error(errNoPass)
			return
		}
		user, pass = "default", string(c.Args[1])
	case 3:
		user, pass = string(c.Args[1]), string(c.Args[2])
	default:
		c.R.Error(errSyntax)
		return
	}
	if !login(c, required, user, pass) {
		c.R.Error(errWrongPass)
		return
	}
	c.R.OK()
}

func hello(c *command.Ctx) {
	ver := int64(0)
	next := 1
	if len(c.Args) >= 2 {
		v, err := strconv.ParseInt(string(c.Args[1]), 10, 64)
		if err != nil {
			c.R.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			c.R.Error("NOPROTO unsupported protocol version")
			return
		}
		ver, next = v, 2
	}
	var user, pass, name []byte
	haveAuth, haveName := false, false
	for j := next; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch opt := lower(c.Args[j]); {
		case opt == "auth" && more >= 2:
			user, pass, haveAuth = c.Args[j+1], c.Args[j+2], true
			j += 2
		case opt == "setname" && more >= 1:
			name, haveName = c.Args[j+1], true
			j++
		default:
			c.R.Error("ERR Syntax error in HELLO option '" + string(c.Args[j]) + "'")
			return
		}
	}
	if haveAuth {
		if !login(c, c.Server.RequirePass(), string(user), string(pass)) {
			c.R.Error(errWrongPass)
			return
		}
	}
	if !c.Conn.Authed {
		c.R.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if haveName {
		if !validAttr(name) {
			c.R.Error(errBadName)
			return
		}
		c.Conn.Name = string(name)
	}
	if ver != 0 {
		c.Conn.Proto = int(ver)
		c.R.Proto = int(ver)
	}
	r := c.R
	r.Map(7)
	r.BulkString("server")
	r.BulkString("redis")
	r.BulkString("version")
	r.BulkString(command.RedisVersion)
	r.BulkString("proto")
	r.Int(int64(c.Conn.Proto))
	r.BulkString("id")
	r.Int(c.Conn.ID)
	r.BulkString("mode")
	r.BulkString("standalone")
	r.BulkString("role")
	r.BulkString("master")
	r.BulkString("modules")
	writeModules(r)
}

// writeModules writes the loaded-module list (HELLO, MODULE LIST).
func writeModules(r *resp.Reply) {
	r.Array(1)
	r.Map(4)
	r.BulkString("name")
	r.BulkString(command.ModuleName)
	r.BulkString("ver")
	r.Int(command.ModuleVersion)
	r.BulkString("path")
	r.BulkString("")
	r.BulkString("args")
	r.Array(0)
}

func moduleList(c *command.Ctx) { writeModules(c.R) }

func quit(c *command.Ctx) {
	c.R.OK()
	c.Conn.Close = true
}

func selectDB(c *command.Ctx) {
	n, err := strconv.ParseInt(string(c.Args[1]), 10, 32)
	if err != nil {
		c.R.Error(errNotInteger)
		return
	}
	if n != 0 {
		c.R.Error("ERR DB index is out of range")
		return
	}
	c.R.OK()
}

// --- CLIENT ---

const errBadName = "ERR Client names cannot contain spaces, newlines or special characters."

// validAttr is Redis's validateClientAttr: printable ASCII without spaces.
func validAttr(b []byte) bool {
	for _, x := range b {
		if x < '!' || x > '~' {
			return false
		}
	}
	return true
}

func clientID(c *command.Ctx) { c.R.Int(c.Conn.ID) }

func clientSetName(c *command.Ctx) {
	if !validAttr(c.Args[2]) {
		c.R.Error(errBadName)
		return
	}
	c.Conn.Name = string(c.Args[2])
	c.R.OK()
}

func clientGetName(c *command.Ctx) {
	if c.Conn.Name == "" {
		c.R.Null()
		return
	}
	c.R.BulkString(c.Conn.Name)
}

func clientSetInfo(c *command.Ctx) {
	attr := string(c.Args[2])
	var dst *string
	switch strings.ToLower(attr) {
	case "lib-name":
		dst = &c.Conn.LibName
	case "lib-ver":
		dst = &c.Conn.LibVer
	default:
		c.R.Error("ERR Unrecognized option '" + attr + "'")
		return
	}
	if !validAttr(c.Args[3]) {
		c.R.Error("ERR " + attr + " cannot contain spaces, newlines or special characters.")
		return
	}
	*dst = string(c.Args[3])
	c.R.OK()
}

// onOff accepts CLIENT NO-EVICT|NO-TOUCH ON|OFF (no effect in probly).
func onOff(c *command.Ctx) {
	switch lower(c.Args[2]) {
	case "on", "off":
		c.R.OK()
	default:
		c.R.Error(errSyntax)
	}
}

var clientHelp = []string{
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ID <client-id>",
	"      Kill connections by client id.",
	"    * ADDR <ip:port>",
	"      Kill connections made from the specified address",
	"    * LADDR <ip:port>",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"    * ID <client-id> [<client-id> ...]",
	"      Return clients of the specified ids.",
	"UNPAUSE",
	"    Stop the current client pause, resuming traffic.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Suspend all, or just write, clients for <timeout> milliseconds.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"SETINFO <option> <value>",
	"    Set client meta attr. Options are:",
	"    * LIB-NAME: the client lib name.",
	"    * LIB-VER: the client lib version.",
	"NO-EVICT (ON|OFF)",
	"    Accepted; has no effect.",
	"NO-TOUCH (ON|OFF)",
	"    Accepted; has no effect.",
	"HELP",
	"    Print this help.",
}
