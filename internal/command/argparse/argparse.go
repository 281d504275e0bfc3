// Package argparse parses command arguments exactly as Redis does, for
// handlers of every command family.
//
// (internal/command/bf holds unexported copies of the same two functions,
// written first; they can move here.)
package argparse

import (
	"math"
	"strconv"
)

// Int parses a Redis integer argument the way Redis's string2ll does
// (RedisModule_StringToLongLong): optional '-', no '+', no spaces, no
// leading zeros (except "0" itself), at most 20 characters, int64 range.
func Int(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := false
	if b[0] == '-' {
		neg = true
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	if b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true // -2^63 wraps to MinInt64
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// Float parses a Redis double argument the way Redis's string2d does
// (RedisModule_StringToDouble, i.e. C strtod over the whole string): no
// leading space, no trailing garbage, NaN refused, overflow refused,
// underflow to zero refused. Go's ParseFloat differs from strtod in two
// details handled here: it accepts '_' digit separators (refused) and it
// needs a 'p' exponent on hex floats (added).
func Float(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	s := string(b)
	for i := 0; i < len(s); i++ {
		if s[i] == '_' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	hex := isHex(s)
	if err != nil && hex && !hasHexExponent(s) {
		f, err = strconv.ParseFloat(s+"p0", 64)
	}
	if err != nil || math.IsNaN(f) {
		return 0, false
	}
	if f == 0 && mantissaNonZero(s, hex) {
		return 0, false // strtod: ERANGE underflow to zero
	}
	return f, true
}

func isHex(s string) bool {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
}

func hasHexExponent(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 'p' || s[i] == 'P' {
			return true
		}
	}
	return false
}

func mantissaNonZero(s string, hex bool) bool {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if hex {
		s = s[2:]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case !hex && (c == 'e' || c == 'E'), hex && (c == 'p' || c == 'P'):
			return false
		case c >= '1' && c <= '9', hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')):
			return true
		}
	}
	return false
}
