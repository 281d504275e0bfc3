package redisbloom

// Stats summarizes a chain for monitoring (probly's per-filter metrics).
type Stats struct {
	Items    uint64 // items inserted (BF.CARD)
	Capacity uint64 // Σ sub-filter capacities (BF.INFO Capacity)
	Filters  int    // sub-filters (links)
	Bytes    uint64 // Σ bit-array bytes
	// FillRatio is the fraction of all bits set, over every sub-filter.
	FillRatio float64
	// FPR is the compound false-positive rate estimated from the fill of
	// every sub-filter: 1 − Π(1 − fill_i^k_i).
	FPR float64
}

// Stats returns the chain's statistics (bloom.Scalable.Stats). Cost: one
// population count over every sub-filter's bits (m/64 words); call it
// under the key's read lock.
func (c *Chain) Stats() Stats {
	s := c.sc.Stats()
	return Stats{Items: s.N, Capacity: s.Capacity, Filters: raw.NumLinks(c.sc), Bytes: s.Bytes, FillRatio: s.FillRatio, FPR: s.FPR}
}
