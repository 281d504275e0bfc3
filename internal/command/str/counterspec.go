package str

import "github.com/probly/probly/internal/command"

// counterSpecs declares MGET, MSET, MSETNX, SETNX, INCR, INCRBY,
// INCRBYFLOAT, DECR, DECRBY and GETSET (counters.go) as Redis 7 reports
// them.
func counterSpecs() []*command.Spec {
	const (
		w    = command.FlagWrite
		ro   = command.FlagReadonly
		deny = command.FlagDenyOOM
		fast = command.FlagFast
	)
	return []*command.Spec{
		{Name: "mget", Arity: -2, Flags: ro | fast, ACL: command.ACLString, Handler: mget,
			Tips: []string{"request_policy:multi_shard"},
			Keys: []command.KeySpec{{Flags: command.KeyRO | command.KeyAccess, Begin: 1, LastKey: -1}},
			Doc: command.Doc{
				Summary: "Get the values of all the given keys", Since: "1.0.0", Group: command.GroupString,
				Complexity: "O(N) where N is the number of keys to retrieve.",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey, Flags: command.ArgMultiple},
				},
			}},
		{Name: "mset", Arity: -3, Flags: w | deny, ACL: command.ACLString, Handler: mset,
			Tips: []string{"request_policy:multi_shard", "response_policy:all_succeeded"},
			Keys: []command.KeySpec{{Flags: command.KeyOW | command.KeyUpdate, Begin: 1, LastKey: -1, KeyStep: 2}},
			Doc: command.Doc{
				Summary: "Set multiple keys to multiple values", Since: "1.0.1", Group: command.GroupString,
				Complexity: "O(N) where N is the number of keys to set.",
				Args: []command.Arg{
					{Name: "key_value", Type: command.ArgBlock, Flags: command.ArgMultiple, Args: []command.Arg{
						{Name: "key", Type: command.ArgKey},
						{Name: "value", Type: command.ArgString},
					}},
				},
			}},
		{Name: "msetnx", Arity: -3, Flags: w | deny, ACL: command.ACLString, Handler: msetnx,
			Tips: []string{"request_policy:multi_shard", "response_policy:agg_min"},
			Keys: []command.KeySpec{{Flags: command.KeyOW | command.KeyInsert, Begin: 1, LastKey: -1, KeyStep: 2}},
			Doc: command.Doc{
				Summary: "Set multiple keys to multiple values, only if none of the keys exist", Since: "1.0.1", Group: command.GroupString,
				Complexity: "O(N) where N is the number of keys to set.",
				Args: []command.Arg{
					{Name: "key_value", Type: command.ArgBlock, Flags: command.ArgMultiple, Args: []command.Arg{
						{Name: "key", Type: command.ArgKey},
						{Name: "value", Type: command.ArgString},
					}},
				},
			}},
		{Name: "setnx", Arity: 3, Flags: w | deny | fast, ACL: command.ACLString, Handler: setnx,
			Keys: []command.KeySpec{{Flags: command.KeyOW | command.KeyInsert, Begin: 1}},
			Doc: command.Doc{
				Summary: "Set the value of a key, only if the key does not exist", Since: "1.0.0", Group: command.GroupString,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
					{Name: "value", Type: command.ArgString},
				},
			}},
		{Name: "incr", Arity: 2, Flags: w | deny | fast, ACL: command.ACLString, Handler: incr,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyAccess | command.KeyUpdate, Begin: 1}},
			Doc: command.Doc{
				Summary: "Increment the integer value of a key by one", Since: "1.0.0", Group: command.GroupString,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
				},
			}},
		{Name: "incrby", Arity: 3, Flags: w | deny | fast, ACL: command.ACLString, Handler: incrby,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyAccess | command.KeyUpdate, Begin: 1}},
			Doc: command.Doc{
				Summary: "Increment the integer value of a key by the given amount", Since: "1.0.0", Group: command.GroupString,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
					{Name: "increment", Type: command.ArgInteger},
				},
			}},
		{Name: "incrbyfloat", Arity: 3, Flags: w | deny | fast, ACL: command.ACLString, Handler: incrbyfloat,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyAccess | command.KeyUpdate, Begin: 1}},
			Doc: command.Doc{
				Summary: "Increment the float value of a key by the given amount", Since: "2.6.0", Group: command.GroupString,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
					{Name: "increment", Type: command.ArgDouble},
				},
			}},
		{Name: "decr", Arity: 2, Flags: w | deny | fast, ACL: command.ACLString, Handler: decr,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyAccess | command.KeyUpdate, Begin: 1}},
			Doc: command.Doc{
				Summary: "Decrement the integer value of a key by one", Since: "1.0.0", Group: command.GroupString,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
				},
			}},
		{Name: "decrby", Arity: 3, Flags: w | deny | fast, ACL: command.ACLString, Handler: decrby,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyAccess | command.KeyUpdate, Begin: 1}},
			Doc: command.Doc{
				Summary: "Decrement the integer value of a key by the given number", Since: "1.0.0", Group: command.GroupString,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
					{Name: "decrement", Type: command.ArgInteger},
				},
			}},
		{Name: "getset", Arity: 3, Flags: w | deny | fast, ACL: command.ACLString, Handler: getset,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyAccess | command.KeyUpdate, Begin: 1}},
			Doc: command.Doc{
				Summary: "Set the string value of a key and return its old value", Since: "1.0.0", Group: command.GroupString,
				Complexity:      "O(1)",
				DocFlags:        command.DocDeprecated,
				DeprecatedSince: "6.2.0", ReplacedBy: "`SET` with the `!GET` argument",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
					{Name: "value", Type: command.ArgString},
				},
			}},
	}
}
