package command

import "strings"

// This file holds the descriptive part of a Spec: what COMMAND, COMMAND
// INFO, COMMAND DOCS and COMMAND LIST report and what docs/COMMANDS.md
// lists (scripts/gencommands). None of it changes how a command is
// dispatched, except that Table.Add derives the dispatch key positions
// (FirstKey/LastKey/Step, WriteKeys) from Keys.

// ACLCat is a set of Redis ACL categories. The bit order is the order in
// which Redis 7 lists a command's categories ("@keyspace" first, the
// module categories last).
type ACLCat uint64

// ACL categories, in Redis's reply order.
const (
	ACLKeyspace ACLCat = 1 << iota
	ACLRead
	ACLWrite
	ACLSet
	ACLSortedSet
	ACLList
	ACLHash
	ACLString
	ACLBitmap
	ACLHyperLogLog
	ACLGeo
	ACLStream
	ACLPubSub
	ACLAdmin
	ACLFast
	ACLSlow
	ACLBlocking
	ACLDangerous
	ACLConnection
	ACLTransaction
	ACLScripting
	ACLBloom   // RedisBloom's Bloom filter commands (BF.*)
	ACLCuckoo  // RedisBloom's cuckoo filter commands (CF.*)
	ACLTopK    // RedisBloom's top-k commands (TOPK.*)
	ACLCms     // RedisBloom's count-min sketch commands (CMS.*)
	ACLTDigest // RedisBloom's t-digest commands (TDIGEST.*)
)

var aclNames = [...]string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
	"hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection",
	"transaction", "scripting", "bloom", "cuckoo", "topk", "cms", "tdigest"}

// Names returns the categories in c as Redis writes them ("@read",
// "@string", "@fast"), in Redis's order.
func (c ACLCat) Names() []string {
	var out []string
	for i, n := range aclNames {
		if c&(1<<i) != 0 {
			out = append(out, "@"+n)
		}
	}
	return out
}

// ACLCategory returns the category called name ("string", without the
// "@", case-insensitively), or 0 if there is none.
func ACLCategory(name string) ACLCat {
	name = strings.ToLower(name)
	for i, n := range aclNames {
		if n == name {
			return 1 << i
		}
	}
	return 0
}

// ACLCategories returns every ACL category of s: the ones it declares
// (ACL) and the ones Redis implies from its flags: write → @write,
// readonly → @read, admin → @admin and @dangerous, fast → @fast, and
// @slow for every command without @fast.
func (s *Spec) ACLCategories() ACLCat {
	c := s.ACL
	if s.Flags&FlagWrite != 0 {
		c |= ACLWrite
	}
	if s.Flags&FlagReadonly != 0 {
		c |= ACLRead
	}
	if s.Flags&FlagAdmin != 0 {
		c |= ACLAdmin | ACLDangerous
	}
	if s.Flags&FlagFast != 0 {
		c |= ACLFast
	}
	if c&ACLFast == 0 {
		c |= ACLSlow
	}
	return c
}

// KeyFlags describe what a command does with the keys of one key
// specification (Redis 7 key-spec flags).
type KeyFlags uint32

// Key-spec flags, in Redis's reply order.
const (
	KeyRO            KeyFlags = 1 << iota // reads the key's value
	KeyRW                                 // reads and modifies it
	KeyOW                                 // overwrites it
	KeyRM                                 // deletes the key
	KeyAccess                             // returns or uses the user data
	KeyUpdate                             // updates the data
	KeyInsert                             // adds data, changes none
	KeyDelete                             // removes data
	KeyNotKey                             // not a key, routed as one
	KeyIncomplete                         // may not find every key
	KeyVariableFlags                      // flags depend on the arguments
)

var keyFlagNames = [...]string{"RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key",
	"incomplete", "variable_flags"}

// Names returns the flag words in f, in Redis's order.
func (f KeyFlags) Names() []string {
	var out []string
	for i, n := range keyFlagNames {
		if f&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// writes reports whether a key with these flags is written.
func (f KeyFlags) writes() bool { return f&(KeyRW|KeyOW|KeyRM) != 0 }

// KeySpec is one Redis 7 key specification of the two kinds probly's
// commands need: the keys start at argument Begin ("begin_search" index)
// and run to LastKey ("find_keys" range: relative to Begin when ≥ 0, 0 =
// one key; negative counts from the end, -1 = the last argument) every
// KeyStep arguments (0 counts as 1). Limit is Redis's range limit (0 for
// every command probly has).
type KeySpec struct {
	Notes string
	// EmptyNotes reports an empty "notes" field when Notes is "", as Redis
	// does for a module that declares empty notes (RedisBloom's CF.*).
	EmptyNotes bool
	Flags      KeyFlags
	Begin      int
	LastKey    int
	KeyStep    int
	Limit      int
}

// Step returns KeyStep, with 0 counted as 1.
func (k KeySpec) Step() int { return max(k.KeyStep, 1) }

// Group is a command's COMMAND DOCS group.
type Group string

// The groups of probly's commands. Every module command's group is
// GroupModule (Redis reports no other for a module).
const (
	GroupConnection   Group = "connection"
	GroupServer       Group = "server"
	GroupGeneric      Group = "generic"
	GroupString       Group = "string"
	GroupHyperLogLog  Group = "hyperloglog"
	GroupTransactions Group = "transactions"
	GroupScripting    Group = "scripting"
	GroupModule       Group = "module"
)

// DocFlags are COMMAND DOCS "doc_flags".
type DocFlags uint8

// Doc flags, in Redis's reply order.
const (
	DocDeprecated DocFlags = 1 << iota
	DocSyscmd
)

// Names returns the flag words in f.
func (f DocFlags) Names() []string {
	var out []string
	if f&DocDeprecated != 0 {
		out = append(out, "deprecated")
	}
	if f&DocSyscmd != 0 {
		out = append(out, "syscmd")
	}
	return out
}

// History is one COMMAND DOCS "history" entry: the version and what
// changed in it.
type History struct{ Version, Change string }

// Doc is what COMMAND DOCS says about a command. Empty strings and nil
// slices are left out of the reply, as Redis leaves out what a command
// does not declare.
type Doc struct {
	Summary    string
	Since      string
	Group      Group // ignored for module commands: their group is "module"
	Complexity string
	DocFlags   DocFlags
	// DeprecatedSince and ReplacedBy go with DocDeprecated.
	DeprecatedSince string
	ReplacedBy      string
	History         []History
	Args            []Arg
}

// ArgType is a COMMAND DOCS argument type.
type ArgType string

// Argument types. ArgOneOf and ArgBlock have sub-arguments (Arg.Args).
const (
	ArgString    ArgType = "string"
	ArgInteger   ArgType = "integer"
	ArgDouble    ArgType = "double"
	ArgKey       ArgType = "key"
	ArgPattern   ArgType = "pattern"
	ArgUnixTime  ArgType = "unix-time"
	ArgPureToken ArgType = "pure-token"
	ArgOneOf     ArgType = "oneof"
	ArgBlock     ArgType = "block"
)

// ArgFlags are COMMAND DOCS argument flags.
type ArgFlags uint8

// Argument flags, in Redis's reply order.
const (
	ArgOptional      ArgFlags = 1 << iota // may be left out
	ArgMultiple                           // may repeat
	ArgMultipleToken                      // may repeat, token included
)

// Names returns the flag words in f.
func (f ArgFlags) Names() []string {
	var out []string
	for i, n := range [...]string{"optional", "multiple", "multiple_token"} {
		if f&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Arg is one argument in COMMAND DOCS "arguments". KeySpec is the index
// into the command's Keys of an ArgKey argument (reported for keys only).
// Args are the sub-arguments of an ArgOneOf or ArgBlock.
type Arg struct {
	Name            string
	Type            ArgType
	KeySpec         int
	Token           string
	Summary         string
	Since           string
	DeprecatedSince string
	Flags           ArgFlags
	Args            []Arg
}

// deriveKeys sets FirstKey/LastKey/Step and WriteKeys from Keys (see
// Spec); it panics where they were also declared and disagree.
func (s *Spec) deriveKeys() {
	if len(s.Keys) == 0 {
		return
	}
	r, ok := glue(s.Keys, func(KeySpec) bool { return true })
	if !ok {
		panic("command: " + s.Name + ": key specs that do not form one range")
	}
	if s.FirstKey != 0 || s.LastKey != 0 || s.Step != 0 {
		if (KeyRange{s.FirstKey, s.LastKey, s.Step}) != r {
			panic("command: " + s.Name + ": FirstKey/LastKey/Step disagree with Keys")
		}
	}
	s.FirstKey, s.LastKey, s.Step = r.First, r.Last, r.Step
	w, ok := glue(s.Keys, func(k KeySpec) bool { return k.Flags.writes() })
	if !ok {
		panic("command: " + s.Name + ": written keys that do not form one range")
	}
	if w == r || w.First == 0 {
		w = KeyRange{} // every key is written, or none is
	}
	if s.WriteKeys != (KeyRange{}) && s.WriteKeys != w {
		panic("command: " + s.Name + ": WriteKeys disagree with Keys")
	}
	s.WriteKeys = w
}

// glue joins the key specs that keep selects into one legacy range the way
// Redis 7 derives COMMAND's (first, last, step) from key specs: one spec
// is taken as it is; several must be consecutive with step 1. It returns
// the zero range when keep selects none, and false when they cannot be
// joined (Redis would call the keys movable).
func glue(keys []KeySpec, keep func(KeySpec) bool) (KeyRange, bool) {
	var sel []KeySpec
	for _, k := range keys {
		if keep(k) {
			sel = append(sel, k)
		}
	}
	abs := func(k KeySpec) int {
		if k.LastKey >= 0 {
			return k.Begin + k.LastKey
		}
		return k.LastKey
	}
	switch len(sel) {
	case 0:
		return KeyRange{}, true
	case 1:
		return KeyRange{sel[0].Begin, abs(sel[0]), sel[0].Step()}, true
	}
	r := KeyRange{First: sel[0].Begin, Step: 1}
	prev := 0
	for i, k := range sel {
		if k.Step() != 1 || (i > 0 && (prev < 0 || prev != k.Begin-1)) {
			return KeyRange{}, false
		}
		r.Last = abs(k)
		prev = r.Last
	}
	return r, true
}
