package pf

import "github.com/probly/probly/internal/command"

// specs returns the declarations of the PF* commands: dispatch (arity,
// flags, handler, key positions) and what COMMAND INFO and COMMAND DOCS
// report, which is Redis 7's. PFMERGE's key specs make only its
// destination a written key (Table.Add derives WriteKeys from them).
func (h *handlers) specs() []*command.Spec {
	const (
		w     = command.FlagWrite
		ro    = command.FlagReadonly
		deny  = command.FlagDenyOOM
		fast  = command.FlagFast
		admin = command.FlagAdmin
	)
	return []*command.Spec{
		{Name: "pfadd", Arity: -2, Flags: w | deny | fast, ACL: command.ACLHyperLogLog, Handler: h.pfadd,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyInsert, Begin: 1}},
			Doc: command.Doc{
				Summary: "Adds the specified elements to the specified HyperLogLog.", Since: "2.8.9", Group: command.GroupHyperLogLog,
				Complexity: "O(1) to add every element.",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey},
					{Name: "element", Type: command.ArgString, Flags: command.ArgOptional | command.ArgMultiple},
				},
			}},
		{Name: "pfcount", Arity: -2, Flags: ro, ACL: command.ACLHyperLogLog, Handler: h.pfcount,
			Keys: []command.KeySpec{{Notes: "RW because it may change the internal representation of the key, and propagate to replicas", Flags: command.KeyRW | command.KeyAccess, Begin: 1, LastKey: -1}},
			Doc: command.Doc{
				Summary: "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).", Since: "2.8.9", Group: command.GroupHyperLogLog,
				Complexity: "O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys.",
				Args: []command.Arg{
					{Name: "key", Type: command.ArgKey, Flags: command.ArgMultiple},
				},
			}},
		{Name: "pfmerge", Arity: -2, Flags: w | deny, ACL: command.ACLHyperLogLog, Handler: h.pfmerge,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyAccess | command.KeyInsert, Begin: 1}, {Flags: command.KeyRO | command.KeyAccess, Begin: 2, LastKey: -1}},
			Doc: command.Doc{
				Summary: "Merge N different HyperLogLogs into a single one.", Since: "2.8.9", Group: command.GroupHyperLogLog,
				Complexity: "O(N) to merge N HyperLogLogs, but with high constant times.",
				Args: []command.Arg{
					{Name: "destkey", Type: command.ArgKey},
					{Name: "sourcekey", Type: command.ArgKey, KeySpec: 1, Flags: command.ArgMultiple},
				},
			}},
		{Name: "pfdebug", Arity: 3, Flags: w | deny | admin, ACL: command.ACLHyperLogLog, Handler: h.pfdebug,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyAccess, Begin: 2}},
			Doc: command.Doc{
				Summary: "Internal commands for debugging HyperLogLog values", Since: "2.8.9", Group: command.GroupHyperLogLog,
				Complexity: "N/A",
				DocFlags:   command.DocSyscmd,
				Args: []command.Arg{
					{Name: "subcommand", Type: command.ArgString},
					{Name: "key", Type: command.ArgKey},
				},
			}},
		{Name: "pfselftest", Arity: 1, Flags: admin, ACL: command.ACLHyperLogLog, Handler: h.pfselftest,
			Doc: command.Doc{
				Summary: "An internal command for testing HyperLogLog values", Since: "2.8.9", Group: command.GroupHyperLogLog,
				Complexity: "N/A",
				DocFlags:   command.DocSyscmd,
			}},
	}
}
