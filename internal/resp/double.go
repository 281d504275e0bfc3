package resp

import (
	"math"
	"strconv"
)

// AppendDouble appends f spelled as Redis 8 spells a double reply
// (RedisModule_ReplyWithDouble → d2string): "nan", "inf", "-inf", "0" and
// "-0"; an integral value with |f| ≤ 2^62 as a plain integer ("5", never
// "5.0"); otherwise the shortest digits that round-trip, written plain when
// the exponent is small and in scientific notation ("1e-7", "1.5e+21")
// otherwise, by the rules of fpconv_dtoa's emit_digits (Redis deps/fpconv).
//
// Go's shortest round-trip digits equal Grisu2's for almost every double;
// where Grisu2 would print a longer string, this prints the shorter one,
// which parses to the same float64. Cost: one strconv call, no allocation
// beyond dst's growth.
func AppendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	if f >= -(1<<62) && f <= 1<<62 && f == math.Trunc(f) {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// "d.ddde±x": the digits D and the exponent of the first one.
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	var digits [24]byte
	nd := 0
	i := 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp10, _ := strconv.Atoi(string(e[i+1:]))
	k := exp10 - (nd - 1) // value = D · 10^k
	abs := exp10
	if abs < 0 {
		abs = -abs
	}
	switch {
	case k >= 0 && abs < nd+7: // an integer: D then k zeros
		dst = append(dst, digits[:nd]...)
		for range k {
			dst = append(dst, '0')
		}
		return dst
	case k < 0 && (k > -7 || abs < 4): // a plain decimal
		off := nd + k
		if off <= 0 {
			dst = append(dst, '0', '.')
			for range -off {
				dst = append(dst, '0')
			}
			return append(dst, digits[:nd]...)
		}
		dst = append(dst, digits[:off]...)
		dst = append(dst, '.')
		return append(dst, digits[off:nd]...)
	}
	dst = append(dst, digits[0])
	if nd > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:nd]...)
	}
	dst = append(dst, 'e')
	if exp10 < 0 {
		dst = append(dst, '-')
	} else {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(abs), 10)
}
