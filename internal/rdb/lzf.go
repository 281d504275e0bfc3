package rdb

import "fmt"

// LZF stream format (liblzf): a sequence of runs, each starting with a
// control byte c.
//
//   - c < 32: a literal run of c+1 bytes follows.
//   - otherwise a back reference: n = c>>5 (7 means n = 7 + next byte),
//     offset = (c&31)<<8 | next byte; it copies n+2 bytes starting
//     offset+1 bytes back in the output (possibly overlapping).
const (
	lzfMaxLit = 32
	lzfMaxOff = 1 << 13
	lzfMaxRef = 7 + 255 + 2
	lzfHLog   = 14
)

// LZFDecompress decompresses in into exactly n bytes. n is the length
// the stream declares; the output is allocated once, with n bytes, so the
// caller bounds n before calling. Any stream that does not produce
// exactly n bytes, or refers before the start of the output, is
// ErrBadData. O(n).
func LZFDecompress(in []byte, n int) ([]byte, error) {
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		c := int(in[i])
		i++
		if c < 32 {
			l := c + 1
			if l > len(in)-i || l > n-len(out) {
				return nil, fmt.Errorf("%w: LZF literal runs past the end", ErrBadData)
			}
			out = append(out, in[i:i+l]...)
			i += l
			continue
		}
		l := c >> 5
		if l == 7 {
			if i >= len(in) {
				return nil, fmt.Errorf("%w: LZF stream truncated", ErrBadData)
			}
			l += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, fmt.Errorf("%w: LZF stream truncated", ErrBadData)
		}
		off := (c&31)<<8 | int(in[i])
		i++
		l += 2
		ref := len(out) - off - 1
		if ref < 0 {
			return nil, fmt.Errorf("%w: LZF back reference before the start", ErrBadData)
		}
		if l > n-len(out) {
			return nil, fmt.Errorf("%w: LZF output longer than declared", ErrBadData)
		}
		for k := 0; k < l; k++ { // byte by byte: the copy may overlap
			out = append(out, out[ref+k])
		}
	}
	if len(out) != n {
		return nil, fmt.Errorf("%w: LZF output of %d bytes, %d declared", ErrBadData, len(out), n)
	}
	return out, nil
}

// LZFCompress compresses in and returns the stream, or nil if it would
// be longer than max bytes (Redis stores a string compressed only when
// that saves at least 4 bytes: max = len(in)-4). The stream decompresses
// with any LZF decoder (Redis's included); it need not equal Redis's own
// compressor's bytes. O(len(in)) time; a 64 KiB hash table and an output
// buffer of about len(in) bytes.
func LZFCompress(in []byte, max int) []byte {
	if len(in) < 4 || max <= 0 {
		return nil
	}
	var htab [1 << lzfHLog]int32 // position+1 of the last 3-byte sequence with this hash
	out := make([]byte, 0, len(in)+len(in)/lzfMaxLit+1)
	lit, litAt := 0, 0 // the pending literal run: its length and control byte's index
	out = append(out, 0)
	closeLit := func() {
		if lit > 0 {
			out[litAt] = byte(lit - 1)
		} else {
			out = out[:len(out)-1] // drop the empty run's control byte
		}
	}
	i := 0
	for i < len(in) {
		if i+2 < len(in) {
			h := (uint32(in[i])<<16 | uint32(in[i+1])<<8 | uint32(in[i+2])) * 2654435761 >> (32 - lzfHLog)
			ref := int(htab[h]) - 1
			htab[h] = int32(i + 1)
			if off := i - ref - 1; ref >= 0 && off < lzfMaxOff &&
				in[ref] == in[i] && in[ref+1] == in[i+1] && in[ref+2] == in[i+2] {
				l := 3
				for l < lzfMaxRef && i+l < len(in) && in[ref+l] == in[i+l] {
					l++
				}
				closeLit()
				if n := l - 2; n < 7 {
					out = append(out, byte(n<<5|off>>8), byte(off))
				} else {
					out = append(out, byte(7<<5|off>>8), byte(n-7), byte(off))
				}
				i += l
				lit, litAt = 0, len(out)
				out = append(out, 0)
				continue
			}
		}
		out = append(out, in[i])
		i++
		if lit++; lit == lzfMaxLit {
			closeLit()
			lit, litAt = 0, len(out)
			out = append(out, 0)
		}
	}
	closeLit()
	if len(out) > max {
		return nil
	}
	return out
}
