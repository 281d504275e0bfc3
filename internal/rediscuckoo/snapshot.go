package rediscuckoo

import (
	"bytes"
	"fmt"
	"io"

	"github.com/probly/probly/cuckoo"
	"github.com/probly/probly/internal/cuckooraw"
)

// Snapshots use the cuckoo package's encoding (docs/FORMATS.md, "Cuckoo
// filter"): magic "PRBL", kind 3, hash ID 4 (murmur64a-single) with seed 0,
// 8-bit fingerprints, the table bytes exactly as CF.SCANDUMP sends them,
// max bytes 0 (the budget is the server's policy, held by Filter only, so
// the encoding is a function of the filter's state: the same before and
// after a restart), and CRC-32Cs over header and tables. A nonzero max
// bytes (older snapshots recorded the budget) is ignored: the decoder's
// budget argument replaces it.

// MarshalBinary encodes c for a snapshot.
func (c *Filter) MarshalBinary() ([]byte, error) { return c.f.MarshalBinary() }

// WriteTo writes MarshalBinary's encoding to w (io.WriterTo) in 64 KiB
// pieces, reading the tables without writing them (a snapshot of a large,
// mostly empty filter does not touch its untouched pages).
func (c *Filter) WriteTo(w io.Writer) (int64, error) { return c.f.WriteTo(w) }

// UnmarshalFilter decodes a snapshot made by MarshalBinary: ReadFilter on
// data, which must hold exactly one encoding.
func UnmarshalFilter(data []byte, budget uint64) (*Filter, error) {
	return ReadFilter(bytes.NewReader(data), uint64(len(data)), budget)
}

// ReadFilter decodes a snapshot made by MarshalBinary from r, which holds
// exactly n bytes of it, in place (tables allocated once, pages of empty
// slots left untouched). budget bounds the filter's table bytes (0 =
// DefaultBudget) before anything is allocated, then its MemoryUsage, and
// becomes the filter's growth budget. The encoding must be a
// RedisBloom-compatible cuckoo filter (hash murmur64a-single seed 0, 8-bit
// fingerprints). Errors wrap ErrBadData.
func ReadFilter(r io.Reader, n, budget uint64) (*Filter, error) {
	budget = budgetOr(budget)
	const overhead = 76 // header and table checksum of the encoding
	if n > overhead && n-overhead > budget {
		return nil, fmt.Errorf("%w: %d table bytes exceed the budget of %d", ErrBadData, n-overhead, budget)
	}
	f, err := raw.ReadN(r, n)
	if err != nil {
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
