package str

import "github.com/probly/probly/internal/command"

// specs returns the declarations of the string commands: dispatch (arity,
// flags, handler) and what COMMAND INFO and COMMAND DOCS report, which is
// Redis 7's.
func specs() []*command.Spec {
	const (
		w    = command.FlagWrite
		ro   = command.FlagReadonly
		deny = command.FlagDenyOOM
		fast = command.FlagFast
	)
	// GETRANGE and SUBSTR (its deprecated name) share these.
	const rangeComplexity = "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings."
	rangeArgs := []command.Arg{{Name: "key", Type: command.ArgKey}, {Name: "start", Type: command.ArgInteger},
		{Name: "end", Type: command.ArgInteger}}
	// SETEX and PSETEX differ in their unit.
	setexSpec := func(name, summary, since, unit string, seconds bool) *command.Spec {
		return &command.Spec{Name: name, Arity: 4, Flags: w | deny, ACL: command.ACLString, Handler: setex(name, seconds),
			Keys: []command.KeySpec{{Flags: command.KeyOW | command.KeyUpdate, Begin: 1}},
			Doc: command.Doc{Summary: summary, Since: since, Group: command.GroupString, Complexity: "O(1)",
				Args: []command.Arg{{Name: "key", Type: command.ArgKey}, {Name: unit, Type: command.ArgInteger},
					{Name: "value", Type: command.ArgString}}}}
	}
	return []*command.Spec{
		{Name: "get", Arity: 2, Flags: ro | fast, ACL: command.ACLString, Handler: get,
			Keys: []command.KeySpec{{Flags: command.KeyRO | command.KeyAccess, Begin: 1}},
			Doc: command.Doc{
				Summary: "Get the value of a key", Since: "1.0.0", Group: command.GroupString,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
				},
			}},
		{Name: "set", Arity: -3, Flags: w | deny, ACL: command.ACLString, Handler: set,
			Keys: []command.KeySpec{{Notes: "RW and ACCESS due to the optional `GET` argument", Flags: command.KeyRW | command.KeyAccess | command.KeyUpdate | command.KeyVariableFlags, Begin: 1}},
			Doc: command.Doc{
				Summary: "Set the string value of a key", Since: "1.0.0", Group: command.GroupString,
				Complexity: "O(1)",
				History: []command.History{
					{Version: "2.6.12", Change: "Added the `EX`, `PX`, `NX` and `XX` options."},
					{Version: "6.0.0", Change: "Added the `KEEPTTL` option."},
					{Version: "6.2.0", Change: "Added the `GET`, `EXAT` and `PXAT` option."},
					{Version: "7.0.0", Change: "Allowed the `NX` and `GET` options to be used together."},
				},
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
					{Name: "value", Type: command.ArgString},
					{Name: "condition", Type: command.ArgOneOf, Since: "2.6.12", Flags: command.ArgOptional, Args: []command.Arg{
						{Name: "nx", Type: command.ArgPureToken, Token: "NX"},
						{Name: "xx", Type: command.ArgPureToken, Token: "XX"},
					}},
					{Name: "get", Type: command.ArgPureToken, Token: "GET", Since: "6.2.0", Flags: command.ArgOptional},
					{Name: "expiration", Type: command.ArgOneOf, Flags: command.ArgOptional, Args: []command.Arg{
						{Name: "seconds", Type: command.ArgInteger, Token: "EX", Since: "2.6.12"},
						{Name: "milliseconds", Type: command.ArgInteger, Token: "PX", Since: "2.6.12"},
						{Name: "unix-time-seconds", Type: command.ArgUnixTime, Token: "EXAT", Since: "6.2.0"},
						{Name: "unix-time-milliseconds", Type: command.ArgUnixTime, Token: "PXAT", Since: "6.2.0"},
						{Name: "keepttl", Type: command.ArgPureToken, Token: "KEEPTTL", Since: "6.0.0"},
					}},
				},
			}},
		setexSpec("setex", "Set the value and expiration of a key", "2.0.0", "seconds", true),
		setexSpec("psetex", "Set the value and expiration in milliseconds of a key", "2.6.0", "milliseconds", false),
		{Name: "getex", Arity: -2, Flags: w | fast, ACL: command.ACLString, Handler: getex,
			Keys: []command.KeySpec{{Notes: "RW and UPDATE because it changes the TTL", Flags: command.KeyRW | command.KeyAccess | command.KeyUpdate, Begin: 1}},
			Doc: command.Doc{
				Summary: "Get the value of a key and optionally set its expiration", Since: "6.2.0", Group: command.GroupString,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
					{Name: "expiration", Type: command.ArgOneOf, Flags: command.ArgOptional, Args: []command.Arg{
						{Name: "seconds", Type: command.ArgInteger, Token: "EX"},
						{Name: "milliseconds", Type: command.ArgInteger, Token: "PX"},
						{Name: "unix-time-seconds", Type: command.ArgUnixTime, Token: "EXAT"},
						{Name: "unix-time-milliseconds", Type: command.ArgUnixTime, Token: "PXAT"},
						{Name: "persist", Type: command.ArgPureToken, Token: "PERSIST"},
					}},
				},
			}},
		{Name: "getdel", Arity: 2, Flags: w | fast, ACL: command.ACLString, Handler: getdel,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyAccess | command.KeyDelete, Begin: 1}},
			Doc: command.Doc{
				Summary: "Get the value of a key and delete the key", Since: "6.2.0", Group: command.GroupString,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
				},
			}},
		{Name: "append", Arity: 3, Flags: w | deny | fast, ACL: command.ACLString, Handler: appendCmd,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyInsert, Begin: 1}},
			Doc: command.Doc{
				Summary: "Append a value to a key", Since: "2.0.0", Group: command.GroupString,
				Complexity: "O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation.",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
					{Name: "value", Type: command.ArgString},
				},
			}},
		{Name: "setrange", Arity: 4, Flags: w | deny, ACL: command.ACLString, Handler: setRange,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyUpdate, Begin: 1}},
			Doc: command.Doc{
				Summary: "Overwrite part of a string at key starting at the specified offset", Since: "2.2.0", Group: command.GroupString,
				Complexity: "O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument.",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
					{Name: "offset", Type: command.ArgInteger},
					{Name: "value", Type: command.ArgString},
				},
			}},
		{Name: "getrange", Arity: 4, Flags: ro, ACL: command.ACLString, Handler: getRange,
			Keys: []command.KeySpec{{Flags: command.KeyRO | command.KeyAccess, Begin: 1}},
			Doc: command.Doc{
				Summary: "Get a substring of the string stored at a key", Since: "2.4.0", Group: command.GroupString,
				Complexity: rangeComplexity,
				Args:       rangeArgs,
			}},
		{Name: "substr", Arity: 4, Flags: ro, ACL: command.ACLString, Handler: getRange,
			Keys: []command.KeySpec{{Flags: command.KeyRO | command.KeyAccess, Begin: 1}},
			Doc: command.Doc{
				Summary: "Get a substring of the string stored at a key", Since: "1.0.0", Group: command.GroupString,
				Complexity: rangeComplexity,
				DocFlags:   command.DocDeprecated, DeprecatedSince: "2.0.0", ReplacedBy: "`GETRANGE`",
				Args: rangeArgs,
			}},
		{Name: "strlen", Arity: 2, Flags: ro | fast, ACL: command.ACLString, Handler: strlen,
			Keys: []command.KeySpec{{Flags: command.KeyRO, Begin: 1}},
			Doc: command.Doc{
				Summary: "Get the length of the value stored in a key", Since: "2.2.0", Group: command.GroupString,
				Complexity: "O(1)",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
				},
			}},
	}
}
