// Package cmsraw is the server's backdoor into package cms: the one
// operation only internal/command/cms needs, a weighted merge whose
// sources are added one at a time (each under its own key's read lock)
// instead of all at once, so that CMS.MERGE never holds two keys' locks
// and never copies a source.
//
// The pattern (docs/LIBRARY.md, "How the server uses the library"):
// package cms calls Register from its init with a Hooks value
// instantiated over its own types; the adapter fetches it once with Get.
// This package imports nothing from probly, so there is no import cycle.
package cmsraw

// Hooks are package cms's server-only operations. S is cms.Sketch; Sum is
// the package's unexported accumulator of weighted sums.
type Hooks[S any] struct {
	// NewSum returns empty weighted sums shaped like s (8 bytes per
	// counter).
	NewSum func(like *S) Sum
	// Add adds w·src to the sums, with cms.Sketch.MergeWeighted's
	// overflow rules; src must have the shape NewSum was given.
	Add func(a Sum, src *S, w int64)
	// Apply writes the sums to dst (same shape) as its counters and
	// total and reports true, or reports false (cms.ErrOverflow's cases)
	// and leaves dst unchanged.
	Apply func(a Sum, dst *S) bool
}

// Sum is an accumulator NewSum made, opaque outside package cms.
type Sum any

var hooks any

// Register records package cms's hooks; cms calls it from init.
func Register(h any) { hooks = h }

// Get returns the registered hooks as H. It panics if cms registered none
// of that type (a programming error found at start-up).
func Get[H any]() H {
	h, ok := hooks.(H)
	if !ok {
		panic("cmsraw: package cms registered no hooks of this type")
	}
	return h
}
