package cms

import (
	"encoding/binary"
	"io"

	"github.com/probly/probly/internal/binfmt"
)

// Encoding (specified byte by byte in docs/FORMATS.md, "Count-min
// sketch"). All integers are little-endian; framing from internal/binfmt,
// kind 7 (binfmt.KindCountMin):
//
//	0   4  magic "PRBL"          24  8  width W
//	4   1  version 1             32  8  total N
//	5   1  kind 7                40  4  reserved, 0
//	6   2  hash ID               44  4  CRC-32C of bytes 0 … 43
//	8   4  depth D               48  4·W·D  counters, row-major, u32
//	12  4  flags, 0              48+4WD  4  CRC-32C of the counter bytes
//	16  8  seed
const (
	headerLen  = 48
	trailerLen = 4
	what       = "count-min sketch"
)

var codec = &binfmt.Codec{Pkg: "cms", Format: ErrFormat, Version: ErrVersion, Checksum: ErrChecksum}

func (s *Sketch) appendHeader(b []byte) []byte {
	le := binary.LittleEndian
	start := len(b)
	b = binfmt.AppendPrefix(b, binfmt.KindCountMin)
	b = le.AppendUint16(b, uint16(s.hashID))
	b = le.AppendUint32(b, s.depth)
	b = le.AppendUint32(b, 0) // flags
	b = le.AppendUint64(b, s.seed)
	b = le.AppendUint64(b, s.width)
	b = le.AppendUint64(b, s.count)
	b = le.AppendUint32(b, 0) // reserved
	return binfmt.Seal(b, start)
}

// parseHeader validates a header (a shorter hdr as far as it goes) and
// returns the empty sketch's shape it describes, without allocating the
// counters.
func parseHeader(hdr []byte) (Sketch, error) {
	if err := codec.CheckHeader(hdr, binfmt.KindCountMin, headerLen, what); err != nil {
		return Sketch{}, err
	}
	le := binary.LittleEndian
	c := Config{Hash: HashID(le.Uint16(hdr[6:])), Depth: le.Uint32(hdr[8:]), Seed: le.Uint64(hdr[16:]), Width: le.Uint64(hdr[24:])}
	switch {
	case le.Uint32(hdr[12:]) != 0:
		return Sketch{}, codec.Formatf("unknown flags %#x", le.Uint32(hdr[12:]))
	case le.Uint32(hdr[40:]) != 0:
		return Sketch{}, codec.Formatf("reserved field is %#x, want 0", le.Uint32(hdr[40:]))
	case c.Hash == 0:
		return Sketch{}, codec.Formatf("hash ID 0 is reserved")
	}
	if err := c.validate(); err != nil {
		return Sketch{}, codec.Formatf("%v", err)
	}
	return Sketch{width: c.Width, depth: c.Depth, hashID: c.Hash, seed: c.Seed, count: le.Uint64(hdr[32:])}, nil
}

func (s *Sketch) cellBytes() uint64 { return 4 * s.width * uint64(s.depth) }

// AppendBinary appends s's encoding (52 bytes plus 4 per counter) to b
// (encoding.BinaryAppender). It never fails.
func (s *Sketch) AppendBinary(b []byte) ([]byte, error) {
	s.ready()
	b = s.appendHeader(b)
	start := len(b)
	for _, c := range s.cells {
		b = binary.LittleEndian.AppendUint32(b, c)
	}
	return binfmt.Seal(b, start), nil
}

// MarshalBinary returns s's encoding (encoding.BinaryMarshaler). It never
// fails. Cost: one allocation of the encoding's size.
func (s *Sketch) MarshalBinary() ([]byte, error) {
	s.ready()
	return s.AppendBinary(make([]byte, 0, headerLen+s.cellBytes()+trailerLen))
}

// WriteTo writes s's encoding to w (io.WriterTo) in 64 KiB pieces and
// returns the bytes written and the first write error.
func (s *Sketch) WriteTo(w io.Writer) (int64, error) {
	s.ready()
	buf := s.appendHeader(make([]byte, 0, binfmt.IOChunk))
	n, err := w.Write(buf)
	if err != nil {
		return int64(n), err
	}
	cw := &binfmt.CRCWriter{W: w, N: int64(n)}
	buf = buf[:0]
	for i, c := range s.cells {
		buf = binary.LittleEndian.AppendUint32(buf, c)
		if len(buf) == binfmt.IOChunk || i == len(s.cells)-1 {
			if _, err := cw.Write(buf); err != nil {
				return cw.N, err
			}
			buf = buf[:0]
		}
	}
	return cw.Trailer()
}

// fill sets the counters of shape s (from parseHeader) from body.
func (s *Sketch) fill(body []byte) {
	s.cells = make([]uint32, len(body)/4)
	for i := range s.cells {
		s.cells[i] = binary.LittleEndian.Uint32(body[4*i:])
	}
}

// UnmarshalBinary replaces s with the sketch encoded in data
// (encoding.BinaryUnmarshaler), which must hold exactly one encoding. It
// validates everything (magic, version, kind, both CRCs, every parameter,
// the length) before it allocates the counters (which data backs) and
// before s changes; on error s is unchanged. Errors: ErrFormat,
// ErrVersion, ErrChecksum, io.ErrUnexpectedEOF, each wrapped.
func (s *Sketch) UnmarshalBinary(data []byte) error {
	sh, err := parseHeader(data)
	if err != nil {
		return err
	}
	body, rest, err := codec.Body(data, headerLen, sh.cellBytes(), what)
	if err != nil {
		return err
	}
	if err := codec.Trailing(rest, what); err != nil {
		return err
	}
	sh.fill(body)
	*s = sh
	return nil
}

// ReadFrom replaces s with one encoded sketch read from r (io.ReaderFrom),
// reading exactly its bytes. Memory grows with the bytes actually read,
// never with the header's claims alone. Errors as UnmarshalBinary, plus
// r's; on error s is unchanged.
func (s *Sketch) ReadFrom(r io.Reader) (int64, error) {
	var hdr [headerLen]byte
	var sh Sketch
	n, err := codec.ReadHeader(r, hdr[:], what, func(h []byte) error {
		var err error
		sh, err = parseHeader(h)
		return err
	})
	if err == io.EOF {
		return n, codec.EOF(what)
	}
	if err != nil {
		return n, err
	}
	body, m, err := codec.ReadBody(r, sh.cellBytes(), what)
	if err != nil {
		return n + m, err
	}
	sh.fill(body)
	*s = sh
	return n + m, nil
}
