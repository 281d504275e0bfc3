package topk

import (
	"encoding/binary"
	"io"
	"math"

	"github.com/probly/probly/internal/binfmt"
)

// Encoding (docs/FORMATS.md, section "Top-k sketch"). All integers are
// little-endian; framing by internal/binfmt, kind 8 (binfmt.KindTopK):
//
//	0   4  magic "PRBL"        32  8  generator state
//	4   1  version 1           40  8  units added N
//	5   1  kind 8              48  8  seed (Config.Seed)
//	6   2  hash ID 6           56  8  body length B
//	8   4  k                   64  4  CRC-32C of bytes 0 … 63
//	12  4  width               68  B  body
//	16  4  depth               68+B 4 CRC-32C of the body
//	20  4  reserved, 0
//	24  8  decay (f64)
//
// The body is width·depth buckets {fp u32, count u32}, row-major, then k
// heap slots in heap order, each {count u32, fp u32, len u32, len bytes},
// where len 0xFFFFFFFF marks an empty slot (count and fp 0, no bytes).
const (
	headerLen = 68
	emptyLen  = math.MaxUint32
	what      = "top-k sketch"
	hashID    = binfmt.HashMurmur2
)

var codec = &binfmt.Codec{Pkg: "topk", Format: ErrFormat, Version: ErrVersion, Checksum: ErrChecksum}

func (s *Sketch) bodyLen() uint64 {
	n := 8*uint64(len(s.buckets)) + 12*uint64(len(s.heap))
	for _, h := range s.heap {
		n += uint64(len(h.item))
	}
	return n
}

// AppendBinary appends the sketch's encoding to b (encoding.BinaryAppender).
// It never fails.
func (s *Sketch) AppendBinary(b []byte) ([]byte, error) {
	s.ready()
	le := binary.LittleEndian
	start := len(b)
	b = binfmt.AppendPrefix(b, binfmt.KindTopK)
	b = le.AppendUint16(b, hashID)
	b = le.AppendUint32(b, s.cfg.K)
	b = le.AppendUint32(b, s.cfg.Width)
	b = le.AppendUint32(b, s.cfg.Depth)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, math.Float64bits(s.cfg.Decay))
	b = le.AppendUint64(b, s.rng)
	b = le.AppendUint64(b, s.n)
	b = le.AppendUint64(b, s.cfg.Seed)
	b = le.AppendUint64(b, s.bodyLen())
	b = binfmt.Seal(b, start)
	start = len(b)
	for _, x := range s.buckets {
		b = le.AppendUint32(b, x.fp)
		b = le.AppendUint32(b, x.count)
	}
	for _, h := range s.heap {
		b = le.AppendUint32(b, h.count)
		b = le.AppendUint32(b, h.fp)
		if h.item == nil {
			b = le.AppendUint32(b, emptyLen)
			continue
		}
		b = le.AppendUint32(b, uint32(len(h.item)))
		b = append(b, h.item...)
	}
	return binfmt.Seal(b, start), nil
}

// MarshalBinary returns the sketch's encoding (encoding.BinaryMarshaler):
// 72 + 8·width·depth + 12·k bytes plus the heap's item bytes. It never
// fails.
func (s *Sketch) MarshalBinary() ([]byte, error) {
	s.ready()
	return s.AppendBinary(make([]byte, 0, headerLen+s.bodyLen()+4))
}

// WriteTo writes MarshalBinary's bytes to w (io.WriterTo).
func (s *Sketch) WriteTo(w io.Writer) (int64, error) {
	b, _ := s.MarshalBinary()
	n, err := w.Write(b)
	return int64(n), err
}

type header struct {
	cfg      Config
	rng, n   uint64
	bodySize uint64
}

// parseHeader validates a (possibly partial) 68-byte header.
func parseHeader(hdr []byte) (header, error) {
	if err := codec.CheckHeader(hdr, binfmt.KindTopK, headerLen, what); err != nil {
		return header{}, err
	}
	le := binary.LittleEndian
	h := header{
		cfg: Config{
			K: le.Uint32(hdr[8:]), Width: le.Uint32(hdr[12:]), Depth: le.Uint32(hdr[16:]),
			Decay: math.Float64frombits(le.Uint64(hdr[24:])), Seed: le.Uint64(hdr[48:]),
		},
		rng: le.Uint64(hdr[32:]), n: le.Uint64(hdr[40:]), bodySize: le.Uint64(hdr[56:]),
	}
	if id := le.Uint16(hdr[6:]); id != hashID {
		return h, codec.Formatf("hash ID %d, want %d (murmur2)", id, hashID)
	}
	if r := le.Uint32(hdr[20:]); r != 0 {
		return h, codec.Formatf("reserved field is %#x, want 0", r)
	}
	if err := h.cfg.validate(); err != nil {
		return h, codec.Formatf("%v", err)
	}
	if min := 8*uint64(h.cfg.Width)*uint64(h.cfg.Depth) + 12*uint64(h.cfg.K); h.bodySize < min {
		return h, codec.Formatf("body of %d bytes, a %d×%d sketch with k %d needs at least %d", h.bodySize, h.cfg.Width, h.cfg.Depth, h.cfg.K, min)
	}
	return h, nil
}

// decode builds the sketch a validated header and its body describe,
// validating every bucket and slot; it allocates only what body backs.
func (h header) decode(body []byte) (*Sketch, error) {
	le := binary.LittleEndian
	nb := uint64(h.cfg.Width) * uint64(h.cfg.Depth)
	s := &Sketch{cfg: h.cfg, rng: h.rng, n: h.n}
	s.fillLUT()
	s.buckets = make([]bucket, nb)
	for i := range s.buckets {
		s.buckets[i] = bucket{fp: le.Uint32(body[8*i:]), count: le.Uint32(body[8*i+4:])}
		if s.buckets[i].count > 0 {
			s.setBuckets++
		}
	}
	rest := body[8*nb:]
	// Slots take at least 12 bytes each, so k ≤ len(rest)/12 here.
	s.heap = make([]slot, h.cfg.K)
	seen := make(map[string]struct{})
	for i := range s.heap {
		if len(rest) < 12 {
			return nil, codec.Formatf("heap slot %d cut off", i)
		}
		sl := slot{count: le.Uint32(rest), fp: le.Uint32(rest[4:])}
		n := le.Uint32(rest[8:])
		rest = rest[12:]
		if n == emptyLen {
			if sl.count != 0 || sl.fp != 0 {
				return nil, codec.Formatf("empty heap slot %d has count %d, fingerprint %#x", i, sl.count, sl.fp)
			}
			continue
		}
		if uint64(n) > uint64(len(rest)) {
			return nil, codec.Formatf("heap slot %d: item of %d bytes, %d left", i, n, len(rest))
		}
		sl.item = append([]byte{}, rest[:n]...)
		rest = rest[n:]
		if fp := fingerprint(sl.item); fp != sl.fp {
			return nil, codec.Formatf("heap slot %d: fingerprint %#x, item hashes to %#x", i, sl.fp, fp)
		}
		if _, dup := seen[string(sl.item)]; dup {
			return nil, codec.Formatf("heap slot %d: item %q twice in the heap", i, sl.item)
		}
		seen[string(sl.item)] = struct{}{}
		s.heap[i] = sl
		s.heapItems++
		s.itemBytes += uint64(n)
	}
	if len(rest) != 0 {
		return nil, codec.Formatf("%d body bytes after the heap", len(rest))
	}
	return s, nil
}

// UnmarshalBinary replaces s with the sketch encoded in data
// (encoding.BinaryUnmarshaler), which must hold exactly one encoding. It
// validates everything (magic, version, kind, hash ID, parameters, both
// CRCs, every heap slot: lengths, fingerprints, no item twice) before s
// changes, and allocates no more than data backs. Errors: ErrFormat,
// ErrVersion, ErrChecksum, io.ErrUnexpectedEOF, each wrapped.
func (s *Sketch) UnmarshalBinary(data []byte) error {
	h, err := parseHeader(data[:min(len(data), headerLen)])
	if err != nil {
		return err
	}
	body, rest, err := codec.Body(data, headerLen, h.bodySize, what)
	if err != nil {
		return err
	}
	if err := codec.Trailing(rest, what); err != nil {
		return err
	}
	d, err := h.decode(body)
	if err != nil {
		return err
	}
	*s = *d
	return nil
}

// ReadFrom reads one encoding from r (io.ReaderFrom) and replaces s with
// it, as UnmarshalBinary. It reads exactly the encoding's bytes; memory
// grows with the bytes actually read.
func (s *Sketch) ReadFrom(r io.Reader) (int64, error) {
	hdr := make([]byte, headerLen)
	var h header
	n, err := codec.ReadHeader(r, hdr, what, func(b []byte) (err error) { h, err = parseHeader(b); return })
	if err == io.EOF {
		return n, codec.EOF(what)
	}
	if err != nil {
		return n, err
	}
	body, m, err := codec.ReadBody(r, h.bodySize, what)
	n += m
	if err != nil {
		return n, err
	}
	d, err := h.decode(body)
	if err != nil {
		return n, err
	}
	*s = *d
	return n, nil
}
