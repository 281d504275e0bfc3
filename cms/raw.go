package cms

import "github.com/probly/probly/internal/cmsraw"

// The server-only operation, handed to internal/cmsraw (docs/LIBRARY.md,
// "How the server uses the library"): MergeWeighted's accumulator, so
// that CMS.MERGE can add each source under its own key's lock.
func init() {
	cmsraw.Register(cmsraw.Hooks[Sketch]{
		NewSum: func(like *Sketch) cmsraw.Sum { return newSum(like) },
		Add:    func(a cmsraw.Sum, src *Sketch, w int64) { a.(*sum).add(src, w) },
		Apply:  func(a cmsraw.Sum, dst *Sketch) bool { return a.(*sum).apply(dst) },
	})
}
