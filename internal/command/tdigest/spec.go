package tdigest

import "github.com/probly/probly/internal/command"

// specs returns the declarations of the TDIGEST.* commands: dispatch
// (arity, flags, handler, key) and what COMMAND INFO and COMMAND DOCS
// report, which is RedisBloom's command info (src/cmd_info/tdigest_info.c):
// summary, since 2.4.0, complexity, arguments and key specs. The flags and
// ACL categories are those of spec redis-sketches.md "Conventions" (no
// "fast" flag, but @fast for every command except ADD, MERGE and
// TRIMMED_MEAN). TDIGEST.MERGE declares one key spec, its destination, as
// tdigest_info.c does, and its source-key argument names key_spec_index 1,
// which Redis reports without checking (the spec's "keynum spec for the
// sources" is not in RedisBloom's source).
func (h *handlers) specs() []*command.Spec {
	const (
		w     = command.FlagWrite | command.FlagDenyOOM | command.FlagModule
		r     = command.FlagReadonly | command.FlagModule
		since = "2.4.0"
	)
	key := func(f command.KeyFlags) []command.KeySpec {
		return []command.KeySpec{{EmptyNotes: true, Flags: f, Begin: 1}}
	}
	var (
		keyArg = command.Arg{Name: "key", Type: command.ArgKey}
		multi  = func(name string) command.Arg {
			return command.Arg{Name: name, Type: command.ArgDouble, Flags: command.ArgMultiple}
		}
		one = []command.Arg{keyArg}
	)
	const (
		o1 = "O(1)"
	)
	internal := func(name string, arity int, fn func(*command.Ctx)) *command.Spec {
		return &command.Spec{Name: name, Arity: arity, Flags: w, ACL: command.ACLTDigest, Handler: fn,
			FirstKey: 1, LastKey: 1, Step: 1}
	}
	return []*command.Spec{
		{Name: "tdigest.create", Arity: -2, Flags: w, ACL: command.ACLTDigest | command.ACLFast, Handler: h.create,
			Keys: key(command.KeyRW),
			Doc: command.Doc{Summary: "Allocates memory and initializes a new t-digest sketch", Since: since, Complexity: o1,
				Args: []command.Arg{keyArg, {Name: "compression_block", Type: command.ArgBlock, Flags: command.ArgOptional,
					Args: []command.Arg{{Name: "compression_token", Type: command.ArgPureToken, Token: "COMPRESSION"},
						{Name: "compression", Type: command.ArgInteger}}}}}},
		{Name: "tdigest.reset", Arity: 2, Flags: w, ACL: command.ACLTDigest | command.ACLFast, Handler: h.reset,
			Keys: key(command.KeyRW),
			Doc: command.Doc{Summary: "Resets a t-digest sketch: empty the sketch and re-initializes it.", Since: since,
				Complexity: o1, Args: one}},
		{Name: "tdigest.add", Arity: -3, Flags: w, ACL: command.ACLTDigest, Handler: h.add,
			Keys: key(command.KeyRW),
			Doc: command.Doc{Summary: "Adds one or more observations to a t-digest sketch", Since: since,
				Complexity: "O(N), where N is the number of samples to add", Args: []command.Arg{keyArg, multi("value")}}},
		{Name: "tdigest.merge", Arity: -4, Flags: w, ACL: command.ACLTDigest, Handler: h.merge,
			Keys: key(command.KeyRW),
			Doc: command.Doc{Summary: "Merges multiple t-digest sketches into a single sketch", Since: since,
				Complexity: "O(N*K), where N is the number of centroids and K being the number of input sketches",
				Args: []command.Arg{{Name: "destination-key", Type: command.ArgKey},
					{Name: "numkeys", Type: command.ArgInteger},
					{Name: "source-key", Type: command.ArgKey, KeySpec: 1, Flags: command.ArgMultiple},
					{Name: "compression", Type: command.ArgBlock, Flags: command.ArgOptional, Token: "COMPRESSION",
						Args: []command.Arg{{Name: "compression", Type: command.ArgInteger}}},
					{Name: "override", Type: command.ArgPureToken, Flags: command.ArgOptional, Token: "OVERRIDE"}}}},
		{Name: "tdigest.min", Arity: 2, Flags: r, ACL: command.ACLTDigest | command.ACLFast, Handler: h.min,
			Keys: key(command.KeyRO),
			Doc: command.Doc{Summary: "Returns the minimum observation value from a t-digest sketch", Since: since,
				Complexity: o1, Args: one}},
		{Name: "tdigest.max", Arity: 2, Flags: r, ACL: command.ACLTDigest | command.ACLFast, Handler: h.max,
			Keys: key(command.KeyRO),
			Doc: command.Doc{Summary: "Returns the maximum observation value from a t-digest sketch", Since: since,
				Complexity: o1, Args: one}},
		{Name: "tdigest.quantile", Arity: -3, Flags: r, ACL: command.ACLTDigest | command.ACLFast, Handler: h.quantile,
			Keys: key(command.KeyRO),
			Doc: command.Doc{Summary: "Returns, for each input fraction, an estimation of the value (floating point) that " +
				"is smaller than the given fraction of observations", Since: since, Complexity: o1,
				Args: []command.Arg{keyArg, multi("quantile")}}},
		{Name: "tdigest.cdf", Arity: -3, Flags: r, ACL: command.ACLTDigest | command.ACLFast, Handler: h.cdf,
			Keys: key(command.KeyRO),
			Doc: command.Doc{Summary: "Returns, for each input value, an estimation of the floating-point fraction of " +
				"(observations smaller than the given value + half the observations equal to the given value). " +
				"Multiple fractions can be retrieved in a single call.", Since: since,
				Complexity: "O(N) where N is the number of values specified.", Args: []command.Arg{keyArg, multi("value")}}},
		{Name: "tdigest.rank", Arity: -3, Flags: r, ACL: command.ACLTDigest | command.ACLFast, Handler: h.rank,
			Keys: key(command.KeyRO),
			Doc: command.Doc{Summary: "Returns, for each input value (floating-point), the estimated rank of the value " +
				"(the number of observations in the sketch that are smaller than the value + half the number of " +
				"observations that are equal to the value)", Since: since, Complexity: o1,
				Args: []command.Arg{keyArg, multi("value")}}},
		{Name: "tdigest.revrank", Arity: -3, Flags: r, ACL: command.ACLTDigest | command.ACLFast, Handler: h.revrank,
			Keys: key(command.KeyRO),
			Doc: command.Doc{Summary: "Returns, for each input value (floating-point), the estimated reverse rank of the " +
				"value (the number of observations in the sketch that are larger than the value + half the number of " +
				"observations that are equal to the value)", Since: since, Complexity: o1,
				Args: []command.Arg{keyArg, multi("value")}}},
		{Name: "tdigest.byrank", Arity: -3, Flags: r, ACL: command.ACLTDigest | command.ACLFast, Handler: h.byrank,
			Keys: key(command.KeyRO),
			Doc: command.Doc{Summary: "Returns, for each input rank, an estimation of the value (floating-point) with that rank",
				Since: since, Complexity: "O(N) where N is the number of ranks specified",
				Args: []command.Arg{keyArg, multi("rank")}}},
		{Name: "tdigest.byrevrank", Arity: -3, Flags: r, ACL: command.ACLTDigest | command.ACLFast, Handler: h.byrevrank,
			Keys: key(command.KeyRO),
			Doc: command.Doc{Summary: "Returns, for each input reverse rank, an estimation of the value (floating-point) " +
				"with that reverse rank", Since: since, Complexity: "O(N) where N is the number of reverse ranks specified.",
				Args: []command.Arg{keyArg, multi("reverse_rank")}}},
		{Name: "tdigest.trimmed_mean", Arity: 4, Flags: r, ACL: command.ACLTDigest, Handler: h.trimmedMean,
			Keys: key(command.KeyRO),
			Doc: command.Doc{Summary: "Returns an estimation of the mean value from the sketch, excluding observation " +
				"values outside the low and high cutoff quantiles", Since: since,
				Complexity: "O(N) where N is the number of centroids",
				Args: []command.Arg{keyArg, {Name: "low_cut_quantile", Type: command.ArgDouble},
					{Name: "high_cut_quantile", Type: command.ArgDouble}}}},
		{Name: "tdigest.info", Arity: 2, Flags: r, ACL: command.ACLTDigest | command.ACLFast, Handler: h.info,
			Keys: key(command.KeyRO),
			Doc: command.Doc{Summary: "Returns information and statistics about a t-digest sketch", Since: since,
				Complexity: o1, Args: one}},
		// Internal: canonical log records (a read's compression, a merge's result).
		internal("_tdigest.compress", 2, h.compress),
		internal("_tdigest.load", 3, h.load),
	}
}
