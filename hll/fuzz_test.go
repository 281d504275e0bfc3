package hll

import (
	"bytes"
	"errors"
	"testing"
)

var sparseHdr = []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80")

// FuzzRedisSparse feeds arbitrary sparse bodies (behind a valid header) to
// every Redis string function: none may panic or go out of bounds, and they
// must agree on whether the body is valid.
func FuzzRedisSparse(f *testing.F) {
	abc, _, _ := RedisAdd(nil, [][]byte{[]byte("a"), []byte("b"), []byte("c")}, 3000)
	f.Add(abc[hdrSize:], false, uint16(3000))
	f.Add([]byte{0x7f, 0xff}, true, uint16(20))
	f.Add([]byte{0x7f, 0xfe, 0x80}, false, uint16(0))
	f.Add([]byte{0x40}, false, uint16(3000))
	f.Add([]byte{0x7f, 0xff, 0x7f, 0xff, 0x7f}, true, uint16(100))
	f.Add([]byte{0x00, 0x3f, 0xbf, 0xff, 0x60, 0x10}, false, uint16(3000))
	f.Fuzz(func(t *testing.T, body []byte, dense bool, maxBytes uint16) {
		maxBytes %= 4096 // larger limits only make sparse merges slower
		b := append(append([]byte(nil), sparseHdr...), body...)
		if dense { // a dense string: any register bytes are valid
			b = append(b[:hdrSize:hdrSize], make([]byte, RedisDenseSize-hdrSize)...)
			b[4] = encDense
			copy(b[hdrSize:], body)
		}
		orig := append([]byte(nil), b...)
		valid := dense || walkSparse(b[hdrSize:], redisRegisters, 0, nil)

		n, _, err := RedisCount(append([]byte(nil), b...))
		if (err == nil) != valid {
			t.Fatalf("PFCOUNT validity %v vs walk %v", err, valid)
		}
		d, conv, err := RedisToDense(b)
		if (err == nil) != valid || conv == dense && err == nil {
			t.Fatalf("TODENSE %v conv %v", err, conv)
		}
		if err == nil {
			// The dense form counts the same and has the same registers.
			nd, _, err := RedisCount(append([]byte(nil), d...))
			if err != nil || nd != n {
				t.Fatalf("dense count %d vs %d (%v)", nd, n, err)
			}
			regs, _, err := RedisGetReg(b)
			if err != nil || len(regs) != redisRegisters {
				t.Fatal(err)
			}
			var u RedisUnion
			if err := u.Merge(b); err != nil || !bytes.Equal(u.Registers(), regs) || u.Count() != n {
				t.Fatal("union differs")
			}
		}
		if m, err := RedisCountMany([][]byte{b, abc}); (err == nil) != valid || errors.Is(err, ErrNotHLL) {
			t.Fatalf("PFCOUNT many %d %v", m, err)
		}
		if _, err := RedisMerge(nil, [][]byte{abc, b}, int(maxBytes)); (err == nil) != valid {
			t.Fatalf("PFMERGE %v", err)
		}
		if _, err := RedisDecode(b); (err == nil) == dense {
			t.Fatal(err)
		}
		out, _, err := RedisAdd(b, [][]byte{[]byte("a"), []byte("foo"), body}, int(maxBytes))
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatal(err)
		}
		if err == nil && valid && !endsInTruncatedXZero(b) {
			// After a successful add of valid input the result is valid
			// too — unless the input ends with half an XZERO: Redis reads
			// (and may have overwritten) its string terminator there,
			// which the returned bytes cannot carry (see terminator).
			if _, _, err := RedisCount(append([]byte(nil), out...)); err != nil {
				t.Fatalf("PFADD produced a corrupt value: %v", err)
			}
		}
		if !dense && !bytes.Equal(b, orig) {
			t.Fatal("RedisAdd modified a sparse input")
		}
		if len(out) > max(len(b)+5*3, RedisDenseSize) {
			t.Fatalf("value grew to %d bytes", len(out))
		}
	})
}

// FuzzUnmarshal: any input either fails to decode or gives a sketch that
// re-encodes to the same bytes and keeps working.
func FuzzUnmarshal(f *testing.F) {
	for _, p := range []uint8{4, 12, 14} {
		s, _ := New(p)
		for i := 0; i < 40; i++ {
			s.Add([]byte(string(rune('a' + i))))
		}
		b, _ := s.MarshalBinary()
		f.Add(b)
	}
	f.Add([]byte("PHLL"))
	f.Add(append([]byte(nil), sparseHdr...))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Sketch
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var u Sketch
		if err := u.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		b2, _ := u.MarshalBinary()
		if !bytes.Equal(b, b2) {
			t.Fatal("re-encoding differs")
		}
		s.Add([]byte("x"))
		s.Count()
		c := s.Clone()
		if err := c.Merge(&u); err != nil {
			t.Fatal(err)
		}
	})
}

// endsInTruncatedXZero reports whether a sparse string's opcodes end with
// the first byte of an XZERO.
func endsInTruncatedXZero(b []byte) bool {
	body := b[hdrSize:]
	for p := 0; p < len(body); p++ {
		if isXZero(body[p]) {
			if p == len(body)-1 {
				return true
			}
			p++
		}
	}
	return false
}
