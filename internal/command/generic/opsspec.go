package generic

import (
	"strings"

	"github.com/probly/probly/internal/command"
)

// Operations commands: the CLIENT subcommands about other connections,
// MONITOR, SLOWLOG, LATENCY and SHUTDOWN, which the server runs
// (command.Ops, internal/server: clientcmd.go, monitor.go, slowlog.go,
// shutdown.go), and FUNCTION FLUSH/LIST/STATS answering as Redis does
// with an empty function library (probly has no scripting: EVAL, EVALSHA,
// SCRIPT and FUNCTION LOAD are unknown commands).
//
// COMMAND INFO and COMMAND DOCS are Redis 7.0's.

const (
	opsAdmin = command.FlagAdmin | command.FlagNoScript | command.FlagLoading | command.FlagStale
	opsCat   = command.ACLConnection
)

var onOffArg = func(names ...string) []command.Arg {
	out := make([]command.Arg, len(names))
	for i, n := range names {
		out[i] = command.Arg{Name: n, Type: command.ArgPureToken, Token: strings.ToUpper(n)}
	}
	return out
}

// clientOpsSpecs are the CLIENT subcommands the server runs.
func clientOpsSpecs() []*command.Spec {
	h := command.OpsHandler
	return []*command.Spec{
		{Name: "client|list", Arity: -2, Flags: opsAdmin, ACL: opsCat | command.ACLDangerous, Handler: h,
			Tips: []string{"nondeterministic_output"},
			Doc: command.Doc{
				Summary: "Get the list of client connections", Since: "2.4.0", Group: command.GroupConnection,
				Complexity: "O(N) where N is the number of client connections",
				History: []command.History{
					{Version: "2.8.12", Change: "Added unique client `id` field."},
					{Version: "5.0.0", Change: "Added optional `TYPE` filter."},
					{Version: "6.0.0", Change: "Added `user` field."},
					{Version: "6.2.0", Change: "Added `argv-mem`, `tot-mem`, `laddr` and `redir` fields and the optional `ID` filter."},
					{Version: "7.0.0", Change: "Added `resp`, `multi-mem`, `rbs` and `rbp` fields."},
					{Version: "7.0.3", Change: "Added `ssub` field."},
				},
				Args: []command.Arg{
					{Name: "normal_master_replica_pubsub", Type: command.ArgOneOf, Token: "TYPE", Since: "5.0.0", Flags: command.ArgOptional,
						Args: onOffArg("normal", "master", "replica", "pubsub")},
					{Name: "id", Type: command.ArgBlock, Token: "ID", Since: "6.2.0", Flags: command.ArgOptional, Args: []command.Arg{
						{Name: "client-id", Type: command.ArgInteger, Flags: command.ArgMultiple},
					}},
				},
			}},
		{Name: "client|kill", Arity: -3, Flags: opsAdmin, ACL: opsCat | command.ACLDangerous, Handler: h,
			Doc: command.Doc{
				Summary: "Kill the connection of a client", Since: "2.4.0", Group: command.GroupConnection,
				Complexity: "O(N) where N is the number of client connections",
				History: []command.History{
					{Version: "2.8.12", Change: "Added new filter format."},
					{Version: "2.8.12", Change: "`ID` option."},
					{Version: "3.2.0", Change: "Added `master` type in for `TYPE` option."},
					{Version: "5.0.0", Change: "Replaced `slave` `TYPE` with `replica`. `slave` still supported for backward compatibility."},
					{Version: "6.2.0", Change: "`LADDR` option."},
				},
				Args: []command.Arg{
					{Name: "filter", Type: command.ArgOneOf, Args: []command.Arg{
						{Name: "ip:port", Type: command.ArgString, DeprecatedSince: "2.8.12"},
						{Name: "new-format", Type: command.ArgOneOf, Flags: command.ArgMultiple, Args: []command.Arg{
							{Name: "client-id", Type: command.ArgInteger, Token: "ID", Since: "2.8.12", Flags: command.ArgOptional},
							{Name: "normal_master_slave_pubsub", Type: command.ArgOneOf, Token: "TYPE", Since: "2.8.12", Flags: command.ArgOptional,
								Args: []command.Arg{
									{Name: "normal", Type: command.ArgPureToken, Token: "NORMAL"},
									{Name: "master", Type: command.ArgPureToken, Token: "MASTER", Since: "3.2.0"},
									{Name: "slave", Type: command.ArgPureToken, Token: "SLAVE"},
									{Name: "replica", Type: command.ArgPureToken, Token: "REPLICA", Since: "5.0.0"},
									{Name: "pubsub", Type: command.ArgPureToken, Token: "PUBSUB"},
								}},
							{Name: "username", Type: command.ArgString, Token: "USER", Flags: command.ArgOptional},
							{Name: "ip:port", Type: command.ArgString, Token: "ADDR", Flags: command.ArgOptional},
							{Name: "ip:port", Type: command.ArgString, Token: "LADDR", Since: "6.2.0", Flags: command.ArgOptional},
							{Name: "yes/no", Type: command.ArgString, Token: "SKIPME", Flags: command.ArgOptional},
						}},
					}},
				},
			}},
		{Name: "client|pause", Arity: -3, Flags: opsAdmin, ACL: opsCat | command.ACLDangerous, Handler: h,
			Doc: command.Doc{
				Summary: "Stop processing commands from clients for some time", Since: "2.9.50", Group: command.GroupConnection,
				Complexity: "O(1)",
				History: []command.History{
					{Version: "6.2.0", Change: "`CLIENT PAUSE WRITE` mode added along with the `mode` option."},
				},
				Args: []command.Arg{
					{Name: "timeout", Type: command.ArgInteger},
					{Name: "mode", Type: command.ArgOneOf, Since: "6.2.0", Flags: command.ArgOptional, Args: onOffArg("write", "all")},
				},
			}},
		{Name: "client|unpause", Arity: 2, Flags: opsAdmin, ACL: opsCat | command.ACLDangerous, Handler: h,
			Doc: command.Doc{
				Summary: "Resume processing of clients that were paused", Since: "6.2.0", Group: command.GroupConnection,
				Complexity: "O(N) Where N is the number of paused clients",
			}},
		{Name: "client|reply", Arity: 3, Flags: command.FlagNoScript | command.FlagLoading | command.FlagStale, ACL: opsCat, Handler: h,
			Doc: command.Doc{
				Summary: "Instruct the server whether to reply to commands", Since: "3.2.0", Group: command.GroupConnection,
				Complexity: "O(1)",
				Args:       []command.Arg{{Name: "on_off_skip", Type: command.ArgOneOf, Args: onOffArg("on", "off", "skip")}},
			}},
	}
}

// opsSpecs are MONITOR, SLOWLOG, LATENCY, SHUTDOWN and FUNCTION.
func opsSpecs() []*command.Spec {
	const (
		admin = command.FlagAdmin | command.FlagLoading | command.FlagStale
		load  = command.FlagLoading | command.FlagStale
	)
	h := command.OpsHandler
	allNodes := func(resp string) []string {
		tips := []string{"request_policy:all_nodes"}
		if resp != "" {
			tips = append(tips, "response_policy:"+resp)
		}
		return tips
	}
	sub := func(name string, arity int, flags command.Flags, tips []string, doc command.Doc) *command.Spec {
		return &command.Spec{Name: name, Arity: arity, Flags: flags, ACL: command.ACLDangerous, Handler: h, Tips: tips, Doc: doc}
	}
	latencyTips := append([]string{"nondeterministic_output"}, allNodes("special")...)
	srv := command.GroupServer
	return []*command.Spec{
		{Name: "monitor", Arity: 1, Flags: admin | command.FlagNoScript, ACL: command.ACLDangerous, Handler: h,
			Doc: command.Doc{Summary: "Listen for all requests received by the server in real time", Since: "1.0.0", Group: srv}},
		{Name: "shutdown", Arity: -1, Flags: admin | command.FlagNoScript | command.FlagNoMulti | command.FlagAllowBusy,
			ACL: command.ACLDangerous, Handler: h,
			Doc: command.Doc{
				Summary: "Synchronously save the dataset to disk and then shut down the server", Since: "1.0.0", Group: srv,
				Complexity: "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
				History:    []command.History{{Version: "7.0.0", Change: "Added the `NOW`, `FORCE` and `ABORT` modifiers."}},
				Args: []command.Arg{
					{Name: "nosave_save", Type: command.ArgOneOf, Flags: command.ArgOptional, Args: onOffArg("nosave", "save")},
					{Name: "now", Type: command.ArgPureToken, Token: "NOW", Since: "7.0.0", Flags: command.ArgOptional},
					{Name: "force", Type: command.ArgPureToken, Token: "FORCE", Since: "7.0.0", Flags: command.ArgOptional},
					{Name: "abort", Type: command.ArgPureToken, Token: "ABORT", Since: "7.0.0", Flags: command.ArgOptional},
				},
			}},
		{Name: "slowlog", Arity: -2,
			Doc: command.Doc{Summary: "A container for slow log commands", Since: "2.2.12", Group: srv, Complexity: "Depends on subcommand."},
			Subcommands: []*command.Spec{
				sub("slowlog|get", -2, admin, append(allNodes(""), "nondeterministic_output"), command.Doc{
					Summary: "Get the slow log's entries", Since: "2.2.12", Group: srv,
					Complexity: "O(N) where N is the number of entries returned",
					History:    []command.History{{Version: "4.0.0", Change: "Added client IP address, port and name to the reply."}},
					Args:       []command.Arg{{Name: "count", Type: command.ArgInteger, Flags: command.ArgOptional}},
				}),
				sub("slowlog|len", 2, admin, append(allNodes("agg_sum"), "nondeterministic_output"), command.Doc{
					Summary: "Get the slow log's length", Since: "2.2.12", Group: srv, Complexity: "O(1)"}),
				sub("slowlog|reset", 2, admin, allNodes("all_succeeded"), command.Doc{
					Summary: "Clear all entries from the slow log", Since: "2.2.12", Group: srv,
					Complexity: "O(N) where N is the number of entries in the slowlog"}),
				{Name: "slowlog|help", Arity: 2, Flags: load, Handler: help(slowlogHelp),
					Doc: command.Doc{Summary: "Show helpful text about the different subcommands", Since: "6.2.0", Group: srv, Complexity: "O(1)"}},
			}},
		{Name: "latency", Arity: -2,
			Doc: command.Doc{Summary: "A container for latency diagnostics commands", Since: "2.8.13", Group: srv, Complexity: "Depends on subcommand."},
			Subcommands: []*command.Spec{
				sub("latency|latest", 2, admin|command.FlagNoScript, latencyTips, command.Doc{
					Summary: "Return the latest latency samples for all events.", Since: "2.8.13", Group: srv, Complexity: "O(1)"}),
				sub("latency|history", 3, admin|command.FlagNoScript, latencyTips, command.Doc{
					Summary: "Return timestamp-latency samples for the event.", Since: "2.8.13", Group: srv, Complexity: "O(1)",
					Args: []command.Arg{{Name: "event", Type: command.ArgString}}}),
				sub("latency|reset", -2, admin|command.FlagNoScript, allNodes("all_succeeded"), command.Doc{
					Summary: "Reset latency data for one or more events.", Since: "2.8.13", Group: srv, Complexity: "O(1)",
					Args: []command.Arg{{Name: "event", Type: command.ArgString, Flags: command.ArgOptional | command.ArgMultiple}}}),
				{Name: "latency|help", Arity: 2, Flags: load, Handler: help(latencyHelp),
					Doc: command.Doc{Summary: "Show helpful text about the different subcommands.", Since: "2.8.13", Group: srv, Complexity: "O(1)"}},
			}},
		functionSpec(),
	}
}

var slowlogHelp = []string{
	"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET [<count>]",
	"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
	"    Entries are made of:",
	"    id, timestamp, time in microseconds, arguments array, client IP and port,",
	"    client name",
	"LEN",
	"    Return the length of the slowlog.",
	"RESET",
	"    Reset the slowlog.",
	"HELP",
	"    Prints this help.",
}

var latencyHelp = []string{
	"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"HISTORY <event>",
	"    Return time-latency samples for the <event> class.",
	"LATEST",
	"    Return the latest latency samples for all events.",
	"RESET [<event> ...]",
	"    Reset latency data of one or more <event> classes.",
	"    (default: reset all data for all event classes)",
	"HELP",
	"    Prints this help.",
}

// --- FUNCTION: an empty library ---

func functionSpec() *command.Spec {
	const ns = command.FlagNoScript
	sc := command.GroupScripting
	shards := func(resp string) []string {
		return []string{"request_policy:all_shards", "response_policy:" + resp}
	}
	return &command.Spec{Name: "function", Arity: -2,
		Doc: command.Doc{Summary: "A container for function commands", Since: "7.0.0", Group: sc, Complexity: "Depends on subcommand."},
		Subcommands: []*command.Spec{
			{Name: "function|flush", Arity: -2, Flags: command.FlagWrite | ns, ACL: command.ACLScripting, Handler: functionFlush,
				Tips: shards("all_succeeded"),
				Doc: command.Doc{Summary: "Deleting all functions", Since: "7.0.0", Group: sc,
					Complexity: "O(N) where N is the number of functions deleted",
					Args: []command.Arg{{Name: "async", Type: command.ArgOneOf, Flags: command.ArgOptional,
						Args: onOffArg("async", "sync")}}}},
			{Name: "function|list", Arity: -2, Flags: ns, ACL: command.ACLScripting, Handler: functionList,
				Tips: []string{"nondeterministic_output_order"},
				Doc: command.Doc{Summary: "List information about all the functions", Since: "7.0.0", Group: sc,
					Complexity: "O(N) where N is the number of functions",
					Args: []command.Arg{
						{Name: "library-name-pattern", Type: command.ArgString, Token: "LIBRARYNAME", Flags: command.ArgOptional},
						{Name: "withcode", Type: command.ArgPureToken, Token: "WITHCODE", Flags: command.ArgOptional},
					}}},
			{Name: "function|stats", Arity: 2, Flags: ns | command.FlagAllowBusy, ACL: command.ACLScripting, Handler: functionStats,
				Tips: append([]string{"nondeterministic_output"}, shards("special")...),
				Doc: command.Doc{Summary: "Return information about the function currently running (name, description, duration)",
					Since: "7.0.0", Group: sc, Complexity: "O(1)"}},
			{Name: "function|help", Arity: 2, Flags: command.FlagLoading | command.FlagStale, ACL: command.ACLScripting, Handler: help(functionHelp),
				Doc: command.Doc{Summary: "Show helpful text about the different subcommands", Since: "7.0.0", Group: sc, Complexity: "O(1)"}},
		}}
}

var functionHelp = []string{
	"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
	"    Return general information on all the libraries (probly has none: no scripting).",
	"STATS",
	"    Return information about the current function running (none) and the engines.",
	"FLUSH [ASYNC|SYNC]",
	"    Delete all the libraries (there are none).",
	"HELP",
	"    Prints this help.",
}

func functionFlush(c *command.Ctx) {
	switch len(c.Args) {
	case 2:
	case 3:
		if m := lower(c.Args[2]); m != "async" && m != "sync" {
			c.R.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
			return
		}
	default:
		c.R.Error("ERR unknown subcommand or wrong number of arguments for '" + string(c.Args[1]) + "'. Try FUNCTION HELP.")
		return
	}
	c.R.OK()
}

func functionList(c *command.Ctx) {
	seenName, seenCode := false, false
	for i := 2; i < len(c.Args); i++ {
		switch a := lower(c.Args[i]); {
		case a == "withcode" && !seenCode:
			seenCode = true
		case a == "libraryname" && !seenName:
			if i+1 >= len(c.Args) {
				c.R.Error("ERR library name argument was not given")
				return
			}
			seenName = true
			i++
		default:
			c.R.Error("ERR Unknown argument " + string(c.Args[i]))
			return
		}
	}
	c.R.Array(0)
}

func functionStats(c *command.Ctx) {
	r := c.R
	r.Map(2)
	r.BulkString("running_script")
	r.Null()
	r.BulkString("engines")
	r.Map(1)
	r.BulkString("LUA")
	r.Map(2)
	r.BulkString("libraries_count")
	r.Int(0)
	r.BulkString("functions_count")
	r.Int(0)
}
