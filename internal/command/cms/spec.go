package cms

import "github.com/probly/probly/internal/command"

// specs returns the declarations of the CMS.* commands: dispatch (arity,
// flags, handler, key) and what COMMAND INFO and COMMAND DOCS report,
// which is RedisBloom 8.0–8.10's (spec redis-sketches.md, "Conventions":
// flags and ACL categories; summaries, complexity and arguments as
// RedisBloom's flow test test_docs_help asserts them). CMS.MERGE's key
// specs declare only the destination, as RedisBloom's do.
func specs() []*command.Spec {
	const (
		w = command.FlagWrite | command.FlagDenyOOM | command.FlagModule
		r = command.FlagReadonly | command.FlagModule
	)
	key := func(f command.KeyFlags) []command.KeySpec { return []command.KeySpec{{Flags: f, Begin: 1}} }
	var (
		keyArg = command.Arg{Name: "key", Type: command.ArgKey}
		oItems = "O(n) where n is the number of items"
	)
	const since = "2.0.0"
	return []*command.Spec{
		{Name: "cms.initbydim", Arity: 4, Flags: w, ACL: command.ACLFast | command.ACLCms, Handler: initByDim,
			Keys: key(command.KeyRW),
			Doc: command.Doc{Summary: "Initializes a Count-Min Sketch to dimensions specified by user", Since: since, Complexity: "O(1)",
				Args: []command.Arg{keyArg,
					{Name: "width", Type: command.ArgInteger},
					{Name: "depth", Type: command.ArgInteger},
				}}},
		{Name: "cms.initbyprob", Arity: 4, Flags: w, ACL: command.ACLFast | command.ACLCms, Handler: initByProb,
			Keys: key(command.KeyRW),
			Doc: command.Doc{Summary: "Initializes a Count-Min Sketch to accommodate requested tolerances.", Since: since, Complexity: "O(1)",
				Args: []command.Arg{keyArg,
					{Name: "error", Type: command.ArgDouble},
					{Name: "probability", Type: command.ArgDouble},
				}}},
		{Name: "cms.incrby", Arity: -4, Flags: w, ACL: command.ACLCms, Handler: incrBy,
			Keys: key(command.KeyRW),
			Doc: command.Doc{Summary: "Increases the count of item by increment. Multiple items can be increased with one call.", Since: since, Complexity: oItems,
				Args: []command.Arg{keyArg,
					{Name: "items", Type: command.ArgBlock, Flags: command.ArgMultiple, Args: []command.Arg{
						{Name: "item", Type: command.ArgString},
						{Name: "increment", Type: command.ArgInteger},
					}},
				}}},
		{Name: "cms.query", Arity: -3, Flags: r, ACL: command.ACLCms, Handler: query,
			Keys: key(command.KeyRO),
			Doc: command.Doc{Summary: "Returns the count for one or more items in a sketch", Since: since, Complexity: oItems,
				Args: []command.Arg{keyArg, {Name: "item", Type: command.ArgString, Flags: command.ArgMultiple}}}},
		{Name: "cms.merge", Arity: -4, Flags: w, ACL: command.ACLCms, Handler: merge,
			Keys: key(command.KeyRW),
			Doc: command.Doc{Summary: "Merges several sketches into one sketch. All sketches must have identical width and depth. Weights can be used to multiply certain sketches. Default weight is 1.",
				Since: since, Complexity: "O(n) where n is the number of sketches",
				Args: []command.Arg{keyArg,
					{Name: "numKeys", Type: command.ArgInteger},
					{Name: "source", Type: command.ArgKey, Flags: command.ArgMultiple},
					{Name: "weights", Type: command.ArgBlock, Flags: command.ArgOptional, Args: []command.Arg{
						{Name: "weights", Type: command.ArgPureToken, Token: "WEIGHTS"},
						{Name: "weight", Type: command.ArgDouble, Flags: command.ArgMultiple},
					}},
				}}},
		{Name: "cms.info", Arity: 2, Flags: r, ACL: command.ACLFast | command.ACLCms, Handler: info,
			Keys: key(command.KeyRO),
			Doc: command.Doc{Summary: "Returns width, depth and total count of the sketch", Since: since, Complexity: "O(1)",
				Args: []command.Arg{keyArg}}},
		// Internal: canonical log records (package doc).
		{Name: "_cms.incrby", Arity: -4, Flags: w, ACL: command.ACLCms, Handler: incrByRec, FirstKey: 1, LastKey: 1, Step: 1},
		{Name: "_cms.load", Arity: 3, Flags: w, ACL: command.ACLCms, Handler: loadRec, FirstKey: 1, LastKey: 1, Step: 1},
	}
}
