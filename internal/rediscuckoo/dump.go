package rediscuckoo

import (
	"encoding/binary"
	"math/bits"

	"github.com/probly/probly/cuckoo"
	"github.com/probly/probly/internal/cuckooraw"
	"github.com/probly/probly/internal/keyspace"
)

// HeaderSize is the length of the CF.SCANDUMP header: packed,
// little-endian
//
//	u64 numItems | u64 numBuckets | u64 numDeletes | u64 numFilters |
//	u16 bucketSize | u16 maxIterations | u16 expansion
const HeaderSize = 38

// Header returns the CF.SCANDUMP header of c (CF.SCANDUMP key 0).
func (c *Filter) Header() []byte {
	le := binary.LittleEndian
	b := make([]byte, 0, HeaderSize)
	b = le.AppendUint64(b, c.Items())
	b = le.AppendUint64(b, c.NumBuckets())
	b = le.AppendUint64(b, c.Deletes())
	b = le.AppendUint64(b, uint64(c.NumFilters()))
	b = le.AppendUint16(b, c.BucketSize())
	b = le.AppendUint16(b, c.MaxIterations())
	return le.AppendUint16(b, c.Expansion())
}

// DecodeHeader builds an empty filter (all slots empty, counters from the
// header) from a CF.SCANDUMP header, as CF.LOADCHUNK key 1 does on a
// missing key. Errors: ErrInvalidHeader if data is not 38 bytes,
// ErrBadHeader if a field is invalid or the filter's MemoryUsage would not
// fit budget (0 = DefaultBudget); nothing is allocated before the header is validated
// and sized. Rules: bucketSize 1 … 255, numFilters 1 … maxFilters,
// maxIterations ≥ 1, expansion 0 or a power of two ≤ 32768, expansion 0 ⇒
// one sub-filter, numBuckets a power of two ≤ 2^56, every sub-filter at most
// MaxSubFilterSlots slots, all tables within the budget.
func DecodeHeader(data []byte, maxFilters int, budget uint64) (*Filter, error) {
	h, err := parseHeader(data, maxFilters, budget)
	if err != nil {
		return nil, err
	}
	f, err := raw.Restore(h.cfg, h.nf, h.items, h.deletes)
	if err != nil {
		return nil, ErrBadHeader
	}
	return wrap(f, h.budget), nil
}

// HeaderMemoryUsage returns the MemoryUsage of the filter DecodeHeader
// would build from data, without allocating it, and false if DecodeHeader
// would fail.
func HeaderMemoryUsage(data []byte, maxFilters int, budget uint64) (uint64, bool) {
	h, err := parseHeader(data, maxFilters, budget)
	if err != nil {
		return 0, false
	}
	return h.mem, true
}

// header is a CF.SCANDUMP header's content, validated by parseHeader.
type header struct {
	cfg            cuckoo.Config
	nf             int
	items, deletes uint64
	mem            uint64 // MemoryUsage of the filter it describes
	budget         uint64 // the filter's budget (not 0)
}

// parseHeader validates a CF.SCANDUMP header (DecodeHeader's rules) and
// sizes the filter it describes: its MemoryUsage must fit the budget.
func parseHeader(data []byte, maxFilters int, budget uint64) (*header, error) {
	if len(data) != HeaderSize {
		return nil, ErrInvalidHeader
	}
	le := binary.LittleEndian
	items := le.Uint64(data[0:])
	buckets := le.Uint64(data[8:])
	deletes := le.Uint64(data[16:])
	nf := le.Uint64(data[24:])
	bs := le.Uint16(data[32:])
	iters := le.Uint16(data[34:])
	exp := le.Uint16(data[36:])
	if bs == 0 || bs > MaxBucketSize || iters == 0 || exp > MaxExpansion || exp&(exp-1) != 0 ||
		nf == 0 || nf > uint64(maxFilters) || nf > MaxMaxExpansions || (exp == 0 && nf != 1) ||
		buckets == 0 || buckets&(buckets-1) != 0 || buckets > 1<<56 {
		return nil, ErrBadHeader
	}
	h := &header{
		cfg: cuckoo.Config{
			Buckets:         buckets,
			BucketSize:      int(bs),
			FingerprintBits: 8,
			MaxKicks:        int(iters),
			Expansion:       uint32(exp),
			HashID:          cuckoo.HashID(cuckooraw.HashMurmur64A),
		},
		nf: int(nf), items: items, deletes: deletes, budget: budgetOr(budget),
	}
	if _, err := raw.TableBytes(h.cfg, h.nf); err != nil {
		return nil, ErrBadHeader
	}
	// TableBytes checked every sub-filter's size (buckets·expansion^i ≤
	// 2^40, all tables within 2^40), so these shifts and sums cannot
	// overflow.
	shift := uint(bits.TrailingZeros64(uint64(exp)))
	var heap uint64
	for i := range h.nf {
		slots := buckets << (shift * uint(i)) * uint64(bs)
		if slots > MaxSubFilterSlots {
			return nil, ErrBadHeader
		}
		heap += keyspace.HeapSize(slots)
	}
	if h.mem = memoryUsage(heap, h.nf); h.mem > h.budget {
		return nil, ErrBadHeader
	}
	return h, nil
}

// DumpChunk implements CF.SCANDUMP for pos ≥ 0 on a filter with items
// (the caller answers [0, nil] for pos < 0 and for an empty filter): pos 0
// returns (1, header); otherwise the sub-filter holding byte pos−1 of the
// concatenated tables is returned whole if it is at most 16 MiB, else the
// 16 MiB (or the rest) from that byte on, with next = pos + len. Past the
// end it returns (0, nil).
func (c *Filter) DumpChunk(pos int64) (next int64, data []byte) {
	if pos == 0 {
		return 1, c.Header()
	}
	if pos < 0 {
		return 0, nil
	}
	off := uint64(pos - 1)
	for i := range raw.SubFilters(c.f) {
		size := raw.SubTableBytes(c.f, i)
		if off >= size {
			off -= size
			continue
		}
		start, n := off, min(size-off, MaxScanDumpChunk)
		if size <= MaxScanDumpChunk {
			// RedisBloom returns the whole sub-filter, whatever the offset.
			start, n = 0, size
		}
		buf := make([]byte, n)
		raw.ReadTableAt(c.f, i, buf, start)
		return pos + int64(n), buf
	}
	return 0, nil
}

// LoadChunk implements CF.LOADCHUNK for pos ≠ 1 on an existing filter:
// data is copied to byte pos−len(data)−1 of the concatenated tables. It
// fails with ErrLoadChunk, changing nothing, if data is empty or the range
// does not lie inside one sub-filter's table.
func (c *Filter) LoadChunk(pos int64, data []byte) error {
	if len(data) == 0 || pos <= int64(len(data)) {
		return ErrLoadChunk
	}
	off := uint64(pos - int64(len(data)) - 1)
	for i := range raw.SubFilters(c.f) {
		size := raw.SubTableBytes(c.f, i)
		if off >= size {
			off -= size
			continue
		}
		if err := raw.WriteTableAt(c.f, i, data, off); err != nil {
			return ErrLoadChunk
		}
		return nil
	}
	return ErrLoadChunk
}
