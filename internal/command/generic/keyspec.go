package generic

import "github.com/probly/probly/internal/command"

// keySpecs declares RENAME, RENAMENX, COPY, TOUCH, RANDOMKEY, DUMP,
// RESTORE and OBJECT (keycmds.go, dump.go) as Redis 7 reports them.
func keySpecs() []*command.Spec {
	const (
		w     = command.FlagWrite
		ro    = command.FlagReadonly
		deny  = command.FlagDenyOOM
		fast  = command.FlagFast
		load  = command.FlagLoading
		stale = command.FlagStale
	)
	return []*command.Spec{
		{Name: "rename", Arity: 3, Flags: w, ACL: command.ACLKeyspace, Handler: rename,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyAccess | command.KeyDelete, Begin: 1}, {Flags: command.KeyOW | command.KeyUpdate, Begin: 2}},
			Doc: command.Doc{
				Summary: "Rename a key", Since: "1.0.0", Group: command.GroupGeneric,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
					{Name: "newkey", Type: command.ArgKey, KeySpec: 1},
				},
			}},
		{Name: "renamenx", Arity: 3, Flags: w | fast, ACL: command.ACLKeyspace, Handler: renamenx,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyAccess | command.KeyDelete, Begin: 1}, {Flags: command.KeyOW | command.KeyInsert, Begin: 2}},
			Doc: command.Doc{
				Summary: "Rename a key, only if the new key does not exist", Since: "1.0.0", Group: command.GroupGeneric,
				Complexity: "O(1)",
				History: []command.History{
					{Version: "3.2.0", Change: "The command no longer returns an error when source and destination names are the same."},
				},
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
					{Name: "newkey", Type: command.ArgKey, KeySpec: 1},
				},
			}},
		{Name: "copy", Arity: -3, Flags: w | deny, ACL: command.ACLKeyspace, Handler: copyCmd,
			Keys: []command.KeySpec{{Flags: command.KeyRO | command.KeyAccess, Begin: 1}, {Flags: command.KeyOW | command.KeyUpdate, Begin: 2}},
			Doc: command.Doc{
				Summary: "Copy a key", Since: "6.2.0", Group: command.GroupGeneric,
				Complexity: "O(N) worst case for collections, where N is the number of nested items. O(1) for string values.",
				Args: []command.Arg{
					{Name: "source", Type: command.ArgKey},
					{Name: "destination", Type: command.ArgKey, KeySpec: 1},
					{Name: "destination-db", Type: command.ArgInteger, Token: "DB", Flags: command.ArgOptional},
					{Name: "replace", Type: command.ArgPureToken, Token: "REPLACE", Flags: command.ArgOptional},
				},
			}},
		{Name: "touch", Arity: -2, Flags: ro | fast, ACL: command.ACLKeyspace, Handler: touch,
			Tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"},
			Keys: []command.KeySpec{{Flags: command.KeyRO, Begin: 1, LastKey: -1}},
			Doc: command.Doc{
				Summary: "Alters the last access time of a key(s). Returns the number of existing keys specified.", Since: "3.2.1", Group: command.GroupGeneric,
				Complexity: "O(N) where N is the number of keys that will be touched.",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey, Flags: command.ArgMultiple},
				},
			}},
		{Name: "randomkey", Arity: 1, Flags: ro, ACL: command.ACLKeyspace, Handler: randomKey,
			Tips: []string{"request_policy:all_shards", "nondeterministic_output"},
			Doc: command.Doc{
				Summary: "Return a random key from the keyspace", Since: "1.0.0", Group: command.GroupGeneric,
				Complexity: "O(1)",
			}},
		{Name: "dump", Arity: 2, Flags: ro, ACL: command.ACLKeyspace, Handler: dump,
			Tips: []string{"nondeterministic_output"},
			Keys: []command.KeySpec{{Flags: command.KeyRO | command.KeyAccess, Begin: 1}},
			Doc: command.Doc{
				Summary: "Return a serialized version of the value stored at the specified key.", Since: "2.6.0", Group: command.GroupGeneric,
				Complexity: "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
				},
			}},
		{Name: "restore", Arity: -4, Flags: w | deny, ACL: command.ACLKeyspace | command.ACLDangerous, Handler: restore,
			Keys: []command.KeySpec{{Flags: command.KeyOW | command.KeyUpdate, Begin: 1}},
			Doc: command.Doc{
				Summary: "Create a key using the provided serialized value, previously obtained using DUMP.", Since: "2.6.0", Group: command.GroupGeneric,
				Complexity: "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).",
				History: []command.History{
					{Version: "3.0.0", Change: "Added the `REPLACE` modifier."},
					{Version: "5.0.0", Change: "Added the `ABSTTL` modifier."},
					{Version: "5.0.0", Change: "Added the `IDLETIME` and `FREQ` options."},
				},
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
					{Name: "ttl", Type: command.ArgInteger},
					{Name: "serialized-value", Type: command.ArgString},
					{Name: "replace", Type: command.ArgPureToken, Token: "REPLACE", Since: "3.0.0", Flags: command.ArgOptional},
					{Name: "absttl", Type: command.ArgPureToken, Token: "ABSTTL", Since: "5.0.0", Flags: command.ArgOptional},
					{Name: "seconds", Type: command.ArgInteger, Token: "IDLETIME", Since: "5.0.0", Flags: command.ArgOptional},
					{Name: "frequency", Type: command.ArgInteger, Token: "FREQ", Since: "5.0.0", Flags: command.ArgOptional},
				},
			}},
		{Name: "object", Arity: -2,
			Doc: command.Doc{
				Summary: "A container for object introspection commands", Since: "2.2.3", Group: command.GroupGeneric,
				Complexity: "Depends on subcommand.",
			},
			Subcommands: []*command.Spec{
				{Name: "object|encoding", Arity: 3, Flags: ro, ACL: command.ACLKeyspace, Handler: objectEncoding,
					Tips: []string{"nondeterministic_output"},
					Keys: []command.KeySpec{{Flags: command.KeyRO, Begin: 2}},
					Doc: command.Doc{
						Summary: "Inspect the internal encoding of a Redis object", Since: "2.2.3", Group: command.GroupGeneric,
						Complexity: "O(1)",
						Args: []command.Arg{
							{Name: "key", Type: command.ArgKey},
						},
					}},
				{Name: "object|refcount", Arity: 3, Flags: ro, ACL: command.ACLKeyspace, Handler: objectRefcount,
					Tips: []string{"nondeterministic_output"},
					Keys: []command.KeySpec{{Flags: command.KeyRO, Begin: 2}},
					Doc: command.Doc{
						Summary: "Get the number of references to the value of the key", Since: "2.2.3", Group: command.GroupGeneric,
						Complexity: "O(1)",
						Args: []command.Arg{
							{Name: "key", Type: command.ArgKey},
						},
					}},
				{Name: "object|idletime", Arity: 3, Flags: ro, ACL: command.ACLKeyspace, Handler: objectIdletime,
					Tips: []string{"nondeterministic_output"},
					Keys: []command.KeySpec{{Flags: command.KeyRO, Begin: 2}},
					Doc: command.Doc{
						Summary: "Get the time since a Redis object was last accessed", Since: "2.2.3", Group: command.GroupGeneric,
						Complexity: "O(1)",
						Args: []command.Arg{
							{Name: "key", Type: command.ArgKey},
						},
					}},
				{Name: "object|freq", Arity: 3, Flags: ro, ACL: command.ACLKeyspace, Handler: objectFreq,
					Tips: []string{"nondeterministic_output"},
					Keys: []command.KeySpec{{Flags: command.KeyRO, Begin: 2}},
					Doc: command.Doc{
						Summary: "Get the logarithmic access frequency counter of a Redis object", Since: "4.0.0", Group: command.GroupGeneric,
						Complexity: "O(1)",
						Args: []command.Arg{
							{Name: "key", Type: command.ArgKey},
						},
					}},
				{Name: "object|help", Arity: 2, Flags: load | stale, ACL: command.ACLKeyspace, Handler: objectHelp,
					Doc: command.Doc{
						Summary: "Show helpful text about the different subcommands", Since: "6.2.0", Group: command.GroupGeneric,
						Complexity: "O(1)",
					}},
			},
		},
	}
}
