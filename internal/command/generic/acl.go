package generic

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/probly/probly/internal/acl"
	"github.com/probly/probly/internal/command"
)

// ACL (Redis 7): users, their rules, the denial log and the aclfile. The
// users live in the server's acl.Registry (ACLServer); the permission
// check runs in the server before each command (internal/server).

// ACLServer is implemented by a command.Server that has ACL users.
type ACLServer interface {
	ACL() *acl.Registry
}

// registry returns the server's ACL registry, or nil (log replay, test
// harnesses without a server).
func registry(c *command.Ctx) *acl.Registry {
	if s, ok := c.Server.(ACLServer); ok {
		return s.ACL()
	}
	return nil
}

// withACL wraps an ACL subcommand handler: without a registry it answers
// an error instead.
func withACL(h func(c *command.Ctx, r *acl.Registry)) func(*command.Ctx) {
	return func(c *command.Ctx) {
		r := registry(c)
		if r == nil {
			c.R.Error("ERR ACL is not available here")
			return
		}
		h(c, r)
	}
}

func aclSetUser(c *command.Ctx, r *acl.Registry) {
	name := string(c.Args[2])
	if strings.ContainsAny(name, " \x00") {
		c.R.Error("ERR Usernames can't contain spaces or null characters")
		return
	}
	rules := make([]string, 0, len(c.Args)-3)
	for _, a := range c.Args[3:] {
		rules = append(rules, string(a))
	}
	if err := r.SetUser(name, rules); err != nil {
		c.R.Error("ERR " + err.Error())
		return
	}
	c.R.OK()
}

func aclGetUser(c *command.Ctx, r *acl.Registry) {
	in, ok := r.GetUser(string(c.Args[2]))
	if !ok {
		c.R.Null()
		return
	}
	w := c.R
	w.Map(6)
	w.BulkString("flags")
	w.Set(len(in.Flags))
	for _, f := range in.Flags {
		w.BulkString(f)
	}
	w.BulkString("passwords")
	strings1(c, in.Passwords)
	w.BulkString("commands")
	w.BulkString(in.Commands)
	w.BulkString("keys")
	w.BulkString(in.Keys)
	w.BulkString("channels")
	w.BulkString(in.Channels)
	w.BulkString("selectors")
	w.Array(0)
}

// strings1 writes list as an array of bulk strings.
func strings1(c *command.Ctx, list []string) {
	c.R.Array(len(list))
	for _, s := range list {
		c.R.BulkString(s)
	}
}

func aclDelUser(c *command.Ctx, r *acl.Registry) {
	names := make([]string, 0, len(c.Args)-2)
	for _, a := range c.Args[2:] {
		names = append(names, string(a))
	}
	n, err := r.DelUser(names)
	if err != nil {
		c.R.Error(err.Error())
		return
	}
	c.R.Int(int64(n))
}

func aclUsers(c *command.Ctx, r *acl.Registry) { strings1(c, r.Users()) }
func aclList(c *command.Ctx, r *acl.Registry)  { strings1(c, r.List()) }

func aclWhoami(c *command.Ctx) {
	if c.Conn.User == "" {
		c.R.BulkString("default")
		return
	}
	c.R.BulkString(c.Conn.User)
}

func aclCat(c *command.Ctx, r *acl.Registry) {
	if len(c.Args) == 2 {
		strings1(c, acl.Categories())
		return
	}
	if len(c.Args) > 3 {
		c.R.Error(command.ArityError("acl|cat"))
		return
	}
	cmds, ok := r.InCategory(string(c.Args[2]))
	if !ok {
		c.R.Error("ERR Unknown category '" + string(c.Args[2]) + "'")
		return
	}
	strings1(c, cmds)
}

const errGenpass = "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096"

func aclGenpass(c *command.Ctx) {
	bits := int64(256)
	switch len(c.Args) {
	case 2:
	case 3:
		n, err := strconv.ParseInt(string(c.Args[2]), 10, 64)
		if err != nil {
			c.R.Error(errNotInteger)
			return
		}
		if n <= 0 || n > 4096 {
			c.R.Error(errGenpass)
			return
		}
		bits = n
	default:
		c.R.Error(command.ArityError("acl|genpass"))
		return
	}
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	if _, err := rand.Read(buf); err != nil {
		c.R.Error("ERR " + err.Error())
		return
	}
	c.R.BulkString(hex.EncodeToString(buf)[:chars])
}

func aclLog(c *command.Ctx, r *acl.Registry) {
	n := -1
	switch len(c.Args) {
	case 2:
		n = 10
	case 3:
		if strings.EqualFold(string(c.Args[2]), "reset") {
			r.Log.Reset()
			c.R.OK()
			return
		}
		v, err := strconv.ParseInt(string(c.Args[2]), 10, 64)
		if err != nil {
			c.R.Error(errNotInteger)
			return
		}
		if v < 0 {
			c.R.Error("ERR value is out of range, must be positive")
			return
		}
		n = int(min(v, 1<<20))
	default:
		c.R.Error(errSyntax)
		return
	}
	entries := r.Log.Entries(n)
	now := time.Now()
	w := c.R
	w.Array(len(entries))
	for _, e := range entries {
		w.Map(10)
		w.BulkString("count")
		w.Int(e.Count)
		w.BulkString("reason")
		w.BulkString(e.Reason)
		w.BulkString("context")
		w.BulkString(e.Context)
		w.BulkString("object")
		w.BulkString(e.Object)
		w.BulkString("username")
		w.BulkString(e.Username)
		w.BulkString("age-seconds")
		w.Double(float64(now.Sub(e.Created).Milliseconds()) / 1000)
		w.BulkString("client-info")
		w.BulkString(e.ClientInfo)
		w.BulkString("entry-id")
		w.Int(e.ID)
		w.BulkString("timestamp-created")
		w.Int(e.Created.UnixMilli())
		w.BulkString("timestamp-last-updated")
		w.Int(e.Updated.UnixMilli())
	}
}

func aclSave(c *command.Ctx, r *acl.Registry) {
	if err := r.Save(); err != nil {
		if errors.Is(err, acl.ErrNoFile) {
			c.R.Error(err.Error())
			return
		}
		c.R.Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	c.R.OK()
}

func aclLoad(c *command.Ctx, r *acl.Registry) {
	if err := r.Load(); err != nil {
		var fe *acl.FileError
		switch {
		case errors.Is(err, acl.ErrNoFile):
			c.R.Error(err.Error())
		case errors.As(err, &fe):
			c.R.Error("ERR " + fe.Text)
		default:
			c.R.Error("ERR Error loading ACLs, opening file '" + r.File() + "': " + strings.TrimPrefix(err.Error(), acl.ErrFile.Error()+": "))
		}
		return
	}
	c.R.OK()
}

// aclDryRun answers whether a user may run a command, without running it.
func aclDryRun(c *command.Ctx, r *acl.Registry) {
	name := string(c.Args[2])
	u := r.Lookup(name)
	if u == nil {
		c.R.Error("ERR User '" + name + "' not found")
		return
	}
	args := c.Args[3:]
	spec := c.Server.Table().Lookup(args[0])
	if spec == nil || command.IsInternal(args[0]) {
		c.R.Error("ERR Command '" + string(args[0]) + "' not found")
		return
	}
	if len(spec.Subcommands) > 0 && len(args) >= 2 {
		if sub := spec.Sub(args[1]); sub != nil {
			spec = sub
		}
	}
	if !command.CheckArity(spec.Arity, len(args)) {
		c.R.Error(command.ArityError(spec.Name))
		return
	}
	if d, i := u.Check(spec, args); d != acl.Allowed {
		c.R.BulkString(acl.DryRunMessage(d, name, spec, args[i]))
		return
	}
	c.R.OK()
}

var aclHelp = []string{
	"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CAT [<category>]",
	"    List all commands that belong to <category>, or all command categories",
	"    when no category is specified.",
	"DELUSER <username> [<username> ...]",
	"    Delete a list of users.",
	"DRYRUN <username> <command> [<arg> ...]",
	"    Returns whether the user can execute the given command without executing the command.",
	"GETUSER <username>",
	"    Get the user's details.",
	"GENPASS [<bits>]",
	"    Generate a secure 256-bit user password. The optional `bits` argument can",
	"    be used to specify a different size.",
	"LIST",
	"    Show users details in config file format.",
	"LOAD",
	"    Reload users from the ACL file.",
	"LOG [<count> | RESET]",
	"    Show the ACL log entries.",
	"SAVE",
	"    Save the current config to the ACL file.",
	"SETUSER <username> <attribute> [<attribute> ...]",
	"    Create or modify a user with the specified attributes.",
	"USERS",
	"    List all the registered usernames.",
	"WHOAMI",
	"    Return the current connection username.",
	"HELP",
	"    Prints this help.",
}

// aclSpecs declares ACL and its subcommands as Redis 7 does.
func aclSpecs() []*command.Spec {
	const (
		admin    = command.FlagAdmin
		noscript = command.FlagNoScript
		load     = command.FlagLoading
		stale    = command.FlagStale
		adm      = admin | noscript | load | stale
		plain    = noscript | load | stale
	)
	sub := func(name string, arity int, fl command.Flags, h func(*command.Ctx), doc command.Doc) *command.Spec {
		return &command.Spec{Name: "acl|" + name, Arity: arity, Flags: fl, Handler: h, Doc: doc}
	}
	str := func(name string, fl command.ArgFlags) command.Arg {
		return command.Arg{Name: name, Type: command.ArgString, Flags: fl}
	}
	users := "O(N). Where N is the number of configured users."
	return []*command.Spec{{Name: "acl", Arity: -2,
		Doc: command.Doc{Summary: "A container for Access List Control commands ", Since: "6.0.0", Group: command.GroupServer,
			Complexity: "Depends on subcommand."},
		Subcommands: []*command.Spec{
			sub("cat", -2, plain, withACL(aclCat), command.Doc{Summary: "List the ACL categories or the commands inside a category", Since: "6.0.0", Group: command.GroupServer,
				Complexity: "O(1) since the categories and commands are a fixed set.", Args: []command.Arg{str("categoryname", command.ArgOptional)}}),
			sub("deluser", -3, adm, withACL(aclDelUser), command.Doc{Summary: "Remove the specified ACL users and the associated rules", Since: "6.0.0", Group: command.GroupServer,
				Complexity: "O(1) amortized time considering the typical user.", Args: []command.Arg{str("username", command.ArgMultiple)}}),
			sub("dryrun", -4, adm, withACL(aclDryRun), command.Doc{Summary: "Returns whether the user can execute the given command without executing the command.", Since: "7.0.0", Group: command.GroupServer,
				Complexity: "O(1).", Args: []command.Arg{str("username", 0), str("command", 0), str("arg", command.ArgOptional|command.ArgMultiple)}}),
			sub("genpass", -2, plain, aclGenpass, command.Doc{Summary: "Generate a pseudorandom secure password to use for ACL users", Since: "6.0.0", Group: command.GroupServer,
				Complexity: "O(1)", Args: []command.Arg{{Name: "bits", Type: command.ArgInteger, Flags: command.ArgOptional}}}),
			sub("getuser", 3, adm, withACL(aclGetUser), command.Doc{Summary: "Get the rules for a specific ACL user", Since: "6.0.0", Group: command.GroupServer,
				Complexity: "O(N). Where N is the number of password, command and pattern rules that the user has.",
				History: []command.History{{Version: "6.2.0", Change: "Added Pub/Sub channel patterns."},
					{Version: "7.0.0", Change: "Added selectors and changed the format of key and channel patterns from a list to their rule representation."}},
				Args: []command.Arg{str("username", 0)}}),
			{Name: "acl|help", Arity: 2, Flags: load | stale, Handler: help(aclHelp),
				Doc: command.Doc{Summary: "Show helpful text about the different subcommands", Since: "6.0.0", Group: command.GroupServer, Complexity: "O(1)"}},
			sub("list", 2, adm, withACL(aclList), command.Doc{Summary: "List the current ACL rules in ACL config file format", Since: "6.0.0", Group: command.GroupServer, Complexity: users}),
			sub("load", 2, adm, withACL(aclLoad), command.Doc{Summary: "Reload the ACLs from the configured ACL file", Since: "6.0.0", Group: command.GroupServer, Complexity: users}),
			sub("log", -2, adm, withACL(aclLog), command.Doc{Summary: "List latest events denied because of ACLs in place", Since: "6.0.0", Group: command.GroupServer,
				Complexity: "O(N) with N being the number of entries shown.",
				Args: []command.Arg{{Name: "operation", Type: command.ArgOneOf, Flags: command.ArgOptional, Args: []command.Arg{
					{Name: "count", Type: command.ArgInteger}, {Name: "reset", Type: command.ArgPureToken, Token: "RESET"}}}}}),
			sub("save", 2, adm, withACL(aclSave), command.Doc{Summary: "Save the current ACL rules in the configured ACL file", Since: "6.0.0", Group: command.GroupServer, Complexity: users}),
			sub("setuser", -3, adm, withACL(aclSetUser), command.Doc{Summary: "Modify or create the rules for a specific ACL user", Since: "6.0.0", Group: command.GroupServer,
				Complexity: "O(N). Where N is the number of rules provided.",
				History:    []command.History{{Version: "6.2.0", Change: "Added Pub/Sub channel patterns."}, {Version: "7.0.0", Change: "Added selectors and key based permissions."}},
				Args:       []command.Arg{str("username", 0), str("rule", command.ArgOptional|command.ArgMultiple)}}),
			sub("users", 2, adm, withACL(aclUsers), command.Doc{Summary: "List the username of all the configured ACL rules", Since: "6.0.0", Group: command.GroupServer, Complexity: users}),
			sub("whoami", 2, plain, aclWhoami, command.Doc{Summary: "Return the name of the user associated to the current connection", Since: "6.0.0", Group: command.GroupServer, Complexity: "O(1)"}),
		}}}
}
