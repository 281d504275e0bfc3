package bf

import "github.com/probly/probly/internal/command"

// specs returns the declarations of the BF.* commands: dispatch (arity,
// flags, handler, key) and what COMMAND INFO and COMMAND DOCS report,
// which is RedisBloom's: the flags it registers, and the summary, since,
// complexity, arguments and key specs of its command info (BF.DEBUG has
// none: RedisBloom declares only its key position).
func (h *handlers) specs() []*command.Spec {
	const (
		w = command.FlagWrite | command.FlagDenyOOM | command.FlagModule
		r = command.FlagReadonly | command.FlagFast | command.FlagModule
	)
	key := func(f command.KeyFlags, notes string) []command.KeySpec {
		return []command.KeySpec{{Notes: notes, Flags: f, Begin: 1}}
	}
	var (
		keyArg   = command.Arg{Name: "key", Type: command.ArgKey}
		item     = command.Arg{Name: "item", Type: command.ArgString}
		items    = command.Arg{Name: "item", Type: command.ArgString, Flags: command.ArgMultiple}
		iterator = command.Arg{Name: "iterator", Type: command.ArgInteger}
	)
	const (
		since   = "1.0.0"
		oK      = "O(k), where k is the number of hash functions used by the last sub-filter"
		oKN     = "O(k * n), where k is the number of hash functions and n is the number of items"
		oN      = "O(n), where n is the capacity"
		addMany = "Adds one or more items to a Bloom Filter. A filter will be created if it does not exist"
	)
	return []*command.Spec{
		{Name: "bf.reserve", Arity: -4, Flags: w, ACL: command.ACLBloom, Handler: h.reserve,
			Keys: key(command.KeyRW, "is key name for the the Bloom filter to be created."),
			Doc: command.Doc{Summary: "Creates a new Bloom Filter", Since: since, Complexity: "O(1)",
				Args: []command.Arg{keyArg,
					{Name: "error_rate", Type: command.ArgDouble},
					{Name: "capacity", Type: command.ArgInteger},
					{Name: "expansion", Type: command.ArgBlock, Token: "EXPANSION", Flags: command.ArgOptional,
						Args: []command.Arg{{Name: "expansion", Type: command.ArgInteger}}},
					{Name: "nonscaling", Type: command.ArgPureToken, Token: "NONSCALING", Flags: command.ArgOptional},
				}}},
		{Name: "bf.add", Arity: 3, Flags: w, ACL: command.ACLBloom, Handler: h.add,
			Keys: key(command.KeyRW, "is key name for a Bloom filter to add the item to."),
			Doc: command.Doc{Summary: "Adds an item to a Bloom Filter", Since: since, Complexity: oK,
				Args: []command.Arg{keyArg, item}}},
		{Name: "bf.madd", Arity: -3, Flags: w, ACL: command.ACLBloom, Handler: h.madd,
			Keys: key(command.KeyRW, "is key name for a Bloom filter to add the items to."),
			Doc: command.Doc{Summary: addMany, Since: since, Complexity: oKN,
				Args: []command.Arg{keyArg, items}}},
		{Name: "bf.insert", Arity: -4, Flags: w, ACL: command.ACLBloom, Handler: h.insert,
			Keys: key(command.KeyRW, "is key name for a Bloom filter to insert the item to."),
			Doc: command.Doc{Summary: addMany, Since: since, Complexity: oKN,
				Args: []command.Arg{keyArg,
					{Name: "capacity", Type: command.ArgBlock, Token: "CAPACITY", Flags: command.ArgOptional,
						Args: []command.Arg{{Name: "capacity", Type: command.ArgInteger}}},
					{Name: "error", Type: command.ArgBlock, Token: "ERROR", Flags: command.ArgOptional,
						Args: []command.Arg{{Name: "error", Type: command.ArgDouble}}},
					{Name: "expansion", Type: command.ArgBlock, Token: "EXPANSION", Flags: command.ArgOptional,
						Args: []command.Arg{{Name: "expansion", Type: command.ArgInteger}}},
					{Name: "nocreate", Type: command.ArgPureToken, Token: "NOCREATE", Flags: command.ArgOptional},
					{Name: "nonscaling", Type: command.ArgPureToken, Token: "NONSCALING", Flags: command.ArgOptional},
					{Name: "items", Type: command.ArgPureToken, Token: "ITEMS"},
					items,
				}}},
		{Name: "bf.exists", Arity: 3, Flags: r, ACL: command.ACLBloom, Handler: h.exists,
			Keys: key(command.KeyRO, "is key name for a Bloom filter to check the item in."),
			Doc: command.Doc{Summary: "Checks whether an item exists in a Bloom Filter", Since: since, Complexity: oK,
				Args: []command.Arg{keyArg, item}}},
		{Name: "bf.mexists", Arity: -3, Flags: r, ACL: command.ACLBloom, Handler: h.mexists,
			Keys: key(command.KeyRO, "is key name for a Bloom filter."),
			Doc: command.Doc{Summary: "Checks whether one or more items exist in a Bloom Filter", Since: since, Complexity: oKN,
				Args: []command.Arg{keyArg, items}}},
		{Name: "bf.info", Arity: -2, Flags: r, ACL: command.ACLBloom, Handler: h.info,
			Keys: key(command.KeyRO, "is key name for a Bloom filter."),
			Doc: command.Doc{Summary: "Returns information about a Bloom Filter", Since: since, Complexity: "O(1)",
				Args: []command.Arg{keyArg,
					{Name: "single_value", Type: command.ArgOneOf, Flags: command.ArgOptional, Args: []command.Arg{
						{Name: "capcaity", Type: command.ArgPureToken, Token: "CAPACITY"}, // RedisBloom's spelling
						{Name: "SIZE", Type: command.ArgPureToken, Token: "SIZE"},
						{Name: "FILTERS", Type: command.ArgPureToken, Token: "FILTERS"},
						{Name: "ITEMS", Type: command.ArgPureToken, Token: "ITEMS"},
						{Name: "EXPANSION", Type: command.ArgPureToken, Token: "EXPANSION"},
					}},
				}}},
		{Name: "bf.card", Arity: 2, Flags: r, ACL: command.ACLBloom, Handler: h.card,
			Keys: key(command.KeyRO, "is key name for a Bloom filter."),
			Doc: command.Doc{Summary: "Returns the cardinality of a Bloom filter", Since: "2.4.4", Complexity: "O(1)",
				Args: []command.Arg{keyArg}}},
		{Name: "bf.debug", Arity: 2, Flags: r, ACL: command.ACLBloom, Handler: h.debug,
			FirstKey: 1, LastKey: 1, Step: 1},
		{Name: "bf.scandump", Arity: 3, Flags: r, ACL: command.ACLBloom, Handler: h.scandump,
			Keys: key(command.KeyRW, "is key name for a Bloom filter to save."),
			Doc: command.Doc{Summary: "Begins an incremental save of the bloom filter", Since: since, Complexity: oN,
				Args: []command.Arg{keyArg, iterator}}},
		{Name: "bf.loadchunk", Arity: 4, Flags: w, ACL: command.ACLBloom, Handler: h.loadchunk,
			Keys: key(command.KeyRW, "is key name for a Bloom filter to load the chunk to."),
			Doc: command.Doc{Summary: "Restores a filter previously saved using SCANDUMP", Since: since, Complexity: oN,
				Args: []command.Arg{keyArg, iterator, {Name: "data", Type: command.ArgString}}}},
		// Internal: the canonical log record of a filter's creation.
		{Name: "_bf.create", Arity: 6, Flags: w, ACL: command.ACLBloom, Handler: h.create, FirstKey: 1, LastKey: 1, Step: 1},
	}
}
