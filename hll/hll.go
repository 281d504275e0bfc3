// Package hll is a HyperLogLog cardinality estimator, bit-compatible with
// Redis's PFADD/PFCOUNT/PFMERGE strings.
//
// It follows probly's library vocabulary (docs/LIBRARY.md): New(precision)
// and NewWithConfig build a Sketch; Add/AddHash, Count, Merge, Reset and
// Stats use the same words as every other probly package.
//
// # Promise
//
// A Sketch estimates the number of distinct elements added to it with a
// relative standard error of 1.04/√m, m = 2^precision registers (0.81 % at
// the default precision 14, 16384 registers, 12 KiB). There are no false
// negatives or positives to speak of: the estimate is unbiased over the
// whole range, and exact in practice for very small sets. Adding the same
// element again never changes anything, and the registers of a sketch do
// not depend on the order of insertion or of merges.
//
// At precision 14, with the Redis hash (MurmurHash64A, seed 0xadc83b19),
// MarshalBinary returns exactly the string a Redis ≥ 5 server holds after
// the same PFADD/PFCOUNT/PFMERGE sequence (Sketch.Add = one-element PFADD,
// Count = PFCOUNT, Merge = PFMERGE dst dst src): sparse or dense, with the
// cached cardinality bytes. UnmarshalBinary accepts such strings, so
// sketches move between Redis and Go with GET/SET. Other precisions use
// probly's own versioned, checksummed format (docs/FORMATS.md,
// "HyperLogLog").
//
// probly's server keeps HLLs as Redis strings and runs its PF* commands on
// the same layout code as Sketch, compatibly with Redis.
//
// # Representation and cost
//
// A sketch starts sparse (Redis's run-length opcodes ZERO, XZERO, VAL: a few
// bytes for a few elements) and is promoted to dense (2^p packed 6-bit
// registers, 16 + 0.75·2^p bytes) when a register exceeds 32 or the sparse
// string would grow past its limit (3000 bytes at p ≥ 14, Redis's
// hll-sparse-max-bytes default; proportionally less below).
// Memory is never more than the dense size with the default limit.
//
//   - Add: one MurmurHash64A pass over the element; O(1) when dense,
//     O(sparse bytes) ≤ 3000-byte memmove when sparse.
//   - Count: O(1) when the cached cardinality is valid; otherwise O(m)
//     (a histogram of the registers and the estimator's ~60-term loop).
//   - Merge: O(m).
//
// # Sources
//
//   - P. Flajolet, É. Fusy, O. Gandouet, F. Meunier, "HyperLogLog: the
//     analysis of a near-optimal cardinality estimation algorithm", AofA 2007.
//   - O. Ertl, "New cardinality estimation algorithms for HyperLogLog
//     sketches", arXiv:1702.01284 (2017): the improved raw estimator with
//     σ and τ, exactly as Redis ≥ 5.0 computes it (same operation order,
//     round half away from zero).
//   - Redis src/hyperloglog.c: header, dense and sparse layouts, the sparse
//     updater (hllSparseSet) reproduced byte-for-byte, and the corruption
//     checks of CVE-2019-10192/10193 and CVE-2025-32023 (every run is
//     checked against the register count before the walk advances).
//
// # Assumptions
//
// The hash is assumed to behave like a random function of the element;
// MurmurHash64A is not keyed, so an adversary who chooses elements can bias
// the estimate (as with Redis). Hashes passed to AddHash must be uniformly
// distributed 64-bit values.
//
// # Concurrency
//
// A Sketch is not safe for concurrent use, not even Count, which writes the
// cached cardinality like PFCOUNT. Guard it with a mutex, or keep one
// sketch per goroutine and Merge them.
package hll

import (
	"errors"
	"fmt"
	"math"

	"github.com/probly/probly/internal/redishll"
)

// Precision bounds. Precision p gives m = 2^p registers.
const (
	DefaultPrecision = 14 // Redis's precision: 16384 registers, 12 KiB dense
	MinPrecision     = 4
	MaxPrecision     = 18
)

// Errors. Use errors.Is: returned errors wrap them with details.
var (
	// ErrInvalidParameter: a precision outside [MinPrecision,
	// MaxPrecision] or another bad Config field (the message names it).
	ErrInvalidParameter = errors.New("hll: invalid parameter")
	// ErrIncompatible: a merge of sketches of different precisions (the
	// message names both).
	ErrIncompatible = errors.New("hll: incompatible sketches")
	// ErrCorrupt: serialized sparse registers whose opcodes do not cover
	// exactly the register count.
	ErrCorrupt = redishll.ErrCorrupt
	// ErrNotHLL: a serialized sketch whose body is not an HLL string
	// (shorter than 16 bytes, no "HYLL" magic, unknown encoding, or dense
	// registers of the wrong length).
	ErrNotHLL = redishll.ErrNotHLL
	// ErrFormat: UnmarshalBinary input that is neither a Redis HLL string nor
	// probly's versioned format (bad magic, version, hash, length …).
	ErrFormat = errors.New("hll: bad serialized sketch")
	// ErrChecksum: the versioned format's CRC-32C does not match.
	ErrChecksum = errors.New("hll: checksum mismatch")
)

// StandardError returns the relative standard error 1.04/√m of a sketch of
// the given precision (0 for an invalid precision).
func StandardError(precision uint8) float64 {
	if precision < MinPrecision || precision > MaxPrecision {
		return 0
	}
	return 1.04 / math.Sqrt(float64(uint64(1)<<precision))
}

// Config describes a sketch for NewWithConfig. The zero Config is
// DefaultPrecision with the default seed and sparse limit.
type Config struct {
	// Precision p: m = 2^p registers, relative standard error 1.04/√m.
	// 0 means DefaultPrecision (14); otherwise in [MinPrecision,
	// MaxPrecision].
	Precision uint8
	// Seed of the element hash. 0 means DefaultSeed, the only seed
	// supported: the serialized forms (docs/FORMATS.md) record no other
	// one, so any other value is ErrInvalidParameter.
	Seed uint64
	// SparseMaxBytes is the size (header included) beyond which the
	// sparse representation is promoted to dense (like Redis's
	// hll-sparse-max-bytes). 0 means the default (3000 bytes at p ≥ 14,
	// proportionally less below); a negative value means "dense on the
	// first change". A dense sketch never returns to sparse.
	SparseMaxBytes int
}

// Sketch is a HyperLogLog sketch. It is not safe for concurrent use (see
// the package documentation).
//
// The zero value is an empty sketch of DefaultPrecision (14, Redis's),
// the same as New(DefaultPrecision) returns (Config{} with NewWithConfig): every method works on it, and
// its string (a few bytes while sparse) is allocated by the first method
// that needs it. Use New for another precision.
type Sketch struct {
	l         *params
	b         []byte // the Redis-layout string
	sparseMax int
}

// Stats describes a sketch. The field names are the library's shared ones
// (docs/LIBRARY.md); the membership fields (K, N, Capacity, P, SetBits,
// FillRatio, FPR) have no meaning for a sketch and are absent.
type Stats struct {
	Precision     uint8
	M             int     // registers, 2^precision
	Sparse        bool    // sparse encoding (else dense)
	Bytes         int     // bytes of the serialized registers (Redis string length)
	Cardinality   uint64  // current cardinality estimate
	StandardError float64 // 1.04/√m
}

func checkPrecision(p uint8) (*params, error) {
	if p < MinPrecision || p > MaxPrecision {
		return nil, fmt.Errorf("%w: precision %d is outside [%d, %d]", ErrInvalidParameter, p, MinPrecision, MaxPrecision)
	}
	return paramTable[p], nil
}

// New returns an empty sketch with 2^precision registers (precision in
// [MinPrecision, MaxPrecision]; memory at most 16 + 0.75·2^precision
// bytes). It starts sparse. Errors: ErrInvalidParameter.
func New(precision uint8) (*Sketch, error) {
	l, err := checkPrecision(precision)
	if err != nil {
		return nil, err
	}
	return &Sketch{l: l, b: newSparse(l), sparseMax: l.sparseMax}, nil
}

// NewWithConfig returns an empty sketch described by c (see Config).
// Errors: ErrInvalidParameter naming the field.
func NewWithConfig(c Config) (*Sketch, error) {
	if c.Precision == 0 {
		c.Precision = DefaultPrecision
	}
	if c.Seed != 0 && c.Seed != DefaultSeed {
		return nil, fmt.Errorf("%w: Seed %#x: only DefaultSeed (%#x) is supported", ErrInvalidParameter, c.Seed, uint64(DefaultSeed))
	}
	s, err := New(c.Precision)
	if err != nil {
		return nil, err
	}
	switch {
	case c.SparseMaxBytes < 0:
		s.sparseMax = 0
	case c.SparseMaxBytes > 0:
		s.sparseMax = c.SparseMaxBytes
	}
	return s, nil
}

// ready makes the zero Sketch an empty sketch of DefaultPrecision (see
// Sketch); on any other sketch it does nothing.
func (s *Sketch) ready() {
	if s.l == nil {
		s.l = paramTable[DefaultPrecision]
		s.b = newSparse(s.l)
		s.sparseMax = s.l.sparseMax
	}
}

// Add adds an element (hashed with MurmurHash64A, seed 0xadc83b19) and
// reports whether a register changed. At precision 14 this is exactly
// "PFADD key element".
func (s *Sketch) Add(elem []byte) bool {
	h := Hash(elem)
	if b := s.b; len(b) > 4 && b[4] == encDense { // len: the zero Sketch, and no bounds check
		return denseAdd(s.l, b, h)
	}
	return s.AddHash(h)
}

// AddHash adds a pre-computed 64-bit hash: the low p bits pick the
// register, the run of zeros above them gives its value. It reports
// whether a register changed.
func (s *Sketch) AddHash(h uint64) bool {
	if b := s.b; len(b) > 4 && b[4] == encDense { // len: the zero Sketch, and no bounds check
		return denseAdd(s.l, b, h)
	}
	s.ready()
	index, count := patLen(s.l, h)
	b, changed, err := setRegister(s.l, s.b, index, count, s.sparseMax)
	if err != nil {
		// A Sketch's string is valid by construction (New, validated
		// UnmarshalBinary); reaching this is a bug.
		panic("hll: internal corruption: " + err.Error())
	}
	s.b = b
	if changed {
		invalidateCache(b)
	}
	return changed
}

// Count returns the cardinality estimate. Like PFCOUNT it returns the
// cached value when it is valid, and otherwise computes the estimate and
// caches it in the header (so Count writes to the sketch).
func (s *Sketch) Count() uint64 {
	s.ready()
	if cacheValid(s.b) {
		return readCache(s.b)
	}
	n, ok := countString(s.l, s.b)
	if !ok {
		panic("hll: internal corruption")
	}
	writeCache(s.b, n)
	return n
}

// Merge makes s the union of s and o (PFMERGE s s o at precision 14): every
// register becomes the larger of the two. s becomes dense if either is
// dense. Cost O(m). Errors: ErrIncompatible if the precisions differ (s
// is unchanged).
func (s *Sketch) Merge(o *Sketch) error {
	s.ready()
	if o.l == nil { // the zero Sketch: an empty one of DefaultPrecision
		o = new(Sketch)
		o.ready()
	}
	if o.l.p != s.l.p {
		return fmt.Errorf("%w: cannot merge precision %d into precision %d", ErrIncompatible, o.l.p, s.l.p)
	}
	regs := make([]uint8, s.l.m)
	mergeInto(s.l, s.b, regs)
	mergeInto(s.l, o.b, regs)
	b, err := writeRegisters(s.l, s.b, regs, s.b[4] == encDense || o.b[4] == encDense, s.sparseMax)
	if err != nil {
		panic("hll: internal corruption: " + err.Error())
	}
	s.b = b
	return nil
}

// Reset empties the sketch, keeping its precision and sparse limit.
func (s *Sketch) Reset() {
	s.ready()
	s.b = newSparse(s.l)
}

// Clone returns an independent copy.
func (s *Sketch) Clone() *Sketch {
	return &Sketch{l: s.l, b: append(make([]byte, 0, cap(s.b)), s.b...), sparseMax: s.sparseMax}
}

// Registers returns the register values, one byte each (m bytes).
func (s *Sketch) Registers() []uint8 {
	s.ready()
	regs := make([]uint8, s.l.m)
	mergeInto(s.l, s.b, regs)
	return regs
}

// Stats reports the sketch's parameters, size and estimate. It does not
// write the cache.
func (s *Sketch) Stats() Stats {
	s.ready()
	est := readCache(s.b)
	if !cacheValid(s.b) {
		est, _ = countString(s.l, s.b)
	}
	return Stats{
		Precision:     s.l.p,
		M:             s.l.m,
		Sparse:        s.b[4] == encSparse,
		Bytes:         len(s.b),
		Cardinality:   est,
		StandardError: StandardError(s.l.p),
	}
}
