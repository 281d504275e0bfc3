package generic

import (
	"sort"
	"strings"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/resp"
)

// doc is COMMAND DOCS metadata for a generic command.
type doc struct {
	summary, since, group string
	acl                   []string
}

var docs = map[string]doc{
	"ping":             {"Returns the server's liveliness response.", "1.0.0", "connection", []string{"@fast", "@connection"}},
	"echo":             {"Returns the given string.", "1.0.0", "connection", []string{"@fast", "@connection"}},
	"hello":            {"Handshakes with the server, optionally switching the protocol and authenticating.", "6.0.0", "connection", []string{"@fast", "@connection"}},
	"auth":             {"Authenticates the connection.", "1.0.0", "connection", []string{"@fast", "@connection"}},
	"quit":             {"Closes the connection.", "1.0.0", "connection", []string{"@fast", "@connection"}},
	"select":           {"Changes the selected database (only 0 exists).", "1.0.0", "connection", []string{"@fast", "@connection"}},
	"client":           {"A container for client connection commands.", "2.4.0", "connection", []string{"@slow"}},
	"client|id":        {"Returns the unique client ID of the connection.", "5.0.0", "connection", []string{"@slow", "@connection"}},
	"client|setname":   {"Sets the connection name.", "2.6.9", "connection", []string{"@slow", "@connection"}},
	"client|getname":   {"Returns the name of the connection.", "2.6.9", "connection", []string{"@slow", "@connection"}},
	"client|setinfo":   {"Sets information specific to the client library.", "7.2.0", "connection", []string{"@slow", "@connection"}},
	"client|info":      {"Returns information about the connection.", "6.2.0", "connection", []string{"@slow", "@connection"}},
	"client|no-evict":  {"Accepted for compatibility; no effect.", "7.0.0", "connection", []string{"@admin", "@slow", "@dangerous", "@connection"}},
	"client|no-touch":  {"Accepted for compatibility; no effect.", "7.2.0", "connection", []string{"@slow", "@connection"}},
	"client|help":      {"Returns helpful text about the different subcommands.", "5.0.0", "connection", []string{"@slow", "@connection"}},
	"command":          {"Returns detailed information about all commands.", "2.8.13", "server", []string{"@slow", "@connection"}},
	"command|count":    {"Returns a count of commands.", "2.8.13", "server", []string{"@slow", "@connection"}},
	"command|docs":     {"Returns documentary information about one, multiple or all commands.", "7.0.0", "server", []string{"@slow", "@connection"}},
	"command|info":     {"Returns information about one, multiple or all commands.", "2.8.13", "server", []string{"@slow", "@connection"}},
	"command|list":     {"Returns a list of command names.", "7.0.0", "server", []string{"@slow", "@connection"}},
	"command|help":     {"Returns helpful text about the different subcommands.", "5.0.0", "server", []string{"@slow", "@connection"}},
	"info":             {"Returns information and statistics about the server.", "1.0.0", "server", []string{"@slow", "@dangerous"}},
	"config":           {"A container for server configuration commands.", "2.0.0", "server", []string{"@slow"}},
	"config|get":       {"Returns the effective values of configuration parameters.", "2.0.0", "server", []string{"@admin", "@slow", "@dangerous"}},
	"config|set":       {"Sets configuration parameters in-flight.", "2.0.0", "server", []string{"@admin", "@slow", "@dangerous"}},
	"config|resetstat": {"Resets the server's statistics.", "2.0.0", "server", []string{"@admin", "@slow", "@dangerous"}},
	"config|help":      {"Returns helpful text about the different subcommands.", "5.0.0", "server", []string{"@slow"}},
	"memory":           {"A container for memory diagnostics commands.", "4.0.0", "server", []string{"@slow"}},
	"memory|usage":     {"Estimates the memory usage of a key.", "4.0.0", "server", []string{"@read", "@slow"}},
	"memory|help":      {"Returns helpful text about the different subcommands.", "4.0.0", "server", []string{"@slow"}},
	"module":           {"A container for module commands.", "4.0.0", "server", []string{"@slow"}},
	"module|list":      {"Returns all loaded modules.", "4.0.0", "server", []string{"@admin", "@slow", "@dangerous"}},
	"module|help":      {"Returns helpful text about the different subcommands.", "5.0.0", "server", []string{"@slow"}},
	"time":             {"Returns the server time.", "2.6.0", "server", []string{"@fast"}},
	"dbsize":           {"Returns the number of keys in the database.", "1.0.0", "server", []string{"@keyspace", "@read", "@fast"}},
	"del":              {"Deletes one or more keys.", "1.0.0", "generic", []string{"@keyspace", "@write", "@slow"}},
	"unlink":           {"Deletes one or more keys.", "4.0.0", "generic", []string{"@keyspace", "@write", "@fast"}},
	"exists":           {"Determines whether one or more keys exist.", "1.0.0", "generic", []string{"@keyspace", "@read", "@fast"}},
	"type":             {"Determines the type of value stored at a key.", "1.0.0", "generic", []string{"@keyspace", "@read", "@fast"}},
	"keys":             {"Returns all key names that match a pattern.", "1.0.0", "generic", []string{"@keyspace", "@read", "@slow", "@dangerous"}},
	"scan":             {"Iterates over the key names in the database.", "2.8.0", "generic", []string{"@keyspace", "@read", "@slow"}},
	"flushall":         {"Removes all keys from all databases.", "1.0.0", "server", []string{"@keyspace", "@write", "@slow", "@dangerous"}},
	"flushdb":          {"Removes all keys from the current database.", "1.0.0", "server", []string{"@keyspace", "@write", "@slow", "@dangerous"}},
	"save":             {"Synchronously saves the database to disk.", "1.0.0", "server", []string{"@admin", "@slow", "@dangerous"}},
	"bgsave":           {"Asynchronously saves the database to disk.", "1.0.0", "server", []string{"@admin", "@slow", "@dangerous"}},
	"follow.wait":      {"Waits until the follower has applied the change stream up to a position (serve --follow).", "7.4.0", "server", []string{"@slow", "@connection"}},
	"lastsave":         {"Returns the Unix timestamp of the last successful save to disk.", "1.0.0", "server", []string{"@fast", "@admin", "@dangerous"}},
}

var stringCommands = map[string]bool{
	"get": true, "set": true, "append": true, "setrange": true, "getrange": true, "substr": true, "strlen": true,
}

// isModule reports whether name is a RedisBloom command.
func isModule(name string) bool {
	return strings.HasPrefix(strings.TrimPrefix(name, "_"), "bf.") || strings.HasPrefix(strings.TrimPrefix(name, "_"), "cf.")
}

// aclCategories returns the ACL categories of s: from the table above for
// generic commands, derived from flags and name otherwise.
func aclCategories(s *command.Spec) []string {
	if d, ok := docs[s.Name]; ok {
		return d.acl
	}
	var out []string
	if s.Flags&command.FlagWrite != 0 {
		out = append(out, "@write")
	}
	if s.Flags&command.FlagReadonly != 0 {
		out = append(out, "@read")
	}
	if s.Flags&command.FlagAdmin != 0 {
		out = append(out, "@admin", "@dangerous")
	}
	if s.Flags&command.FlagFast != 0 {
		out = append(out, "@fast")
	} else {
		out = append(out, "@slow")
	}
	switch {
	case strings.HasPrefix(s.Name, "bf."):
		out = append(out, "@bloom")
	case strings.HasPrefix(s.Name, "cf."):
		out = append(out, "@cuckoo")
	case strings.HasPrefix(s.Name, "pf"):
		out = append(out, "@hyperloglog")
	case stringCommands[s.Name]:
		out = append(out, "@string")
	}
	return out
}

func groupOf(name string) string {
	if d, ok := docs[name]; ok {
		return d.group
	}
	switch {
	case isModule(name):
		return "module"
	case strings.HasPrefix(name, "pf"):
		return "hyperloglog"
	case stringCommands[name]:
		return "string"
	}
	return "generic"
}

// sortedSpecs returns the table's top-level commands by name.
func sortedSpecs(t *command.Table) []*command.Spec {
	all := t.Public()
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// lookupFull finds "name" or "container|sub".
func lookupFull(t *command.Table, name string) *command.Spec {
	base, sub, isSub := strings.Cut(name, "|")
	if command.IsInternal([]byte(base)) {
		return nil
	}
	s := t.Lookup([]byte(base))
	if s == nil || !isSub {
		return s
	}
	return s.Sub([]byte(sub))
}

// writeInfo writes one command in Redis 7's COMMAND reply format: name,
// arity, flags, first key, last key, step, ACL categories, tips, key specs,
// subcommands.
func writeInfo(r *resp.Reply, s *command.Spec) {
	r.Array(10)
	r.BulkString(s.Name)
	r.Int(int64(s.Arity))
	flags := s.Flags.Names()
	if isModule(s.Name) {
		flags = append(flags, "module")
	}
	r.Set(len(flags))
	for _, f := range flags {
		r.SimpleString(f)
	}
	r.Int(int64(s.FirstKey))
	r.Int(int64(s.LastKey))
	r.Int(int64(s.Step))
	acl := aclCategories(s)
	r.Set(len(acl))
	for _, a := range acl {
		r.SimpleString(a)
	}
	r.Array(0) // tips
	writeKeySpecs(r, s)
	r.Array(len(s.Subcommands))
	for _, sub := range s.Subcommands {
		writeInfo(r, sub)
	}
}

// writeKeySpecs derives one Redis 7 key spec from FirstKey/LastKey/Step.
func writeKeySpecs(r *resp.Reply, s *command.Spec) {
	if s.FirstKey <= 0 {
		r.Array(0)
		return
	}
	var kf []string
	switch {
	case s.Name == "del" || s.Name == "unlink":
		kf = []string{"RM", "delete"}
	case s.Flags&command.FlagWrite != 0:
		kf = []string{"RW", "update"}
	default:
		kf = []string{"RO", "access"}
	}
	last := s.LastKey
	if last >= 0 {
		last -= s.FirstKey // relative to the first key
	}
	r.Array(1)
	r.Map(3)
	r.BulkString("flags")
	r.Set(len(kf))
	for _, f := range kf {
		r.SimpleString(f)
	}
	r.BulkString("begin_search")
	r.Map(2)
	r.BulkString("type")
	r.BulkString("index")
	r.BulkString("spec")
	r.Map(1)
	r.BulkString("index")
	r.Int(int64(s.FirstKey))
	r.BulkString("find_keys")
	r.Map(2)
	r.BulkString("type")
	r.BulkString("range")
	r.BulkString("spec")
	r.Map(3)
	r.BulkString("lastkey")
	r.Int(int64(last))
	r.BulkString("keystep")
	r.Int(int64(max(s.Step, 1)))
	r.BulkString("limit")
	r.Int(0)
}

func commandAll(c *command.Ctx) {
	all := sortedSpecs(c.Server.Table())
	c.R.Array(len(all))
	for _, s := range all {
		writeInfo(c.R, s)
	}
}

func commandCount(c *command.Ctx) { c.R.Int(int64(len(c.Server.Table().Public()))) }

// commandInfo implements COMMAND INFO [name …]; unknown names give nil.
func commandInfo(c *command.Ctx) {
	if len(c.Args) == 2 {
		commandAll(c)
		return
	}
	t := c.Server.Table()
	c.R.Array(len(c.Args) - 2)
	for _, a := range c.Args[2:] {
		if s := lookupFull(t, string(a)); s != nil {
			writeInfo(c.R, s)
		} else {
			c.R.Null()
		}
	}
}

// commandDocs implements COMMAND DOCS [name …]: a map of name → doc with
// summary, since, group (and module, subcommands); unknown names are
// skipped. Arguments are not described.
func commandDocs(c *command.Ctx) {
	var specs []*command.Spec
	if len(c.Args) == 2 {
		specs = sortedSpecs(c.Server.Table())
	} else {
		for _, a := range c.Args[2:] {
			if s := lookupFull(c.Server.Table(), string(a)); s != nil {
				specs = append(specs, s)
			}
		}
	}
	c.R.Map(len(specs))
	for _, s := range specs {
		c.R.BulkString(s.Name)
		writeDoc(c.R, s)
	}
}

func writeDoc(r *resp.Reply, s *command.Spec) {
	d := docs[s.Name]
	if d.since == "" {
		d.since = "1.0.0"
	}
	n := 3
	mod := isModule(s.Name)
	if mod {
		n++
	}
	if len(s.Subcommands) > 0 {
		n++
	}
	r.Map(n)
	r.BulkString("summary")
	r.BulkString(d.summary)
	r.BulkString("since")
	r.BulkString(d.since)
	r.BulkString("group")
	r.BulkString(groupOf(s.Name))
	if mod {
		r.BulkString("module")
		r.BulkString(command.ModuleName)
	}
	if len(s.Subcommands) > 0 {
		r.BulkString("subcommands")
		r.Map(len(s.Subcommands))
		for _, sub := range s.Subcommands {
			r.BulkString(sub.Name)
			writeDoc(r, sub)
		}
	}
}

// commandList implements COMMAND LIST [FILTERBY MODULE m|ACLCAT c|PATTERN p];
// subcommands are listed as "container|sub".
func commandList(c *command.Ctx) {
	keep := func(*command.Spec) bool { return true }
	switch len(c.Args) {
	case 2:
	case 5:
		if lower(c.Args[2]) != "filterby" {
			c.R.Error(errSyntax)
			return
		}
		arg := string(c.Args[4])
		switch lower(c.Args[3]) {
		case "module":
			keep = func(s *command.Spec) bool { return arg == command.ModuleName && isModule(s.Name) }
		case "aclcat":
			cat := "@" + strings.ToLower(arg)
			keep = func(s *command.Spec) bool {
				for _, a := range aclCategories(s) {
					if a == cat {
						return true
					}
				}
				return false
			}
		case "pattern":
			keep = func(s *command.Spec) bool { return keyspace.Match(strings.ToLower(arg), s.Name) }
		default:
			c.R.Error(errSyntax)
			return
		}
	default:
		c.R.Error(errSyntax)
		return
	}
	var names []string
	for _, s := range sortedSpecs(c.Server.Table()) {
		if keep(s) {
			names = append(names, s.Name)
		}
		for _, sub := range s.Subcommands {
			if keep(sub) {
				names = append(names, sub.Name)
			}
		}
	}
	c.R.Array(len(names))
	for _, n := range names {
		c.R.BulkString(n)
	}
}

var commandHelp = []string{
	"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"(no subcommand)",
	"    Return details about all commands.",
	"COUNT",
	"    Return the total number of commands.",
	"DOCS [<command-name> ...]",
	"    Return documentation details about multiple commands.",
	"INFO [<command-name> ...]",
	"    Return details about multiple commands.",
	"LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]",
	"    Return a list of all commands.",
	"HELP",
	"    Print this help.",
}
