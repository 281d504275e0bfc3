package hll

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/probly/probly/internal/binfmt"
)

// probly's versioned format for sketches of any precision (docs/FORMATS.md,
// "HyperLogLog"). All integers little-endian.
//
//	offset  size  field
//	0       4     magic "PHLL"
//	4       1     format version (1)
//	5       1     precision p (4…18)
//	6       1     hash (1 = MurmurHash64A; this byte is the format's own,
//	              not a number of the hash-ID registry)
//	7       1     reserved, 0
//	8       4     hash seed (0xadc83b19)
//	12      4     n = body length
//	16      n     body: the Redis string layout generalised to 2^p registers
//	              ("HYLL", encoding, 3 reserved bytes, 8-byte cached
//	              cardinality, then sparse opcodes or dense registers)
//	16+n    4     CRC-32C (Castagnoli) of bytes [0, 16+n)
//
// At precision 14 MarshalBinary writes the bare Redis string instead (the
// body alone); UnmarshalBinary accepts both.
const (
	fmtMagic      = "PHLL"
	fmtVersion    = 1
	fmtHashMurmur = 1
	fmtHdr        = 16
	fmtTrailer    = 4
)

// ErrVersion: probly's versioned format with a version this package does
// not read.
var ErrVersion = errors.New("hll: unsupported format version")

// codec makes the framing errors (CRC-32C, short input) of the versioned
// format; its magic is "PHLL", not PRBL, so only the CRC and error helpers
// of internal/binfmt apply.
var codec = &binfmt.Codec{Pkg: "hll", Format: ErrFormat, Version: ErrVersion, Checksum: ErrChecksum}

const whatPHLL = "versioned HLL sketch"

// MarshalBinary implements encoding.BinaryMarshaler. At precision 14 it
// returns exactly Redis's string for this sketch (sparse or dense, cache
// bytes included); at other precisions probly's versioned format.
func (s *Sketch) MarshalBinary() ([]byte, error) {
	s.ready()
	return s.AppendBinary(make([]byte, 0, fmtHdr+len(s.b)+fmtTrailer))
}

// AppendBinary appends MarshalBinary's bytes to b and returns the extended
// slice (encoding.BinaryAppender). It never fails.
func (s *Sketch) AppendBinary(b []byte) ([]byte, error) {
	s.ready()
	if s.l.p == redisP {
		return append(b, s.b...), nil
	}
	start := len(b)
	b = append(b, fmtMagic...)
	b = append(b, fmtVersion, s.l.p, fmtHashMurmur, 0)
	b = binary.LittleEndian.AppendUint32(b, DefaultSeed)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.b)))
	b = append(b, s.b...)
	return binfmt.Seal(b, start), nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler. It accepts a
// Redis HLL string (precision 14, exactly as GET returns it) or probly's
// versioned format. Everything is validated before s changes: the header,
// the checksum, the encoding, the dense length and every sparse run. The
// cached cardinality is kept as is (a valid cache is trusted, as by Redis).
// Errors: ErrFormat, ErrVersion, ErrChecksum, io.ErrUnexpectedEOF (a
// versioned encoding cut short), ErrInvalidParameter (precision), ErrNotHLL, ErrCorrupt.
func (s *Sketch) UnmarshalBinary(data []byte) error {
	l := redisParams
	body := data
	if len(data) >= 4 && string(data[:4]) == fmtMagic {
		if len(data) > 4 && data[4] != fmtVersion {
			return fmt.Errorf("%w: version %d, this package reads version %d", ErrVersion, data[4], fmtVersion)
		}
		if len(data) < fmtHdr+fmtTrailer {
			return codec.EOF(whatPHLL)
		}
		var err error
		if l, err = checkPrecision(data[5]); err != nil {
			return err
		}
		if data[6] != fmtHashMurmur || data[7] != 0 || binary.LittleEndian.Uint32(data[8:]) != DefaultSeed {
			return codec.Formatf("unsupported hash %d seed %#x", data[6], binary.LittleEndian.Uint32(data[8:]))
		}
		n := uint64(binary.LittleEndian.Uint32(data[12:]))
		if avail := uint64(len(data) - fmtHdr - fmtTrailer); n > avail {
			return codec.EOF(whatPHLL)
		} else if n < avail {
			return codec.Trailing(data[fmtHdr+n+fmtTrailer:], whatPHLL)
		}
		end := fmtHdr + int(n)
		if got, want := binary.LittleEndian.Uint32(data[end:]), binfmt.CRC(data[:end]); got != want {
			return codec.ChecksumErr(whatPHLL, "encoding", got, want)
		}
		body = data[fmtHdr:end]
	} else if !hasMagic(data) {
		return fmt.Errorf("%w: neither a Redis HLL string nor %q", ErrFormat, fmtMagic)
	}
	if err := validateString(l, body); err != nil {
		return err
	}
	s.l = l
	s.b = append(make([]byte, 0, len(body)+8), body...)
	s.sparseMax = l.sparseMax
	return nil
}

// validateString fully checks a Redis-layout string of precision l.
func validateString(l *params, b []byte) error {
	if !hasMagic(b) || b[4] > encSparse {
		return ErrNotHLL
	}
	if b[4] == encDense {
		if len(b) != l.denseSize {
			return ErrNotHLL
		}
		return nil
	}
	// A valid sparse body has at most 2 bytes per register, and no XZERO cut
	// off by the end of the string (Redis would read its terminator there;
	// no Redis operation writes one).
	body := b[hdrSize:]
	if len(body) > 2*l.m || !walkSparse(body, l.m, 0, nil) {
		return ErrCorrupt
	}
	for p := 0; p < len(body); p++ {
		if isXZero(body[p]) {
			if p == len(body)-1 {
				return ErrCorrupt
			}
			p++
		}
	}
	return nil
}

// WriteTo implements io.WriterTo with MarshalBinary's bytes.
func (s *Sketch) WriteTo(w io.Writer) (int64, error) {
	b, err := s.MarshalBinary()
	if err != nil {
		return 0, err
	}
	n, err := w.Write(b)
	return int64(n), err
}

// ReadFrom implements io.ReaderFrom: it reads one serialized sketch (all of
// r, at most the largest valid encoding) and unmarshals it.
func (s *Sketch) ReadFrom(r io.Reader) (int64, error) {
	limit := int64(fmtHdr + hdrSize + 2*(1<<MaxPrecision) + fmtTrailer + 1)
	b, err := io.ReadAll(io.LimitReader(r, limit))
	if err != nil {
		return int64(len(b)), err
	}
	if int64(len(b)) >= limit {
		return int64(len(b)), fmt.Errorf("%w: input longer than any sketch", ErrFormat)
	}
	return int64(len(b)), s.UnmarshalBinary(b)
}
