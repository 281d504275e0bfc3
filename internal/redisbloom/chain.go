// Package redisbloom is the server's RedisBloom-compatible scalable Bloom
// filter (the value behind BF.* keys, TYPE "MBbloom--").
//
// It is not a second Bloom implementation: a Chain wraps the library's
// bloom.Scalable with RedisBloom's exact parameters (spec redis-compat.md
// §1.3):
//
//   - hash pair a = MurmurHash64A(item, 0xc6a4a7935bd1e995),
//     b = MurmurHash64A(item, a) (internal/hashing.RedisBloomPair);
//   - link sizing of bloom_init with NOROUND|FORCE64 (LinkSize), with a
//     correctly rounded ln so the bpe doubles match glibc's;
//   - tightening 0.5: the first link gets error·0.5 (error·1 if
//     non-scaling), every further link half the previous one (no floor:
//     down to the smallest denormal, then growth fails with
//     ErrProblemInserting as bloom_init refuses a rate of 0), and
//     last.entries·expansion items;
//   - SBChain_Add semantics (bloom.Scalable.TestAndAddHash).
//
// It also implements RedisBloom's SCANDUMP/LOADCHUNK wire format (§1.4):
// a packed little-endian header followed by the raw link bit arrays, and a
// snapshot encoding built from the same pieces (see MarshalBinary).
//
// Memory: MemoryUsage counts what a chain really holds on the Go heap:
// each link's bit array rounded up to its allocation size
// (keyspace.HeapSize), plus LinkOverhead bytes per link (the link's
// bloom.Filter and its slots in the chain's slices) and ChainOverhead
// bytes per chain. The per-filter byte budget (the budget argument of New
// and the decoders) bounds that total, not only the bit arrays: a header
// declaring a million 8-byte links is charged about 170 MB, not 8 MB, and
// is refused by a 128 MiB budget (DefaultBudget). Every allocation is checked
// against the budget before it is made; growth (AddReserve) also asks the
// caller's reservation first.
//
// Concurrency: a Chain is not safe for concurrent mutation; the keyspace's
// per-key lock serializes commands. Read-only methods may run concurrently
// with each other.
package redisbloom

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
	"unsafe"

	"github.com/probly/probly/bloom"
	"github.com/probly/probly/internal/hashing"
	"github.com/probly/probly/internal/keyspace"
)

// TypeName is the TYPE reply for a Bloom key (RedisBloom's module type name).
const TypeName = "MBbloom--"

// DefaultBudget is the default per-filter byte budget: the most bytes of
// bit arrays one filter may hold in total (all links), 128 MiB, the same
// per-object limit valkey-bloom uses.
const DefaultBudget = 128 << 20

// Header option bits (RedisBloom's BLOOM_OPT_*).
const (
	OptNoRound    = 1 // link sizes are not rounded to a power of two
	OptEntsIsBits = 2 // entries was given in bits (only affects creation)
	OptForce64    = 4 // 64-bit MurmurHash64A pair (required here)
	OptNoScaling  = 8 // non-scaling chain
	optAll        = OptNoRound | OptEntsIsBits | OptForce64 | OptNoScaling
)

// Error is an error whose text is the exact RedisBloom reply (sent behind
// a "-").
type Error string

func (e Error) Error() string { return string(e) }

// The RedisBloom error replies produced by this package.
const (
	ErrFull               Error = "ERR non scaling filter is full"
	ErrProblemInserting   Error = "ERR problem inserting into filter"
	ErrInsufficientMemory Error = "ERR Insufficient memory to create filter"
	ErrCouldNotCreate     Error = "ERR could not create filter"
	ErrBadData            Error = "ERR received bad data"
	ErrNoLink             Error = "ERR invalid offset - no link found"
	ErrChunkTooBig        Error = "ERR invalid chunk - Too big for current filter"
	// ErrOOM is returned by AddReserve when the caller's reservation
	// refuses a new link: Redis's maxmemory reply.
	ErrOOM Error = "OOM command not allowed when used memory > 'maxmemory'."
)

// MaxScanDumpChunk is the largest data chunk BF.SCANDUMP returns
// (RedisBloom's MAX_SCANDUMP_SIZE, 16 MiB).
const MaxScanDumpChunk = 16 << 20

// Params are the parameters of a new chain.
type Params struct {
	ErrorRate  float64 // overall error rate in (0, 1), already capped at 0.25 by the caller
	Capacity   uint64  // first link's entries, ≥ 1
	Expansion  uint32  // growth factor; recorded in the header even when NonScaling
	NonScaling bool
}

// linkMeta is what RedisBloom stores per link that bloom.Link does not.
// bytes is the link's bit-array size as RedisBloom has it (bits/8): the
// bloom.Filter holds it rounded up to whole 64-bit words, so a loaded link
// whose bit count is not a multiple of 64 keeps its own size for
// SCANDUMP, LOADCHUNK and BF.INFO. bits is the header's bit count, which
// for a power-of-two link (n2 > 0) may exceed the 2^n2 positions used.
type linkMeta struct {
	bpe         float64
	bytes, bits uint64 // the header's; the filter's M is the position modulus
	n2          uint8
}

// Chain is a RedisBloom scalable Bloom filter ("SBChain").
type Chain struct {
	sc      *bloom.Scalable
	meta    []linkMeta // one per link, same order
	options uint32
	growth  uint32
	heap    uint64 // Σ keyspace.HeapSize(link bytes)
	// The newest link, for the growth check of AddHashReserve (the
	// Scalable only hands out copies of its link list).
	last     *bloom.Filter
	lastCap  uint64
	lastRate float64
}

// LinkOverhead is the heap bytes a link costs besides its bit array: its
// bloom.Filter (rounded to its allocation size) and, counted twice for
// the spare capacity append leaves, its slots in the chain's link and
// metadata slices.
var LinkOverhead = keyspace.HeapSize(uint64(unsafe.Sizeof(*(*bloom.Filter)(nil)))) +
	2*uint64(unsafe.Sizeof(link{})+unsafe.Sizeof(linkMeta{}))

// ChainOverhead is the heap bytes of a chain besides its links: the Chain
// and its bloom.Scalable.
var ChainOverhead = keyspace.HeapSize(uint64(unsafe.Sizeof(Chain{}))) +
	keyspace.HeapSize(uint64(unsafe.Sizeof(*(*bloom.Scalable)(nil))))

var _ keyspace.Value = (*Chain)(nil)

func scalableConfig(p Params, budget uint64) bloom.ScalableConfig {
	cfg := bloom.ScalableConfig{
		Capacity:   p.Capacity,
		ErrorRate:  p.ErrorRate,
		Tightening: tightening,
		// The smallest positive double: link rates are never floored
		// (GrowthSize refuses the link whose rate underflows to 0).
		MinErrorRate: math.SmallestNonzeroFloat64,
		Sizing:       sizing,
		MaxBytes:     budget,
		HashID:       hashMurmur64A,
	}
	cfg.Growth = bloom.NoGrowth // growth 0 in a Scalable is non-scaling
	if !p.NonScaling && p.Expansion != 0 {
		cfg.Growth = uint64(p.Expansion)
	}
	return cfg
}

// New creates an empty chain with one link. budget bounds the chain's
// MemoryUsage, now and when it grows (0 = DefaultBudget). Errors:
// ErrInsufficientMemory if the first link does not fit the budget (or
// bloom.MaxBits), ErrCouldNotCreate for invalid parameters. Nothing is
// allocated when it fails.
func New(p Params, budget uint64) (*Chain, error) {
	if budget == 0 {
		budget = DefaultBudget
	}
	if _, err := newSize(p, budget); err != nil {
		return nil, err
	}
	sc, err := bloom.NewScalableWithConfig(scalableConfig(p, budget))
	if err != nil {
		if errors.Is(err, bloom.ErrTooLarge) {
			return nil, ErrInsufficientMemory
		}
		return nil, ErrCouldNotCreate
	}
	opts := uint32(OptNoRound | OptForce64)
	if p.NonScaling {
		opts |= OptNoScaling
	}
	c := &Chain{sc: sc, options: opts, growth: p.Expansion}
	c.syncMeta()
	return c, nil
}

// newSize returns the MemoryUsage of the chain New(p, budget) creates, or
// the error New returns, without allocating. budget is not 0.
func newSize(p Params, budget uint64) (uint64, error) {
	if (!p.NonScaling && p.Expansion == 0) || p.Capacity == 0 || !(p.ErrorRate > 0 && p.ErrorRate < 1) {
		return 0, ErrCouldNotCreate
	}
	rate := p.ErrorRate
	if !p.NonScaling {
		rate *= 1 - tightening
	}
	_, _, bytes, _, err := LinkSize(p.Capacity, rate)
	if err != nil {
		if errors.Is(err, bloom.ErrTooLarge) {
			return 0, ErrInsufficientMemory
		}
		return 0, ErrCouldNotCreate
	}
	if mem := memoryUsage(keyspace.HeapSize(bytes), 1); mem <= budget {
		return mem, nil
	}
	return 0, ErrInsufficientMemory
}

// syncMeta records bpe and heap bytes for links the Scalable appended and
// refreshes the newest-link fields.
func (c *Chain) syncMeta() {
	if raw.NumLinks(c.sc) == len(c.meta) && c.last != nil {
		return
	}
	links := raw.Links(c.sc)
	for _, l := range links[len(c.meta):] {
		c.meta = append(c.meta, linkMeta{bpe: BPE(l.ErrorRate), bytes: raw.FilterBytes(l.Filter), bits: raw.FilterM(l.Filter)})
		c.heap += keyspace.HeapSize(raw.FilterBytes(l.Filter))
	}
	c.setLast(links)
}

// setLast records the newest of links (the chain's own, in order).
func (c *Chain) setLast(links []link) {
	l := links[len(links)-1]
	c.last, c.lastCap, c.lastRate = l.Filter, l.Capacity, l.ErrorRate
}

// Add inserts item and reports whether it was new (RedisBloom's BF.ADD 1).
// Errors: ErrFull for a full non-scaling chain, ErrProblemInserting when a
// new link cannot be allocated (budget exceeded).
func (c *Chain) Add(item []byte) (bool, error) {
	a, b := c.Pair(item)
	return c.AddHashReserve(a, b, nil)
}

// legacySeed is the seed of the first MurmurHash2 of bloom_calc_hash, the
// hash of chains without FORCE64.
const legacySeed = 0x9747b28c

// Pair returns item's hash pair for this chain, as RedisBloom's
// SBChain_GetHash: with FORCE64 (every chain probly creates)
// hashing.RedisBloomPair; without it (loaded from an old RedisBloom
// header) a = MurmurHash2(item, 0x9747b28c), b = MurmurHash2(item, a),
// both 32-bit values widened to 64. Positions are then (a + i·b) mod bits
// in 64-bit arithmetic in both cases, which is RedisBloom's for every
// header probly accepts (n2 = 0, or bits = 2^n2).
func (c *Chain) Pair(item []byte) (a, b uint64) {
	if c.options&OptForce64 == 0 {
		x := hashing.Murmur2(item, legacySeed)
		return uint64(x), uint64(hashing.Murmur2(item, x))
	}
	return hashing.RedisBloomPair(item)
}

// AddHash is Add for a precomputed Pair.
func (c *Chain) AddHash(a, b uint64) (bool, error) { return c.AddHashReserve(a, b, nil) }

// AddReserve is Add for a live command under a memory limit: when the item
// needs a new link, reserve (if not nil) is first asked for the bytes the
// link adds to MemoryUsage (GrowthSize), and if it refuses AddReserve
// returns ErrOOM and changes nothing. reserve must not block: it runs
// under the caller's key lock.
func (c *Chain) AddReserve(item []byte, reserve func(n uint64) bool) (bool, error) {
	a, b := c.Pair(item)
	return c.AddHashReserve(a, b, reserve)
}

// AddHashReserve is AddReserve for a precomputed Pair. Cost
// beyond AddHash's: one comparison, and on the rare add that grows the
// chain one test of every link and the new link's sizing.
func (c *Chain) AddHashReserve(a, b uint64, reserve func(n uint64) bool) (bool, error) {
	if raw.FilterN(c.last) >= c.lastCap && c.options&OptNoScaling == 0 {
		// The newest link is full: an item found in no link makes the
		// chain grow. Size and admit the link before bloom allocates it.
		if c.sc.TestHash(a, b) {
			return false, nil
		}
		l, rate, n, err := c.nextLink()
		if err != nil {
			return false, err
		}
		if reserve != nil && !reserve(n) {
			return false, ErrOOM
		}
		if !c.standard() {
			if err := c.appendLink(l, rate); err != nil {
				return false, err
			}
		}
	}
	present, err := c.sc.TestAndAddHash(a, b)
	if err != nil {
		if errors.Is(err, bloom.ErrFull) {
			return false, ErrFull
		}
		return false, ErrProblemInserting
	}
	c.syncMeta()
	return !present, nil
}

// GrowthSize returns the bytes the chain's next link would add to
// MemoryUsage (its bit array's heap size plus LinkOverhead), and
// ErrProblemInserting if that link cannot be made: its capacity overflows,
// its sizing fails, or the chain would exceed its budget. Non-scaling
// chains return ErrFull.
func (c *Chain) GrowthSize() (uint64, error) {
	_, _, n, err := c.nextLink()
	return n, err
}

// standard reports whether new links are sized as in every chain probly
// creates (NOROUND without ENTS_IS_BITS), by bloom.Scalable's own growth.
// Other option sets come only from LOADCHUNK'd headers; their links are
// appended by appendLink.
func (c *Chain) standard() bool { return c.options&(OptNoRound|OptEntsIsBits) == OptNoRound }

// nextLink sizes the chain's next link as SBChain_Add: last.entries ·
// growth items at last.error · 0.5, by bloom_init under the chain's
// options (initLink), and returns it, its error rate and the bytes it adds
// to MemoryUsage. Errors as GrowthSize.
func (c *Chain) nextLink() (linkParams, float64, uint64, error) {
	if c.options&OptNoScaling != 0 {
		return linkParams{}, 0, 0, ErrFull
	}
	hi, capacity := bits.Mul64(c.lastCap, uint64(c.growth))
	if hi != 0 {
		return linkParams{}, 0, 0, ErrProblemInserting
	}
	// No floor: the rate halves until it underflows to 0, which
	// RedisBloom's bloom_init refuses (initLink too).
	rate := c.lastRate * raw.Config(c.sc).Tightening
	l, err := initLink(capacity, rate, c.options)
	if err != nil || l.entries == 0 {
		// entries 0 (ENTS_IS_BITS with few bits): RedisBloom would add
		// one item to a link sized for none; refused here.
		return linkParams{}, 0, 0, ErrProblemInserting
	}
	n := keyspace.HeapSize((l.modBits()+63)/64*8) + LinkOverhead
	if mem, budget := c.MemoryUsage(), c.Budget(); n > budget || mem > budget-n {
		return linkParams{}, 0, 0, ErrProblemInserting
	}
	return l, rate, n, nil
}

// appendLink adds an empty link l at rate to a non-standard chain.
func (c *Chain) appendLink(l linkParams, rate float64) error {
	f, err := bloom.NewWithConfig(bloom.Config{M: l.modBits(), K: l.hashes})
	if err != nil {
		return ErrProblemInserting
	}
	if err := raw.FilterSetHash(f, uint16(hashMurmur64A), 0); err != nil {
		return ErrProblemInserting
	}
	links := append(raw.Links(c.sc), link{Filter: f, Capacity: l.entries, ErrorRate: rate})
	sc, err := raw.Restore(raw.Config(c.sc), links)
	if err != nil {
		return ErrProblemInserting
	}
	c.sc = sc
	c.meta = append(c.meta, linkMeta{bpe: l.bpe, bytes: l.bytes, bits: l.bits, n2: l.n2})
	c.heap += keyspace.HeapSize(raw.FilterBytes(f))
	c.setLast(links)
	return nil
}

// Exists reports whether item may be in the chain.
func (c *Chain) Exists(item []byte) bool {
	a, b := c.Pair(item)
	return c.sc.TestHash(a, b)
}

// ExistsHash is Exists for a precomputed Pair.
func (c *Chain) ExistsHash(a, b uint64) bool { return c.sc.TestHash(a, b) }

// Card returns the number of items inserted (BF.CARD).
func (c *Chain) Card() uint64 { return raw.N(c.sc) }

// Capacity returns Σ link entries (BF.INFO Capacity).
func (c *Chain) Capacity() uint64 { return raw.Capacity(c.sc) }

// NumFilters returns the number of links.
func (c *Chain) NumFilters() int { return raw.NumLinks(c.sc) }

// NonScaling reports whether the chain is non-scaling.
func (c *Chain) NonScaling() bool { return c.options&OptNoScaling != 0 }

// Expansion returns the growth factor recorded in the chain.
func (c *Chain) Expansion() uint32 { return c.growth }

// InfoSize is BF.INFO's Size: the C struct sizes on 64-bit,
// 32 + 64·nfilters + Σ link bytes.
func (c *Chain) InfoSize() uint64 {
	return 32 + 64*uint64(raw.NumLinks(c.sc)) + c.SizeBytes()
}

// SizeBytes returns Σ link bytes (RedisBloom's sizes, see linkMeta).
func (c *Chain) SizeBytes() uint64 {
	var n uint64
	for _, m := range c.meta {
		n += m.bytes
	}
	return n
}

// DebugLines returns BF.DEBUG's reply lines: "size:<N>", then one line per
// link.
func (c *Chain) DebugLines() []string {
	links := raw.Links(c.sc)
	out := make([]string, 0, 1+len(links))
	out = append(out, "size:"+strconv.FormatUint(raw.N(c.sc), 10))
	for i, l := range links {
		b := make([]byte, 0, 96)
		b = append(b, "bytes:"...)
		b = strconv.AppendUint(b, c.meta[i].bytes, 10)
		b = append(b, " bits:"...)
		b = strconv.AppendUint(b, c.meta[i].bits, 10)
		b = append(b, " hashes:"...)
		b = strconv.AppendUint(b, uint64(raw.FilterK(l.Filter)), 10)
		b = append(b, " hashwidth:64 capacity:"...)
		b = strconv.AppendUint(b, l.Capacity, 10)
		b = append(b, " size:"...)
		b = strconv.AppendUint(b, raw.FilterN(l.Filter), 10)
		b = append(b, " ratio:"...)
		b = append(b, FormatG(l.ErrorRate)...)
		out = append(out, string(b))
	}
	return out
}

// FormatG formats x as C's printf("%g"): 6 significant digits, trailing
// zeros removed, exponent form below 1e-4 or from 1e6, with a sign and at
// least two exponent digits (6.25e-05, 1e+06).
func FormatG(x float64) string {
	s := strconv.FormatFloat(x, 'g', 6, 64)
	// Go already writes at least two exponent digits; normalise anyway so
	// the output never depends on that detail.
	for i := 0; i < len(s); i++ {
		if s[i] != 'e' {
			continue
		}
		mant, exp := s[:i+1], s[i+1:]
		sign := "+"
		if len(exp) > 0 && (exp[0] == '+' || exp[0] == '-') {
			sign, exp = exp[:1], exp[1:]
		}
		if len(exp) < 2 {
			exp = "0" + exp
		}
		return mant + sign + exp
	}
	return s
}

// TypeName implements keyspace.Value.
func (c *Chain) TypeName() string { return TypeName }

// MemoryUsage implements keyspace.Value: the heap bytes of the bit arrays
// (each rounded up to its allocation size) plus LinkOverhead per link and
// ChainOverhead. O(1).
func (c *Chain) MemoryUsage() uint64 { return memoryUsage(c.heap, len(c.meta)) }

// memoryUsage is MemoryUsage of a chain whose bit arrays take heap bytes
// in links links.
func memoryUsage(heap uint64, links int) uint64 {
	return ChainOverhead + heap + LinkOverhead*uint64(links)
}

// Clone implements keyspace.Value (a deep copy).
func (c *Chain) Clone() keyspace.Value { return c.CloneChain() }

// CloneChain returns a deep copy of c.
func (c *Chain) CloneChain() *Chain {
	d := &Chain{
		sc:      raw.Clone(c.sc),
		meta:    append([]linkMeta(nil), c.meta...),
		options: c.options,
		growth:  c.growth,
		heap:    c.heap,
	}
	d.setLast(raw.Links(d.sc))
	return d
}

// SetBudget replaces the budget (on MemoryUsage) that future growth must
// fit (0 = DefaultBudget). Links already present are kept even if they
// exceed it.
func (c *Chain) SetBudget(b uint64) {
	if b == 0 {
		b = DefaultBudget
	}
	raw.SetMaxBytes(c.sc, b)
}

// Budget returns the chain's per-filter byte budget.
func (c *Chain) Budget() uint64 { return raw.Config(c.sc).MaxBytes }

// Equal reports whether two chains have identical state: header fields,
// per-link parameters, counts and bits.
func (c *Chain) Equal(d *Chain) bool {
	if c.options != d.options || c.growth != d.growth || len(c.meta) != len(d.meta) {
		return false
	}
	for i := range c.meta {
		if math.Float64bits(c.meta[i].bpe) != math.Float64bits(d.meta[i].bpe) ||
			c.meta[i].n2 != d.meta[i].n2 || c.meta[i].bytes != d.meta[i].bytes || c.meta[i].bits != d.meta[i].bits {
			return false
		}
	}
	cl, dl := raw.Links(c.sc), raw.Links(d.sc)
	if len(cl) != len(dl) {
		return false
	}
	for i := range cl {
		if cl[i].Capacity != dl[i].Capacity ||
			math.Float64bits(cl[i].ErrorRate) != math.Float64bits(dl[i].ErrorRate) ||
			!raw.FilterEqual(cl[i].Filter, dl[i].Filter) {
			return false
		}
	}
	return true
}
