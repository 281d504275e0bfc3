package rdb

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// Length encoding (the two top bits of the first byte).
const (
	len6    = 0    // 00xxxxxx
	len14   = 1    // 01xxxxxx xxxxxxxx
	len32   = 0x80 // 10000000 + 4 bytes big-endian
	len64   = 0x81 // 10000001 + 8 bytes big-endian
	encMark = 3    // 11xxxxxx: a special string encoding follows
)

// Special string encodings (the low 6 bits after encMark).
const (
	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3
)

// AppendLen appends n in RDB length encoding (rdbSaveLen).
func AppendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|len14<<6, byte(n))
	case n <= 1<<32-1:
		return binary.BigEndian.AppendUint32(append(b, len32), uint32(n))
	default:
		return binary.BigEndian.AppendUint64(append(b, len64), n)
	}
}

// readLen reads a length or, when enc is true, a special encoding number
// (rdbLoadLenByRef). It returns the bytes consumed.
func readLen(p []byte) (n uint64, enc bool, used int, err error) {
	if len(p) == 0 {
		return 0, false, 0, fmt.Errorf("%w: length truncated", ErrBadData)
	}
	switch t := p[0] >> 6; {
	case t == encMark:
		return uint64(p[0] & 0x3f), true, 1, nil
	case t == len6:
		return uint64(p[0] & 0x3f), false, 1, nil
	case t == len14:
		if len(p) < 2 {
			return 0, false, 0, fmt.Errorf("%w: length truncated", ErrBadData)
		}
		return uint64(p[0]&0x3f)<<8 | uint64(p[1]), false, 2, nil
	case p[0] == len32:
		if len(p) < 5 {
			return 0, false, 0, fmt.Errorf("%w: length truncated", ErrBadData)
		}
		return uint64(binary.BigEndian.Uint32(p[1:])), false, 5, nil
	case p[0] == len64:
		if len(p) < 9 {
			return 0, false, 0, fmt.Errorf("%w: length truncated", ErrBadData)
		}
		return binary.BigEndian.Uint64(p[1:]), false, 9, nil
	}
	return 0, false, 0, fmt.Errorf("%w: unknown length encoding %#x", ErrBadData, p[0])
}

// intEncode returns s as Redis's integer string encoding if s is the
// canonical decimal form of an integer that fits 32 bits
// (rdbTryIntegerEncoding), else nil.
func intEncode(s []byte) []byte {
	if len(s) == 0 || len(s) > 11 {
		return nil
	}
	v, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil || strconv.FormatInt(v, 10) != string(s) {
		return nil
	}
	switch {
	case v >= -1<<7 && v < 1<<7:
		return []byte{encMark<<6 | encInt8, byte(v)}
	case v >= -1<<15 && v < 1<<15:
		return binary.LittleEndian.AppendUint16([]byte{encMark<<6 | encInt16}, uint16(v))
	case v >= -1<<31 && v < 1<<31:
		return binary.LittleEndian.AppendUint32([]byte{encMark<<6 | encInt32}, uint32(v))
	}
	return nil
}

// AppendString appends s in RDB string encoding as Redis 7 writes it
// with rdbcompression on (rdbSaveRawString): integer-encoded when s is a
// canonical 32-bit integer of at most 11 characters, LZF-compressed when
// longer than 20 bytes and that saves at least 4 bytes, raw otherwise.
func AppendString(b, s []byte) []byte {
	if e := intEncode(s); e != nil {
		return append(b, e...)
	}
	if len(s) > 20 {
		if z := LZFCompress(s, len(s)-4); z != nil {
			b = append(b, encMark<<6|encLZF)
			b = AppendLen(b, uint64(len(z)))
			b = AppendLen(b, uint64(len(s)))
			return append(b, z...)
		}
	}
	b = AppendLen(b, uint64(len(s)))
	return append(b, s...)
}

// ReadString decodes one RDB string at the start of p in any encoding
// Redis writes (raw, int8/16/32, LZF) and returns its bytes and the
// number of bytes of p it used. A string longer than limit bytes is
// ErrTooLarge, refused before anything is allocated; the result never
// aliases p.
func ReadString(p []byte, limit int) (s []byte, used int, err error) {
	n, enc, used, err := readLen(p)
	if err != nil {
		return nil, 0, err
	}
	rest := p[used:]
	if !enc {
		if n > uint64(len(rest)) {
			return nil, 0, fmt.Errorf("%w: string of %d bytes, %d left", ErrBadData, n, len(rest))
		}
		if n > uint64(limit) {
			return nil, 0, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, n, limit)
		}
		return append([]byte(nil), rest[:n]...), used + int(n), nil
	}
	var v int64
	switch n {
	case encInt8:
		if len(rest) < 1 {
			return nil, 0, fmt.Errorf("%w: integer truncated", ErrBadData)
		}
		v, used = int64(int8(rest[0])), used+1
	case encInt16:
		if len(rest) < 2 {
			return nil, 0, fmt.Errorf("%w: integer truncated", ErrBadData)
		}
		v, used = int64(int16(binary.LittleEndian.Uint16(rest))), used+2
	case encInt32:
		if len(rest) < 4 {
			return nil, 0, fmt.Errorf("%w: integer truncated", ErrBadData)
		}
		v, used = int64(int32(binary.LittleEndian.Uint32(rest))), used+4
	case encLZF:
		clen, e1, u1, err := readLen(rest)
		if err != nil || e1 {
			return nil, 0, fmt.Errorf("%w: LZF compressed length", ErrBadData)
		}
		ulen, e2, u2, err := readLen(rest[u1:])
		if err != nil || e2 {
			return nil, 0, fmt.Errorf("%w: LZF length", ErrBadData)
		}
		body := rest[u1+u2:]
		if clen > uint64(len(body)) {
			return nil, 0, fmt.Errorf("%w: LZF data truncated", ErrBadData)
		}
		if ulen == 0 {
			// Redis's lzf_decompress reports 0 bytes as an error.
			return nil, 0, fmt.Errorf("%w: empty LZF string", ErrBadData)
		}
		if ulen > uint64(limit) {
			return nil, 0, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, ulen, limit)
		}
		// Every input byte yields at most 264/2 output bytes: a declared
		// length beyond that is a lie, refused before allocating it.
		if ulen > clen*(lzfMaxRef/2) {
			return nil, 0, fmt.Errorf("%w: LZF length %d for %d compressed bytes", ErrBadData, ulen, clen)
		}
		out, err := LZFDecompress(body[:clen], int(ulen))
		if err != nil {
			return nil, 0, err
		}
		return out, used + u1 + u2 + int(clen), nil
	default:
		return nil, 0, fmt.Errorf("%w: unknown string encoding %d", ErrBadData, n)
	}
	return strconv.AppendInt(nil, v, 10), used, nil
}

// ReadLen reads one RDB length at the start of p and returns it and the
// bytes it used; a special-encoding marker is ErrBadData.
func ReadLen(p []byte) (n uint64, used int, err error) {
	n, enc, used, err := readLen(p)
	if err == nil && enc {
		err = fmt.Errorf("%w: encoding marker where a length belongs", ErrBadData)
	}
	return n, used, err
}

// StringLen returns the length of the string ReadString would decode at
// the start of p, reading only its header, so a caller can admit the
// allocation before making it. Integer encodings report the length of
// their decimal form.
func StringLen(p []byte) (uint64, error) {
	n, enc, used, err := readLen(p)
	if err != nil || !enc {
		return n, err
	}
	switch n {
	case encInt8, encInt16, encInt32:
		return 11, nil // at most "-2147483648"
	case encLZF:
		rest := p[used:]
		_, e1, u1, err := readLen(rest)
		if err != nil || e1 {
			return 0, fmt.Errorf("%w: LZF compressed length", ErrBadData)
		}
		ulen, e2, _, err := readLen(rest[u1:])
		if err != nil || e2 {
			return 0, fmt.Errorf("%w: LZF length", ErrBadData)
		}
		return ulen, nil
	}
	return 0, fmt.Errorf("%w: unknown string encoding %d", ErrBadData, n)
}
