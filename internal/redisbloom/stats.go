package redisbloom

// Stats summarizes a chain for monitoring (probly's per-filter metrics).
type Stats struct {
	Items    uint64 // items inserted (BF.CARD)
	Capacity uint64 // Σ sub-filter capacities (BF.INFO Capacity)
	Filters  int    // sub-filters (links)
	Bytes    uint64 // Σ bit-array bytes
	// FillRatio is the fraction of all bits set, over every sub-filter.
	FillRatio float64
	// EstimatedFPR is the compound false-positive rate estimated from the
	// fill of every sub-filter: 1 − Π(1 − fill_i^k_i).
	EstimatedFPR float64
}

// Stats returns the chain's statistics. Cost: one population count over
// every sub-filter's bits (m/64 words); call it under the key's read lock.
func (c *Chain) Stats() Stats {
	st := Stats{Items: raw.N(c.sc), Capacity: raw.Capacity(c.sc), Filters: raw.NumLinks(c.sc), Bytes: raw.Bytes(c.sc)}
	var set, bits uint64
	q := 1.0
	for _, l := range raw.Links(c.sc) {
		s := l.Filter.Stats()
		set += s.SetBits
		bits += s.M
		q *= 1 - s.EstimatedFPR
	}
	if bits > 0 {
		st.FillRatio = float64(set) / float64(bits)
	}
	st.EstimatedFPR = 1 - q
	return st
}
