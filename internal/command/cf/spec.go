package cf

import "github.com/probly/probly/internal/command"

// specs returns the declarations of the CF.* commands: dispatch (arity,
// flags, handler, key) and what COMMAND INFO and COMMAND DOCS report,
// which is RedisBloom's: the flags it registers, and the summary, since,
// complexity, arguments and key specs of its command info, quirks
// included (CF.INSERTNX reuses CF.INSERT's arguments and key spec;
// CF.RESERVE's blocks name their parts CAPACITY/VALUE …). CF.COMPACT and
// CF.DEBUG have none: RedisBloom declares only their key position.
func (h *handlers) specs() []*command.Spec {
	const (
		w = command.FlagWrite | command.FlagDenyOOM | command.FlagModule
		r = command.FlagReadonly | command.FlagFast | command.FlagModule
	)
	// RedisBloom declares an empty note on every cuckoo key spec but two.
	key := func(f command.KeyFlags, notes string) []command.KeySpec {
		return []command.KeySpec{{Notes: notes, EmptyNotes: true, Flags: f, Begin: 1}}
	}
	var (
		keyArg   = command.Arg{Name: "key", Type: command.ArgKey}
		item     = command.Arg{Name: "item", Type: command.ArgString}
		iterator = command.Arg{Name: "iterator", Type: command.ArgInteger}
		// option is one of CF.RESERVE's optional blocks.
		option = func(name, token string) command.Arg {
			return command.Arg{Name: name, Type: command.ArgBlock, Flags: command.ArgOptional, Args: []command.Arg{
				{Name: token, Type: command.ArgString}, {Name: "VALUE", Type: command.ArgString}}}
		}
		insertArgs = []command.Arg{keyArg,
			{Name: "capacity", Type: command.ArgBlock, Flags: command.ArgOptional, Args: []command.Arg{
				{Name: "capacity", Type: command.ArgPureToken, Token: "CAPACITY"},
				{Name: "capacity", Type: command.ArgInteger}}},
			{Name: "nocreate", Type: command.ArgPureToken, Token: "NOCREATE", Flags: command.ArgOptional},
			{Name: "items", Type: command.ArgPureToken, Token: "ITEMS"},
			{Name: "item", Type: command.ArgString, Flags: command.ArgMultiple},
		}
	)
	const (
		since = "1.0.0"
		oKI   = "O(k + i), where k is the number of sub-filters and i is maxIterations"
		oK    = "O(k), where k is the number of sub-filters"
		oNKI  = "O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations"
		oN    = "O(n), where n is the capacity"
	)
	return []*command.Spec{
		{Name: "cf.reserve", Arity: -3, Flags: w, ACL: command.ACLCuckoo, Handler: h.reserve,
			Keys: key(command.KeyRW, ""),
			Doc: command.Doc{Summary: "Creates a new Cuckoo Filter", Since: since, Complexity: "O(1)",
				Args: []command.Arg{keyArg,
					{Name: "capacity", Type: command.ArgInteger},
					option("bucketsize", "CAPACITY"), // RedisBloom's name for the BUCKETSIZE token
					option("maxiterations", "MAXITERATIONS"),
					option("expansion", "EXPANSION"),
				}}},
		{Name: "cf.add", Arity: 3, Flags: w, ACL: command.ACLCuckoo, Handler: h.add,
			Keys: key(command.KeyRW, ""),
			Doc: command.Doc{Summary: "Adds an item to a Cuckoo Filter", Since: since, Complexity: oKI,
				Args: []command.Arg{keyArg, item}}},
		{Name: "cf.addnx", Arity: 3, Flags: w, ACL: command.ACLCuckoo, Handler: h.addnx,
			Keys: key(command.KeyRW, "This command is slower than CF.ADD because it first checks whether the item exists. "+
				"Since CF.EXISTS can result in false positive, CF.ADDNX may not add an item because it is supposedly "+
				"already exist, which may be wrong."),
			Doc: command.Doc{Summary: "Adds an item to a Cuckoo Filter if the item did not exist previously.", Since: since,
				Complexity: oKI, Args: []command.Arg{keyArg, item}}},
		{Name: "cf.insert", Arity: -4, Flags: w, ACL: command.ACLCuckoo, Handler: h.insert,
			Keys: key(command.KeyRW, ""),
			Doc: command.Doc{Summary: "Adds one or more items to a Cuckoo Filter. A filter will be created if it does not exist",
				Since: since, Complexity: oNKI, Args: insertArgs}},
		{Name: "cf.insertnx", Arity: -4, Flags: w, ACL: command.ACLCuckoo, Handler: h.insertnx,
			Keys: key(command.KeyRW, ""),
			Doc: command.Doc{Summary: "Adds one or more items to a Cuckoo Filter if the items did not exist previously. " +
				"A filter will be created if it does not exist", Since: since, Complexity: oNKI, Args: insertArgs}},
		{Name: "cf.exists", Arity: 3, Flags: r, ACL: command.ACLCuckoo, Handler: h.exists,
			Keys: key(command.KeyRO, ""),
			Doc: command.Doc{Summary: "Checks whether one or more items exist in a Cuckoo Filter", Since: since, Complexity: oK,
				Args: []command.Arg{keyArg, item}}},
		{Name: "cf.mexists", Arity: -3, Flags: r, ACL: command.ACLCuckoo, Handler: h.mexists,
			Keys: key(command.KeyRO, ""),
			Doc: command.Doc{Summary: "Checks whether one or more items exist in a Cuckoo Filter", Since: since,
				Complexity: "O(k * n), where k is the number of sub-filters and n is the number of items",
				Args:       []command.Arg{keyArg, {Name: "item", Type: command.ArgString, Flags: command.ArgMultiple}}}},
		{Name: "cf.count", Arity: 3, Flags: r, ACL: command.ACLCuckoo, Handler: h.count,
			Keys: key(command.KeyRO, ""),
			Doc: command.Doc{Summary: "Return the number of times an item might be in a Cuckoo Filter", Since: since,
				Complexity: oK, Args: []command.Arg{keyArg, item}}},
		{Name: "cf.del", Arity: 3, Flags: command.FlagWrite | command.FlagFast | command.FlagModule, ACL: command.ACLCuckoo,
			Handler: h.del, Keys: key(command.KeyRW, ""),
			Doc: command.Doc{Summary: "Deletes an item from a Cuckoo Filter", Since: since, Complexity: oK,
				Args: []command.Arg{keyArg, item}}},
		// RedisBloom registers CF.COMPACT "readonly fast" although it
		// mutates; COMMAND reports the same. It is logged all the same,
		// and write guards refuse it (Mutates).
		{Name: "cf.compact", Arity: 2, Flags: r, Mutates: true, ACL: command.ACLCuckoo, Handler: h.compact,
			FirstKey: 1, LastKey: 1, Step: 1},
		{Name: "cf.info", Arity: 2, Flags: r, ACL: command.ACLCuckoo, Handler: h.info,
			Keys: key(command.KeyRO, ""),
			Doc: command.Doc{Summary: "Returns information about a Cuckoo Filter", Since: since, Complexity: "O(1)",
				Args: []command.Arg{keyArg}}},
		{Name: "cf.debug", Arity: 2, Flags: r, ACL: command.ACLCuckoo, Handler: h.debug,
			FirstKey: 1, LastKey: 1, Step: 1},
		{Name: "cf.scandump", Arity: 3, Flags: r, ACL: command.ACLCuckoo, Handler: h.scandump,
			Keys: key(command.KeyRW, ""),
			Doc: command.Doc{Summary: "Begins an incremental save of the bloom filter", Since: since, Complexity: oN,
				Args: []command.Arg{keyArg, iterator}}},
		{Name: "cf.loadchunk", Arity: 4, Flags: w, ACL: command.ACLCuckoo, Handler: h.loadchunk,
			Keys: key(command.KeyRW, "This command overwrites the cuckoo filter stored under key. "+
				"Make sure that the cuckoo filter is not changed between invocations."),
			Doc: command.Doc{Summary: "Restores a filter previously saved using SCANDUMP", Since: since, Complexity: oN,
				Args: []command.Arg{keyArg, iterator, {Name: "data", Type: command.ArgString}}}},
		// Internal: canonical log records (creation, one item, a header).
		{Name: "_cf.create", Arity: 6, Flags: w, ACL: command.ACLCuckoo, Handler: h.create, FirstKey: 1, LastKey: 1, Step: 1},
		{Name: "_cf.add", Arity: -3, Flags: w, ACL: command.ACLCuckoo, Handler: h.addRecord, FirstKey: 1, LastKey: 1, Step: 1},
		{Name: "_cf.loadheader", Arity: 3, Flags: w, ACL: command.ACLCuckoo, Handler: h.loadHeader, FirstKey: 1, LastKey: 1, Step: 1},
	}
}
