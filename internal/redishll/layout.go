// Package redishll holds the HyperLogLog string layout of Redis (spec
// redis-compat.md §4.2) generalised to 2^p registers, which both the public
// hll.Sketch (any precision) and the server's PF* commands (precision 14,
// redis.go) work on, and the Redis string operations the server runs.
//
// Inputs come from outside: every exported function validates what it
// reads, never panics and never reads or writes out of bounds, whatever
// the bytes (the low-level layout functions document what they assume of
// their input instead).
package redishll

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
)

// Precision bounds of the layout. Precision p gives m = 2^p registers.
const (
	MinPrecision = 4
	MaxPrecision = 18
)

// Errors. hll re-exports them (the same values), so errors.Is works on
// either name.
var (
	// ErrCorrupt: a sparse HLL whose opcodes do not cover exactly the
	// register count. Redis answers "INVALIDOBJ Corrupted HLL object
	// detected".
	ErrCorrupt = errors.New("hll: corrupted HLL object")
	// ErrNotHLL: a string that is not an HLL (shorter than 16 bytes, no
	// "HYLL" magic, unknown encoding, or a dense string of the wrong
	// length). Redis answers "WRONGTYPE Key is not a valid HyperLogLog
	// string value."
	ErrNotHLL = errors.New("hll: not a valid HyperLogLog string")
	// ErrNotSparse: PFDEBUG DECODE of a dense HLL ("ERR HLL encoding is not
	// sparse").
	ErrNotSparse = errors.New("hll: HLL encoding is not sparse")
)

// The Redis string layout (spec redis-compat.md §4.2), generalised to 2^p
// registers. Every function here works on such a string: a 16-byte header
// followed by either packed 6-bit registers (dense) or run-length opcodes
// (sparse).
const (
	HdrSize   = 16
	EncDense  = 0
	EncSparse = 1
	cacheByte = 15   // byte holding the cache-invalid flag (bit 7)
	cacheBit  = 0x80 // set = cached cardinality is stale
	regBits   = 6
	RegMax    = 63

	sparseValMaxValue = 32
	sparseValMaxLen   = 4
	sparseZeroMaxLen  = 64
	sparseXZeroMaxLen = 16384

	RedisP          = 14
	redisRegisters  = Registers
	redisDenseSize  = DenseSize
	redisSparseMax  = DefaultSparseMaxBytes
	alphaInf        = 0.721347520444481703680 // 0.5/ln 2
	magic0, magic1  = 'H', 'Y'
	magic2, magic3  = 'L', 'L'
	opXZeroBit      = 0x40
	opValBit        = 0x80
	opKindMask      = 0xc0
	opZeroLenMask   = 0x3f
	opValLenMask    = 0x03
	opValValueShift = 2
)

// Params describes one precision.
type Params struct {
	P         uint8
	M         int // registers
	Q         int // 64 − p: bits left for the run length
	DenseSize int // header + packed registers
	SparseMax int // default promotion threshold of the library Sketch
}

var ParamTable = makeParams()

func makeParams() (t [MaxPrecision + 1]*Params) {
	for p := MinPrecision; p <= MaxPrecision; p++ {
		m := 1 << p
		l := &Params{P: uint8(p), M: m, Q: 64 - p, DenseSize: HdrSize + (m*regBits+7)/8}
		if p == RedisP {
			l.SparseMax = redisSparseMax
		} else {
			// Redis's ratio (3000 bytes of sparse vs 12304 dense) below
			// p = 14; above, Redis's 3000 bytes, which bounds the memmove
			// of a sparse update.
			l.SparseMax = max(HdrSize+2, min(l.DenseSize*redisSparseMax/redisDenseSize, redisSparseMax))
		}
		t[p] = l
	}
	return t
}

var P14 = ParamTable[RedisP]

// The exported Redis constants agree with the layout.
var _ = [1]struct{}{}[redisDenseSize-(HdrSize+(redisRegisters*regBits+7)/8)]
var _ = [1]struct{}{}[redisRegisters-(1<<RedisP)]

// ---- header ----

func HasMagic(b []byte) bool {
	return len(b) >= HdrSize && b[0] == magic0 && b[1] == magic1 && b[2] == magic2 && b[3] == magic3
}

func CacheValid(b []byte) bool { return b[cacheByte]&cacheBit == 0 }

func InvalidateCache(b []byte) { b[cacheByte] |= cacheBit }

func ReadCache(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[8+i])
	}
	return v
}

func WriteCache(b []byte, v uint64) {
	for i := 0; i < 8; i++ {
		b[8+i] = byte(v >> (8 * i))
	}
}

// NewSparse returns an empty sparse string: the header and XZERO opcodes
// covering every register (createHLLObject). The cache holds a valid 0.
func NewSparse(l *Params) []byte {
	n := (l.M + sparseXZeroMaxLen - 1) / sparseXZeroMaxLen
	b := make([]byte, HdrSize+2*n, HdrSize+2*n+8) // room for the terminator
	b[0], b[1], b[2], b[3] = magic0, magic1, magic2, magic3
	b[4] = EncSparse
	p := HdrSize
	for left := l.M; left > 0; {
		run := min(left, sparseXZeroMaxLen)
		putXZero(b[p:], run)
		p += 2
		left -= run
	}
	return b
}

// ---- hashing ----

// PatLen splits a hash into the register index and the run length of the
// "000…1" pattern in the remaining bits, counting the final 1 (hllPatLen).
func PatLen(l *Params, h uint64) (index int, count uint8) {
	index = int(h & uint64(l.M-1))
	h >>= l.P
	h |= 1 << l.Q
	return index, uint8(bits.TrailingZeros64(h) + 1)
}

// ---- dense registers ----

// Reg reads register i of packed 6-bit registers r (LSB-first).
func Reg(r []byte, i int) uint8 {
	bit := i * regBits
	b, fb := bit>>3, uint(bit&7)
	if fb <= 8-regBits {
		return (r[b] >> fb) & RegMax
	}
	return ((r[b] >> fb) | (r[b+1] << (8 - fb))) & RegMax
}

// PutReg writes register i.
func PutReg(r []byte, i int, v uint8) {
	bit := i * regBits
	b, fb := bit>>3, uint(bit&7)
	r[b] = r[b]&^(RegMax<<fb) | v<<fb
	if fb > 8-regBits {
		r[b+1] = r[b+1]&^(RegMax>>(8-fb)) | v>>(8-fb)
	}
}

// denseSet raises register index to count; it reports a change
// (hllDenseSet).
func denseSet(r []byte, index int, count uint8) bool {
	if Reg(r, index) < count {
		PutReg(r, index, count)
		return true
	}
	return false
}

// DenseAdd is AddHash on a dense string b (header included): it raises the
// register the hash selects and invalidates the cached cardinality. It is
// the hot path of Add, written to stay branch-free on the register's bit
// offset: it reads the two bytes a register can span (the second is the
// first again for the last byte, which no register straddles, since m·6
// is a multiple of 8), so a random offset costs no branch misprediction.
func DenseAdd(l *Params, b []byte, h uint64) bool {
	index := uint(h) & uint(l.M-1)
	// (p and q are < 64; the masks only spare the compiler its checks.)
	count := uint16(bits.TrailingZeros64(h>>(l.P&63)|1<<(l.Q&63)) + 1)
	bit := index * regBits
	i := HdrSize + bit>>3
	j := i + 1
	if j >= uint(len(b)) {
		j = i
	}
	sh := bit & 7
	w := uint16(b[i]) | uint16(b[j])<<8
	if (w>>sh)&RegMax >= count {
		return false
	}
	w = w&^(RegMax<<sh) | count<<sh
	b[j] = byte(w >> 8) // first, so that b[i] wins when j == i
	b[i] = byte(w)
	b[cacheByte] |= cacheBit
	return true
}

// DenseHisto adds the histogram of m packed registers to h. It reads eight
// registers (six bytes) per step and counts into two interleaved tables, so
// consecutive equal registers do not wait on each other's increments.
func DenseHisto(r []byte, m int, h *[64]int) {
	var h2 [64]int
	n := m * regBits / 8
	i, reg := 0, 0
	for ; i+8 <= n; i, reg = i+6, reg+8 {
		w := binary.LittleEndian.Uint64(r[i:])
		h[w&63]++
		h2[w>>6&63]++
		h[w>>12&63]++
		h2[w>>18&63]++
		h[w>>24&63]++
		h2[w>>30&63]++
		h[w>>36&63]++
		h2[w>>42&63]++
	}
	for ; reg < m; reg++ {
		h[Reg(r, reg)]++
	}
	for v, c := range h2 {
		h[v] += c
	}
}

// ---- sparse opcodes ----

func isZero(op byte) bool  { return op&opKindMask == 0 }
func IsXZero(op byte) bool { return op&opKindMask == opXZeroBit }
func isVal(op byte) bool   { return op&opValBit != 0 }

func zeroLen(op byte) int  { return int(op&opZeroLenMask) + 1 }
func valLen(op byte) int   { return int(op&opValLenMask) + 1 }
func valValue(op byte) int { return int(op>>opValValueShift&0x1f) + 1 }

// xzeroLen reads the XZERO at body[p]. A truncated opcode at the very end
// of the string reads term as its second byte: Redis reads the byte after
// the string there, the sds terminator (see terminator below).
func xzeroLen(body []byte, p int, term byte) int {
	lo := term
	if p+1 < len(body) {
		lo = body[p+1]
	}
	return (int(body[p]&opZeroLenMask)<<8 | int(lo)) + 1
}

// The terminator. Redis strings (sds) keep a byte after their last byte,
// normally a NUL. Redis's sparse walks read it as the second byte of an
// XZERO cut off by the end of a (corrupted) string, and hllSparseSet can
// write the missing byte of a split XZERO over it, so a later set in the
// same command reads that byte. The functions that modify a sparse string
// keep this byte in the slice's capacity, at s[:len(s)+1][len(s)]: it
// starts at 0 at the beginning of every command (a fresh sds terminator)
// and follows Redis's writes within the command. Read-only walks use 0.

// WithTerm returns a private copy of s with room for the terminator (0)
// and for growth.
func WithTerm(s []byte, extra int) []byte {
	out := make([]byte, len(s), len(s)+1+extra)
	copy(out, s)
	return out
}

func term(s []byte) byte { return s[:len(s)+1][len(s)] }

func setTerm(s []byte, v byte) { s[:len(s)+1][len(s)] = v }

func valOp(value, run int) byte { return byte((value-1)<<opValValueShift|(run-1)) | opValBit }

func putXZero(b []byte, run int) {
	run--
	b[0] = byte(run>>8) | opXZeroBit
	b[1] = byte(run)
}

// WalkSparse visits every opcode of a sparse body in order. For each run it
// checks the run against the register count *before* advancing
// (CVE-2019-10192/10193, CVE-2025-32023), and it requires the runs to cover
// exactly m registers. fn receives the first register, the run length and
// the value (0 for ZERO/XZERO); it is never called with a run that leaves
// [0, m). The walk reads only inside body.
func WalkSparse(body []byte, m int, term byte, fn func(first, run, value int)) bool {
	idx := 0
	for p := 0; p < len(body); {
		op := body[p]
		var run, val int
		switch {
		case isZero(op):
			run = zeroLen(op)
			p++
		case IsXZero(op):
			run = xzeroLen(body, p, term)
			p += 2
		default:
			run, val = valLen(op), valValue(op)
			p++
		}
		if run > m-idx {
			return false
		}
		if fn != nil {
			fn(idx, run, val)
		}
		idx += run
	}
	return idx == m
}

// sparseHisto adds the register histogram of a sparse body to h; false if
// the body is corrupted (hllSparseRegHisto).
func sparseHisto(body []byte, m int, h *[64]int) bool {
	var local [64]int
	ok := WalkSparse(body, m, 0, func(_, run, val int) { local[val] += run })
	if ok {
		for i, c := range local {
			h[i] += c
		}
	}
	return ok
}

// ToDenseAt converts a valid sparse string of precision l to dense
// (hllSparseToDense): the header is copied (magic, reserved bytes and the
// cached cardinality), the encoding becomes dense, and the registers are
// set from the opcodes. It returns ErrCorrupt and allocates at most the
// dense size. term is the source's terminator.
func ToDenseAt(l *Params, s []byte, term byte) ([]byte, error) {
	d := make([]byte, l.DenseSize, l.DenseSize+1) // +1: room for a reader of r[b+1]
	copy(d, s[:HdrSize])
	d[4] = EncDense
	regs := d[HdrSize:]
	if !WalkSparse(s[HdrSize:], l.M, term, func(first, run, val int) {
		if val != 0 {
			for i := first; i < first+run; i++ {
				PutReg(regs, i, uint8(val))
			}
		}
	}) {
		return nil, ErrCorrupt
	}
	return d, nil
}

// sparseSet raises register index to count in the sparse string s,
// byte-for-byte as Redis's hllSparseSet: it locates the opcode covering the
// register, rewrites it in place or splits it into at most five bytes, then
// merges adjacent equal VAL opcodes in a window of five opcodes starting at
// the previous one. When count does not fit a VAL opcode (> 32), or when the
// edit would grow the string beyond maxBytes, the string is promoted to
// dense and the register set there.
//
// It returns the (possibly reallocated) string, whether a register changed,
// and ErrCorrupt when the opcodes do not cover the register or the promotion
// finds the string corrupted; on error s is returned unchanged. s must have
// room for the terminator (cap > len) and is modified in place.
func sparseSet(l *Params, s []byte, index int, count uint8, maxBytes int) ([]byte, bool, error) {
	if count > sparseValMaxValue {
		return promote(l, s, index, count)
	}
	body := s[HdrSize:]
	end := len(body)
	t := term(s)

	// Step 1: find the opcode covering index.
	p, first, prev, span, oplen := 0, 0, -1, 0, 1
	for p < end {
		op := body[p]
		oplen = 1
		switch {
		case isZero(op):
			span = zeroLen(op)
		case isVal(op):
			span = valLen(op)
		default:
			span = xzeroLen(body, p, t)
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return s, false, ErrCorrupt
	}
	hasNext := p+oplen < end
	op := body[p]
	zero, xzero := isZero(op), IsXZero(op)
	var runlen int
	switch {
	case zero:
		runlen = zeroLen(op)
	case xzero:
		runlen = xzeroLen(body, p, t)
	default:
		runlen = valLen(op)
	}

	// Step 2: the easy in-place cases.
	if !zero && !xzero {
		if uint8(valValue(op)) >= count {
			return s, false, nil // A: already large enough
		}
		if runlen == 1 {
			body[p] = valOp(int(count), 1) // B
			return mergeVals(s, prev), true, nil
		}
	}
	if zero && runlen == 1 {
		body[p] = valOp(int(count), 1) // C
		return mergeVals(s, prev), true, nil
	}

	// General case: split the run into at most five bytes.
	var seq [5]byte
	n := 0
	last := first + span - 1
	putZeros := func(run int) {
		if run > sparseZeroMaxLen {
			putXZero(seq[n:], run)
			n += 2
		} else {
			seq[n] = byte(run - 1)
			n++
		}
	}
	if zero || xzero {
		if index != first {
			putZeros(index - first)
		}
		seq[n] = valOp(int(count), 1)
		n++
		if index != last {
			putZeros(last - index)
		}
	} else {
		cur := valValue(op)
		if index != first {
			seq[n] = valOp(cur, index-first)
			n++
		}
		seq[n] = valOp(int(count), 1)
		n++
		if index != last {
			seq[n] = valOp(cur, last-index)
			n++
		}
	}

	// Step 3: replace the opcode with the sequence.
	oldlen := 1
	if xzero {
		oldlen = 2
	}
	delta := n - oldlen
	if delta > 0 && len(s)+delta > maxBytes {
		return promote(l, s, index, count)
	}
	oldLen := len(s)
	newLen := oldLen + delta
	pAbs := HdrSize + p
	need := max(newLen, pAbs+n) + 1 // + the terminator
	if need > cap(s) {
		// Grow greedily like Redis (len+3, doubled up to +300) so a run of
		// inserts does not reallocate every time; never past the dense size
		// unless the limit allows more.
		grow := need + min(need, 300)
		if limit := max(maxBytes, l.DenseSize) + 1; grow > limit {
			grow = max(limit, need)
		}
		ns := make([]byte, oldLen+1, grow)
		copy(ns, s[:oldLen+1])
		s = ns[:oldLen]
	}
	if delta != 0 && hasNext {
		next := pAbs + oldlen
		copy(s[:need][next+delta:], s[next:oldLen]) // memmove
	}
	s = s[:newLen]
	setTerm(s, 0) // sdsIncrLen
	copy(s[:need][pAbs:], seq[:n])
	return mergeVals(s, prev), true, nil
}

// mergeVals is step 4 of hllSparseSet: starting at the opcode before the
// edit (or the first), scan at most five opcodes and merge adjacent VALs of
// equal value whose runs add up to at most 4. It invalidates the cache.
func mergeVals(s []byte, prev int) []byte {
	body := s[HdrSize:]
	end := len(body)
	p := max(prev, 0)
	for scan := 5; p < end && scan > 0; {
		scan--
		op := body[p]
		if IsXZero(op) {
			p += 2
			continue
		} else if isZero(op) {
			p++
			continue
		}
		if p+1 < end && isVal(body[p+1]) {
			v1, v2 := valValue(op), valValue(body[p+1])
			if v1 == v2 {
				if run := valLen(op) + valLen(body[p+1]); run <= sparseValMaxLen {
					body[p+1] = valOp(v1, run)
					copy(body[p:], body[p+1:end])
					end--
					body = body[:end]
					setTerm(body, 0) // sdsIncrLen(−1)
					continue
				}
			}
		}
		p++
	}
	s = s[:HdrSize+end]
	InvalidateCache(s)
	return s
}

// promote converts s to dense and sets the register there.
func promote(l *Params, s []byte, index int, count uint8) ([]byte, bool, error) {
	d, err := ToDenseAt(l, s, term(s))
	if err != nil {
		return s, false, err
	}
	denseSet(d[HdrSize:], index, count)
	return d, true, nil
}

// SetRegister raises one register of a valid string of either encoding.
// Dense sets do not touch the cache flag (the caller does, as PFADD does
// once per command); sparse sets invalidate it themselves.
func SetRegister(l *Params, s []byte, index int, count uint8, maxBytes int) ([]byte, bool, error) {
	if s[4] == EncDense {
		return s, denseSet(s[HdrSize:], index, count), nil
	}
	return sparseSet(l, s, index, count, maxBytes)
}

// histogram computes the register histogram of a string (validated
// encoding); false if a sparse body is corrupted.
func histogram(l *Params, s []byte, h *[64]int) bool {
	if s[4] == EncDense {
		DenseHisto(s[HdrSize:], l.M, h)
		return true
	}
	return sparseHisto(s[HdrSize:], l.M, h)
}

// MergeInto raises max[i] to every register of s; false if corrupted
// (hllMerge).
func MergeInto(l *Params, s []byte, regs []uint8) bool {
	if s[4] == EncDense {
		r := s[HdrSize:]
		for i := 0; i < l.M; i++ {
			if v := Reg(r, i); v > regs[i] {
				regs[i] = v
			}
		}
		return true
	}
	return WalkSparse(s[HdrSize:], l.M, 0, func(first, run, val int) {
		if val == 0 {
			return
		}
		v := uint8(val)
		for i := first; i < first+run; i++ {
			if v > regs[i] {
				regs[i] = v
			}
		}
	})
}

// ---- estimator (Ertl 2017, "improved raw estimator", Redis ≥ 5) ----

// sigma is Ertl's σ(x) = x + Σ_{k≥1} x^(2^k)·2^(k−1).
func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		zp := z
		z += float64(x * y) // explicit conversion: no fused multiply-add
		y += y
		if zp == z {
			return z
		}
	}
}

// tau is Ertl's τ(x) = (1 − x − Σ_{k≥1} (1 − x^(2^−k))²·2^−k) / 3.
func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		zp := z
		y *= 0.5
		d := float64((1 - x) * (1 - x)) // glibc pow(1−x, 2) is this, correctly rounded
		z -= float64(d * y)
		if zp == z {
			return z / 3
		}
	}
}

// estimate turns a register histogram into the cardinality estimate:
//
//	z = m·τ((m − C[q+1])/m); for j = q…1: z = (z + C[j])/2; z += m·σ(C[0]/m)
//	E = round(α∞·m²/z), α∞ = 1/(2 ln 2)
//
// with the same operation order as Redis so the result is bit-identical.
// An estimate that does not fit an int64 (only crafted registers get there)
// is 1<<63, what x86 llroundl returns.
func estimate(h *[64]int, m, q int) uint64 {
	mf := float64(m)
	z := mf * tau((mf-float64(h[q+1]))/mf)
	for j := q; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += float64(mf * sigma(float64(h[0])/mf))
	e := math.Round(alphaInf * mf * mf / z)
	if math.IsNaN(e) || e >= 1<<63 || e < -(1<<63) {
		return 1 << 63
	}
	return uint64(int64(e))
}

// CountString computes the estimate of a valid string.
func CountString(l *Params, s []byte) (uint64, bool) {
	var h [64]int
	if !histogram(l, s, &h) {
		return 0, false
	}
	return estimate(&h, l.M, l.Q), true
}

// CountRegisters estimates from one byte per register.
func CountRegisters(l *Params, regs []uint8) uint64 {
	var h [64]int
	for _, v := range regs {
		h[v&63]++
	}
	return estimate(&h, l.M, l.Q)
}

// WriteRegisters stores regs into dst (a valid string of precision l),
// PFMERGE's final step: dense if dst is dense or ToDenseAt, else every
// non-zero register in index order through the sparse updater. The cache is
// invalidated. A sparse dst needs room for its terminator (see sparseSet).
func WriteRegisters(l *Params, dst []byte, regs []uint8, toDenseFirst bool, maxBytes int) ([]byte, error) {
	var err error
	if toDenseFirst && dst[4] == EncSparse {
		if dst, err = ToDenseAt(l, dst, term(dst)); err != nil {
			return nil, err
		}
	}
	for j, v := range regs {
		if v == 0 {
			continue
		}
		if dst[4] == EncDense {
			denseSet(dst[HdrSize:], j, v)
			continue
		}
		var nd []byte
		nd, _, err = sparseSet(l, dst, j, v, maxBytes)
		if err != nil {
			return nil, err
		}
		dst = nd
	}
	InvalidateCache(dst)
	return dst, nil
}
