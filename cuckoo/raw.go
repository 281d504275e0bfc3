package cuckoo

import "github.com/probly/probly/internal/cuckooraw"

// The server-only operations, handed to internal/cuckooraw (see
// docs/LIBRARY.md, "How the server uses the library"). None of them is
// public: they can break an invariant, restore unvalidated state or build
// a filter whose hash this package cannot compute. Every Config here has
// Expansion in its encoded meaning (0 = never grow).
func init() {
	cuckooraw.Register(cuckooraw.Hooks[Filter, Config]{
		New:              newWithConfig,
		Restore:          restore,
		TableBytes:       tableBytesFor,
		Config:           (*Filter).rawConfig,
		SetMaxBytes:      (*Filter).setMaxBytes,
		Items:            func(f *Filter) uint64 { return f.items },
		Deletes:          func(f *Filter) uint64 { return f.deletes },
		SubFilters:       (*Filter).subFilters,
		SubFilterBuckets: (*Filter).subFilterBuckets,
		SubTableBytes:    (*Filter).tableBytes,
		SizeBytes:        func(f *Filter) uint64 { return f.bytes },
		CompactNewest:    func(f *Filter) { f.compact(true) },
		ReadTableAt:      (*Filter).readTableAt,
		WriteTableAt:     (*Filter).writeTableAt,
		Equal:            (*Filter).equal,
		ReadN:            readN,
	})
}

// The server's hash ID agrees with this package's.
var _ = [1]struct{}{}[hashMurmur64A-cuckooraw.HashMurmur64A]
