package redisbloom

// NewMemoryUsage returns the MemoryUsage of the chain New(p, budget) would
// create, without allocating it, and false if New would fail. It follows
// New's sizing: one link of p.Capacity entries at the error rate
// bloom.NewScalable gives the first link (p.ErrorRate, halved by the
// tightening ratio when the chain scales).
func NewMemoryUsage(p Params, budget uint64) (uint64, bool) {
	if budget == 0 {
		budget = DefaultBudget
	}
	n, err := newSize(p, budget)
	return n, err == nil
}

// HeaderMemoryUsage returns the MemoryUsage of the chain DecodeHeader
// would build from a SCANDUMP header, without allocating it, and false if
// the header is invalid.
func HeaderMemoryUsage(data []byte, budget uint64) (uint64, bool) {
	if budget == 0 {
		budget = DefaultBudget
	}
	h, err := parseHeader(data, budget)
	if err != nil {
		return 0, false
	}
	return memoryUsage(h.heap, int(h.nlinks)), true
}

// tightening is RedisBloom's ERROR_TIGHTENING_RATIO: each new link's
// error rate is the previous one's times it, and a scaling chain's first
// link gets ErrorRate·(1 − tightening).
const tightening = 0.5
