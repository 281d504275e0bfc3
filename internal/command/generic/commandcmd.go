package generic

import (
	"sort"
	"strings"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/resp"
)

// This file implements COMMAND and its subcommands. Everything they report
// comes from the command.Spec declarations of each family (name, arity,
// flags, key specs, ACL categories, tips, Doc), written the way Redis 7
// writes its COMMAND INFO and COMMAND DOCS replies.

// sortedSpecs returns the table's public top-level commands by name.
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

// simpleSet writes words as a set of simple strings.
func simpleSet(r *resp.Reply, words []string) {
	r.Set(len(words))
	for _, w := range words {
		r.SimpleString(w)
	}
}

// writeInfo writes one command in Redis 7's COMMAND reply format: name,
// arity, flags, first key, last key, step, ACL categories, tips, key specs,
// subcommands.
func writeInfo(r *resp.Reply, s *command.Spec) {
	r.Array(10)
	r.BulkString(s.Name)
	r.Int(int64(s.Arity))
	simpleSet(r, s.Flags.Names())
	r.Int(int64(s.FirstKey))
	r.Int(int64(s.LastKey))
	r.Int(int64(s.Step))
	simpleSet(r, s.ACLCategories().Names())
	r.Set(len(s.Tips))
	for _, tip := range s.Tips {
		r.BulkString(tip)
	}
	writeKeySpecs(r, s)
	if len(s.Subcommands) == 0 {
		r.Set(0) // Redis: an empty set, but an array when there are some
		return
	}
	r.Array(len(s.Subcommands))
	for _, sub := range s.Subcommands {
		writeInfo(r, sub)
	}
}

// legacyKeySpec is the key spec Redis reports for a command declared with
// key positions only (a module command without key specs): full access.
func legacyKeySpec(s *command.Spec) []command.KeySpec {
	if s.FirstKey <= 0 {
		return nil
	}
	last := s.LastKey
	if last >= 0 {
		last -= s.FirstKey // relative to the first key
	}
	return []command.KeySpec{{Flags: command.KeyRW | command.KeyAccess | command.KeyUpdate,
		Begin: s.FirstKey, LastKey: last, KeyStep: s.Step}}
}

// writeKeySpecs writes s's key specs as Redis 7 does.
func writeKeySpecs(r *resp.Reply, s *command.Spec) {
	keys := s.Keys
	if len(keys) == 0 {
		keys = legacyKeySpec(s)
	}
	r.Set(len(keys))
	for _, k := range keys {
		notes := k.Notes != "" || k.EmptyNotes
		n := 3
		if notes {
			n++
		}
		r.Map(n)
		if notes {
			r.BulkString("notes")
			r.BulkString(k.Notes)
		}
		r.BulkString("flags")
		simpleSet(r, k.Flags.Names())
		r.BulkString("begin_search")
		r.Map(2)
		r.BulkString("type")
		r.BulkString("index")
		r.BulkString("spec")
		r.Map(1)
		r.BulkString("index")
		r.Int(int64(k.Begin))
		r.BulkString("find_keys")
		r.Map(2)
		r.BulkString("type")
		r.BulkString("range")
		r.BulkString("spec")
		r.Map(3)
		r.BulkString("lastkey")
		r.Int(int64(k.LastKey))
		r.BulkString("keystep")
		r.Int(int64(k.Step()))
		r.BulkString("limit")
		r.Int(int64(k.Limit))
	}
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

// commandDocs implements COMMAND DOCS [name …]: a map of name → docs;
// unknown names are skipped.
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

// writeDoc writes s's COMMAND DOCS map, its fields in Redis 7's order:
// summary, since, group, complexity, module, doc_flags, deprecated_since,
// replaced_by, history, arguments, subcommands (each only when declared;
// group always).
func writeDoc(r *resp.Reply, s *command.Spec) {
	d := &s.Doc
	module := s.Flags&command.FlagModule != 0
	group := d.Group
	if module {
		group = command.GroupModule
	}
	n := 1
	for _, has := range []bool{d.Summary != "", d.Since != "", d.Complexity != "", module, d.DocFlags != 0,
		d.DeprecatedSince != "", d.ReplacedBy != "", len(d.History) > 0, len(d.Args) > 0, len(s.Subcommands) > 0} {
		if has {
			n++
		}
	}
	r.Map(n)
	field := func(k, v string) {
		if v != "" {
			r.BulkString(k)
			r.BulkString(v)
		}
	}
	field("summary", d.Summary)
	field("since", d.Since)
	r.BulkString("group")
	r.BulkString(string(group))
	field("complexity", d.Complexity)
	if module {
		field("module", command.ModuleName)
	}
	if d.DocFlags != 0 {
		r.BulkString("doc_flags")
		simpleSet(r, d.DocFlags.Names())
	}
	field("deprecated_since", d.DeprecatedSince)
	field("replaced_by", d.ReplacedBy)
	if len(d.History) > 0 {
		r.BulkString("history")
		r.Set(len(d.History))
		for _, h := range d.History {
			r.Array(2)
			r.BulkString(h.Version)
			r.BulkString(h.Change)
		}
	}
	if len(d.Args) > 0 {
		r.BulkString("arguments")
		writeArgs(r, d.Args)
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

// writeArgs writes COMMAND DOCS "arguments": an array of maps with name,
// type, key_spec_index (keys), token, summary, since, deprecated_since,
// flags and the sub-arguments of oneof and block.
func writeArgs(r *resp.Reply, args []command.Arg) {
	r.Array(len(args))
	for i := range args {
		a := &args[i]
		nested := a.Type == command.ArgOneOf || a.Type == command.ArgBlock
		n := 2
		for _, has := range []bool{a.Type == command.ArgKey, a.Token != "", a.Summary != "", a.Since != "",
			a.DeprecatedSince != "", a.Flags != 0, nested} {
			if has {
				n++
			}
		}
		r.Map(n)
		r.BulkString("name")
		r.BulkString(a.Name)
		r.BulkString("type")
		r.BulkString(string(a.Type))
		if a.Type == command.ArgKey {
			r.BulkString("key_spec_index")
			r.Int(int64(a.KeySpec))
		}
		for _, f := range [...]struct{ k, v string }{{"token", a.Token}, {"summary", a.Summary},
			{"since", a.Since}, {"deprecated_since", a.DeprecatedSince}} {
			if f.v != "" {
				r.BulkString(f.k)
				r.BulkString(f.v)
			}
		}
		if a.Flags != 0 {
			r.BulkString("flags")
			simpleSet(r, a.Flags.Names())
		}
		if nested {
			r.BulkString("arguments")
			writeArgs(r, a.Args)
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
			keep = func(s *command.Spec) bool { return arg == command.ModuleName && s.Flags&command.FlagModule != 0 }
		case "aclcat":
			cat := command.ACLCategory(arg)
			keep = func(s *command.Spec) bool { return cat != 0 && s.ACLCategories()&cat != 0 }
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
