package cuckoo

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/probly/probly/internal/binfmt"
)

// Encoding (specified byte by byte in docs/FORMATS.md, section "Cuckoo
// filter"). All integers are little-endian. The layout shares its magic
// number, version and framing (internal/binfmt) with the bloom package's
// formats; kind 3 (binfmt.KindCuckoo in the registry of kinds) is a cuckoo
// filter:
//
//	0   4  magic "PRBL"            36  4  sub-filters L
//	4   1  version 1               40  8  items
//	5   1  kind 3                  48  8  deletes
//	6   2  hash ID                 56  8  max bytes (0 = none)
//	8   1  fingerprint bits        64  4  reserved, 0
//	9   1  bucket size             68  4  CRC-32C of bytes 0 … 67
//	10  2  max kicks               72  T  tables of sub-filters 0 … L−1
//	12  4  flags, 0                72+T 4 CRC-32C of the T table bytes
//	16  8  seed
//	24  8  buckets of sub-filter 0
//	32  4  expansion
const (
	headerLen  = 72
	trailerLen = 4

	what = "cuckoo filter"
)

// codec makes the cuckoo package's framing errors.
var codec = &binfmt.Codec{Pkg: "cuckoo", Format: ErrFormat, Version: ErrVersion, Checksum: ErrChecksum}

func formatErr(format string, args ...any) error { return codec.Formatf(format, args...) }

func (f *Filter) appendHeader(b []byte) []byte {
	le := binary.LittleEndian
	start := len(b)
	b = binfmt.AppendPrefix(b, binfmt.KindCuckoo)
	b = le.AppendUint16(b, uint16(f.hashID))
	b = append(b, byte(f.fpBits), byte(f.bucketSize))
	b = le.AppendUint16(b, uint16(f.maxKicks))
	b = le.AppendUint32(b, 0) // flags
	b = le.AppendUint64(b, f.seed)
	b = le.AppendUint64(b, f.buckets)
	b = le.AppendUint32(b, uint32(f.expansion))
	b = le.AppendUint32(b, uint32(f.subFilters()))
	b = le.AppendUint64(b, f.items)
	b = le.AppendUint64(b, f.deletes)
	b = le.AppendUint64(b, f.maxBytes)
	b = le.AppendUint32(b, 0) // reserved
	return binfmt.Seal(b, start)
}

// header is a parsed, validated header.
type header struct {
	cfg            Config
	sub            int
	items, deletes uint64
	tableBytes     uint64 // T
}

// parseHeader validates the 72-byte header hdr (shorter input is checked
// as far as it goes) without allocating anything.
func parseHeader(hdr []byte) (header, error) {
	if err := codec.CheckHeader(hdr, binfmt.KindCuckoo, headerLen, what); err != nil {
		return header{}, err
	}
	le := binary.LittleEndian
	h := header{
		cfg: Config{
			HashID:          HashID(le.Uint16(hdr[6:])),
			FingerprintBits: int(hdr[8]),
			BucketSize:      int(hdr[9]),
			MaxKicks:        int(le.Uint16(hdr[10:])),
			Seed:            le.Uint64(hdr[16:]),
			Buckets:         le.Uint64(hdr[24:]),
			Expansion:       le.Uint32(hdr[32:]),
			MaxBytes:        le.Uint64(hdr[56:]),
		},
		sub:     int(le.Uint32(hdr[36:])),
		items:   le.Uint64(hdr[40:]),
		deletes: le.Uint64(hdr[48:]),
	}
	c := &h.cfg
	switch {
	case le.Uint32(hdr[12:]) != 0:
		return h, formatErr("unknown flags %#x", le.Uint32(hdr[12:]))
	case le.Uint32(hdr[64:]) != 0:
		return h, formatErr("reserved field is %#x, want 0", le.Uint32(hdr[64:]))
	case c.HashID == 0:
		return h, formatErr("hash ID 0 is reserved")
	case c.FingerprintBits != 8 && c.FingerprintBits != 16:
		return h, formatErr("fingerprint width %d bits, want 8 or 16", c.FingerprintBits)
	case c.BucketSize == 0:
		return h, formatErr("bucket size 0")
	case c.MaxKicks == 0:
		return h, formatErr("max kicks 0")
	case c.Buckets == 0 || c.Buckets&(c.Buckets-1) != 0 || c.Buckets > MaxTableBytes:
		return h, formatErr("%d buckets is not a power of two in [1, 2^40]", c.Buckets)
	case c.Expansion > MaxExpansion || c.Expansion&(c.Expansion-1) != 0:
		return h, formatErr("expansion %d is not 0 or a power of two up to %d", c.Expansion, MaxExpansion)
	case h.sub < 1 || h.sub > MaxSubFilters:
		return h, formatErr("%d sub-filters not in [1, %d]", h.sub, MaxSubFilters)
	case h.sub > 1 && c.Expansion == 0:
		return h, formatErr("%d sub-filters with expansion 0", h.sub)
	}
	// Table size, with the limits a live filter has.
	shape := Filter{bucketSize: c.BucketSize, fpBits: c.FingerprintBits, expansion: uint64(c.Expansion), buckets: c.Buckets}
	limit := uint64(MaxTableBytes)
	if c.MaxBytes != 0 {
		limit = min(limit, c.MaxBytes)
	}
	for i := range h.sub {
		nb, ok := shape.subBuckets(i)
		if !ok {
			return h, formatErr("sub-filter %d has more than 2^40 buckets", i)
		}
		b := nb * uint64(c.BucketSize) * shape.slotBytes()
		if b > limit || h.tableBytes > limit-b {
			return h, formatErr("%d sub-filters take more than %d table bytes", h.sub, limit)
		}
		h.tableBytes += b
	}
	return h, nil
}

// encodedSize returns the length of f's encoding: 76 + table bytes.
func (f *Filter) encodedSize() uint64 { return headerLen + f.bytes + trailerLen }

// appendTables appends the raw tables of every sub-filter.
func (f *Filter) appendTables(b []byte) []byte {
	for i := range f.subFilters() {
		start := len(b)
		n := f.tableBytes(i)
		b = append(b, make([]byte, n)...)
		f.readTableAt(i, b[start:], 0)
	}
	return b
}

// AppendBinary appends f's encoding (docs/FORMATS.md, "Cuckoo filter"; 76
// bytes plus the tables) to b (encoding.BinaryAppender). It never fails.
func (f *Filter) AppendBinary(b []byte) ([]byte, error) {
	b = f.appendHeader(b)
	start := len(b)
	return binfmt.Seal(f.appendTables(b), start), nil
}

// MarshalBinary returns f's encoding (encoding.BinaryMarshaler). It never
// fails. Cost: one allocation of the encoding's size.
func (f *Filter) MarshalBinary() ([]byte, error) {
	return f.AppendBinary(make([]byte, 0, f.encodedSize()))
}

// WriteTo writes f's encoding to w (io.WriterTo) in 64 KiB pieces and
// returns the bytes written and the first write error.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	buf := f.appendHeader(make([]byte, 0, binfmt.IOChunk))
	n, err := w.Write(buf)
	if err != nil {
		return int64(n), err
	}
	cw := &binfmt.CRCWriter{W: w, N: int64(n)}
	for i := range f.subFilters() {
		size := f.tableBytes(i)
		for off := uint64(0); off < size; {
			k := f.readTableAt(i, buf[:binfmt.IOChunk], off)
			if _, err := cw.Write(buf[:k]); err != nil {
				return cw.N, err
			}
			off += uint64(k)
		}
	}
	return cw.Trailer()
}

// build allocates the filter a validated header describes and fills its
// tables from tables (exactly h.tableBytes bytes).
func (h header) build(tables []byte) (*Filter, error) {
	f, err := restore(h.cfg, h.sub, h.items, h.deletes)
	if err != nil {
		return nil, formatErr("%v", err)
	}
	for i := range h.sub {
		n := f.tableBytes(i)
		if err := f.writeTableAt(i, tables[:n], 0); err != nil {
			return nil, formatErr("%v", err)
		}
		tables = tables[n:]
	}
	return f, nil
}

// UnmarshalBinary replaces f with the filter encoded in data
// (encoding.BinaryUnmarshaler), which must hold exactly one encoding. It
// validates everything (magic, kind, every parameter and trailing bytes
// ErrFormat, version ErrVersion, both CRC-32Cs ErrChecksum, short input
// io.ErrUnexpectedEOF) and checks that data holds the whole declared tables
// before allocating them, so it never allocates more than data backs. Any
// hash ID is accepted (see CanHashKeys). On error f is unchanged.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, rest, err := decode(data)
	if err != nil {
		return err
	}
	if err := codec.Trailing(rest, what); err != nil {
		return err
	}
	*f = *g
	return nil
}

// decode decodes one filter from the start of data and returns it with the
// bytes after it.
func decode(data []byte) (*Filter, []byte, error) {
	h, err := parseHeader(data)
	if err != nil {
		return nil, nil, err
	}
	tables, rest, err := codec.Body(data, headerLen, h.tableBytes, what)
	if err != nil {
		return nil, nil, err
	}
	g, err := h.build(tables)
	if err != nil {
		return nil, nil, err
	}
	return g, rest, nil
}

// ReadFrom replaces f with one filter read from r (io.ReaderFrom), reading
// exactly its encoding and nothing after it. Memory grows with the bytes
// actually read, never with a size merely declared in the header. It
// returns io.EOF if r is empty, an error wrapping io.ErrUnexpectedEOF if r
// ends inside the encoding, and UnmarshalBinary's errors otherwise. On
// error f is unchanged.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	var hdr [headerLen]byte
	var h header
	n, err := codec.ReadHeader(r, hdr[:], what, func(b []byte) (err error) {
		h, err = parseHeader(b)
		return err
	})
	if err != nil {
		return n, err
	}
	tables, m, err := codec.ReadBody(r, h.tableBytes, what)
	if err != nil {
		return n + m, err
	}
	g, err := h.build(tables)
	if err != nil {
		return n + m, err
	}
	*f = *g
	return n + m, nil
}

// readN decodes one encoding of exactly n bytes from r in place (the
// server's snapshot loading, through internal/cuckooraw): it validates
// the header and that n is exactly its encoding's length, allocates the
// tables once and streams them in with binfmt.ReadSparse, which leaves
// pages of zero slots untouched (no resident memory for an empty part of
// a large filter), then checks the tables' CRC-32C. Errors as
// UnmarshalBinary's, r's read errors wrapped. Memory beyond the filter:
// one binfmt.IOChunk buffer.
func readN(r io.Reader, n uint64) (*Filter, error) {
	var hdr [headerLen]byte
	k, err := io.ReadFull(r, hdr[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("cuckoo: reading %s: %w", what, err)
	}
	h, err := parseHeader(hdr[:k])
	if err != nil {
		return nil, err
	}
	if want := headerLen + h.tableBytes + trailerLen; n != want {
		if n < want {
			return nil, codec.EOF(what)
		}
		return nil, formatErr("%d bytes hold a %d-byte encoding", n, want)
	}
	f, err := restore(h.cfg, h.sub, h.items, h.deletes)
	if err != nil {
		return nil, formatErr("%v", err)
	}
	crc := uint32(0)
	for i := range h.sub {
		crc, err = binfmt.ReadSparse(r, f.tableBytes(i), crc, func(off uint64, p []byte) error {
			return f.writeTableAt(i, p, off)
		})
		if err == io.ErrUnexpectedEOF {
			return nil, codec.EOF(what)
		}
		if err != nil {
			return nil, fmt.Errorf("cuckoo: reading %s: %w", what, err)
		}
	}
	var tr [trailerLen]byte
	if _, err := io.ReadFull(r, tr[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, codec.EOF(what)
		}
		return nil, fmt.Errorf("cuckoo: reading %s: %w", what, err)
	}
	if got := binary.LittleEndian.Uint32(tr[:]); got != crc {
		return nil, codec.ChecksumErr(what, "body", got, crc)
	}
	return f, nil
}
