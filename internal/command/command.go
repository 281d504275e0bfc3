// Package command defines the server's command table: each command is
// declared once, as a Spec, with its name, arity, flags, key positions,
// handler and the metadata COMMAND INFO/DOCS report (ACL categories, tips,
// key specs, summary, since, arguments …; meta.go). Specs and handlers
// live in sub-packages by family (internal/command/...), which register
// them into a Table; the server dispatches through the Table, and
// scripts/gencommands writes the command index of docs/COMMANDS.md from it.
package command

import (
	"errors"
	"strings"
	"sync/atomic"

	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/resp"
)

// Flags describe a command the way Redis's COMMAND reply does. FlagWrite,
// FlagDenyOOM, FlagAdmin and FlagNoAuth change how the server dispatches
// and replays the command; the others are only reported (COMMAND INFO,
// and the ACL categories they imply).
type Flags uint32

const (
	FlagWrite    Flags = 1 << iota // mutates data; logged to the AOF
	FlagReadonly                   // reads only
	FlagDenyOOM                    // refused when over maxmemory
	FlagFast                       // O(1) or O(log n)
	FlagAdmin                      // administrative; never logged
	FlagNoAuth                     // allowed before AUTH (AUTH, HELLO, QUIT)
	FlagLoading                    // allowed while loading

	FlagModule         // a RedisBloom command (COMMAND DOCS: group "module", module "bf")
	FlagNoScript       // not allowed in scripts
	FlagStale          // allowed on a stale replica
	FlagNoAsyncLoading // refused during asynchronous loading
	FlagNoMulti        // not allowed in MULTI
	FlagAllowBusy      // allowed while a script is busy
	FlagSkipSlowlog    // not logged in the slow log (EXEC)
	FlagBlocking       // may block the client (FOLLOW.WAIT); the server runs it outside the command gate
)

// flagNames is every flag in the order Redis 7 lists them.
var flagNames = [...]struct {
	f Flags
	n string
}{{FlagWrite, "write"}, {FlagReadonly, "readonly"}, {FlagDenyOOM, "denyoom"}, {FlagModule, "module"},
	{FlagAdmin, "admin"}, {FlagNoScript, "noscript"}, {FlagBlocking, "blocking"}, {FlagLoading, "loading"},
	{FlagStale, "stale"}, {FlagSkipSlowlog, "skip_slowlog"}, {FlagFast, "fast"}, {FlagNoAuth, "no_auth"}, {FlagNoAsyncLoading, "no_async_loading"},
	{FlagNoMulti, "no_multi"}, {FlagAllowBusy, "allow_busy"}}

// Names returns the Redis flag words for COMMAND replies, in Redis's order.
func (f Flags) Names() []string {
	var out []string
	for _, x := range flagNames {
		if f&x.f != 0 {
			out = append(out, x.n)
		}
	}
	return out
}

// Spec is one command: the one declaration of everything the server needs
// to dispatch it and everything COMMAND, COMMAND INFO/DOCS/COUNT/LIST and
// the command index of docs/COMMANDS.md report about it. Specs are built
// by each family's Register and are read-only once Table.Add has taken
// them.
type Spec struct {
	Name  string // lowercase registered name, e.g. "bf.add"
	Arity int    // Redis convention: >0 exact argc, <0 at least -Arity
	Flags Flags
	// Mutates marks a command that changes keys although its Flags do not
	// say write (RedisBloom flags CF.COMPACT readonly; COMMAND reports
	// that). Write guards use Writes, which counts it.
	Mutates bool
	// FirstKey, LastKey and Step are the legacy key positions COMMAND
	// reports and the server guards: the first key (0 if none), the last
	// one (-1 = last argument) and the distance between keys. Table.Add
	// derives them from Keys as Redis does; a Spec without Keys declares
	// them here (a module command declared with positions only, as
	// RedisBloom's BF.DEBUG is).
	FirstKey int
	LastKey  int
	Step     int
	// WriteKeys narrows the keys a write command writes, in the same
	// convention as FirstKey/LastKey/Step, when only some of the keys it
	// names are written: PFMERGE dest src … writes only dest
	// (WriteKeys{1, 1, 1}); its sources are only read. The zero value
	// means every key FirstKey..LastKey names is written. Table.Add
	// derives it from the write flags of Keys. See WriteRange.
	WriteKeys KeyRange
	Handler   func(c *Ctx)
	// Subcommands, when not empty, make this a Redis 7 container command
	// (CLIENT, CONFIG, COMMAND …). Each subcommand's Name is
	// "<container>|<sub>" (e.g. "client|setname") and its Arity counts the
	// whole argv. With two or more arguments the server dispatches on
	// Args[1]; an unknown subcommand is answered "ERR unknown subcommand".
	// The container's own Handler runs only when it is called without a
	// subcommand (COMMAND); it may be nil when its Arity forbids that.
	Subcommands []*Spec

	// ACL holds the ACL categories the command declares beyond those its
	// flags imply (see ACLCategories).
	ACL ACLCat
	// Tips are COMMAND INFO's command tips ("nondeterministic_output" …).
	Tips []string
	// Keys are the command's key specifications (COMMAND INFO), in the
	// order COMMAND DOCS key arguments refer to them.
	Keys []KeySpec
	// Doc is what COMMAND DOCS reports.
	Doc Doc
}

// KeyRange is a run of key positions in a command's arguments, as
// COMMAND reports them: First is the first key's position (0 = none),
// Last the last one's (negative: counted from the end, -1 = the last
// argument), Step the distance between keys (0 counts as 1).
type KeyRange struct{ First, Last, Step int }

// WriteRange returns the argument positions first, first+step, … ≤ last
// of the keys a call of s with argc arguments writes (or would write, were
// it a write command): WriteKeys if set, else FirstKey/LastKey/Step. last
// is clamped to argc-1; the range is empty (last < first) when the
// arguments hold no key. first is 0 when s names no key at all: a write
// command that names no key (FLUSHALL, FLUSHDB) may write every key, and
// whoever guards keys must treat it so. It does not allocate.
func (s *Spec) WriteRange(argc int) (first, last, step int) {
	r := s.WriteKeys
	if r.First == 0 {
		r = KeyRange{s.FirstKey, s.LastKey, s.Step}
	}
	if r.First <= 0 {
		return 0, -1, 1
	}
	last = r.Last
	if last < 0 {
		last += argc
	}
	return r.First, min(last, argc-1), max(r.Step, 1)
}

// Writes reports whether s may change keys: FlagWrite or Mutates. Write
// guards (read-only replicas, followed keys) must use it, not FlagWrite.
func (s *Spec) Writes() bool { return s.Flags&FlagWrite != 0 || s.Mutates }

// LogFailed answers a command whose change was applied in memory but
// could not be logged (the AOF refused the record): "ERR " and the error.
// The change stays, since other commands may have seen it; the client
// learns that it is not durable.
func (c *Ctx) LogFailed(err error) { c.R.Error("ERR " + err.Error()) }

// Sub finds the subcommand named sub (case-insensitively), or nil.
func (s *Spec) Sub(sub []byte) *Spec {
	for _, c := range s.Subcommands {
		if i := strings.IndexByte(c.Name, '|'); i >= 0 && strings.EqualFold(c.Name[i+1:], string(sub)) {
			return c
		}
	}
	return nil
}

// Versions reported to clients (HELLO, INFO, MODULE LIST, COMMAND DOCS).
const (
	// RedisVersion is the Redis version probly claims to be compatible with.
	RedisVersion = "7.4.0"
	// ModuleName is the RedisBloom module name ("bf").
	ModuleName = "bf"
	// ModuleVersion is the RedisBloom version in MMmmpp form (8.4.0).
	ModuleVersion = 80400
)

// Ctx is the per-call context handed to a handler. It is owned by the
// connection goroutine for the duration of the call.
type Ctx struct {
	// Args[0] is the command name as the client sent it. The arguments may
	// alias the connection's read buffer (internal/resp.Parser): they are
	// valid until the handler returns, and anything kept longer (a queue,
	// a map key, a buffered record) must be copied.
	Args   [][]byte
	R      *resp.Reply
	Store  *keyspace.Store
	Config *config.Registry
	Conn   *Conn
	Server Server
	// Replay is true while recovery re-applies logged records. Limits that
	// protect the server from live input (per-filter byte budgets) do not
	// apply then: the record was accepted under the limit in force when it
	// was written, and refusing it now would lose acknowledged data.
	Replay bool
	// Seq is the highest AOF sequence number this call wrote; the server
	// waits for it to be durable (appendfsync always) before replying.
	Seq uint64
	// ReserveMem, if not nil, is the server's maxmemory admission behind
	// Reserve. It must not block (Reserve may be called under a shard
	// lock). The server releases what a call reserved when its handler
	// returns. nil admits everything (no server, unit-test harnesses).
	ReserveMem func(n uint64) bool

	lower []byte // Table.Run's scratch: the command name in lowercase
	// last is Table.Run's one-entry cache of the command name resolved
	// last, as the client spelled it: a pipeline of one command looks its
	// name up once (lookupLower).
	last lastLookup
}

// ErrOOM is the reply to a command refused because of maxmemory (Redis's
// text, without the leading '-').
const ErrOOM = "OOM command not allowed when used memory > 'maxmemory'."

// ErrSnapshotRunning is Server.Save's and BGSave's error while a snapshot
// runs; its text is Redis's reply to SAVE and BGSAVE then.
//
//lint:ignore ST1005 the text is Redis's reply, sent as is
var ErrSnapshotRunning = errors.New("Background save already in progress")

// Reserve asks to add n bytes to the key space (Σ key length + value
// MemoryUsage, as keyspace.Store.Used counts them) for the rest of this
// call, and reports whether that fits maxmemory together with the memory
// in use and every other call's reservation. A handler reserves a large
// growth before allocating it; on false it must change nothing and answer
// ErrOOM. The reservation ends when the handler returns (the growth is in
// Store.Used by then). Reserve always admits n = 0, replayed records
// (Replay: they were accepted when written) and calls without a server
// (ReserveMem nil), except that it refuses any n above AllocLimit, live or
// replayed: such an allocation cannot succeed and would end the process
// with a fatal out-of-memory error instead of an error reply.
func (c *Ctx) Reserve(n uint64) bool {
	if l := allocLimit.Load(); l > 0 && n > l {
		return false
	}
	if n == 0 || c.Replay || c.ReserveMem == nil {
		return true
	}
	return c.ReserveMem(n)
}

var allocLimit atomic.Uint64

// SetAllocLimit sets the largest growth one command may reserve whatever
// maxmemory and the per-filter budgets say (0 = none, the default): the
// server sets it at start to the memory available to the process (cgroup
// limit or RAM). It is process-wide because that memory is. Safe for
// concurrent use.
func SetAllocLimit(n uint64) { allocLimit.Store(n) }

// AllocLimit returns the value SetAllocLimit set.
func AllocLimit() uint64 { return allocLimit.Load() }

// Conn is per-connection state.
type Conn struct {
	ID      int64
	Proto   int // 2 or 3
	Authed  bool
	Name    string
	LibName string
	LibVer  string
	Addr    string
	Close   bool // set by QUIT: close after flushing the reply
	// User is the ACL user the connection is authenticated as ("" means
	// "default").
	User string
	// Login, if not nil, authenticates the connection as user with pass
	// (AUTH, HELLO … AUTH): on success it sets Authed and User and
	// returns true; a failure is logged in the ACL LOG. nil (no ACL:
	// replay, test harnesses) falls back to the requirepass check.
	Login func(user, pass string) bool
	// Tx is the connection's transaction state (MULTI, EXEC, DISCARD,
	// WATCH, UNWATCH, RESET), implemented by the server; nil where there
	// is none (log replay, the follower, test harnesses).
	Tx Tx
}

// Tx is a connection's transaction state as the transaction commands see
// it. Each method answers the command on c.R.
type Tx interface {
	Multi(c *Ctx)
	Exec(c *Ctx)
	Discard(c *Ctx)
	Watch(c *Ctx)
	Unwatch(c *Ctx)
	// Reset ends the transaction and drops the watched keys, without a
	// reply (RESET).
	Reset()
	// Executing reports whether EXEC is running the queued commands:
	// commands that would block do not (Redis's CLIENT_DENY_BLOCKING), and
	// BGSAVE is scheduled after the transaction.
	Executing() bool
	// Queued is the number of commands queued since MULTI, -1 outside
	// MULTI (CLIENT INFO's multi=).
	Queued() int
}

// Server is what handlers may ask of the running server (INFO, SAVE,
// FLUSHALL …). Implemented by internal/server.
type Server interface {
	// Info returns the INFO text for section: a space-separated,
	// case-insensitive list of section names and/or "default", "all",
	// "everything" ("" means default), formatted as Redis does
	// ("# Server\r\nfield:value\r\n…" with a blank line between sections).
	Info(section string) string
	// Save writes a snapshot synchronously (SAVE).
	Save() error
	// BGSave starts a background snapshot (BGSAVE, BGREWRITEAOF: in probly
	// a snapshot compacts the AOF); ErrSnapshotRunning if one is running.
	BGSave() error
	// LastSave returns the unix time of the last successful snapshot.
	LastSave() int64
	// RequirePass returns the configured password ("" = none).
	RequirePass() string
	// Table returns the command table (for COMMAND).
	Table() *Table
	// Flush removes every key, logging the flush.
	Flush() (seq uint64, err error)
}

// Table is the set of registered commands. It is built at start-up and
// read-only afterwards.
type Table struct {
	m       map[string]*Spec
	maxName int // the longest registered name
}

// NewTable returns an empty Table.
func NewTable() *Table { return &Table{m: map[string]*Spec{}} }

// Add registers specs, first deriving each one's (and each subcommand's)
// FirstKey/LastKey/Step and WriteKeys from its Keys (see Spec). It panics
// on a duplicate name, on key positions that disagree with Keys and on
// Keys Redis could not glue into one range (programming errors).
func (t *Table) Add(specs ...*Spec) {
	for _, s := range specs {
		if _, dup := t.m[s.Name]; dup {
			panic("command: duplicate " + s.Name)
		}
		s.deriveKeys()
		for _, sub := range s.Subcommands {
			sub.deriveKeys()
		}
		t.m[s.Name] = s
		t.maxName = max(t.maxName, len(s.Name))
	}
}

// Lookup finds a command by name, case-insensitively.
func (t *Table) Lookup(name []byte) *Spec {
	if s, ok := t.m[string(name)]; ok {
		return s
	}
	return t.m[strings.ToLower(string(name))]
}

// All returns every spec (in no particular order).
func (t *Table) All() []*Spec {
	out := make([]*Spec, 0, len(t.m))
	for _, s := range t.m {
		out = append(out, s)
	}
	return out
}

// Public returns every spec clients may call: All without the internal
// commands (see IsInternal). COMMAND and COMMAND COUNT list these.
func (t *Table) Public() []*Spec {
	out := make([]*Spec, 0, len(t.m))
	for name, s := range t.m {
		if !IsInternal([]byte(name)) {
			out = append(out, s)
		}
	}
	return out
}

// IsInternal reports whether name is an internal command ("_bf.create",
// "_cf.add" …): a canonical log record that recovery and the change-stream
// follower run through the table, but that clients may not send (it skips
// checks such as cf-max-expansions that the original command made). The
// server answers it as an unknown command.
func IsInternal(name []byte) bool { return len(name) > 0 && name[0] == '_' }

// ArityError is the Redis core error for a wrong argument count.
func ArityError(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

// CheckArity reports whether argc satisfies arity.
func CheckArity(arity, argc int) bool {
	if arity > 0 {
		return argc == arity
	}
	return argc >= -arity
}
