// Package acl holds probly's Redis ACL: users, their passwords (SHA-256,
// as Redis stores them), the command permissions and key patterns that
// Redis 7's ACL SETUSER rules grant, the permission check the server
// makes before every command, the ACL LOG of denials and the aclfile
// format (one "user <name> <rules…>" line per user, as ACL LIST writes
// it).
//
// Semantics follow Redis 7 (src/acl.c): a user's commands are a bitmap
// over every command and subcommand; "+@cat"/"-@cat" set the bits of the
// commands in the category (a container's bits include its subcommands),
// "+cmd|sub" one subcommand's bit, "+cmd|arg" allows a command whose
// first argument is arg. The description ACL LIST and GETUSER give is
// recomputed from the bitmap with Redis's greedy category fit, so it is
// the same rule text Redis prints. Key patterns are checked against the
// key positions of a command's key specs: a key spec flagged access
// needs a read pattern (~ or %R~), one flagged insert, update or delete a
// write pattern (~ or %W~), any other key any pattern. KEYS and SCAN are
// not filtered (as in Redis). Channel patterns (&…) are accepted and
// reported; probly has no Pub/Sub, so they grant nothing.
//
// Selectors ("(…)") are not supported: a rule starting with "(" is a
// syntax error.
//
// Concurrency: a Registry is safe for concurrent use. A User's
// permissions are an immutable snapshot swapped atomically by SETUSER, so
// Check, on every command, takes no lock and does not allocate for a user
// with every key and command (the default user).
package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/keyspace"
)

// ErrRule is wrapped by every error of a rule that cannot be applied.
var ErrRule = errors.New("acl: invalid rule")

// Rule errors: the reason texts Redis gives after "Error in ACL SETUSER
// modifier '<rule>': ".
const (
	reasonSyntax   = "Syntax error"
	reasonUnknown  = "Unknown command or category name in ACL"
	reasonHash     = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
	reasonNoPass   = "The password you are trying to remove from the user does not exist"
	reasonAllKeys  = "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"
	reasonAllChans = "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"
)

// RuleError is a rule SETUSER (or an aclfile line) could not apply.
type RuleError struct {
	Rule, Reason string
}

func (e *RuleError) Error() string {
	return "Error in ACL SETUSER modifier '" + e.Rule + "': " + e.Reason
}

// Unwrap makes a RuleError an ErrRule.
func (e *RuleError) Unwrap() error { return ErrRule }

// Key-pattern permissions.
const (
	permRead  = 1
	permWrite = 2
)

type pattern struct {
	perm uint8
	pat  string
}

// String is the pattern as Redis writes it: "~p", "%R~p", "%W~p".
func (p pattern) String() string {
	switch p.perm {
	case permRead:
		return "%R~" + p.pat
	case permWrite:
		return "%W~" + p.pat
	}
	return "~" + p.pat
}

// state is one version of a user's settings; never changed once published.
type state struct {
	enabled     bool
	nopass      bool
	sanitize    string // "", "sanitize-payload", "skip-sanitize-payload"
	passwords   []string
	allKeys     bool
	keys        []pattern
	allChannels bool
	channels    []string
	allCommands bool // +@all: also commands added later
	allowed     []uint64
	firstArgs   map[int][]string
	ids         map[*command.Spec]int // the catalog's, shared
	// everything: allKeys and every command bit set: the check has
	// nothing to do.
	everything bool
}

func (s *state) clone() *state {
	n := *s
	n.passwords = append([]string(nil), s.passwords...)
	n.keys = append([]pattern(nil), s.keys...)
	n.channels = append([]string(nil), s.channels...)
	n.allowed = append([]uint64(nil), s.allowed...)
	if s.firstArgs != nil {
		n.firstArgs = map[int][]string{}
		for k, v := range s.firstArgs {
			n.firstArgs[k] = append([]string(nil), v...)
		}
	}
	return &n
}

func (s *state) bit(id int) bool { return s.allowed[id/64]&(1<<(id%64)) != 0 }
func (s *state) setBit(id int, on bool) {
	if on {
		s.allowed[id/64] |= 1 << (id % 64)
	} else {
		s.allowed[id/64] &^= 1 << (id % 64)
	}
}

// User is one ACL user. Its settings change only through its Registry.
type User struct {
	name    string
	st      atomic.Pointer[state]
	deleted atomic.Bool
}

// Name returns the user's name.
func (u *User) Name() string { return u.name }

// Deleted reports whether ACL DELUSER (or ACL LOAD) removed the user;
// Redis closes the connections authenticated as it.
func (u *User) Deleted() bool { return u.deleted.Load() }

// Enabled reports whether the user is "on".
func (u *User) Enabled() bool { return u.st.Load().enabled }

// NoPass reports whether the user accepts any password ("nopass"), which
// makes a new connection authenticated as it when it is the default user.
func (u *User) NoPass() bool { return u.st.Load().nopass }

// Registry is the set of users, the command catalog their rules refer to,
// the denial log and the aclfile path.
type Registry struct {
	cat  *catalog
	mu   sync.Mutex // guards users (the map; each user's state is atomic)
	us   map[string]*User
	file string
	Log  Log
}

// New returns a registry for the commands of t with Redis's default user
// ("on nopass ~* &* +@all").
func New(t *command.Table) *Registry {
	r := &Registry{cat: newCatalog(t), us: map[string]*User{}}
	r.us["default"] = r.newUser("default", defaultRules)
	return r
}

var defaultRules = []string{"on", "nopass", "~*", "&*", "+@all"}

func (r *Registry) newUser(name string, rules []string) *User {
	u := &User{name: name}
	st := r.emptyState()
	for _, rule := range rules {
		if err := r.apply(st, rule); err != nil {
			panic(err) // rules of our own
		}
	}
	r.publish(u, st)
	return u
}

// emptyState is a new user's settings: off, no passwords, keys, channels
// or commands.
func (r *Registry) emptyState() *state {
	return &state{allowed: make([]uint64, (len(r.cat.cmds)+63)/64), ids: r.cat.ids}
}

func (r *Registry) publish(u *User, st *state) {
	st.everything = st.allKeys
	for id := range r.cat.cmds {
		if !st.bit(id) {
			st.everything = false
			break
		}
	}
	u.st.Store(st)
}

// Lookup returns the user called name, or nil.
func (r *Registry) Lookup(name string) *User {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.us[name]
}

// Default returns the default user.
func (r *Registry) Default() *User { return r.Lookup("default") }

// SetUser creates the user called name if needed and applies rules in
// order (ACL SETUSER). Either every rule applies or none does; the error
// is a *RuleError with Redis's text.
func (r *Registry) SetUser(name string, rules []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.us[name]
	var st *state
	if u == nil {
		st = r.emptyState()
	} else {
		st = u.st.Load().clone()
	}
	for _, rule := range rules {
		if err := r.apply(st, rule); err != nil {
			return err
		}
	}
	if u == nil {
		u = &User{name: name}
		r.us[name] = u
	}
	r.publish(u, st)
	return nil
}

// ErrDefaultUser is DelUser's error for the default user.
var ErrDefaultUser = errors.New("ERR The 'default' user cannot be removed")

// DelUser removes the named users and returns how many existed. The
// default user cannot be removed (ErrDefaultUser; then nothing is).
func (r *Registry) DelUser(names []string) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		if n == "default" {
			return 0, ErrDefaultUser
		}
	}
	n := 0
	for _, name := range names {
		if u := r.us[name]; u != nil {
			u.deleted.Store(true)
			delete(r.us, name)
			n++
		}
	}
	return n, nil
}

// Users returns the user names, sorted.
func (r *Registry) Users() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.us))
	for n := range r.us {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// List returns ACL LIST's lines, one per user, sorted by name.
func (r *Registry) List() []string {
	names := r.Users()
	out := make([]string, 0, len(names))
	for _, n := range names {
		if u := r.Lookup(n); u != nil {
			out = append(out, "user "+n+" "+r.describe(u.st.Load()))
		}
	}
	return out
}

// Authenticate returns the user called name if it is enabled and pass is
// one of its passwords (any password with nopass). Hashes are compared
// in constant time.
func (r *Registry) Authenticate(name, pass string) (*User, bool) {
	u := r.Lookup(name)
	if u == nil {
		return nil, false
	}
	st := u.st.Load()
	if !st.enabled {
		return nil, false
	}
	if st.nopass {
		return u, true
	}
	h := hashHex(pass)
	ok := false
	for _, p := range st.passwords {
		if subtle.ConstantTimeCompare([]byte(p), []byte(h)) == 1 {
			ok = true
		}
	}
	return u, ok
}

// SetRequirePass configures the default user as Redis's requirepass
// does: "" makes it nopass, anything else its only password.
func (r *Registry) SetRequirePass(pass string) {
	rules := []string{"resetpass", "nopass"}
	if pass != "" {
		rules = []string{"resetpass", ">" + pass}
	}
	if err := r.SetUser("default", rules); err != nil {
		panic(err) // cannot fail
	}
}

func hashHex(pass string) string {
	h := sha256.Sum256([]byte(pass))
	return hex.EncodeToString(h[:])
}

// apply applies one rule to st.
func (r *Registry) apply(st *state, rule string) error {
	fail := func(reason string) error { return &RuleError{Rule: rule, Reason: reason} }
	low := strings.ToLower(rule)
	switch low {
	case "on":
		st.enabled = true
		return nil
	case "off":
		st.enabled = false
		return nil
	case "nopass":
		st.nopass = true
		st.passwords = nil
		return nil
	case "resetpass":
		st.nopass = false
		st.passwords = nil
		return nil
	case "allkeys":
		st.allKeys, st.keys = true, []pattern{{permRead | permWrite, "*"}}
		return nil
	case "resetkeys":
		st.allKeys, st.keys = false, nil
		return nil
	case "allchannels":
		st.allChannels, st.channels = true, []string{"*"}
		return nil
	case "resetchannels":
		st.allChannels, st.channels = false, nil
		return nil
	case "allcommands", "+@all":
		st.allCommands = true
		for i := range st.allowed {
			st.allowed[i] = ^uint64(0)
		}
		st.firstArgs = nil
		return nil
	case "nocommands", "-@all":
		st.allCommands = false
		clear(st.allowed)
		st.firstArgs = nil
		return nil
	case "sanitize-payload", "skip-sanitize-payload":
		st.sanitize = low
		return nil
	case "reset":
		*st = *r.emptyState()
		st.sanitize = "sanitize-payload"
		return nil
	}
	if rule == "" {
		return fail(reasonSyntax)
	}
	switch rule[0] {
	case '>':
		st.nopass = false
		return addPass(st, hashHex(rule[1:]))
	case '#':
		if !validHash(rule[1:]) {
			return fail(reasonHash)
		}
		st.nopass = false
		return addPass(st, rule[1:])
	case '<':
		return delPass(st, hashHex(rule[1:]), fail)
	case '!':
		if !validHash(rule[1:]) {
			return fail(reasonHash)
		}
		return delPass(st, rule[1:], fail)
	case '~', '%':
		return addKeyPattern(st, rule, fail)
	case '&':
		if st.allChannels {
			return fail(reasonAllChans)
		}
		p := rule[1:]
		if p == "*" {
			st.allChannels, st.channels = true, []string{"*"}
			return nil
		}
		if !contains(st.channels, p) {
			st.channels = append(st.channels, p)
		}
		return nil
	case '+', '-':
		return r.applyCommand(st, rule, fail)
	}
	return fail(reasonSyntax)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func addPass(st *state, h string) error {
	if !contains(st.passwords, h) {
		st.passwords = append(st.passwords, h)
	}
	return nil
}

// delPass removes a password; Redis refuses one the user does not have.
func delPass(st *state, h string, fail func(string) error) error {
	for i, p := range st.passwords {
		if p == h {
			st.passwords = append(st.passwords[:i], st.passwords[i+1:]...)
			return nil
		}
	}
	return fail(reasonNoPass)
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func addKeyPattern(st *state, rule string, fail func(string) error) error {
	perm, pat := uint8(permRead|permWrite), rule[1:]
	if rule[0] == '%' {
		i := strings.IndexByte(rule, '~')
		if i < 2 {
			return fail(reasonSyntax)
		}
		perm = 0
		for _, c := range rule[1:i] {
			switch c {
			case 'R', 'r':
				perm |= permRead
			case 'W', 'w':
				perm |= permWrite
			default:
				return fail(reasonSyntax)
			}
		}
		pat = rule[i+1:]
	}
	if st.allKeys {
		return fail(reasonAllKeys)
	}
	if pat == "*" && perm == permRead|permWrite {
		st.allKeys, st.keys = true, []pattern{{perm, "*"}}
		return nil
	}
	for i, k := range st.keys {
		if k.pat == pat {
			st.keys[i].perm |= perm
			return nil
		}
	}
	st.keys = append(st.keys, pattern{perm, pat})
	return nil
}

// applyCommand applies +cmd, -cmd, +@cat, -@cat, +cmd|sub, -cmd|sub and
// +cmd|firstarg.
func (r *Registry) applyCommand(st *state, rule string, fail func(string) error) error {
	allow := rule[0] == '+'
	name := strings.ToLower(rule[1:])
	if strings.HasPrefix(name, "@") {
		c := command.ACLCategory(name[1:])
		if c == 0 {
			return fail(reasonUnknown)
		}
		r.cat.setCategory(st, c, allow)
		return nil
	}
	if id, ok := r.cat.byName[name]; ok {
		r.cat.changePerm(st, id, allow)
		return nil
	}
	i := strings.IndexByte(name, '|')
	if i <= 0 {
		return fail(reasonUnknown)
	}
	id, ok := r.cat.byName[name[:i]]
	if !ok || len(r.cat.cmds[id].Subcommands) > 0 {
		return fail(reasonUnknown) // an unknown subcommand of a container
	}
	if strings.Contains(name[i+1:], "|") || name[i+1:] == "" {
		return fail(reasonSyntax)
	}
	if !allow {
		return fail(reasonUnknown) // first-arg rules can only allow
	}
	if st.bit(id) {
		return nil
	}
	if st.firstArgs == nil {
		st.firstArgs = map[int][]string{}
	}
	if !contains(st.firstArgs[id], name[i+1:]) {
		st.firstArgs[id] = append(st.firstArgs[id], name[i+1:])
	}
	return nil
}

// Denial is why Check refused a command.
type Denial uint8

// Denials, with Redis's ACL LOG reasons.
const (
	Allowed       Denial = iota
	DeniedCommand        // "command"
	DeniedKey            // "key"
	DeniedAuth           // "auth": a failed AUTH (logged, not returned by Check)
)

// Reason is the ACL LOG reason word.
func (d Denial) Reason() string {
	switch d {
	case DeniedCommand:
		return "command"
	case DeniedKey:
		return "key"
	case DeniedAuth:
		return "auth"
	}
	return ""
}

// Check reports whether u may run spec with args (args[0] the command
// name) and, for DeniedKey, the index in args of the first key refused.
// Commands flagged no_auth (AUTH, HELLO, QUIT) are always allowed. A
// user turned "off" can no longer authenticate, but connections already
// authenticated as it keep its permissions, as in Redis.
// Cost: nothing for a user with every command and key; otherwise one
// bitmap test plus a glob match per key and pattern. It does not
// allocate.
func (u *User) Check(spec *command.Spec, args [][]byte) (Denial, int) {
	st := u.st.Load()
	if st.everything || spec.Flags&command.FlagNoAuth != 0 {
		return Allowed, 0
	}
	id, ok := st.ids[spec]
	if !ok {
		return DeniedCommand, 0
	}
	if !st.bit(id) && (len(args) < 2 || !firstArgAllowed(st.firstArgs[id], args[1])) {
		return DeniedCommand, 0
	}
	if st.allKeys {
		return Allowed, 0
	}
	return checkKeys(st, spec, args)
}

func firstArgAllowed(list []string, arg []byte) bool {
	for _, a := range list {
		if strings.EqualFold(a, string(arg)) {
			return true
		}
	}
	return false
}

// checkKeys checks every key position of spec's key specs (or, without
// key specs, its legacy range) against st's patterns.
func checkKeys(st *state, spec *command.Spec, args [][]byte) (Denial, int) {
	if len(spec.Keys) == 0 {
		if spec.FirstKey <= 0 {
			return Allowed, 0
		}
		need := uint8(permRead)
		if spec.Writes() {
			need = permWrite
		}
		last := spec.LastKey
		if last < 0 {
			last += len(args)
		}
		for i := spec.FirstKey; i <= last && i < len(args); i += max(spec.Step, 1) {
			if !keyAllowed(st, args[i], need) {
				return DeniedKey, i
			}
		}
		return Allowed, 0
	}
	for _, k := range spec.Keys {
		var need uint8
		if k.Flags&command.KeyAccess != 0 {
			need |= permRead
		}
		if k.Flags&(command.KeyInsert|command.KeyUpdate|command.KeyDelete) != 0 {
			need |= permWrite
		}
		if k.Flags&command.KeyVariableFlags != 0 && spec.Name == "set" && !hasGet(args) {
			need = permWrite // Redis's setGetKeys: SET without GET only overwrites
		}
		last := k.LastKey
		if last >= 0 {
			last += k.Begin
		} else {
			last += len(args)
		}
		for i := k.Begin; i <= last && i < len(args); i += k.Step() {
			if !keyAllowed(st, args[i], need) {
				return DeniedKey, i
			}
		}
	}
	return Allowed, 0
}

// hasGet reports whether a SET call has the GET option.
func hasGet(args [][]byte) bool {
	for _, a := range args[min(3, len(args)):] {
		if strings.EqualFold(string(a), "get") {
			return true
		}
	}
	return false
}

func keyAllowed(st *state, key []byte, need uint8) bool {
	for _, p := range st.keys {
		if p.perm&need == need && keyspace.Match(p.pat, string(key)) {
			return true
		}
	}
	return false
}

// DenialMessage is the error reply (without '-') for a denial by Check,
// in Redis 7.2's words.
func DenialMessage(d Denial, user string, spec *command.Spec) string {
	if d == DeniedKey {
		return "NOPERM No permissions to access a key"
	}
	return "NOPERM User " + user + " has no permissions to run the '" + spec.Name + "' command"
}

// DryRunMessage is ACL DRYRUN's text for a denial (Redis's verbose form,
// naming the key).
func DryRunMessage(d Denial, user string, spec *command.Spec, key []byte) string {
	if d == DeniedKey {
		return "User " + user + " has no permissions to access the '" + string(key) + "' key"
	}
	return "User " + user + " has no permissions to run the '" + spec.Name + "' command"
}
