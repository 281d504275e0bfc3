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
//     non-scaling), every further link half the previous one, and
//     last.entries·expansion items;
//   - SBChain_Add semantics (bloom.Scalable.AddHash).
//
// It also implements RedisBloom's SCANDUMP/LOADCHUNK wire format (§1.4):
// a packed little-endian header followed by the raw link bit arrays, and a
// snapshot encoding built from the same pieces (see MarshalBinary).
//
// Memory: Σ link bytes plus ~100 bytes per link. Every allocation is
// bounded by a per-filter byte budget (the Budget argument of New and the
// decoders); headers that ask for more are refused before allocating.
//
// Concurrency: a Chain is not safe for concurrent mutation; the keyspace's
// per-key lock serializes commands. Read-only methods may run concurrently
// with each other.
package redisbloom

import (
	"errors"
	"math"
	"strconv"

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
type linkMeta struct {
	bpe float64
	n2  uint8
}

// Chain is a RedisBloom scalable Bloom filter ("SBChain").
type Chain struct {
	sc      *bloom.Scalable
	meta    []linkMeta // one per link, same order
	options uint32
	growth  uint32
}

var _ keyspace.Value = (*Chain)(nil)

func scalableConfig(p Params, budget uint64) bloom.ScalableConfig {
	cfg := bloom.ScalableConfig{
		Capacity:   p.Capacity,
		ErrorRate:  p.ErrorRate,
		Tightening: tightening,
		Sizing:     sizing,
		MaxBytes:   budget,
		HashID:     bloom.HashMurmur64A,
	}
	if !p.NonScaling {
		cfg.Growth = uint64(p.Expansion)
	}
	return cfg
}

// New creates an empty chain with one link. budget bounds the total bytes
// of all links, now and when the chain grows (0 = DefaultBudget). Errors:
// ErrInsufficientMemory if the first link does not fit the budget (or
// bloom.MaxBits), ErrCouldNotCreate for invalid parameters.
func New(p Params, budget uint64) (*Chain, error) {
	if budget == 0 {
		budget = DefaultBudget
	}
	if !p.NonScaling && p.Expansion == 0 {
		return nil, ErrCouldNotCreate
	}
	sc, err := bloom.NewScalable(scalableConfig(p, budget))
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

// syncMeta records bpe for links the Scalable appended.
func (c *Chain) syncMeta() {
	if c.sc.NumLinks() == len(c.meta) {
		return
	}
	links := c.sc.Links()
	for _, l := range links[len(c.meta):] {
		c.meta = append(c.meta, linkMeta{bpe: BPE(l.ErrorRate)})
	}
}

// Add inserts item and reports whether it was new (RedisBloom's BF.ADD 1).
// Errors: ErrFull for a full non-scaling chain, ErrProblemInserting when a
// new link cannot be allocated (budget exceeded).
func (c *Chain) Add(item []byte) (bool, error) {
	a, b := hashing.RedisBloomPair(item)
	return c.AddHash(a, b)
}

// AddHash is Add for a precomputed RedisBloomPair.
func (c *Chain) AddHash(a, b uint64) (bool, error) {
	added, err := c.sc.AddHash(a, b)
	if err != nil {
		if errors.Is(err, bloom.ErrFull) {
			return false, ErrFull
		}
		return false, ErrProblemInserting
	}
	c.syncMeta()
	return added, nil
}

// Exists reports whether item may be in the chain.
func (c *Chain) Exists(item []byte) bool {
	a, b := hashing.RedisBloomPair(item)
	return c.sc.TestHash(a, b)
}

// ExistsHash is Exists for a precomputed RedisBloomPair.
func (c *Chain) ExistsHash(a, b uint64) bool { return c.sc.TestHash(a, b) }

// Card returns the number of items inserted (BF.CARD).
func (c *Chain) Card() uint64 { return c.sc.N() }

// Capacity returns Σ link entries (BF.INFO Capacity).
func (c *Chain) Capacity() uint64 { return c.sc.Capacity() }

// NumFilters returns the number of links.
func (c *Chain) NumFilters() int { return c.sc.NumLinks() }

// NonScaling reports whether the chain is non-scaling.
func (c *Chain) NonScaling() bool { return c.options&OptNoScaling != 0 }

// Expansion returns the growth factor recorded in the chain.
func (c *Chain) Expansion() uint32 { return c.growth }

// InfoSize is BF.INFO's Size: the C struct sizes on 64-bit,
// 32 + 64·nfilters + Σ link bytes.
func (c *Chain) InfoSize() uint64 {
	return 32 + 64*uint64(c.sc.NumLinks()) + c.sc.SizeBytes()
}

// SizeBytes returns Σ link bytes.
func (c *Chain) SizeBytes() uint64 { return c.sc.SizeBytes() }

// DebugLines returns BF.DEBUG's reply lines: "size:<N>", then one line per
// link.
func (c *Chain) DebugLines() []string {
	links := c.sc.Links()
	out := make([]string, 0, 1+len(links))
	out = append(out, "size:"+strconv.FormatUint(c.sc.N(), 10))
	for _, l := range links {
		b := make([]byte, 0, 96)
		b = append(b, "bytes:"...)
		b = strconv.AppendUint(b, l.Filter.SizeBytes(), 10)
		b = append(b, " bits:"...)
		b = strconv.AppendUint(b, l.Filter.M(), 10)
		b = append(b, " hashes:"...)
		b = strconv.AppendUint(b, uint64(l.Filter.K()), 10)
		b = append(b, " hashwidth:64 capacity:"...)
		b = strconv.AppendUint(b, l.Capacity, 10)
		b = append(b, " size:"...)
		b = strconv.AppendUint(b, l.Filter.N(), 10)
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

// MemoryUsage implements keyspace.Value: bit arrays plus bookkeeping.
func (c *Chain) MemoryUsage() uint64 { return memoryUsage(c.sc.SizeBytes(), c.sc.NumLinks()) }

// memoryUsage is MemoryUsage of a chain with these bit-array bytes and
// links.
func memoryUsage(bytes uint64, links int) uint64 { return bytes + 160 + 120*uint64(links) }

// Clone implements keyspace.Value (a deep copy).
func (c *Chain) Clone() keyspace.Value { return c.CloneChain() }

// CloneChain returns a deep copy of c.
func (c *Chain) CloneChain() *Chain {
	return &Chain{
		sc:      c.sc.Clone(),
		meta:    append([]linkMeta(nil), c.meta...),
		options: c.options,
		growth:  c.growth,
	}
}

// SetBudget replaces the budget that future growth must fit (0 =
// DefaultBudget). Links already present are kept even if they exceed it.
func (c *Chain) SetBudget(b uint64) {
	if b == 0 {
		b = DefaultBudget
	}
	c.sc.SetMaxBytes(b)
}

// Budget returns the chain's per-filter byte budget.
func (c *Chain) Budget() uint64 { return c.sc.Config().MaxBytes }

// Equal reports whether two chains have identical state: header fields,
// per-link parameters, counts and bits.
func (c *Chain) Equal(d *Chain) bool {
	if c.options != d.options || c.growth != d.growth || len(c.meta) != len(d.meta) {
		return false
	}
	for i := range c.meta {
		if math.Float64bits(c.meta[i].bpe) != math.Float64bits(d.meta[i].bpe) || c.meta[i].n2 != d.meta[i].n2 {
			return false
		}
	}
	cl, dl := c.sc.Links(), d.sc.Links()
	if len(cl) != len(dl) {
		return false
	}
	for i := range cl {
		if cl[i].Capacity != dl[i].Capacity ||
			math.Float64bits(cl[i].ErrorRate) != math.Float64bits(dl[i].ErrorRate) ||
			!cl[i].Filter.Equal(dl[i].Filter) {
			return false
		}
	}
	return true
}
