package rediscuckoo

import (
	"fmt"

	"github.com/probly/probly/cuckoo"
	"github.com/probly/probly/internal/cuckooraw"
)

// Snapshots use the cuckoo package's encoding (docs/FORMATS.md, "Cuckoo
// filter"): magic "PRBL", kind 3, hash ID 4 (murmur64a-single) with seed 0,
// 8-bit fingerprints, the table bytes exactly as CF.SCANDUMP sends them,
// and CRC-32Cs over header and tables. The budget recorded in it is
// informational: the decoder's budget argument replaces it.

// MarshalBinary encodes c for a snapshot.
func (c *Filter) MarshalBinary() ([]byte, error) { return c.f.MarshalBinary() }

// UnmarshalFilter decodes a snapshot made by MarshalBinary. budget bounds
// the filter's table bytes (0 = DefaultBudget) before anything is
// allocated, then its MemoryUsage, and becomes the filter's growth budget. The encoding must be
// a RedisBloom-compatible cuckoo filter (hash murmur64a-single seed 0, 8-bit
// fingerprints) with nothing after it. Errors wrap ErrBadData.
func UnmarshalFilter(data []byte, budget uint64) (*Filter, error) {
	budget = budgetOr(budget)
	const overhead = 76 // header and table checksum of the encoding
	if uint64(len(data)) > overhead && uint64(len(data))-overhead > budget {
		return nil, fmt.Errorf("%w: %d table bytes exceed the budget of %d", ErrBadData, len(data)-overhead, budget)
	}
	f := new(cuckoo.Filter)
	if err := f.UnmarshalBinary(data); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadData, err)
	}
	cfg := raw.Config(f)
	switch {
	case cfg.HashID != cuckoo.HashID(cuckooraw.HashMurmur64A) || cfg.Seed != 0:
		return nil, fmt.Errorf("%w: hash %v seed %d, want murmur64a-single seed 0", ErrBadData, cfg.HashID, cfg.Seed)
	case cfg.FingerprintBits != 8:
		return nil, fmt.Errorf("%w: %d-bit fingerprints, want 8", ErrBadData, cfg.FingerprintBits)
	}
	c := wrap(f, budget)
	if c.MemoryUsage() > budget {
		return nil, fmt.Errorf("%w: %d bytes of memory exceed the budget of %d", ErrBadData, c.MemoryUsage(), budget)
	}
	return c, nil
}
