package hll

import (
	"strconv"
	"strings"
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

// Redis HLL constants.
const (
	DefaultSparseMaxBytes = 3000  // Redis's hll-sparse-max-bytes default
	RedisDenseSize        = 12304 // length of a dense Redis HLL string
	RedisRegisters        = 16384 // registers of a Redis HLL (precision 14)
)

// RedisValidate reports whether b is a "valid HLL string" in Redis's sense
// (isHLLObjectOrReply): at least 16 bytes, magic "HYLL", encoding 0 or 1,
// and exactly 12304 bytes if dense. It does not look at a sparse body.
// Error: ErrNotHLL.
func RedisValidate(b []byte) error {
	if !hasMagic(b) || b[4] > encSparse || (b[4] == encDense && len(b) != redisDenseSize) {
		return ErrNotHLL
	}
	return nil
}

// RedisNew returns the string of a new, empty HLL (18 bytes, sparse, one
// XZERO:16384, cache valid 0) — what PFMERGE and PFADD create before they
// invalidate the cache.
func RedisNew() []byte { return newSparse(redisParams) }

// RedisAdd is PFADD key elem…: it adds elems to the HLL string b (nil = the
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
func RedisAdd(b []byte, elems [][]byte, sparseMaxBytes int) (out []byte, changed bool, err error) {
	l := redisParams
	if b == nil {
		b, changed = newSparse(l), true
	} else if err := RedisValidate(b); err != nil {
		return b, false, err
	} else if b[4] == encSparse {
		b = withTerm(b, min(len(b), 300))
	}
	for _, e := range elems {
		h := Hash(e)
		if b[4] == encDense {
			changed = denseAdd(l, b, h) || changed
			continue
		}
		index, count := patLen(l, h)
		nb, ch, err := setRegister(l, b, index, count, sparseMaxBytes)
		if err != nil {
			return b, changed, err
		}
		b = nb
		changed = changed || ch
	}
	if changed {
		invalidateCache(b)
	}
	return b, changed, nil
}

// RedisCount is PFCOUNT key for one key. A valid cache is returned without
// looking at the body (as Redis does). Otherwise the estimate is computed
// and written into the cache: updated is then the new string (it aliases
// b, which is modified in place) and must be stored; updated is nil when
// nothing was written. Errors: ErrNotHLL, ErrCorrupt (nothing changed).
func RedisCount(b []byte) (n uint64, updated []byte, err error) {
	if err := RedisValidate(b); err != nil {
		return 0, nil, err
	}
	if cacheValid(b) {
		return readCache(b), nil, nil
	}
	n, ok := countString(redisParams, b)
	if !ok {
		return 0, nil, ErrCorrupt
	}
	writeCache(b, n)
	return n, b, nil
}

// RedisUnion accumulates the register-wise maximum of several HLL strings
// (multi-key PFCOUNT, PFMERGE). The zero value is an empty union.
type RedisUnion struct {
	regs  [redisRegisters]uint8
	dense bool
}

// Merge validates b (ErrNotHLL) and raises the union's registers to b's
// (ErrCorrupt for a bad sparse body; the union may then hold part of b).
func (u *RedisUnion) Merge(b []byte) error {
	if err := RedisValidate(b); err != nil {
		return err
	}
	if b[4] == encDense {
		u.dense = true
	}
	if !mergeInto(redisParams, b, u.regs[:]) {
		return ErrCorrupt
	}
	return nil
}

// AnyDense reports whether any merged string was dense.
func (u *RedisUnion) AnyDense() bool { return u.dense }

// Count estimates the union's cardinality.
func (u *RedisUnion) Count() uint64 { return countRegisters(redisParams, u.regs[:]) }

// Registers returns the union's registers (a copy).
func (u *RedisUnion) Registers() []uint8 { return append([]uint8(nil), u.regs[:]...) }

// Store is PFMERGE's write step: it writes the union into dst (nil = a new
// HLL is created), dense if any merged string was dense (or dst is),
// otherwise register by register in index order through the sparse
// updater, and invalidates the cache. dst should itself have been merged
// into u (PFMERGE includes the destination). A dense dst is modified in
// place; a sparse one is copied. Errors: ErrNotHLL, ErrCorrupt (dst
// unchanged).
func (u *RedisUnion) Store(dst []byte, sparseMaxBytes int) ([]byte, error) {
	if dst == nil {
		dst = newSparse(redisParams)
	} else if err := RedisValidate(dst); err != nil {
		return nil, err
	} else if dst[4] == encSparse {
		if !walkSparse(dst[hdrSize:], redisRegisters, 0, nil) {
			return nil, ErrCorrupt
		}
		dst = withTerm(dst, min(len(dst), 300))
	}
	return writeRegisters(redisParams, dst, u.regs[:], u.dense, sparseMaxBytes)
}

// RedisCountMany is PFCOUNT key key…: the estimate of the union. nil
// entries are missing keys and are skipped. Strings are checked in order;
// the first bad one gives ErrNotHLL or ErrCorrupt. No cache is touched.
func RedisCountMany(bs [][]byte) (uint64, error) {
	var u RedisUnion
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

// RedisMerge is PFMERGE dst src…: dst (nil = missing) and every source
// (nil = missing) are merged; the result is dense if any input is dense,
// else sparse via the updater in index order; the cache is invalidated.
// Errors, checked in order dst, srcs…: ErrNotHLL, ErrCorrupt. dst may be
// modified in place.
func RedisMerge(dst []byte, srcs [][]byte, sparseMaxBytes int) ([]byte, error) {
	var u RedisUnion
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

// RedisToDense is PFDEBUG TODENSE: a sparse string is converted to dense
// (converted = true; out is a new 12304-byte string with the same header
// bytes and the dense encoding); a dense string is returned as is.
// Errors: ErrNotHLL, ErrCorrupt.
func RedisToDense(b []byte) (out []byte, converted bool, err error) {
	if err := RedisValidate(b); err != nil {
		return nil, false, err
	}
	if b[4] == encDense {
		return b, false, nil
	}
	d, err := toDense(redisParams, b, 0)
	if err != nil {
		return nil, false, err
	}
	return d, true, nil
}

// RedisGetReg is PFDEBUG GETREG: the 16384 register values. A sparse
// string is converted to dense as a side effect: denseBytes is then the new
// string to store (nil if b was already dense). Errors: ErrNotHLL,
// ErrCorrupt.
func RedisGetReg(b []byte) (regs []uint8, denseBytes []byte, err error) {
	d, converted, err := RedisToDense(b)
	if err != nil {
		return nil, nil, err
	}
	regs = make([]uint8, redisRegisters)
	r := d[hdrSize:]
	for i := range regs {
		regs[i] = getReg(r, i)
	}
	if converted {
		denseBytes = d
	}
	return regs, denseBytes, nil
}

// RedisEncoding is PFDEBUG ENCODING: "sparse" or "dense". Error: ErrNotHLL.
func RedisEncoding(b []byte) (string, error) {
	if err := RedisValidate(b); err != nil {
		return "", err
	}
	if b[4] == encSparse {
		return "sparse", nil
	}
	return "dense", nil
}

// RedisDecode is PFDEBUG DECODE: the sparse opcodes as text, space
// separated: "Z:n" (XZERO), "z:n" (ZERO), "v:value,run" (VAL). Like Redis it
// prints whatever opcodes are there without checking the register count.
// Errors: ErrNotHLL, ErrNotSparse.
func RedisDecode(b []byte) (string, error) {
	if err := RedisValidate(b); err != nil {
		return "", err
	}
	if b[4] != encSparse {
		return "", ErrNotSparse
	}
	body := b[hdrSize:]
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
		case isXZero(op):
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

// RedisSelfTest runs PFSELFTEST's register-access test (set and read back
// random 6-bit values in a dense array) and an estimate check of dense vs
// sparse on n elements (0 = skip); it returns a Redis "TESTFAILED …" message
// or "".
func RedisSelfTest(cycles, n int, seed uint64) string {
	l := redisParams
	regs := make([]byte, redisDenseSize-hdrSize+1)
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
			v := uint8(rnd() & regMax)
			want[i] = v
			setReg(regs, i, v)
		}
		for i, v := range want {
			if got := getReg(regs, i); got != v {
				return "TESTFAILED Register " + strconv.Itoa(i) + " should be " + strconv.Itoa(int(v)) + " but is " + strconv.Itoa(int(got))
			}
		}
	}
	if n <= 0 {
		return ""
	}
	dense, _ := New(redisP)
	dense.SetSparseMaxBytes(0)
	sparse, _ := New(redisP)
	relerr := StandardError(redisP)
	checkpoint := 1
	var ele [8]byte
	for j := 1; j <= n; j++ {
		v := uint64(j) ^ seed
		for k := range ele {
			ele[k] = byte(v >> (8 * k))
		}
		dense.Add(ele[:])
		sparse.Add(ele[:])
		if j != checkpoint {
			continue
		}
		if j < redisSparseMax/2 && sparse.b[4] != encSparse {
			return "TESTFAILED sparse encoding not used"
		}
		dc, _ := countString(l, dense.b)
		sc, _ := countString(l, sparse.b)
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

// RedisCached returns the cached cardinality of a valid HLL string whose
// cache is valid, without looking at the body and without writing (for a
// reader holding only a shared lock). ok is false for anything else.
func RedisCached(b []byte) (n uint64, ok bool) {
	if RedisValidate(b) != nil || !cacheValid(b) {
		return 0, false
	}
	return readCache(b), true
}

// RedisIsDense reports whether b is a valid dense HLL string. PFADD on a
// dense string does not depend on hll-sparse-max-bytes.
func RedisIsDense(b []byte) bool { return RedisValidate(b) == nil && b[4] == encDense }
