// Package topk keeps the k most frequent items of a stream in fixed memory:
// HeavyKeeper, exactly as RedisBloom's TOPK.* type implements it.
//
// It follows probly's library vocabulary (docs/LIBRARY.md): New(k) and
// NewWithConfig build a Sketch; Add, Count, Reset, Stats and the encoding
// methods use the same words as every other probly package.
//
// # Promise
//
// A Sketch answers "which items are the heaviest" (List), "is this item
// among them" (Query) and "about how often was it seen" (Count) after any
// number of Add calls, in memory fixed at construction. HeavyKeeper is
// count-with-exponential-decay: an item's buckets only grow while it owns
// them, and a colliding item takes a bucket over only by decaying its count
// to zero, with probability decay^count per unit. Heavy items therefore keep
// their buckets, and light ones cannot displace them.
//
//   - Counts never overestimate: Count(x) ≤ the true frequency of x, except
//     when two items share a 32-bit fingerprint and a bucket (probability
//     about depth·2^−32 per pair), or after uint32 wrap-around (more than
//     2^32 − 1 units in one bucket).
//   - The error is one-sided and concentrated on light items: an item of
//     true frequency f that owned its bucket in at least one row from its
//     first occurrence on is counted exactly. Gong et al. analyse the error
//     probability for heavy items on random streams; there is no useful
//     worst-case bound for adversarial ones.
//   - What can fail is the list. A bucket held by another item with count c
//     is taken over only after about decay^−c units (0.9^−100 ≈ 37,000), so
//     an item that becomes heavy only late in the stream, after every one
//     of its depth buckets is held by an earlier item with a count above
//     about 9.5·ln f (f its late frequency; decay 0.9), is never counted
//     and missed. Streams whose heavy items change over time need a width
//     well above the number of items that reach counts of ~100. Items near
//     the k-th largest count may be swapped with their neighbours.
//   - Measured (accuracy_test.go): at the default sizing of New(k), on
//     Zipf(1.1) streams of 10^6 and 10^7 items, List recovers at least 95 %
//     of the true top k (k = 10, 50, 100); on the 12.3M identifier tokens
//     of the Go 1.26 source tree (not stationary), 100 % of the top 10 and
//     99 of the top 100. Width ⌈4·k·ln k⌉ alone (33 at k = 5, hence
//     the floor of 256) missed the second most frequent token there.
//
// # Representation and cost
//
// width·depth buckets {fingerprint uint32, count uint32} (8 bytes each), a
// min-heap of k slots {count, fingerprint, item bytes}, and a 256-entry
// table LUT[i] = decay^i. New(k) sizes width = max(256, ⌈4·k·ln k⌉), depth =
// max(5, ⌈ln k⌉), decay 0.9; RedisBloom's own default (TOPK.RESERVE without
// sizes) is width 8, depth 7, decay 0.9, which is far smaller and much less
// accurate.
//
//   - Add / AddN(item, n): depth+1 MurmurHash2 passes over the item and, per
//     row whose bucket another item owns, up to n decay trials (one random
//     draw each); then, when the item's estimate reaches the heap minimum, a
//     heap scan of O(k) and a sift-down of O(log k). AddN is O(depth·n) in
//     the worst case.
//   - Query: O(k) heap scan. Count: O(depth + k). List: O(k log k).
//   - Memory: 8·width·depth + about 32·k bytes + the bytes of the items in
//     the heap.
//
// # Determinism
//
// The decay trials draw from a SplitMix64 generator seeded by Config.Seed
// whose state is part of the sketch and of its encoding: the same seed and
// the same sequence of calls give the same sketch, and a decoded sketch
// continues exactly as the encoded one would have. (Across CPU
// architectures the decay table comes from math.Pow, whose last bit may
// differ between Go's assembly and pure-Go paths; a draw would have to fall
// within that bit of the probability, about 2^-53 per trial, for two
// platforms to diverge. With decay 1 the table is exactly 1 everywhere.)
// RedisBloom draws from the C library's rand() instead (seeded by Redis at
// start-up, not reproducible), so a Sketch matches a RedisBloom key bit for
// bit exactly when no decay trial decides anything: with decay 1 (every
// trial decrements), or when no two items collide in a bucket.
//
// # Concurrency
//
// Query, Count, List, Stats and the encoding methods are safe for
// concurrent use with each other; Add, AddN, Reset and UnmarshalBinary need
// exclusive access. (Count and Query do not change the sketch.)
//
// # Sources
//
//   - J. Gong, T. Yang, H. Zhang, H. Li, S. Uhlig, S. Chen, L. Uden, X. Li,
//     "HeavyKeeper: An Accurate Algorithm for Finding Top-k Elephant Flows",
//     USENIX ATC 2018.
//   - RedisBloom src/topk.c (8.x): the fingerprint (MurmurHash2, seed 1919),
//     the row hash (MurmurHash2, seed = row), the decay table and its use
//     above 255, the heap's sift-down and its tie order, COUNT's heap rule
//     and LIST's stable order; specified in probly's redis-sketches.md §2.2.
package topk

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/probly/probly/internal/hashing"
)

// Sentinel errors. Every error returned by this package wraps exactly one
// of these (or io.ErrUnexpectedEOF for truncated input).
var (
	// ErrInvalidParameter: k, width or depth of 0, or a decay outside
	// (0, 1] or NaN.
	ErrInvalidParameter = errors.New("topk: invalid parameter")
	// ErrTooLarge: width·depth above MaxBuckets (or, on a 32-bit
	// platform, above what it can address), or a k whose default sizing is.
	ErrTooLarge = errors.New("topk: sketch too large")
	// ErrFormat: encoded data that is not a valid top-k encoding (magic,
	// kind, a parameter, a bucket or a heap slot out of range).
	ErrFormat = errors.New("topk: invalid format")
	// ErrVersion: an encoding of an unsupported format version.
	ErrVersion = errors.New("topk: unsupported format version")
	// ErrChecksum: encoded data failed its CRC-32C check.
	ErrChecksum = errors.New("topk: checksum mismatch")
)

// Limits and defaults.
const (
	// MaxK, MaxWidth and MaxDepth are RedisBloom's caps (uint32).
	MaxK     = math.MaxUint32
	MaxWidth = math.MaxUint32
	MaxDepth = math.MaxUint32
	// MaxBuckets bounds width·depth (2^36 buckets, 512 GiB; on 32-bit
	// platforms the address space is the tighter bound, math.MaxInt/8).
	MaxBuckets uint64 = 1 << 36

	// DefaultDecay is the decay of New and of RedisBloom's TOPK.RESERVE.
	DefaultDecay = 0.9

	// FingerprintSeed is the MurmurHash2 seed of the fingerprint.
	FingerprintSeed = 1919

	// HashMurmur2 is the hash ID (docs/FORMATS.md, "Hash IDs") of the only
	// hash this package computes: RedisBloom's 32-bit MurmurHash2.
	HashMurmur2 = hashID
)

const (
	lutSize = 256
	powSize = 64
)

// Config gives a Sketch's raw parameters.
type Config struct {
	K     uint32  // heap size: how many heavy items are kept, ≥ 1
	Width uint32  // buckets per row, ≥ 1
	Depth uint32  // rows (one hash each), ≥ 1
	Decay float64 // decay base in (0, 1]; 1 makes every collision decrement
	Seed  uint64  // seed of the decay draws (see "Determinism")
}

// Item is one entry of List: an item and its estimated count.
type Item struct {
	Value []byte
	Count uint64
}

type bucket struct{ fp, count uint32 }

// slot is a heap entry; item == nil marks an empty slot (an added empty
// item is a non-nil, empty slice).
type slot struct {
	count, fp uint32
	item      []byte
}

// Sketch is a HeavyKeeper top-k sketch. The zero value is not usable: it
// panics on first use; build one with New or NewWithConfig.
type Sketch struct {
	cfg     Config
	lut     [lutSize]float64
	pow255  [powSize]float64 // pow255[q] = math.Pow(lut[255], q), the same values decayP would compute
	buckets []bucket         // row-major, depth rows of width
	heap    []slot
	rng     uint64 // SplitMix64 state
	n       uint64 // units added
	// Kept up to date by AddN so that Stats is O(1): buckets with a
	// nonzero count, heap slots holding an item, bytes of those items.
	setBuckets, heapItems, itemBytes uint64
}

// New returns a sketch for the k heaviest items at the default sizing:
// width max(256, ⌈4·k·ln k⌉), depth max(5, ⌈ln k⌉), decay 0.9, seed 0
// (13 KB at k = 10, 36 KB at k = 50, 80 KB at k = 100).
// Errors: ErrInvalidParameter for k = 0, ErrTooLarge for a k whose sizing
// exceeds MaxBuckets.
func New(k int) (*Sketch, error) {
	if k < 1 || uint64(k) > MaxK {
		return nil, fmt.Errorf("%w: k %d not in [1, %d]", ErrInvalidParameter, k, uint64(MaxK))
	}
	lnk := math.Log(float64(k))
	w := max(256, math.Ceil(4*float64(k)*lnk))
	d := max(5, math.Ceil(lnk))
	if w*d > float64(MaxBuckets) {
		return nil, fmt.Errorf("%w: k %d needs %.0f buckets, more than %d", ErrTooLarge, k, w*d, MaxBuckets)
	}
	return NewWithConfig(Config{K: uint32(k), Width: uint32(w), Depth: uint32(d), Decay: DefaultDecay})
}

// NewWithConfig returns an empty sketch with c's parameters. Errors:
// ErrInvalidParameter for K, Width or Depth of 0, Decay outside (0, 1] or
// NaN; ErrTooLarge for Width·Depth above MaxBuckets. Cost: allocates 8·Width·Depth + 32·K
// bytes.
func NewWithConfig(c Config) (*Sketch, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	s := &Sketch{cfg: c, rng: c.Seed}
	s.buckets = make([]bucket, uint64(c.Width)*uint64(c.Depth))
	s.heap = make([]slot, c.K)
	s.fillLUT()
	return s, nil
}

func (c Config) validate() error {
	switch {
	case c.K == 0:
		return fmt.Errorf("%w: k 0", ErrInvalidParameter)
	case c.Width == 0:
		return fmt.Errorf("%w: width 0", ErrInvalidParameter)
	case c.Depth == 0:
		return fmt.Errorf("%w: depth 0", ErrInvalidParameter)
	case !(c.Decay > 0 && c.Decay <= 1):
		return fmt.Errorf("%w: decay %v not in (0, 1]", ErrInvalidParameter, c.Decay)
	case uint64(c.Width)*uint64(c.Depth) > min(MaxBuckets, math.MaxInt/8):
		return fmt.Errorf("%w: width·depth %d·%d above %d buckets", ErrTooLarge, c.Width, c.Depth, min(MaxBuckets, math.MaxInt/8))
	}
	return nil
}

func (s *Sketch) fillLUT() {
	for i := range s.lut {
		s.lut[i] = math.Pow(s.cfg.Decay, float64(i))
	}
	for q := range s.pow255 {
		s.pow255[q] = math.Pow(s.lut[lutSize-1], float64(q))
	}
}

func (s *Sketch) ready() {
	if s.heap == nil {
		panic("topk: zero Sketch; build one with topk.New or topk.NewWithConfig")
	}
}

// Config returns the sketch's parameters; Seed is the seed it was built
// with (the generator's current state is internal).
func (s *Sketch) Config() Config { s.ready(); return s.cfg }

// rand returns a uniform draw in [0, 1) from the SplitMix64 state.
func (s *Sketch) rand() float64 {
	s.rng += 0x9e3779b97f4a7c15
	z := s.rng
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// decayP is the probability that one trial decrements a bucket of count c.
func (s *Sketch) decayP(c uint32) float64 {
	if c < lutSize {
		return s.lut[c]
	}
	q := c / (lutSize - 1)
	if q < powSize {
		return s.pow255[q] * s.lut[c%(lutSize-1)]
	}
	return math.Pow(s.lut[lutSize-1], float64(q)) * s.lut[c%(lutSize-1)]
}

func fingerprint(item []byte) uint32 { return hashing.Murmur2(item, FingerprintSeed) }

// find returns the heap index of item, or −1 (RedisBloom scans k−1 … 0).
func (s *Sketch) find(item []byte, fp uint32) int {
	for i := len(s.heap) - 1; i >= 0; i-- {
		h := &s.heap[i]
		if h.item != nil && h.fp == fp && bytes.Equal(h.item, item) {
			return i
		}
	}
	return -1
}

// Add is AddN(item, 1).
func (s *Sketch) Add(item []byte) (expelled []byte, ok bool) { return s.AddN(item, 1) }

// AddN counts n occurrences of item. If item enters the heap and pushes
// another item out, AddN returns that item (a slice the sketch no longer
// uses) and true; otherwise nil and false. n = 0 puts the item in the heap
// with count 0 while the heap still has a free slot, as RedisBloom's
// TOPK.INCRBY item 0 does. The sketch keeps its own copy of item.
// Cost: see the package doc; O(depth·n) decay trials in the worst case.
func (s *Sketch) AddN(item []byte, n uint32) (expelled []byte, ok bool) {
	s.ready()
	s.n += uint64(n)
	fp := fingerprint(item)
	heapMin := s.heap[0].count
	var best uint32
	w := uint64(s.cfg.Width)
	for i := range s.cfg.Depth {
		b := &s.buckets[uint64(i)*w+uint64(hashing.Murmur2(item, i))%w]
		switch {
		case b.count == 0:
			b.fp, b.count = fp, n
			if n > 0 {
				s.setBuckets++
			}
			best = max(best, b.count)
		case b.fp == fp:
			b.count += n
			if b.count == 0 { // wrapped around
				s.setBuckets--
			}
			best = max(best, b.count)
		default:
			for r := n; r > 0; r-- {
				if s.rand() < s.decayP(b.count) {
					b.count--
					if b.count == 0 {
						b.fp, b.count = fp, r
						best = max(best, r)
						break
					}
				}
			}
		}
	}
	if best < heapMin {
		return nil, false
	}
	if i := s.find(item, fp); i >= 0 {
		s.heap[i].count = best
		s.siftDown(i)
		return nil, false
	}
	expelled = s.heap[0].item
	if expelled == nil {
		s.heapItems++
	}
	s.itemBytes += uint64(len(item)) - uint64(len(expelled))
	s.heap[0] = slot{count: best, fp: fp, item: append([]byte{}, item...)}
	s.siftDown(0)
	return expelled, expelled != nil
}

// siftDown is RedisBloom's heapifyDown: ties continue the first step and
// stop the later ones; it never moves a slot up.
func (s *Sketch) siftDown(start int) {
	h := s.heap
	n := len(h)
	if n < 2 || (n-2)/2 < start {
		return
	}
	child := 2*start + 1
	if child+1 < n && h[child].count > h[child+1].count {
		child++
	}
	if h[child].count > h[start].count {
		return
	}
	t := h[start]
	for {
		h[start] = h[child]
		start = child
		if (n-2)/2 < child {
			break
		}
		child = 2*child + 1
		if child+1 < n && h[child].count > h[child+1].count {
			child++
		}
		if !(h[child].count < t.count) {
			break
		}
	}
	h[start] = t
}

// Query reports whether item (these exact bytes) is in the heap of the k
// heaviest. An item in the heap with count 0 (see AddN) is present. O(k).
func (s *Sketch) Query(item []byte) bool {
	s.ready()
	return s.find(item, fingerprint(item)) >= 0
}

// Count returns item's estimated count: the largest count among the rows
// where its fingerprint owns the bucket, restricted, when item is in the
// heap, to counts at least the heap minimum (RedisBloom's TOPK.COUNT).
// 0 if no row qualifies. O(depth + k).
func (s *Sketch) Count(item []byte) uint64 {
	s.ready()
	fp := fingerprint(item)
	inHeap := s.find(item, fp) >= 0
	heapMin := s.heap[0].count
	var res uint32
	w := uint64(s.cfg.Width)
	for i := range s.cfg.Depth {
		b := s.buckets[uint64(i)*w+uint64(hashing.Murmur2(item, i))%w]
		if b.fp == fp && (!inHeap || b.count >= heapMin) {
			res = max(res, b.count)
		}
	}
	return uint64(res)
}

// List returns the heap's items by estimated count, descending; equal
// counts keep their heap order (a stable sort, as RedisBloom's LIST). Items
// with count 0, and every entry after the first such one, are left out.
// The values are copies. O(k log k).
func (s *Sketch) List() []Item {
	s.ready()
	slots := append([]slot(nil), s.heap...)
	sort.SliceStable(slots, func(i, j int) bool { return slots[i].count > slots[j].count })
	var out []Item
	for _, h := range slots {
		if h.count == 0 {
			break
		}
		out = append(out, Item{Value: append([]byte{}, h.item...), Count: uint64(h.count)})
	}
	return out
}

// Reset empties the sketch: zero buckets, an empty heap, the generator
// back at Config.Seed, N 0. The parameters stay.
func (s *Sketch) Reset() {
	s.ready()
	clear(s.buckets)
	clear(s.heap)
	s.rng, s.n = s.cfg.Seed, 0
	s.setBuckets, s.heapItems, s.itemBytes = 0, 0, 0
}

// Stats describes a sketch. The vocabulary's fields without a meaning for
// top-k (P, FPR, Cardinality) are not present.
type Stats struct {
	M         uint64  // buckets: Width·Depth
	K         uint64  // hash functions: Depth rows
	Bytes     uint64  // memory held: Bytes(k, width, depth) plus the heap's item bytes
	N         uint64  // units added (the sum of AddN's n)
	Capacity  uint64  // k: items the heap holds
	Width     uint64  // buckets per row
	Decay     float64 // decay base
	SetBits   uint64  // buckets in use (count > 0)
	FillRatio float64 // SetBits / M
	Heap      uint64  // heap slots holding an item
}

// Stats returns the sketch's statistics. O(1).
func (s *Sketch) Stats() Stats {
	s.ready()
	return Stats{
		M: uint64(len(s.buckets)), K: uint64(s.cfg.Depth), N: s.n,
		Capacity: uint64(s.cfg.K), Width: uint64(s.cfg.Width), Decay: s.cfg.Decay,
		Bytes:   Bytes(s.cfg.K, s.cfg.Width, s.cfg.Depth) + s.itemBytes,
		SetBits: s.setBuckets, FillRatio: float64(s.setBuckets) / float64(len(s.buckets)), Heap: s.heapItems,
	}
}

// slotBytes is the in-memory size of a heap slot without its item;
// structBytes the Sketch struct's (mostly its 256-entry decay table).
const (
	slotBytes   = 32
	structBytes = 2700
)

// Bytes returns the memory a sketch with these parameters holds before
// any item enters its heap: 8·width·depth + 32·k + 2700 (the struct with
// its decay tables). Callers that budget memory (the server) reserve it
// before NewWithConfig.
func Bytes(k, width, depth uint32) uint64 {
	return 8*uint64(width)*uint64(depth) + slotBytes*uint64(k) + structBytes
}
