// Package config holds the server's runtime settings that CONFIG GET/SET
// read and change (RedisBloom's bf-*/cf-* settings, hll-sparse-max-bytes,
// persistence and limits).
//
// A Registry is safe for concurrent use. Each parameter keeps the string
// that was last set, which is what CONFIG GET returns (RedisBloom answers
// "0.02" as it was typed), except that memory values are shown in bytes
// as Redis shows them ("2mb" → "2097152"; Param.Memory, Param.Show).
//
// The registry is also the list of configuration-file directives
// (ParseFile, file.go): every registered parameter is a directive of the
// same name, and Rewrite (CONFIG REWRITE) writes the current values back.
package config

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/probly/probly/internal/command/argparse"
)

// ErrUnknown is returned for a parameter name that is not registered.
var ErrUnknown = errors.New("config: unknown parameter")

// Param describes one setting. Set validates and applies s; it returns an
// error whose text is sent to the client after "ERR CONFIG SET failed
// (possibly related to argument '<name>') - ".
type Param struct {
	Name    string
	Default string
	Set     func(s string) error
	// Memory marks a byte-sized parameter: a value that is a memory value
	// (ParseMemory) is kept and shown in bytes, as Redis's CONFIG GET
	// answers, and CONFIG REWRITE writes it with the largest exact unit
	// ("64mb"). Other accepted values (maxmemory-clients' "10%") stay as
	// typed.
	Memory bool
	// Show, if set, maps an accepted value to what CONFIG GET shows
	// (bf-error-rate shows a value over its cap as the cap).
	Show func(s string) string
	// Lines, if set, splits a value into the values of the directive
	// lines CONFIG REWRITE writes for it (save: one line per pair, as
	// Redis); nil = one line.
	Lines func(s string) []string
	// Immutable marks a parameter Redis refuses to change at run time
	// whatever the value (databases, cluster-enabled): CONFIG SET answers
	// ErrImmutable's text without calling Set (Registry.Immutable), while
	// start-up values and configuration-file directives still go through
	// Set (Registry.Set), which accepts the one value the server has.
	Immutable bool
}

// ErrImmutable is CONFIG SET's reason for an Immutable parameter (Redis's
// text).
const ErrImmutable Reason = "can't set immutable config"

// shown is the string CONFIG GET answers for an accepted value v.
func (p *Param) shown(v string) string {
	if p.Show != nil {
		return p.Show(v)
	}
	if p.Memory {
		if n, err := ParseMemory(v); err == nil {
			return strconv.FormatUint(n, 10)
		}
		if v == "" { // accepted as 0 (hll-sparse-max-bytes, as Redis)
			return "0"
		}
	}
	return v
}

// Registry is a set of named parameters.
type Registry struct {
	mu     sync.RWMutex
	params map[string]*entry
	file   string // the configuration file, "" = none (SetFile)
}

type entry struct {
	p   Param
	cur string
	// auto is the value "auto" stands for (AcceptAuto), "" = none;
	// isAuto reports that cur was set by "auto" (or is the default that
	// auto stands for), so CONFIG REWRITE writes "auto".
	auto   string
	isAuto bool
}

// New returns an empty Registry.
func New() *Registry { return &Registry{params: map[string]*entry{}} }

// Register adds p and applies its default. It panics on a duplicate name
// or an invalid default (programming errors, not user input).
func (r *Registry) Register(p Param) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := strings.ToLower(p.Name)
	if _, dup := r.params[name]; dup {
		panic("config: duplicate parameter " + name)
	}
	if p.Set != nil {
		if err := p.Set(p.Default); err != nil {
			panic(fmt.Sprintf("config: bad default for %s: %v", name, err))
		}
	}
	r.params[name] = &entry{p: p, cur: p.shown(p.Default)}
}

// Set validates and applies value. Errors: ErrUnknown, or the parameter's
// own validation error.
func (r *Registry) Set(name, value string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.params[strings.ToLower(name)]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknown, name)
	}
	auto := e.auto != "" && strings.EqualFold(value, "auto")
	if auto {
		value = e.auto
	}
	if e.p.Set != nil {
		if err := e.p.Set(value); err != nil {
			return err
		}
	}
	e.cur, e.isAuto = e.p.shown(value), auto
	return nil
}

// AcceptAuto makes the value "auto" (any case) of the named parameter
// stand for value, in CONFIG SET, configuration files and start-up
// values alike: the parameter is set to value, and CONFIG GET shows it as
// it shows any value (bytes for a memory value). CONFIG REWRITE writes
// "auto" for a parameter whose value was set by "auto", or that still has
// its default when the default is what "auto" stands for, so the
// rewritten file keeps meaning "the share of this machine's memory"
// rather than pinning the figure of the machine it was written on. It is
// for the settings whose serve flags default to "auto" (maxmemory and the
// per-filter budgets: a share of the memory available, computed once at
// start-up). It panics on a name that is not registered or an empty value
// (programming errors).
func (r *Registry) AcceptAuto(name, value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.params[strings.ToLower(name)]
	if !ok || value == "" {
		panic("config: AcceptAuto of unknown parameter " + name + " or empty value")
	}
	e.auto = value
	if e.cur == e.p.shown(e.p.Default) && e.cur == e.p.shown(value) {
		e.isAuto = true
	}
}

// AcceptMemoryUnits makes the named parameters accept Redis memory values
// (ParseMemory: "1mb", "64kb", "1g", or plain bytes) although their Set
// functions take a decimal byte count: the value is converted to bytes
// before it reaches Set, and CONFIG GET shows it in bytes, like the
// MemoryParam parameters (the parameter becomes Param.Memory). This is for byte-sized parameters registered
// with an integer parser by code that cannot use MemoryParam itself. A
// value that is not a memory value is refused with Redis's "argument must
// be a memory value" (Set never sees it); one over 2^63−1 bytes is handed
// to Set as its decimal, for Set's range error. It panics on a name that
// is not registered (a programming error).
func (r *Registry) AcceptMemoryUnits(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range names {
		e, ok := r.params[strings.ToLower(name)]
		if !ok {
			panic("config: AcceptMemoryUnits of unknown parameter " + name)
		}
		e.p.Memory = true
		e.cur = e.p.shown(e.cur)
		set := e.p.Set
		if set == nil {
			continue
		}
		e.p.Set = func(v string) error {
			n, err := ParseMemory(v)
			if err != nil {
				return err
			}
			return set(strconv.FormatUint(n, 10))
		}
	}
}

// Immutable reports whether the named parameter is registered and
// Param.Immutable.
func (r *Registry) Immutable(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.params[strings.ToLower(name)]
	return ok && e.p.Immutable
}

// Get returns the current string of one parameter.
func (r *Registry) Get(name string) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.params[strings.ToLower(name)]
	if !ok {
		return "", false
	}
	return e.cur, true
}

// Match returns name/value pairs for every parameter whose name matches
// the glob, sorted by name. match is the glob matcher to use.
func (r *Registry) Match(glob string, match func(pattern, name string) bool) [][2]string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out [][2]string
	for name, e := range r.params {
		if match(strings.ToLower(glob), name) {
			out = append(out, [2]string{name, e.cur})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// ParseMemory parses a Redis memory value: decimal digits followed by an
// optional, case-insensitive unit b, k, kb, m, mb, g, gb (k = 1000,
// kb = 1024 …), as in redis.conf ("512mb", "1gb", "1048576"). Unlike
// Redis's memtoull it requires at least one digit and reports a value that
// does not fit 64 bits as an error instead of wrapping.
func ParseMemory(v string) (uint64, error) {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, errNotMemory
	}
	var mul uint64
	switch strings.ToLower(v[i:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1 << 10
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1 << 20
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1 << 30
	default:
		return 0, errNotMemory
	}
	var n uint64
	for _, c := range v[:i] {
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, errNotMemory
		}
		n = n*10 + d
	}
	if n != 0 && mul > (1<<64-1)/n {
		return 0, errNotMemory
	}
	return n * mul, nil
}

var errNotMemory = errors.New("argument must be a memory value")

// MemoryParam is a parameter holding a memory value (see ParseMemory) in
// [lo, hi]; store receives the value in bytes, and CONFIG GET shows bytes. Errors use Redis's texts:
// "argument must be a memory value", "argument must be between <lo> and
// <hi> inclusive".
func MemoryParam(name, def string, lo, hi uint64, store func(uint64)) Param {
	return Param{
		Name:    name,
		Default: def,
		Memory:  true,
		Set: func(v string) error {
			n, err := ParseMemory(v)
			if err != nil {
				return err
			}
			if n < lo || n > hi {
				return fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
			}
			store(n)
			return nil
		},
	}
}

// IntParam is a parameter holding a decimal integer in [lo, hi]; store
// receives it. Errors use Redis's texts: "argument couldn't be parsed into
// an integer", "argument must be between <lo> and <hi> inclusive".
func IntParam(name, def string, lo, hi int64, store func(int64)) Param {
	return Param{
		Name:    name,
		Default: def,
		Set: func(v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return errors.New("argument couldn't be parsed into an integer")
			}
			if n < lo || n > hi {
				return fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
			}
			store(n)
			return nil
		},
	}
}

// ModuleIntParam is a RedisBloom setting holding an integer in
// [lo(), hi()] (the bounds may depend on other settings: Set runs under
// the registry's lock); store receives it. Errors use RedisBloom's texts
// (src/config.c): "Invalid value for `<name>`", "Value for `<name>` must
// be in the range [<lo>, <hi>]". The integer syntax is Redis's
// (argparse.Int: no sign but '-', no leading zeros, no blanks).
func ModuleIntParam(name, def string, lo, hi func() int64, store func(int64)) Param {
	return Param{
		Name:    name,
		Default: def,
		Set: func(v string) error {
			n, ok := argparse.Int([]byte(v))
			if !ok {
				return Reason("Invalid value for `" + name + "`")
			}
			if l, h := lo(), hi(); n < l || n > h {
				return Reason(fmt.Sprintf("Value for `%s` must be in the range [%d, %d]", name, l, h))
			}
			store(n)
			return nil
		},
	}
}

// Const returns a bound for ModuleIntParam that is always n.
func Const(n int64) func() int64 { return func() int64 { return n } }

// Reason is a CONFIG SET failure reason in the words of Redis or
// RedisBloom, which the client receives verbatim after "ERR CONFIG SET
// failed (possibly related to argument '<name>') - " (capitals included).
type Reason string

func (r Reason) Error() string { return string(r) }
