// Package config holds the server's runtime settings that CONFIG GET/SET
// read and change (RedisBloom's bf-*/cf-* settings, hll-sparse-max-bytes,
// persistence and limits).
//
// A Registry is safe for concurrent use. Each parameter keeps the string
// that was last set, which is what CONFIG GET returns (RedisBloom answers
// "0.02" as it was typed).
package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
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
}

// Registry is a set of named parameters.
type Registry struct {
	mu     sync.RWMutex
	params map[string]*entry
}

type entry struct {
	p   Param
	cur string
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
	r.params[name] = &entry{p: p, cur: p.Default}
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
	if e.p.Set != nil {
		if err := e.p.Set(value); err != nil {
			return err
		}
	}
	e.cur = value
	return nil
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
