package redisbloom

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/probly/probly/bloom"
	"github.com/probly/probly/internal/keyspace"
)

// SCANDUMP header layout (spec §1.4), little-endian and packed:
//
//	u64 size | u32 nfilters | u32 options | u32 growth            (20 bytes)
//	per link: u64 bytes | u64 bits | u64 size | f64 error | f64 bpe |
//	          u32 hashes | u64 entries | u8 n2                    (53 bytes)
const (
	headerFixed = 20
	headerLink  = 53
)

// maxHashes is RedisBloom's BLOOM_MAX_HASHES, the most hashes
// bloom_validate_integrity accepts: DBL_MANT_DIG − DBL_MIN_EXP + 1, the
// count the smallest denormal error rate gives.
const maxHashes = 53 + 1021 + 1

// HeaderSize returns the length of the chain's SCANDUMP header.
func (c *Chain) HeaderSize() int { return headerFixed + headerLink*raw.NumLinks(c.sc) }

// AppendHeader appends the SCANDUMP header of c to b.
func (c *Chain) AppendHeader(b []byte) []byte {
	le := binary.LittleEndian
	b = le.AppendUint64(b, raw.N(c.sc))
	b = le.AppendUint32(b, uint32(raw.NumLinks(c.sc)))
	b = le.AppendUint32(b, c.options)
	b = le.AppendUint32(b, c.growth)
	for i, l := range raw.Links(c.sc) {
		b = le.AppendUint64(b, c.meta[i].bytes)
		b = le.AppendUint64(b, c.meta[i].bits)
		b = le.AppendUint64(b, raw.FilterN(l.Filter))
		b = le.AppendUint64(b, math.Float64bits(l.ErrorRate))
		b = le.AppendUint64(b, math.Float64bits(c.meta[i].bpe))
		b = le.AppendUint32(b, raw.FilterK(l.Filter))
		b = le.AppendUint64(b, l.Capacity)
		b = append(b, c.meta[i].n2)
	}
	return b
}

// Header returns the SCANDUMP header of c (BF.SCANDUMP key 0).
func (c *Chain) Header() []byte { return c.AppendHeader(make([]byte, 0, c.HeaderSize())) }

// headerLinkInfo is one decoded, validated link of a header.
type headerLinkInfo struct {
	bytes, bits, size, entries uint64
	errorRate, bpe             float64
	hashes                     uint32
	n2                         uint8
}

type parsedHeader struct {
	size, totalBytes, heap  uint64 // heap: Σ keyspace.HeapSize(link bytes)
	options, growth, nlinks uint32
	links                   []headerLinkInfo
}

// parseHeader validates a SCANDUMP header without allocating anything
// proportional to the sizes it declares (only the per-link records, which
// are bounded by len(data)). Every failure is ErrBadData.
//
// Rules (RedisBloom's, spec §1.4): exact length; nfilters > 0; options ⊆
// {1,2,4,8}; per link 0 < error < 1, n2 ≤ 63, n2 == 0 or bits ≥ 2^n2,
// bits ≠ 0, bits == bytes·8, hashes == ceil(0.693147180559945·bpe);
// Σ link size == size. Headers without FORCE64 (32-bit MurmurHash2 pairs,
// see Chain.Pair) and bit counts that are not a multiple of 64 are
// accepted, as RedisBloom accepts them. In addition (probly):
//   - when n2 > 0, the 2^n2 bits positions use, in whole 64-bit words,
//     must be the link's bytes (true of every link bloom_init makes);
//   - entries ≥ 1, hashes ≤ bloom.MaxK, bits ≤ bloom.MaxBits;
//   - the chain's MemoryUsage (bit arrays at their heap size plus
//     LinkOverhead per link) must fit the budget. A header whose link
//     count alone cannot fit is refused before anything proportional to
//     it is allocated.
func parseHeader(data []byte, budget uint64) (*parsedHeader, error) {
	if len(data) < headerFixed {
		return nil, ErrBadData
	}
	le := binary.LittleEndian
	h := &parsedHeader{
		size:    le.Uint64(data[0:]),
		nlinks:  le.Uint32(data[8:]),
		options: le.Uint32(data[12:]),
		growth:  le.Uint32(data[16:]),
	}
	if h.nlinks == 0 || uint64(len(data)) != headerFixed+headerLink*uint64(h.nlinks) {
		return nil, ErrBadData
	}
	if h.options&^optAll != 0 {
		return nil, ErrBadData
	}
	// Every link takes at least LinkOverhead plus an 8-byte bit array.
	if memoryUsage(8*uint64(h.nlinks), int(h.nlinks)) > budget {
		return nil, ErrBadData
	}
	h.links = make([]headerLinkInfo, h.nlinks)
	var sumSize uint64
	p := data[headerFixed:]
	for i := range h.links {
		l := &h.links[i]
		l.bytes = le.Uint64(p[0:])
		l.bits = le.Uint64(p[8:])
		l.size = le.Uint64(p[16:])
		l.errorRate = math.Float64frombits(le.Uint64(p[24:]))
		l.bpe = math.Float64frombits(le.Uint64(p[32:]))
		l.hashes = le.Uint32(p[40:])
		l.entries = le.Uint64(p[44:])
		l.n2 = p[52]
		p = p[headerLink:]
		if !(l.errorRate > 0 && l.errorRate < 1) || l.n2 > 63 || l.bits == 0 {
			return nil, ErrBadData
		}
		if hi, lo := bits.Mul64(l.bytes, 8); hi != 0 || lo != l.bits {
			return nil, ErrBadData
		}
		// n2 > 0: RedisBloom takes positions mod 2^n2 ≤ bits; the filter
		// holds 2^n2 bits in whole words, which must be the link's bytes
		// (bits = 2^n2, or n2 < 6 and one 8-byte word, as bloom_init
		// makes them).
		if l.n2 > 0 && (l.bits < 1<<l.n2 || ((1<<l.n2)+63)/64*8 != l.bytes) {
			return nil, ErrBadData
		}
		if l.bits > bloom.MaxBits || l.entries == 0 {
			return nil, ErrBadData
		}
		if k, ok := hashesFor(l.bpe); !ok || k != l.hashes || k > maxHashes {
			return nil, ErrBadData
		}
		var c uint64
		if sumSize, c = bits.Add64(sumSize, l.size, 0); c != 0 {
			return nil, ErrBadData
		}
		if h.totalBytes, c = bits.Add64(h.totalBytes, l.bytes, 0); c != 0 || h.totalBytes > budget {
			return nil, ErrBadData
		}
		// The bloom.Filter holds whole 64-bit words.
		if h.heap, c = bits.Add64(h.heap, keyspace.HeapSize((l.bytes+7)&^7), 0); c != 0 || h.heap > budget {
			return nil, ErrBadData
		}
	}
	if memoryUsage(h.heap, int(h.nlinks)) > budget {
		return nil, ErrBadData
	}
	if sumSize != h.size {
		return nil, ErrBadData
	}
	return h, nil
}

// build allocates the links of a validated header (all bits zero).
func (h *parsedHeader) build(budget uint64) (*Chain, error) {
	links := make([]link, len(h.links))
	meta := make([]linkMeta, len(h.links))
	for i, l := range h.links {
		m := l.bits
		if l.n2 > 0 {
			m = 1 << l.n2 // positions mod 2^n2 (bloom_check_add64/32)
		}
		f, err := bloom.NewWithConfig(bloom.Config{M: m, K: l.hashes})
		if err != nil {
			return nil, ErrBadData
		}
		if err := raw.FilterSetHash(f, uint16(hashMurmur64A), 0); err != nil {
			return nil, ErrBadData
		}
		raw.FilterSetN(f, l.size)
		links[i] = link{Filter: f, Capacity: l.entries, ErrorRate: l.errorRate}
		meta[i] = linkMeta{bpe: l.bpe, bytes: l.bytes, bits: l.bits, n2: l.n2}
	}
	// The chain-level ErrorRate/Capacity only seed the first link of a new
	// chain; a restored chain grows from its last link (SBChain_Add), so
	// any valid value works here. Use the first link's.
	cfg := bloom.ScalableConfig{
		Capacity:     h.links[0].entries,
		ErrorRate:    h.links[0].errorRate,
		Tightening:   tightening,
		MinErrorRate: math.SmallestNonzeroFloat64, // no floor, as New
		Sizing:       sizing,
		MaxBytes:     budget,
		HashID:       hashMurmur64A,
	}
	cfg.Growth = bloom.NoGrowth // growth 0 in a Scalable is non-scaling
	if h.options&OptNoScaling == 0 && h.growth != 0 {
		cfg.Growth = uint64(h.growth)
	}
	sc, err := raw.Restore(cfg, links)
	if err != nil {
		return nil, ErrBadData
	}
	c := &Chain{sc: sc, meta: meta, options: h.options, growth: h.growth, heap: h.heap}
	c.setLast(links)
	return c, nil
}

// DecodeHeader builds an empty chain (all bits zero, counts from the
// header) from a SCANDUMP header, as BF.LOADCHUNK key 1 does on a missing
// key. Everything is validated before anything is allocated; the chain's
// MemoryUsage must fit budget (0 = DefaultBudget). Every error is
// ErrBadData.
func DecodeHeader(data []byte, budget uint64) (*Chain, error) {
	if budget == 0 {
		budget = DefaultBudget
	}
	h, err := parseHeader(data, budget)
	if err != nil {
		return nil, err
	}
	return h.build(budget)
}

// DumpChunk implements BF.SCANDUMP: iter 0 returns (1, header); otherwise
// the bytes at offset iter−1 of the concatenated link bit arrays, at most
// MaxScanDumpChunk and never crossing a link boundary, with next =
// iter + len; past the end or iter < 0 it returns (0, nil).
func (c *Chain) DumpChunk(iter int64) (next int64, data []byte) {
	if iter == 0 {
		return 1, c.Header()
	}
	if iter < 0 {
		return 0, nil
	}
	off := uint64(iter - 1)
	for i, l := range raw.Links(c.sc) {
		sz := c.meta[i].bytes
		if off >= sz {
			off -= sz
			continue
		}
		n := min(sz-off, MaxScanDumpChunk)
		buf := make([]byte, n)
		raw.ReadBitsAt(l.Filter, buf, off)
		return iter + int64(n), buf
	}
	return 0, nil
}

// LoadChunk implements BF.LOADCHUNK on an existing chain: data goes to
// offset iter−len(data)−1 of the concatenated link bit arrays. Errors:
// ErrBadData (iter ≤ 0 or iter < len(data)), ErrNoLink (no link holds the
// offset), ErrChunkTooBig (the chunk crosses the end of its link). Nothing
// changes on error.
func (c *Chain) LoadChunk(iter int64, data []byte) error {
	if iter <= 0 || iter < int64(len(data)) {
		return ErrBadData
	}
	off := iter - int64(len(data)) - 1
	if off < 0 {
		return ErrNoLink
	}
	uoff := uint64(off)
	for i, l := range raw.Links(c.sc) {
		sz := c.meta[i].bytes
		if uoff >= sz {
			uoff -= sz
			continue
		}
		if uint64(len(data)) > sz-uoff {
			return ErrChunkTooBig
		}
		if err := raw.WriteBitsAt(l.Filter, data, uoff); err != nil {
			return ErrChunkTooBig
		}
		return nil
	}
	return ErrNoLink
}
