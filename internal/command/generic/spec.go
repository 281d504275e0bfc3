package generic

import "github.com/probly/probly/internal/command"

// specs returns the declarations of the generic commands: dispatch (arity,
// flags, handler, key positions, subcommands) and what COMMAND INFO and
// COMMAND DOCS report, which is Redis 7's (CLIENT SETINFO and CLIENT
// NO-TOUCH: Redis 7.2's). Only the subcommands probly implements are
// declared.
func specs() []*command.Spec {
	const (
		w        = command.FlagWrite
		ro       = command.FlagReadonly
		fast     = command.FlagFast
		admin    = command.FlagAdmin
		noauth   = command.FlagNoAuth
		load     = command.FlagLoading
		noscript = command.FlagNoScript
		stale    = command.FlagStale
		noasync  = command.FlagNoAsyncLoading
		nomulti  = command.FlagNoMulti
		busy     = command.FlagAllowBusy
	)
	var (
		multiShard = []string{"request_policy:multi_shard", "response_policy:agg_sum"}
		keyArgs    = []command.Arg{{Name: "key", Type: command.ArgKey, Flags: command.ArgMultiple}}
	)
	// helpSpec declares a container's HELP subcommand.
	helpSpec := func(container string, acl command.ACLCat, since string, g command.Group, lines []string) *command.Spec {
		return &command.Spec{Name: container + "|help", Arity: 2, Flags: load | stale, ACL: acl, Handler: help(lines),
			Doc: command.Doc{Summary: "Show helpful text about the different subcommands", Since: since, Group: g,
				Complexity: "O(1)"}}
	}
	// flushSpec declares FLUSHALL or FLUSHDB.
	flushSpec := func(name, summary, complexity string) *command.Spec {
		return &command.Spec{Name: name, Arity: -1, Flags: w, ACL: command.ACLKeyspace | command.ACLDangerous, Handler: flush,
			Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"},
			Doc: command.Doc{Summary: summary, Since: "1.0.0", Group: command.GroupServer, Complexity: complexity,
				History: []command.History{
					{Version: "4.0.0", Change: "Added the `ASYNC` flushing mode modifier."},
					{Version: "6.2.0", Change: "Added the `SYNC` flushing mode modifier."},
				},
				Args: []command.Arg{
					{Name: "async", Type: command.ArgOneOf, Flags: command.ArgOptional, Args: []command.Arg{
						{Name: "async", Type: command.ArgPureToken, Token: "ASYNC", Since: "4.0.0"},
						{Name: "sync", Type: command.ArgPureToken, Token: "SYNC", Since: "6.2.0"},
					}},
				}}}
	}
	return []*command.Spec{
		{Name: "ping", Arity: -1, Flags: fast, ACL: command.ACLConnection, Handler: ping,
			Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"},
			Doc: command.Doc{
				Summary: "Ping the server", Since: "1.0.0", Group: command.GroupConnection,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "message", Type: command.ArgString, Flags: command.ArgOptional},
				},
			}},
		{Name: "echo", Arity: 2, Flags: load | stale | fast, ACL: command.ACLConnection, Handler: echo,
			Doc: command.Doc{
				Summary: "Echo the given string", Since: "1.0.0", Group: command.GroupConnection,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "message", Type: command.ArgString},
				},
			}},
		{Name: "hello", Arity: -1, Flags: noscript | load | stale | fast | noauth | busy, ACL: command.ACLConnection, Handler: hello,
			Doc: command.Doc{
				Summary: "Handshake with Redis", Since: "6.0.0", Group: command.GroupConnection,
				Complexity: "O(1)",
				History: []command.History{
					{Version: "6.2.0", Change: "`protover` made optional; when called without arguments the command reports the current connection's context."},
				},
				Args: []command.Arg{
					{Name: "arguments", Type: command.ArgBlock, Flags: command.ArgOptional, Args: []command.Arg{
						{Name: "protover", Type: command.ArgInteger},
						{Name: "username_password", Type: command.ArgBlock, Token: "AUTH", Flags: command.ArgOptional, Args: []command.Arg{
							{Name: "username", Type: command.ArgString},
							{Name: "password", Type: command.ArgString},
						}},
						{Name: "clientname", Type: command.ArgString, Token: "SETNAME", Flags: command.ArgOptional},
					}},
				},
			}},
		{Name: "auth", Arity: -2, Flags: noscript | load | stale | fast | noauth | busy, ACL: command.ACLConnection, Handler: auth,
			Doc: command.Doc{
				Summary: "Authenticate to the server", Since: "1.0.0", Group: command.GroupConnection,
				Complexity: "O(N) where N is the number of passwords defined for the user",
				History: []command.History{
					{Version: "6.0.0", Change: "Added ACL style (username and password)."},
				},
				Args: []command.Arg{
					{Name: "username", Type: command.ArgString, Since: "6.0.0", Flags: command.ArgOptional},
					{Name: "password", Type: command.ArgString},
				},
			}},
		{Name: "quit", Arity: -1, Flags: noscript | load | stale | fast | noauth | busy, ACL: command.ACLConnection, Handler: quit,
			Doc: command.Doc{
				Summary: "Close the connection", Since: "1.0.0", Group: command.GroupConnection,
				Complexity: "O(1)",
			}},
		{Name: "select", Arity: 2, Flags: load | stale | fast, ACL: command.ACLConnection, Handler: selectDB,
			Doc: command.Doc{
				Summary: "Change the selected database for the current connection", Since: "1.0.0", Group: command.GroupConnection,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "index", Type: command.ArgInteger},
				},
			}},
		{Name: "client", Arity: -2,
			Doc: command.Doc{
				Summary: "A container for client connection commands", Since: "2.4.0", Group: command.GroupConnection,
				Complexity: "Depends on subcommand.",
			},
			Subcommands: append(clientOpsSpecs(), []*command.Spec{ // + LIST, KILL, PAUSE, UNPAUSE, REPLY (opsspec.go)
				{Name: "client|id", Arity: 2, Flags: noscript | load | stale, ACL: command.ACLConnection, Handler: clientID,
					Doc: command.Doc{
						Summary: "Returns the client ID for the current connection", Since: "5.0.0", Group: command.GroupConnection,
						Complexity: "O(1)",
					}},
				{Name: "client|setname", Arity: 3, Flags: noscript | load | stale, ACL: command.ACLConnection, Handler: clientSetName,
					Doc: command.Doc{
						Summary: "Set the current connection name", Since: "2.6.9", Group: command.GroupConnection,
						Complexity: "O(1)",
						Args: []command.Arg{
							{Name: "connection-name", Type: command.ArgString},
						},
					}},
				{Name: "client|getname", Arity: 2, Flags: noscript | load | stale, ACL: command.ACLConnection, Handler: clientGetName,
					Doc: command.Doc{
						Summary: "Get the current connection name", Since: "2.6.9", Group: command.GroupConnection,
						Complexity: "O(1)",
					}},
				{Name: "client|setinfo", Arity: 4, Flags: noscript | load | stale, ACL: command.ACLConnection, Handler: clientSetInfo,
					Doc: command.Doc{
						Summary: "Sets information specific to the client or connection.", Since: "7.2.0", Group: command.GroupConnection,
						Complexity: "O(1)",
						Args: []command.Arg{
							{Name: "attr", Type: command.ArgOneOf, Args: []command.Arg{
								{Name: "libname", Type: command.ArgString, Token: "lib-name"},
								{Name: "libver", Type: command.ArgString, Token: "lib-ver"},
							}},
						},
					}},
				{Name: "client|info", Arity: 2, Flags: noscript | load | stale, ACL: command.ACLConnection, Handler: command.OpsHandler,
					Tips: []string{"nondeterministic_output"},
					Doc: command.Doc{
						Summary: "Returns information about the current client connection.", Since: "6.2.0", Group: command.GroupConnection,
						Complexity: "O(1)",
					}},
				{Name: "client|no-evict", Arity: 3, Flags: admin | noscript | load | stale, ACL: command.ACLConnection, Handler: onOff,
					Doc: command.Doc{
						Summary: "Set client eviction mode for the current connection", Since: "7.0.0", Group: command.GroupConnection,
						Complexity: "O(1)",
						Args: []command.Arg{
							{Name: "enabled", Type: command.ArgOneOf, Args: []command.Arg{
								{Name: "on", Type: command.ArgPureToken, Token: "ON"},
								{Name: "off", Type: command.ArgPureToken, Token: "OFF"},
							}},
						},
					}},
				{Name: "client|no-touch", Arity: 3, Flags: noscript | load | stale, ACL: command.ACLConnection, Handler: onOff,
					Doc: command.Doc{
						Summary: "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.", Since: "7.2.0", Group: command.GroupConnection,
						Complexity: "O(1)",
						Args: []command.Arg{
							{Name: "enabled", Type: command.ArgOneOf, Args: []command.Arg{
								{Name: "on", Type: command.ArgPureToken, Token: "ON"},
								{Name: "off", Type: command.ArgPureToken, Token: "OFF"},
							}},
						},
					}},
				helpSpec("client", command.ACLConnection, "5.0.0", command.GroupConnection, clientHelp),
			}...)},
		{Name: "command", Arity: -1, Flags: load | stale, ACL: command.ACLConnection, Handler: commandAll,
			Tips: []string{"nondeterministic_output_order"},
			Doc: command.Doc{
				Summary: "Get array of Redis command details", Since: "2.8.13", Group: command.GroupServer,
				Complexity: "O(N) where N is the total number of Redis commands",
			},
			Subcommands: []*command.Spec{
				{Name: "command|count", Arity: 2, Flags: load | stale, ACL: command.ACLConnection, Handler: commandCount,
					Doc: command.Doc{
						Summary: "Get total number of Redis commands", Since: "2.8.13", Group: command.GroupServer,
						Complexity: "O(1)",
					}},
				{Name: "command|docs", Arity: -2, Flags: load | stale, ACL: command.ACLConnection, Handler: commandDocs,
					Tips: []string{"nondeterministic_output_order"},
					Doc: command.Doc{
						Summary: "Get array of specific Redis command documentation", Since: "7.0.0", Group: command.GroupServer,
						Complexity: "O(N) where N is the number of commands to look up",
						Args: []command.Arg{
							{Name: "command-name", Type: command.ArgString, Flags: command.ArgOptional | command.ArgMultiple},
						},
					}},
				{Name: "command|info", Arity: -2, Flags: load | stale, ACL: command.ACLConnection, Handler: commandInfo,
					Tips: []string{"nondeterministic_output_order"},
					Doc: command.Doc{
						Summary: "Get array of specific Redis command details, or all when no argument is given.", Since: "2.8.13", Group: command.GroupServer,
						Complexity: "O(N) where N is the number of commands to look up",
						History: []command.History{
							{Version: "7.0.0", Change: "Allowed to be called with no argument to get info on all commands."},
						},
						Args: []command.Arg{
							{Name: "command-name", Type: command.ArgString, Flags: command.ArgOptional | command.ArgMultiple},
						},
					}},
				{Name: "command|list", Arity: -2, Flags: load | stale, ACL: command.ACLConnection, Handler: commandList,
					Tips: []string{"nondeterministic_output_order"},
					Doc: command.Doc{
						Summary: "Get an array of Redis command names", Since: "7.0.0", Group: command.GroupServer,
						Complexity: "O(N) where N is the total number of Redis commands",
						Args: []command.Arg{
							{Name: "filterby", Type: command.ArgOneOf, Token: "FILTERBY", Flags: command.ArgOptional, Args: []command.Arg{
								{Name: "module-name", Type: command.ArgString, Token: "MODULE"},
								{Name: "category", Type: command.ArgString, Token: "ACLCAT"},
								{Name: "pattern", Type: command.ArgPattern, Token: "PATTERN"},
							}},
						},
					}},
				helpSpec("command", command.ACLConnection, "5.0.0", command.GroupServer, commandHelp),
			}},
		{Name: "info", Arity: -1, Flags: load | stale, ACL: command.ACLDangerous, Handler: info,
			Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
			Doc: command.Doc{
				Summary: "Get information and statistics about the server", Since: "1.0.0", Group: command.GroupServer,
				Complexity: "O(1)",
				History: []command.History{
					{Version: "7.0.0", Change: "Added support for taking multiple section arguments."},
				},
				Args: []command.Arg{
					{Name: "section", Type: command.ArgString, Flags: command.ArgOptional | command.ArgMultiple},
				},
			}},
		{Name: "config", Arity: -2,
			Doc: command.Doc{
				Summary: "A container for server configuration commands", Since: "2.0.0", Group: command.GroupServer,
				Complexity: "Depends on subcommand.",
			},
			Subcommands: []*command.Spec{
				{Name: "config|get", Arity: -3, Flags: admin | noscript | load | stale, Handler: configGet,
					Doc: command.Doc{
						Summary: "Get the values of configuration parameters", Since: "2.0.0", Group: command.GroupServer,
						Complexity: "O(N) when N is the number of configuration parameters provided",
						History: []command.History{
							{Version: "7.0.0", Change: "Added the ability to pass multiple pattern parameters in one call"},
						},
						Args: []command.Arg{
							{Name: "parameter", Type: command.ArgBlock, Flags: command.ArgMultiple, Args: []command.Arg{
								{Name: "parameter", Type: command.ArgString},
							}},
						},
					}},
				{Name: "config|set", Arity: -4, Flags: admin | noscript | load | stale, Handler: configSet,
					Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
					Doc: command.Doc{
						Summary: "Set configuration parameters to the given values", Since: "2.0.0", Group: command.GroupServer,
						Complexity: "O(N) when N is the number of configuration parameters provided",
						History: []command.History{
							{Version: "7.0.0", Change: "Added the ability to set multiple parameters in one call."},
						},
						Args: []command.Arg{
							{Name: "parameter_value", Type: command.ArgBlock, Flags: command.ArgMultiple, Args: []command.Arg{
								{Name: "parameter", Type: command.ArgString},
								{Name: "value", Type: command.ArgString},
							}},
						},
					}},
				{Name: "config|resetstat", Arity: 2, Flags: admin | noscript | load | stale, Handler: configResetStat,
					Doc: command.Doc{
						Summary: "Reset the stats returned by INFO", Since: "2.0.0", Group: command.GroupServer,
						Complexity: "O(1)",
					}},
				{Name: "config|rewrite", Arity: 2, Flags: admin | noscript | load | stale, Handler: configRewrite,
					Doc: command.Doc{
						Summary: "Rewrite the configuration file with the in memory configuration", Since: "2.8.0", Group: command.GroupServer,
						Complexity: "O(1)",
					}},
				helpSpec("config", 0, "5.0.0", command.GroupServer, configHelp),
			}},
		{Name: "memory", Arity: -2,
			Doc: command.Doc{
				Summary: "A container for memory diagnostics commands", Since: "4.0.0", Group: command.GroupServer,
				Complexity: "Depends on subcommand.",
			},
			Subcommands: []*command.Spec{
				{Name: "memory|usage", Arity: -3, Flags: ro, Handler: memoryUsage,
					Keys: []command.KeySpec{{Flags: command.KeyRO, Begin: 2}},
					Doc: command.Doc{
						Summary: "Estimate the memory usage of a key", Since: "4.0.0", Group: command.GroupServer,
						Complexity: "O(N) where N is the number of samples.",
						Args: []command.Arg{
							{Name: "key", Type: command.ArgKey},
							{Name: "count", Type: command.ArgInteger, Token: "SAMPLES", Flags: command.ArgOptional},
						},
					}},
				helpSpec("memory", 0, "4.0.0", command.GroupServer, memoryHelp),
			}},
		{Name: "module", Arity: -2,
			Doc: command.Doc{
				Summary: "A container for module commands", Since: "4.0.0", Group: command.GroupServer,
				Complexity: "Depends on subcommand.",
			},
			Subcommands: []*command.Spec{
				{Name: "module|list", Arity: 2, Flags: admin | noscript, Handler: moduleList,
					Tips: []string{"nondeterministic_output_order"},
					Doc: command.Doc{
						Summary: "List all modules loaded by the server", Since: "4.0.0", Group: command.GroupServer,
						Complexity: "O(N) where N is the number of loaded modules.",
					}},
				helpSpec("module", 0, "5.0.0", command.GroupServer, moduleHelp),
			}},
		{Name: "time", Arity: 1, Flags: load | stale | fast, Handler: timeCmd,
			Tips: []string{"nondeterministic_output"},
			Doc: command.Doc{
				Summary: "Return the current server time", Since: "2.6.0", Group: command.GroupServer,
				Complexity: "O(1)",
			}},
		{Name: "dbsize", Arity: 1, Flags: ro | fast, ACL: command.ACLKeyspace, Handler: dbsize,
			Tips: []string{"request_policy:all_shards", "response_policy:agg_sum"},
			Doc: command.Doc{
				Summary: "Return the number of keys in the selected database", Since: "1.0.0", Group: command.GroupServer,
				Complexity: "O(1)",
			}},
		{Name: "del", Arity: -2, Flags: w, ACL: command.ACLKeyspace, Handler: del,
			Tips: multiShard,
			Keys: []command.KeySpec{{Flags: command.KeyRM | command.KeyDelete, Begin: 1, LastKey: -1}},
			Doc: command.Doc{
				Summary: "Delete a key", Since: "1.0.0", Group: command.GroupGeneric,
				Complexity: "O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).",
				Args:       keyArgs,
			}},
		{Name: "unlink", Arity: -2, Flags: w | fast, ACL: command.ACLKeyspace, Handler: del,
			Tips: multiShard,
			Keys: []command.KeySpec{{Flags: command.KeyRM | command.KeyDelete, Begin: 1, LastKey: -1}},
			Doc: command.Doc{
				Summary: "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.", Since: "4.0.0", Group: command.GroupGeneric,
				Complexity: "O(1) for each key removed regardless of its size. Then the command does O(N) work in a different thread in order to reclaim memory, where N is the number of allocations the deleted objects where composed of.",
				Args:       keyArgs,
			}},
		{Name: "exists", Arity: -2, Flags: ro | fast, ACL: command.ACLKeyspace, Handler: exists,
			Tips: multiShard,
			Keys: []command.KeySpec{{Flags: command.KeyRO, Begin: 1, LastKey: -1}},
			Doc: command.Doc{
				Summary: "Determine if a key exists", Since: "1.0.0", Group: command.GroupGeneric,
				Complexity: "O(N) where N is the number of keys to check.",
				History: []command.History{
					{Version: "3.0.3", Change: "Accepts multiple `key` arguments."},
				},
				Args: keyArgs,
			}},
		{Name: "type", Arity: 2, Flags: ro | fast, ACL: command.ACLKeyspace, Handler: typeCmd,
			Keys: []command.KeySpec{{Flags: command.KeyRO, Begin: 1}},
			Doc: command.Doc{
				Summary: "Determine the type stored at key", Since: "1.0.0", Group: command.GroupGeneric,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
				},
			}},
		{Name: "keys", Arity: 2, Flags: ro, ACL: command.ACLKeyspace | command.ACLDangerous, Handler: keys,
			Tips: []string{"request_policy:all_shards", "nondeterministic_output_order"},
			Doc: command.Doc{
				Summary: "Find all keys matching the given pattern", Since: "1.0.0", Group: command.GroupGeneric,
				Complexity: "O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.",
				Args: []command.Arg{
					{Name: "pattern", Type: command.ArgPattern},
				},
			}},
		{Name: "scan", Arity: -2, Flags: ro, ACL: command.ACLKeyspace, Handler: scan,
			Tips: []string{"nondeterministic_output", "request_policy:special"},
			Doc: command.Doc{
				Summary: "Incrementally iterate the keys space", Since: "2.8.0", Group: command.GroupGeneric,
				Complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.",
				History: []command.History{
					{Version: "6.0.0", Change: "Added the `TYPE` subcommand."},
				},
				Args: []command.Arg{
					{Name: "cursor", Type: command.ArgInteger},
					{Name: "pattern", Type: command.ArgPattern, Token: "MATCH", Flags: command.ArgOptional},
					{Name: "count", Type: command.ArgInteger, Token: "COUNT", Flags: command.ArgOptional},
					{Name: "type", Type: command.ArgString, Token: "TYPE", Since: "6.0.0", Flags: command.ArgOptional},
				},
			}},
		flushSpec("flushall", "Remove all keys from all databases",
			"O(N) where N is the total number of keys in all databases"),
		flushSpec("flushdb", "Remove all keys from the current database",
			"O(N) where N is the number of keys in the selected database"),
		{Name: "save", Arity: 1, Flags: admin | noscript | noasync | nomulti, Handler: save,
			Doc: command.Doc{
				Summary: "Synchronously save the dataset to disk", Since: "1.0.0", Group: command.GroupServer,
				Complexity: "O(N) where N is the total number of keys in all databases",
			}},
		{Name: "bgrewriteaof", Arity: 1, Flags: admin | noscript | noasync, Handler: bgrewriteaof,
			Doc: command.Doc{
				Summary: "Asynchronously rewrite the append-only file", Since: "1.0.0", Group: command.GroupServer,
				Complexity: "O(1)",
			}},
		{Name: "bgsave", Arity: -1, Flags: admin | noscript | noasync, Handler: bgsave,
			Doc: command.Doc{
				Summary: "Asynchronously save the dataset to disk", Since: "1.0.0", Group: command.GroupServer,
				Complexity: "O(1)",
				History: []command.History{
					{Version: "3.2.2", Change: "Added the `SCHEDULE` option."},
				},
				Args: []command.Arg{
					{Name: "schedule", Type: command.ArgPureToken, Token: "SCHEDULE", Since: "3.2.2", Flags: command.ArgOptional},
				},
			}},
		{Name: "lastsave", Arity: 1, Flags: load | stale | fast, ACL: command.ACLAdmin | command.ACLDangerous, Handler: lastsave,
			Tips: []string{"nondeterministic_output"},
			Doc: command.Doc{
				Summary: "Get the UNIX time stamp of the last successful save to disk", Since: "1.0.0", Group: command.GroupServer,
				Complexity: "O(1)",
			}},
	}
}
