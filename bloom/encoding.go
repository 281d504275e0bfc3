package bloom

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/probly/probly/internal/binfmt"
)

// Encoding (specified byte by byte in docs/FORMATS.md, sections "Bloom
// filter (classic)", "Scalable Bloom filter", "Split-block Bloom filter",
// "Counting Bloom filter" and "Stable Bloom filter"). The framing (magic
// "PRBL", version, kind, header CRC, body CRC, bounded reads) is
// internal/binfmt's; this file and encoding_family.go lay out each type's
// fields. All integers are little-endian; floats are IEEE 754 binary64 bit
// patterns.

const (
	filterHeaderLen   = 64
	scalableHeaderLen = 80
	minFilterLen      = filterHeaderLen + 8 + 4 // m ≥ 1 means at least one word
)

// codec makes the bloom package's framing errors.
var codec = &binfmt.Codec{Pkg: "bloom", Format: ErrFormat, Version: ErrVersion, Checksum: ErrChecksum}

// frame describes a single-frame encoding: a fixed header of hdrLen bytes
// sealed by its CRC, then a body of words sealed by theirs. T is the
// filter type.
type frame[T any] struct {
	hdrLen int
	what   string
	parse  func(hdr []byte) (*T, error) // validates a possibly partial header
	words  func(g *T) uint64            // body words the header declares
	fill   func(g *T, words []uint64) error
}

// decode decodes one T from the start of data and returns it with the bytes
// after it, allocating only after the whole frame is checked.
func (fr *frame[T]) decode(data []byte) (*T, []byte, error) {
	g, err := fr.parse(data)
	if err != nil {
		return nil, nil, err
	}
	words, rest, err := codec.DecodeWords(data, fr.hdrLen, fr.words(g), fr.what)
	if err != nil {
		return nil, nil, err
	}
	if err := fr.fill(g, words); err != nil {
		return nil, nil, err
	}
	return g, rest, nil
}

// unmarshal decodes exactly one T from data.
func (fr *frame[T]) unmarshal(data []byte) (*T, error) {
	g, rest, err := fr.decode(data)
	if err != nil {
		return nil, err
	}
	if err := codec.Trailing(rest, fr.what); err != nil {
		return nil, err
	}
	return g, nil
}

// read reads exactly one T from r; memory grows with the bytes read.
func (fr *frame[T]) read(r io.Reader) (*T, int64, error) {
	hdr := make([]byte, fr.hdrLen)
	var g *T
	n, err := codec.ReadHeader(r, hdr, fr.what, func(h []byte) (err error) {
		g, err = fr.parse(h)
		return err
	})
	if err != nil {
		return nil, n, err
	}
	words, m, err := codec.ReadWords(r, fr.words(g), fr.what)
	if err != nil {
		return nil, n + m, err
	}
	if err := fr.fill(g, words); err != nil {
		return nil, n + m, err
	}
	return g, n + m, nil
}

// paramErr turns a constructor's validation error into ErrFormat.
func paramErr(err error) error {
	return codec.Formatf("%s", strings.TrimPrefix(err.Error(), "bloom: "))
}

func checkTargetP(p float64) error {
	if !(p == 0 || (p > 0 && p < 1)) {
		return codec.Formatf("target p %v is not 0 or in (0, 1)", p)
	}
	return nil
}

// ---- classic filter (kind 1) ----

const whatClassic = "classic Bloom filter"

func (f *Filter) appendHeader(b []byte) []byte {
	if f.m == 0 {
		zeroPanic(zeroFilter)
	}
	start := len(b)
	le := binary.LittleEndian
	b = binfmt.AppendPrefix(b, binfmt.KindClassic)
	b = le.AppendUint16(b, uint16(f.hashID))
	b = le.AppendUint32(b, f.k)
	b = le.AppendUint32(b, 0) // flags
	b = le.AppendUint64(b, f.seed)
	b = le.AppendUint64(b, f.m)
	b = le.AppendUint64(b, f.n.Load())
	b = le.AppendUint64(b, f.capacity)
	b = le.AppendUint64(b, math.Float64bits(f.targetP))
	b = le.AppendUint32(b, 0) // reserved
	return binfmt.Seal(b, start)
}

// parseFilterHeader validates a (possibly partial) classic header and
// returns the filter it describes, without bits.
func parseFilterHeader(hdr []byte) (*Filter, error) {
	if err := codec.CheckHeader(hdr, binfmt.KindClassic, filterHeaderLen, whatClassic); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	f := &Filter{
		hashID:   HashID(le.Uint16(hdr[6:])),
		k:        le.Uint32(hdr[8:]),
		seed:     le.Uint64(hdr[16:]),
		m:        le.Uint64(hdr[24:]),
		capacity: le.Uint64(hdr[40:]),
		targetP:  math.Float64frombits(le.Uint64(hdr[48:])),
	}
	f.n.Store(le.Uint64(hdr[32:]))
	switch {
	case le.Uint32(hdr[12:]) != 0:
		return nil, codec.Formatf("unknown flags %#x", le.Uint32(hdr[12:]))
	case le.Uint32(hdr[56:]) != 0:
		return nil, codec.Formatf("reserved field is %#x, want 0", le.Uint32(hdr[56:]))
	case f.hashID == 0:
		return nil, codec.Formatf("hash ID 0 is reserved")
	}
	if err := checkMK(f.m, f.k); err != nil {
		return nil, paramErr(err)
	}
	if err := checkTargetP(f.targetP); err != nil {
		return nil, err
	}
	return f, nil
}

var classicFrame = frame[Filter]{
	hdrLen: filterHeaderLen, what: whatClassic,
	parse: parseFilterHeader,
	words: func(f *Filter) uint64 { return words(f.m) },
	fill: func(f *Filter, bits []uint64) error {
		if bits[len(bits)-1]&^lastWordMask(f.m) != 0 {
			return codec.Formatf("padding bits past m=%d are set", f.m)
		}
		f.bits = bits
		return nil
	},
}

// encodedSize returns the length in bytes of f's encoding: 68 + 8·⌈m/64⌉.
func (f *Filter) encodedSize() uint64 { return filterHeaderLen + f.sizeBytes() + 4 }

// AppendBinary appends f's encoding (docs/FORMATS.md, "Bloom filter
// (classic)") to b and returns the extended slice (encoding.BinaryAppender).
// It never fails. Safe during concurrent Adds (see Filter).
func (f *Filter) AppendBinary(b []byte) ([]byte, error) {
	return binfmt.AppendWords(f.appendHeader(b), f.bits), nil
}

// MarshalBinary returns f's encoding (encoding.BinaryMarshaler): 68 +
// 8·⌈m/64⌉ bytes. It never fails. Cost: one allocation of that size.
func (f *Filter) MarshalBinary() ([]byte, error) {
	return f.AppendBinary(make([]byte, 0, f.encodedSize()))
}

// WriteTo writes f's encoding to w (io.WriterTo), streaming the bitset in
// 64 KiB pieces without copying it whole. It returns the bytes written and
// the first write error.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	return binfmt.WriteWords(w, f.appendHeader(make([]byte, 0, filterHeaderLen)), f.bits)
}

// UnmarshalBinary replaces f with the filter encoded in data
// (encoding.BinaryUnmarshaler), which must hold exactly one encoding. It
// validates everything (magic and kind ErrFormat, version ErrVersion, both
// CRC-32Cs ErrChecksum, every parameter and trailing bytes ErrFormat, short
// input io.ErrUnexpectedEOF) before it allocates, and allocates only what
// data backs. Any hash ID is accepted (see CanHashKeys). On error f is
// unchanged. Not safe for concurrent use of f.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := classicFrame.unmarshal(data)
	if err != nil {
		return err
	}
	f.replace(g)
	return nil
}

func (f *Filter) replace(g *Filter) {
	f.bits, f.m, f.k, f.hashID, f.seed, f.capacity, f.targetP = g.bits, g.m, g.k, g.hashID, g.seed, g.capacity, g.targetP
	f.n.Store(g.items())
}

// ReadFrom replaces f with one filter read from r (io.ReaderFrom), reading
// exactly its encoding and nothing after it. Memory grows with the bytes
// actually read (doubling, capped at the declared size), never with a size
// merely declared in the header. It returns io.EOF if r is empty, an error
// wrapping io.ErrUnexpectedEOF if r ends inside the encoding, and
// UnmarshalBinary's errors otherwise. On error f is unchanged. Not safe for
// concurrent use of f.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	g, n, err := classicFrame.read(r)
	if err != nil {
		return n, err
	}
	f.replace(g)
	return n, nil
}

// ---- scalable (kind 2) ----

const whatScalable = "scalable Bloom filter"

func (s *Scalable) appendHeader(b []byte) []byte {
	if len(s.links) == 0 {
		zeroPanic(zeroScalable)
	}
	start := len(b)
	c := &s.cfg
	le := binary.LittleEndian
	b = binfmt.AppendPrefix(b, binfmt.KindScalable)
	b = le.AppendUint16(b, uint16(c.HashID))
	b = le.AppendUint32(b, uint32(len(s.links)))
	b = le.AppendUint32(b, 0) // flags
	b = le.AppendUint64(b, c.Seed)
	b = le.AppendUint64(b, c.Capacity)
	b = le.AppendUint64(b, c.Growth)
	b = le.AppendUint64(b, math.Float64bits(c.ErrorRate))
	b = le.AppendUint64(b, math.Float64bits(c.Tightening))
	b = le.AppendUint64(b, math.Float64bits(c.MinErrorRate))
	b = le.AppendUint64(b, c.MaxBytes)
	b = le.AppendUint32(b, 0) // reserved
	return binfmt.Seal(b, start)
}

// parseScalableHeader validates the (possibly partial) 80-byte header and
// returns the configuration and the link count.
func parseScalableHeader(hdr []byte) (ScalableConfig, uint32, error) {
	var cfg ScalableConfig
	if err := codec.CheckHeader(hdr, binfmt.KindScalable, scalableHeaderLen, whatScalable); err != nil {
		return cfg, 0, err
	}
	le := binary.LittleEndian
	cfg = ScalableConfig{
		HashID:       HashID(le.Uint16(hdr[6:])),
		Seed:         le.Uint64(hdr[16:]),
		Capacity:     le.Uint64(hdr[24:]),
		Growth:       le.Uint64(hdr[32:]),
		ErrorRate:    math.Float64frombits(le.Uint64(hdr[40:])),
		Tightening:   math.Float64frombits(le.Uint64(hdr[48:])),
		MinErrorRate: math.Float64frombits(le.Uint64(hdr[56:])),
		MaxBytes:     le.Uint64(hdr[64:]),
	}
	links := le.Uint32(hdr[8:])
	switch {
	case le.Uint32(hdr[12:]) != 0:
		return cfg, 0, codec.Formatf("unknown flags %#x", le.Uint32(hdr[12:]))
	case le.Uint32(hdr[72:]) != 0:
		return cfg, 0, codec.Formatf("reserved field is %#x, want 0", le.Uint32(hdr[72:]))
	case cfg.HashID == 0 || cfg.Tightening == 0 || cfg.MinErrorRate == 0:
		return cfg, 0, codec.Formatf("hash ID, tightening and minimum error rate must be explicit (nonzero)")
	}
	if _, err := cfg.validate(false); err != nil {
		return cfg, 0, paramErr(err)
	}
	if links == 0 {
		return cfg, 0, codec.Formatf("scalable Bloom filter with 0 sub-filters")
	}
	return cfg, links, nil
}

// checkLink validates decoded sub-filter i against the chain's header.
func checkLink(cfg *ScalableConfig, f *Filter, i int, total *uint64) error {
	if f.hashID != cfg.HashID || f.seed != cfg.Seed {
		return codec.Formatf("sub-filter %d uses hash %v seed %#x, the chain %v seed %#x", i, f.hashID, f.seed, cfg.HashID, cfg.Seed)
	}
	if f.capacity == 0 || f.targetP == 0 {
		return codec.Formatf("sub-filter %d has no capacity or error rate", i)
	}
	*total += f.sizeBytes() // cannot overflow: bounded by input length or MaxBits·count
	if cfg.MaxBytes != 0 && *total > cfg.MaxBytes {
		return codec.Formatf("sub-filters total %d bytes, over the encoded limit of %d", *total, cfg.MaxBytes)
	}
	return nil
}

func newLinks(filters []*Filter) []link {
	links := make([]link, len(filters))
	for i, f := range filters {
		links[i] = link{Filter: f, Capacity: f.capacity, ErrorRate: f.targetP}
	}
	return links
}

// encodedSize returns the length in bytes of s's encoding.
func (s *Scalable) encodedSize() uint64 {
	n := uint64(scalableHeaderLen)
	for _, l := range s.links {
		n += l.Filter.encodedSize()
	}
	return n
}

// AppendBinary appends s's encoding (docs/FORMATS.md, "Scalable Bloom
// filter": a header, then each sub-filter's classic encoding) to b
// (encoding.BinaryAppender). It never fails. The Sizing function is not
// encoded.
func (s *Scalable) AppendBinary(b []byte) ([]byte, error) {
	b = s.appendHeader(b)
	for _, l := range s.links {
		b, _ = l.Filter.AppendBinary(b)
	}
	return b, nil
}

// MarshalBinary returns s's encoding (encoding.BinaryMarshaler). It never
// fails.
func (s *Scalable) MarshalBinary() ([]byte, error) {
	return s.AppendBinary(make([]byte, 0, s.encodedSize()))
}

// WriteTo writes s's encoding to w (io.WriterTo), streaming each bitset.
func (s *Scalable) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(s.appendHeader(nil))
	total := int64(n)
	if err != nil {
		return total, err
	}
	for _, l := range s.links {
		n, err := l.Filter.WriteTo(w)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// decodeScalable decodes one Scalable from the start of data and returns it
// with the bytes that follow; a link count that data cannot back gives
// io.ErrUnexpectedEOF before any allocation.
func decodeScalable(data []byte) (*Scalable, []byte, error) {
	cfg, count, err := parseScalableHeader(data)
	if err != nil {
		return nil, nil, err
	}
	rest := data[scalableHeaderLen:]
	if uint64(count) > uint64(len(rest))/minFilterLen {
		return nil, nil, codec.EOF(whatScalable)
	}
	filters := make([]*Filter, count)
	var total uint64
	for i := range filters {
		f, r, err := classicFrame.decode(rest)
		if err != nil {
			return nil, nil, fmt.Errorf("bloom: scalable sub-filter %d: %w", i, err)
		}
		if err := checkLink(&cfg, f, i, &total); err != nil {
			return nil, nil, err
		}
		filters[i], rest = f, r
	}
	return &Scalable{cfg: cfg, links: newLinks(filters), bytes: total}, rest, nil
}

// SetSizing replaces the Sizing used for future sub-filters (it is not
// encoded, so a decoded Scalable starts with chainSizingFn); nil selects
// chainSizingFn. Not safe for concurrent use.
func (s *Scalable) setSizing(fn Sizing) { s.cfg.Sizing = fn }

// SetMaxBytes replaces the limit on the total bitset bytes that future
// growth must respect (0 = no limit). Existing sub-filters are kept even if
// they already exceed it; only growth is refused (ErrTooLarge). Not safe
// for concurrent use.
func (s *Scalable) setMaxBytes(n uint64) { s.cfg.MaxBytes = n }

// UnmarshalBinary replaces s with the Scalable encoded in data
// (encoding.BinaryUnmarshaler), which must hold exactly one encoding.
// Validation and errors are Filter.UnmarshalBinary's, for the header and
// every sub-filter; nothing is allocated that data does not back. s keeps
// its current Sizing. On error s is unchanged. Not safe for concurrent use.
func (s *Scalable) UnmarshalBinary(data []byte) error {
	g, rest, err := decodeScalable(data)
	if err != nil {
		return err
	}
	if err := codec.Trailing(rest, whatScalable); err != nil {
		return err
	}
	g.cfg.Sizing = s.cfg.Sizing
	*s = *g
	return nil
}

// ReadFrom replaces s with one Scalable read from r (io.ReaderFrom), reading
// exactly its encoding. Memory grows with the bytes actually read. It
// returns io.EOF if r is empty, an error wrapping io.ErrUnexpectedEOF if r
// ends inside the encoding, and UnmarshalBinary's errors otherwise. s keeps
// its current Sizing; on error s is unchanged.
func (s *Scalable) ReadFrom(r io.Reader) (int64, error) {
	var hdr [scalableHeaderLen]byte
	var cfg ScalableConfig
	var count uint32
	total, err := codec.ReadHeader(r, hdr[:], whatScalable, func(h []byte) (err error) {
		cfg, count, err = parseScalableHeader(h)
		return err
	})
	if err != nil {
		return total, err
	}
	filters := make([]*Filter, 0, min(count, 64))
	var size uint64
	for i := uint32(0); i < count; i++ {
		f, n, err := classicFrame.read(r)
		total += n
		if err == io.EOF {
			err = codec.EOF(whatScalable)
		}
		if err != nil {
			return total, fmt.Errorf("bloom: scalable sub-filter %d: %w", i, err)
		}
		if err := checkLink(&cfg, f, int(i), &size); err != nil {
			return total, err
		}
		filters = append(filters, f)
	}
	cfg.Sizing = s.cfg.Sizing
	*s = Scalable{cfg: cfg, links: newLinks(filters), bytes: size}
	return total, nil
}
