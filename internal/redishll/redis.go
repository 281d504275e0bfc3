package redishll

import (
	"math"
	"strconv"
	"strings"

	"github.com/probly/probly/internal/hashing"
)

// Redis string operations. These work on the raw bytes of a Redis string
// value holding an HLL (precision 14, spec redis-compat.md §4), exactly as
// Redis's PF* commands do, so the server can keep HLLs as plain strings
// that GET/SET/SETRANGE see. Inputs come from outside: every function
// validates what it reads, never panics and never reads or writes out of
// bounds, whatever the bytes.
//
// Functions that modify a value may do so in place and return a slice
// aliasing the input; callers that must keep the original pass a copy.

// Seed is the MurmurHash64A seed Redis's HyperLogLog uses.
const Seed = 0xadc83b19

// Hash returns the 64-bit hash Redis's HyperLogLog computes for an element:
// MurmurHash64A(elem, seed 0xadc83b19).
func Hash(elem []byte) uint64 { return hashing.MurmurHash64A(elem, Seed) }

// Redis HLL constants.
const (
	DefaultSparseMaxBytes = 3000  // Redis's hll-sparse-max-bytes default
	DenseSize             = 12304 // length of a dense Redis HLL string
	Registers             = 16384 // registers of a Redis HLL (precision 14)
)

// Validate reports whether b is a "valid HLL string" in Redis's sense
// (isHLLObjectOrReply): at least 16 bytes, magic "HYLL", encoding 0 or 1,
// and exactly 12304 bytes if dense. It does not look at a sparse body.
// Error: ErrNotHLL.
func Validate(b []byte) error {
	if !HasMagic(b) || b[4] > EncSparse || (b[4] == EncDense && len(b) != redisDenseSize) {
		return ErrNotHLL
	}
	return nil
}

// NewString returns the string of a new, empty HLL (18 bytes, sparse, one
// XZERO:16384, cache valid 0) — what PFMERGE and PFADD create before they
// invalidate the cache.
func NewString() []byte { return NewSparse(P14) }

// Add is PFADD key elem…: it adds elems to the HLL string b (nil = the
// key is missing: a new HLL is created, which counts as a change) and
// returns the new string and whether it changed. When anything changed the
// cache is marked invalid (byte 15 |= 0x80). sparseMaxBytes is
// hll-sparse-max-bytes.
//
// A dense b is modified in place (out aliases it); a sparse b is never
// modified: out is then a new slice.
//
// Errors: ErrNotHLL (b is not an HLL string; nothing changed); ErrCorrupt
// (a sparse body does not cover a register being set). On ErrCorrupt, as in
// Redis, the elements before the failing one stay applied: out holds them
// and changed says whether out must be stored.
func Add(b []byte, elems [][]byte, sparseMaxBytes int) (out []byte, changed bool, err error) {
	l := P14
	if b == nil {
		b, changed = NewSparse(l), true
	} else if err := Validate(b); err != nil {
		return b, false, err
	} else if b[4] == EncSparse {
		b = WithTerm(b, min(len(b), 300))
	}
	for _, e := range elems {
		h := Hash(e)
		if b[4] == EncDense {
			changed = DenseAdd(l, b, h) || changed
			continue
		}
		index, count := PatLen(l, h)
		nb, ch, err := SetRegister(l, b, index, count, sparseMaxBytes)
		if err != nil {
			return b, changed, err
		}
		b = nb
		changed = changed || ch
	}
	if changed {
		InvalidateCache(b)
	}
	return b, changed, nil
}

// Count is PFCOUNT key for one key. A valid cache is returned without
// looking at the body (as Redis does). Otherwise the estimate is computed
// and written into the cache: updated is then the new string (it aliases
// b, which is modified in place) and must be stored; updated is nil when
// nothing was written. Errors: ErrNotHLL, ErrCorrupt (nothing changed).
func Count(b []byte) (n uint64, updated []byte, err error) {
	if err := Validate(b); err != nil {
		return 0, nil, err
	}
	if CacheValid(b) {
		return ReadCache(b), nil, nil
	}
	n, ok := CountString(P14, b)
	if !ok {
		return 0, nil, ErrCorrupt
	}
	WriteCache(b, n)
	return n, b, nil
}

// Union accumulates the register-wise maximum of several HLL strings
// (multi-key PFCOUNT, PFMERGE). The zero value is an empty union.
type Union struct {
	regs  [redisRegisters]uint8
	dense bool
}

// Merge validates b (ErrNotHLL) and raises the union's registers to b's
// (ErrCorrupt for a bad sparse body; the union may then hold part of b).
func (u *Union) Merge(b []byte) error {
	if err := Validate(b); err != nil {
		return err
	}
	if b[4] == EncDense {
		u.dense = true
	}
	if !MergeInto(P14, b, u.regs[:]) {
		return ErrCorrupt
	}
	return nil
}

// AnyDense reports whether any merged string was dense.
func (u *Union) AnyDense() bool { return u.dense }

// Count estimates the union's cardinality.
func (u *Union) Count() uint64 { return CountRegisters(P14, u.regs[:]) }

// Registers returns the union's registers (a copy).
func (u *Union) Registers() []uint8 { return append([]uint8(nil), u.regs[:]...) }

// Store is PFMERGE's write step: it writes the union into dst (nil = a new
// HLL is created), dense if any merged string was dense (or dst is),
// otherwise register by register in index order through the sparse
// updater, and invalidates the cache. dst should itself have been merged
// into u (PFMERGE includes the destination). A dense dst is modified in
// place; a sparse one is copied. Errors: ErrNotHLL, ErrCorrupt (dst
// unchanged).
func (u *Union) Store(dst []byte, sparseMaxBytes int) ([]byte, error) {
	if dst == nil {
		dst = NewSparse(P14)
	} else if err := Validate(dst); err != nil {
		return nil, err
	} else if dst[4] == EncSparse {
		if !WalkSparse(dst[HdrSize:], redisRegisters, 0, nil) {
			return nil, ErrCorrupt
		}
		dst = WithTerm(dst, min(len(dst), 300))
	}
	return WriteRegisters(P14, dst, u.regs[:], u.dense, sparseMaxBytes)
}

// CountMany is PFCOUNT key key…: the estimate of the union. nil
// entries are missing keys and are skipped. Strings are checked in order;
// the first bad one gives ErrNotHLL or ErrCorrupt. No cache is touched.
func CountMany(bs [][]byte) (uint64, error) {
	var u Union
	for _, b := range bs {
		if b == nil {
			continue
		}
		if err := u.Merge(b); err != nil {
			return 0, err
		}
	}
	return u.Count(), nil
}

// Merge is PFMERGE dst src…: dst (nil = missing) and every source
// (nil = missing) are merged; the result is dense if any input is dense,
// else sparse via the updater in index order; the cache is invalidated.
// Errors, checked in order dst, srcs…: ErrNotHLL, ErrCorrupt. dst may be
// modified in place.
func Merge(dst []byte, srcs [][]byte, sparseMaxBytes int) ([]byte, error) {
	var u Union
	if dst != nil {
		if err := u.Merge(dst); err != nil {
			return nil, err
		}
	}
	for _, b := range srcs {
		if b == nil {
			continue
		}
		if err := u.Merge(b); err != nil {
			return nil, err
		}
	}
	return u.Store(dst, sparseMaxBytes)
}

// ToDense is PFDEBUG TODENSE: a sparse string is converted to dense
// (converted = true; out is a new 12304-byte string with the same header
// bytes and the dense encoding); a dense string is returned as is.
// Errors: ErrNotHLL, ErrCorrupt.
func ToDense(b []byte) (out []byte, converted bool, err error) {
	if err := Validate(b); err != nil {
		return nil, false, err
	}
	if b[4] == EncDense {
		return b, false, nil
	}
	d, err := ToDenseAt(P14, b, 0)
	if err != nil {
		return nil, false, err
	}
	return d, true, nil
}

// GetReg is PFDEBUG GETREG: the 16384 register values. A sparse
// string is converted to dense as a side effect: denseBytes is then the new
// string to store (nil if b was already dense). Errors: ErrNotHLL,
// ErrCorrupt.
func GetReg(b []byte) (regs []uint8, denseBytes []byte, err error) {
	d, converted, err := ToDense(b)
	if err != nil {
		return nil, nil, err
	}
	regs = make([]uint8, redisRegisters)
	r := d[HdrSize:]
	for i := range regs {
		regs[i] = Reg(r, i)
	}
	if converted {
		denseBytes = d
	}
	return regs, denseBytes, nil
}

// Encoding is PFDEBUG ENCODING: "sparse" or "dense". Error: ErrNotHLL.
func Encoding(b []byte) (string, error) {
	if err := Validate(b); err != nil {
		return "", err
	}
	if b[4] == EncSparse {
		return "sparse", nil
	}
	return "dense", nil
}

// Decode is PFDEBUG DECODE: the sparse opcodes as text, space
// separated: "Z:n" (XZERO), "z:n" (ZERO), "v:value,run" (VAL). Like Redis it
// prints whatever opcodes are there without checking the register count.
// Errors: ErrNotHLL, ErrNotSparse.
func Decode(b []byte) (string, error) {
	if err := Validate(b); err != nil {
		return "", err
	}
	if b[4] != EncSparse {
		return "", ErrNotSparse
	}
	body := b[HdrSize:]
	var sb strings.Builder
	sb.Grow(len(body) * 5)
	var num [20]byte
	for p := 0; p < len(body); {
		op := body[p]
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		switch {
		case isZero(op):
			sb.WriteString("z:")
			sb.Write(strconv.AppendInt(num[:0], int64(zeroLen(op)), 10))
			p++
		case IsXZero(op):
			sb.WriteString("Z:")
			sb.Write(strconv.AppendInt(num[:0], int64(xzeroLen(body, p, 0)), 10))
			p += 2
		default:
			sb.WriteString("v:")
			sb.Write(strconv.AppendInt(num[:0], int64(valValue(op)), 10))
			sb.WriteByte(',')
			sb.Write(strconv.AppendInt(num[:0], int64(valLen(op)), 10))
			p++
		}
	}
	return sb.String(), nil
}

// SelfTest runs PFSELFTEST's register-access test (set and read back
// random 6-bit values in a dense array) and an estimate check of dense vs
// sparse on n elements (0 = skip); it returns a Redis "TESTFAILED …" message
// or "".
func SelfTest(cycles, n int, seed uint64) string {
	l := P14
	regs := make([]byte, redisDenseSize-HdrSize+1)
	want := make([]uint8, redisRegisters)
	x := seed | 1
	rnd := func() uint64 { // xorshift64*
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		return x * 2685821657736338717
	}
	for c := 0; c < cycles; c++ {
		for i := range want {
			v := uint8(rnd() & RegMax)
			want[i] = v
			PutReg(regs, i, v)
		}
		for i, v := range want {
			if got := Reg(regs, i); got != v {
				return "TESTFAILED Register " + strconv.Itoa(i) + " should be " + strconv.Itoa(int(v)) + " but is " + strconv.Itoa(int(got))
			}
		}
	}
	if n <= 0 {
		return ""
	}
	// One string promoted to dense on its first change (a sparse limit of
	// 0), one that stays sparse up to Redis's default limit.
	dense, sparse := NewSparse(l), NewSparse(l)
	add := func(b []byte, h uint64, maxBytes int) []byte {
		if b[4] == EncDense {
			DenseAdd(l, b, h)
			return b
		}
		index, count := PatLen(l, h)
		nb, _, err := SetRegister(l, b, index, count, maxBytes)
		if err != nil {
			panic("redishll: self-test string corrupted: " + err.Error())
		}
		return nb
	}
	relerr := 1.04 / math.Sqrt(float64(l.M))
	checkpoint := 1
	var ele [8]byte
	for j := 1; j <= n; j++ {
		v := uint64(j) ^ seed
		for k := range ele {
			ele[k] = byte(v >> (8 * k))
		}
		h := Hash(ele[:])
		dense = add(dense, h, 0)
		sparse = add(sparse, h, l.SparseMax)
		if j != checkpoint {
			continue
		}
		if j < redisSparseMax/2 && sparse[4] != EncSparse {
			return "TESTFAILED sparse encoding not used"
		}
		dc, _ := CountString(l, dense)
		sc, _ := CountString(l, sparse)
		if dc != sc {
			return "TESTFAILED dense/sparse disagree"
		}
		abserr := int64(checkpoint) - int64(dc)
		if abserr < 0 {
			abserr = -abserr
		}
		maxerr := int64(relerr*6*float64(checkpoint) + 0.999999999)
		if j == 10 {
			maxerr = 1
		}
		if abserr > maxerr {
			return "TESTFAILED Too big error. card:" + strconv.Itoa(checkpoint) + " abserr:" + strconv.FormatInt(abserr, 10)
		}
		checkpoint *= 10
	}
	return ""
}

// Cached returns the cached cardinality of a valid HLL string whose
// cache is valid, without looking at the body and without writing (for a
// reader holding only a shared lock). ok is false for anything else.
func Cached(b []byte) (n uint64, ok bool) {
	if Validate(b) != nil || !CacheValid(b) {
		return 0, false
	}
	return ReadCache(b), true
}

// IsDense reports whether b is a valid dense HLL string. PFADD on a
// dense string does not depend on hll-sparse-max-bytes.
func IsDense(b []byte) bool { return Validate(b) == nil && b[4] == EncDense }
