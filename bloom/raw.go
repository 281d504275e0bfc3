package bloom

import "github.com/probly/probly/internal/bloomraw"

// The server-only operations, handed to internal/bloomraw (see
// docs/LIBRARY.md, "How the server uses the library"). None of them is
// public: they can break an invariant or restore unvalidated state.
func init() {
	bloomraw.Register(bloomraw.Hooks[Filter, SBBF, Scalable, Stable, ScalableConfig]{
		FilterN:               (*Filter).items,
		FilterSetN:            (*Filter).setN,
		FilterM:               (*Filter).numBits,
		FilterK:               (*Filter).numHashes,
		FilterBytes:           (*Filter).sizeBytes,
		FilterSetHash:         func(f *Filter, id uint16, seed uint64) error { return f.setHash(HashID(id), seed) },
		ReadBitsAt:            (*Filter).readBitsAt,
		WriteBitsAt:           (*Filter).writeBitsAt,
		FilterEqual:           (*Filter).equal,
		AddHashManyExclusive:  (*Filter).addHashManyExclusive,
		CanHashKeys:           func(f *Filter) bool { return canHashKeys(f.hashID) },
		NewBuilder:            func(f *Filter) bloomraw.Builder { return newBuilder(f) },
		SBBFSeed:              (*SBBF).hashSeed,
		SBBFSetSeed:           (*SBBF).setHashSeed,
		SBBFAddHashMany:       (*SBBF).addHashMany,
		SBBFTestHashMany:      (*SBBF).testHashMany,
		SBBFFalsePositiveRate: sbbfFalsePositiveRate,
		StablePointFPR:        (*Stable).stablePointFPR,
		StableSizing:          stableSizing,
		Restore: func(cfg ScalableConfig, links []bloomraw.Link[Filter]) (*Scalable, error) {
			ls := make([]link, len(links))
			for i, l := range links {
				ls[i] = link{Filter: l.Filter, Capacity: l.Capacity, ErrorRate: l.ErrorRate}
			}
			return restoreScalable(cfg, ls)
		},
		Links: func(s *Scalable) []bloomraw.Link[Filter] {
			out := make([]bloomraw.Link[Filter], len(s.links))
			for i, l := range s.links {
				out[i] = bloomraw.Link[Filter]{Filter: l.Filter, Capacity: l.Capacity, ErrorRate: l.ErrorRate}
			}
			return out
		},
		NumLinks:    (*Scalable).numLinks,
		N:           (*Scalable).items,
		Capacity:    (*Scalable).capacityN,
		Bytes:       (*Scalable).sizeBytes,
		Config:      (*Scalable).config,
		SetMaxBytes: (*Scalable).setMaxBytes,
		Clone:       (*Scalable).clone,
	})
}
