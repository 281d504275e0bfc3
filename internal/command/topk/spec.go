package topk

import "github.com/probly/probly/internal/command"

// specs returns the declarations of the TOPK.* commands: dispatch (arity,
// flags, handler, key) and what COMMAND INFO and COMMAND DOCS report,
// which is RedisBloom's (src/cmd_info/topk_info.c, and the flags and ACL
// categories of spec redis-sketches.md "Conventions": flags "write
// deny-oom" or "readonly", and @fast, without the fast flag, for reserve
// and info).
func specs() []*command.Spec {
	const (
		w = command.FlagWrite | command.FlagDenyOOM | command.FlagModule
		r = command.FlagReadonly | command.FlagModule
	)
	key := func(f command.KeyFlags, notes string) []command.KeySpec {
		return []command.KeySpec{{Notes: notes, Flags: f, Begin: 1}}
	}
	var (
		keyArg = command.Arg{Name: "key", Type: command.ArgKey}
		items  = command.Arg{Name: "item", Type: command.ArgString, Flags: command.ArgMultiple}
	)
	const (
		since  = "2.0.0"
		sketch = "the name of the sketch"
		oN     = "O(n) where n is the number of items"
	)
	return []*command.Spec{
		{Name: "topk.reserve", Arity: -3, Flags: w, ACL: command.ACLTopK | command.ACLFast, Handler: reserve,
			Keys: key(command.KeyRW, "the name of the sketch where items are added"),
			Doc: command.Doc{Summary: "Initializes a TopK with specified parameters", Since: since, Complexity: "O(1)",
				Args: []command.Arg{keyArg,
					{Name: "topk", Type: command.ArgInteger},
					{Name: "params", Type: command.ArgBlock, Flags: command.ArgOptional, Args: []command.Arg{
						{Name: "width", Type: command.ArgInteger},
						{Name: "depth", Type: command.ArgInteger},
						{Name: "decay", Type: command.ArgDouble},
					}},
				}}},
		{Name: "topk.add", Arity: -3, Flags: w, ACL: command.ACLTopK, Handler: add,
			Keys: key(command.KeyRW, "the name of the sketch where items are added"),
			Doc: command.Doc{Summary: "Adds an item to a Top-k sketch. Multiple items can be added at the same time. " +
				"If an item enters the Top-K sketch, the item that is expelled (if any) is returned",
				Since: since, Complexity: "O(n * k) where n is the number of items and k is the depth",
				Args: []command.Arg{keyArg, items}}},
		{Name: "topk.incrby", Arity: -4, Flags: w, ACL: command.ACLTopK, Handler: incrBy,
			Keys: key(command.KeyRW, sketch),
			Doc: command.Doc{Summary: "Increases the count of one or more items by increment", Since: since,
				Complexity: "O(n * k * incr) where n is the number of items, k is the depth and incr is the increment",
				Args: []command.Arg{keyArg,
					{Name: "item_increment", Type: command.ArgBlock, Flags: command.ArgMultiple, Args: []command.Arg{
						{Name: "item", Type: command.ArgString},
						{Name: "increment", Type: command.ArgInteger},
					}},
				}}},
		{Name: "topk.query", Arity: -3, Flags: r, ACL: command.ACLTopK, Handler: query,
			Keys: key(command.KeyRO, sketch),
			Doc: command.Doc{Summary: "Checks whether one or more items are one of the Top-K items", Since: since,
				Complexity: oN, Args: []command.Arg{keyArg, items}}},
		{Name: "topk.count", Arity: -3, Flags: r, ACL: command.ACLTopK, Handler: count,
			Keys: key(command.KeyRO, "the name of the sketch where items are to be counted"),
			Doc: command.Doc{Summary: "Return the count for one or more items are in a sketch", Since: since,
				Complexity: oN,
				History: []command.History{{Version: "2.4.0", Change: "As of Bloom version 2.4, this command is regarded " +
					"as deprecated. The count value is not a representative of the number of appearances of an item"}},
				Args: []command.Arg{keyArg, items}}},
		{Name: "topk.list", Arity: -2, Flags: r, ACL: command.ACLTopK, Handler: list,
			Keys: key(command.KeyRO, sketch),
			Doc: command.Doc{Summary: "Return the full list of items in Top-K sketch", Since: since,
				Complexity: "O(k*log(k)) where k is the value of top-k",
				Args: []command.Arg{keyArg,
					{Name: "withcount", Type: command.ArgPureToken, Token: "WITHCOUNT", Flags: command.ArgOptional}}}},
		{Name: "topk.info", Arity: 2, Flags: r, ACL: command.ACLTopK | command.ACLFast, Handler: info,
			Keys: key(command.KeyRO, sketch),
			Doc: command.Doc{Summary: "Returns number of required items (k), width, depth, and decay values of a given sketch",
				Since: since, Complexity: "O(1)", Args: []command.Arg{keyArg}}},
	}
}
