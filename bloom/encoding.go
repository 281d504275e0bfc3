package bloom

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strings"
	"sync/atomic"
)

// Encoding (specified byte by byte in docs/FORMATS.md, sections "Bloom
// filter (classic)" and "Scalable Bloom filter"). All integers are
// little-endian; floats are IEEE 754 binary64 bit patterns.

const (
	magic         = "PRBL"
	formatVersion = 1

	kindClassic  = 1
	kindScalable = 2

	filterHeaderLen   = 64
	filterTrailerLen  = 4
	scalableHeaderLen = 80
	minFilterLen      = filterHeaderLen + 8 + filterTrailerLen // m ≥ 1 means at least one word

	ioChunk = 1 << 16 // bytes per write/read step in WriteTo/ReadFrom
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func errEOF(what string) error {
	return fmt.Errorf("bloom: decoding %s: %w", what, io.ErrUnexpectedEOF)
}

// checkPrefix validates whatever part of magic, version and kind data holds.
func checkPrefix(data []byte, kind byte, what string) error {
	n := min(len(data), 4)
	if string(data[:n]) != magic[:n] {
		return fmt.Errorf("%w: bad magic number %q, want %q", ErrFormat, data[:n], magic)
	}
	if len(data) > 4 && data[4] != formatVersion {
		return fmt.Errorf("%w: %s version %d, this package reads version %d", ErrVersion, what, data[4], formatVersion)
	}
	if len(data) > 5 && data[5] != kind {
		return fmt.Errorf("%w: kind %d (%v), want %d (%s)", ErrFormat, data[5], Kind(data[5]), kind, what)
	}
	if len(data) < 6 {
		return errEOF(what)
	}
	return nil
}

// ---- classic filter ----

// filterHeader is the parsed, validated fixed part of a classic encoding.
type filterHeader struct {
	hashID   HashID
	k        uint32
	seed     uint64
	m        uint64
	n        uint64
	capacity uint64
	targetP  float64
}

func (f *Filter) appendHeader(b []byte) []byte {
	if f.m == 0 {
		zeroPanic(zeroFilter)
	}
	start := len(b)
	b = append(b, magic...)
	b = append(b, formatVersion, kindClassic)
	b = binary.LittleEndian.AppendUint16(b, uint16(f.hashID))
	b = binary.LittleEndian.AppendUint32(b, f.k)
	b = binary.LittleEndian.AppendUint32(b, 0) // flags
	b = binary.LittleEndian.AppendUint64(b, f.seed)
	b = binary.LittleEndian.AppendUint64(b, f.m)
	b = binary.LittleEndian.AppendUint64(b, f.items())
	b = binary.LittleEndian.AppendUint64(b, f.capacity)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f.targetP))
	b = binary.LittleEndian.AppendUint32(b, 0) // reserved
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// parseFilterHeader validates the 64-byte header hdr.
func parseFilterHeader(hdr []byte) (filterHeader, error) {
	if err := checkPrefix(hdr, kindClassic, "classic Bloom filter"); err != nil {
		return filterHeader{}, err
	}
	if len(hdr) < filterHeaderLen {
		return filterHeader{}, errEOF("classic Bloom filter")
	}
	le := binary.LittleEndian
	if got, want := le.Uint32(hdr[60:]), crc32.Checksum(hdr[:60], castagnoli); got != want {
		return filterHeader{}, fmt.Errorf("%w: classic Bloom filter header CRC-32C %08x, computed %08x", ErrChecksum, got, want)
	}
	h := filterHeader{
		hashID:   HashID(le.Uint16(hdr[6:])),
		k:        le.Uint32(hdr[8:]),
		seed:     le.Uint64(hdr[16:]),
		m:        le.Uint64(hdr[24:]),
		n:        le.Uint64(hdr[32:]),
		capacity: le.Uint64(hdr[40:]),
		targetP:  math.Float64frombits(le.Uint64(hdr[48:])),
	}
	if flags := le.Uint32(hdr[12:]); flags != 0 {
		return h, fmt.Errorf("%w: unknown flags %#x", ErrFormat, flags)
	}
	if r := le.Uint32(hdr[56:]); r != 0 {
		return h, fmt.Errorf("%w: reserved field is %#x, want 0", ErrFormat, r)
	}
	if h.hashID == 0 {
		return h, fmt.Errorf("%w: hash ID 0 is reserved", ErrFormat)
	}
	if err := checkMK(h.m, h.k); err != nil {
		return h, fmt.Errorf("%w: %s", ErrFormat, strings.TrimPrefix(err.Error(), "bloom: "))
	}
	if !(h.targetP == 0 || (h.targetP > 0 && h.targetP < 1)) {
		return h, fmt.Errorf("%w: target p %v is not 0 or in (0, 1)", ErrFormat, h.targetP)
	}
	return h, nil
}

func (h filterHeader) filter(bits []uint64) *Filter {
	f := &Filter{bits: bits, m: h.m, k: h.k, hashID: h.hashID, seed: h.seed, capacity: h.capacity, targetP: h.targetP}
	f.n.Store(h.n)
	return f
}

// EncodedSize returns the length in bytes of f's encoding: 68 + 8·⌈m/64⌉.
func (f *Filter) EncodedSize() uint64 {
	return filterHeaderLen + f.sizeBytes() + filterTrailerLen
}

// AppendBinary appends f's encoding (docs/FORMATS.md, "Bloom filter
// (classic)") to b and returns the extended slice (encoding.BinaryAppender).
// It never fails. Safe during concurrent Adds (see Filter).
func (f *Filter) AppendBinary(b []byte) ([]byte, error) {
	b = f.appendHeader(b)
	start := len(b)
	for i := range f.bits {
		b = binary.LittleEndian.AppendUint64(b, atomic.LoadUint64(&f.bits[i]))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli)), nil
}

// MarshalBinary returns f's encoding (encoding.BinaryMarshaler). It never
// fails. Cost: one allocation of EncodedSize() bytes.
func (f *Filter) MarshalBinary() ([]byte, error) {
	return f.AppendBinary(make([]byte, 0, f.EncodedSize()))
}

// WriteTo writes f's encoding to w (io.WriterTo), streaming the bitset in
// 64 KiB pieces without copying it whole. It returns the bytes written and
// the first write error.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	buf := f.appendHeader(make([]byte, 0, ioChunk))
	var total int64
	crc := uint32(0)
	flush := func() error {
		n, err := w.Write(buf)
		total += int64(n)
		buf = buf[:0]
		return err
	}
	if err := flush(); err != nil {
		return total, err
	}
	for i := range f.bits {
		buf = binary.LittleEndian.AppendUint64(buf, atomic.LoadUint64(&f.bits[i]))
		if len(buf) == ioChunk {
			crc = crc32.Update(crc, castagnoli, buf)
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	crc = crc32.Update(crc, castagnoli, buf)
	buf = binary.LittleEndian.AppendUint32(buf, crc)
	err := flush()
	return total, err
}

// Decode decodes one classic filter from the start of data and returns it
// with the bytes that follow its encoding. It validates everything (magic
// ErrFormat, version ErrVersion, both CRC-32Cs ErrChecksum, every parameter
// ErrFormat) before allocating, and allocates only after checking that data
// holds the whole declared bitset; a short input gives an error wrapping
// io.ErrUnexpectedEOF. Any hash ID is accepted (see CanHashKeys).
func Decode(data []byte) (f *Filter, rest []byte, err error) {
	h, err := parseFilterHeader(data)
	if err != nil {
		return nil, nil, err
	}
	w := words(h.m)
	if uint64(len(data)-filterHeaderLen) < 8*w+filterTrailerLen {
		return nil, nil, errEOF("classic Bloom filter")
	}
	body := data[filterHeaderLen : filterHeaderLen+8*w]
	end := filterHeaderLen + 8*w + filterTrailerLen
	if got, want := binary.LittleEndian.Uint32(data[end-4:]), crc32.Checksum(body, castagnoli); got != want {
		return nil, nil, fmt.Errorf("%w: classic Bloom filter bitset CRC-32C %08x, computed %08x", ErrChecksum, got, want)
	}
	if last := binary.LittleEndian.Uint64(body[len(body)-8:]); last&^lastWordMask(h.m) != 0 {
		return nil, nil, fmt.Errorf("%w: padding bits past m=%d are set", ErrFormat, h.m)
	}
	bits := make([]uint64, w)
	for i := range bits {
		bits[i] = binary.LittleEndian.Uint64(body[8*i:])
	}
	return h.filter(bits), data[end:], nil
}

// UnmarshalBinary replaces f with the filter encoded in data
// (encoding.BinaryUnmarshaler). data must hold exactly one encoding
// (trailing bytes give ErrFormat); errors are Decode's. On error f is
// unchanged. Not safe for concurrent use of f.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, rest, err := Decode(data)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d trailing bytes after classic Bloom filter", ErrFormat, len(rest))
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
// merely declared in the header. It returns io.EOF if r is empty, an error wrapping
// io.ErrUnexpectedEOF if r ends inside the encoding, and Decode's errors
// otherwise. On error f is unchanged. Not safe for concurrent use of f.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	g, n, err := readFilter(r)
	if err != nil {
		return n, err
	}
	f.replace(g)
	return n, nil
}

func readFilter(r io.Reader) (*Filter, int64, error) {
	var hdr [filterHeaderLen]byte
	n, err := io.ReadFull(r, hdr[:])
	total := int64(n)
	if err == io.EOF {
		return nil, total, io.EOF
	}
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, total, err
	}
	h, perr := parseFilterHeader(hdr[:n])
	if perr != nil {
		return nil, total, perr
	}
	if err != nil {
		return nil, total, errEOF("classic Bloom filter")
	}
	w := words(h.m)
	bits := make([]uint64, 0, min(w, ioChunk/8))
	buf := make([]byte, ioChunk)
	crc := uint32(0)
	for remaining := 8 * w; remaining > 0; {
		chunk := buf[:min(remaining, ioChunk)]
		n, err := io.ReadFull(r, chunk)
		total += int64(n)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, total, fmt.Errorf("bloom: reading classic Bloom filter: %w", err)
		}
		crc = crc32.Update(crc, castagnoli, chunk)
		if need := uint64(len(bits) + len(chunk)/8); need > uint64(cap(bits)) {
			// Grow geometrically with the data actually read, never past w.
			nb := make([]uint64, len(bits), min(w, max(2*uint64(cap(bits)), need)))
			copy(nb, bits)
			bits = nb
		}
		for i := 0; i < len(chunk); i += 8 {
			bits = append(bits, binary.LittleEndian.Uint64(chunk[i:]))
		}
		remaining -= uint64(len(chunk))
	}
	var tr [filterTrailerLen]byte
	n, err = io.ReadFull(r, tr[:])
	total += int64(n)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, total, fmt.Errorf("bloom: reading classic Bloom filter: %w", err)
	}
	if got := binary.LittleEndian.Uint32(tr[:]); got != crc {
		return nil, total, fmt.Errorf("%w: classic Bloom filter bitset CRC-32C %08x, computed %08x", ErrChecksum, got, crc)
	}
	if bits[len(bits)-1]&^lastWordMask(h.m) != 0 {
		return nil, total, fmt.Errorf("%w: padding bits past m=%d are set", ErrFormat, h.m)
	}
	return h.filter(bits), total, nil
}

// ---- scalable ----

func (s *Scalable) appendHeader(b []byte) []byte {
	if len(s.links) == 0 {
		zeroPanic(zeroScalable)
	}
	start := len(b)
	c := &s.cfg
	b = append(b, magic...)
	b = append(b, formatVersion, kindScalable)
	b = binary.LittleEndian.AppendUint16(b, uint16(c.HashID))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.links)))
	b = binary.LittleEndian.AppendUint32(b, 0) // flags
	b = binary.LittleEndian.AppendUint64(b, c.HashSeed)
	b = binary.LittleEndian.AppendUint64(b, c.Capacity)
	b = binary.LittleEndian.AppendUint64(b, c.Growth)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.ErrorRate))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.Tightening))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.MinErrorRate))
	b = binary.LittleEndian.AppendUint64(b, c.MaxBytes)
	b = binary.LittleEndian.AppendUint32(b, 0) // reserved
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// parseScalableHeader validates the 80-byte header and returns the
// configuration and the link count.
func parseScalableHeader(hdr []byte) (ScalableConfig, uint32, error) {
	var cfg ScalableConfig
	if err := checkPrefix(hdr, kindScalable, "scalable Bloom filter"); err != nil {
		return cfg, 0, err
	}
	if len(hdr) < scalableHeaderLen {
		return cfg, 0, errEOF("scalable Bloom filter")
	}
	le := binary.LittleEndian
	if got, want := le.Uint32(hdr[76:]), crc32.Checksum(hdr[:76], castagnoli); got != want {
		return cfg, 0, fmt.Errorf("%w: scalable Bloom filter header CRC-32C %08x, computed %08x", ErrChecksum, got, want)
	}
	cfg = ScalableConfig{
		HashID:       HashID(le.Uint16(hdr[6:])),
		HashSeed:     le.Uint64(hdr[16:]),
		Capacity:     le.Uint64(hdr[24:]),
		Growth:       le.Uint64(hdr[32:]),
		ErrorRate:    math.Float64frombits(le.Uint64(hdr[40:])),
		Tightening:   math.Float64frombits(le.Uint64(hdr[48:])),
		MinErrorRate: math.Float64frombits(le.Uint64(hdr[56:])),
		MaxBytes:     le.Uint64(hdr[64:]),
	}
	links := le.Uint32(hdr[8:])
	if flags := le.Uint32(hdr[12:]); flags != 0 {
		return cfg, 0, fmt.Errorf("%w: unknown flags %#x", ErrFormat, flags)
	}
	if r := le.Uint32(hdr[72:]); r != 0 {
		return cfg, 0, fmt.Errorf("%w: reserved field is %#x, want 0", ErrFormat, r)
	}
	if cfg.HashID == 0 || cfg.Tightening == 0 || cfg.MinErrorRate == 0 {
		return cfg, 0, fmt.Errorf("%w: hash ID, tightening and minimum error rate must be explicit (nonzero)", ErrFormat)
	}
	if _, err := cfg.validate(false); err != nil {
		return cfg, 0, fmt.Errorf("%w: %s", ErrFormat, strings.TrimPrefix(err.Error(), "bloom: "))
	}
	if links == 0 {
		return cfg, 0, fmt.Errorf("%w: scalable Bloom filter with 0 sub-filters", ErrFormat)
	}
	return cfg, links, nil
}

// checkLink validates decoded sub-filter i against the chain's header.
func checkLink(cfg *ScalableConfig, f *Filter, i int, total *uint64) error {
	if f.hashID != cfg.HashID || f.seed != cfg.HashSeed {
		return fmt.Errorf("%w: sub-filter %d uses hash %v seed %#x, the chain %v seed %#x", ErrFormat, i, f.hashID, f.seed, cfg.HashID, cfg.HashSeed)
	}
	if f.capacity == 0 || f.targetP == 0 {
		return fmt.Errorf("%w: sub-filter %d has no capacity or error rate", ErrFormat, i)
	}
	*total += f.sizeBytes() // cannot overflow: bounded by input length or MaxBits·count
	if cfg.MaxBytes != 0 && *total > cfg.MaxBytes {
		return fmt.Errorf("%w: sub-filters total %d bytes, over the encoded limit of %d", ErrFormat, *total, cfg.MaxBytes)
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

// EncodedSize returns the length in bytes of s's encoding.
func (s *Scalable) EncodedSize() uint64 {
	n := uint64(scalableHeaderLen)
	for _, l := range s.links {
		n += l.Filter.EncodedSize()
	}
	return n
}

// AppendBinary appends s's encoding (docs/FORMATS.md, "Scalable Bloom
// filter") to b (encoding.BinaryAppender). It never fails. The Sizing
// function is not encoded.
func (s *Scalable) AppendBinary(b []byte) ([]byte, error) {
	b = s.appendHeader(b)
	for _, l := range s.links {
		b, _ = l.Filter.AppendBinary(b)
	}
	return b, nil
}

// MarshalBinary returns s's encoding (encoding.BinaryMarshaler).
func (s *Scalable) MarshalBinary() ([]byte, error) {
	return s.AppendBinary(make([]byte, 0, s.EncodedSize()))
}

// WriteTo writes s's encoding to w (io.WriterTo).
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

// DecodeScalable decodes one Scalable from the start of data and returns it
// with the bytes that follow. Validation and errors are as for Decode, for
// the header and every sub-filter; a link count that data cannot back gives
// io.ErrUnexpectedEOF before any allocation. The result has Sizing nil
// (chainSizingFn); call SetSizing to restore a custom one.
func DecodeScalable(data []byte) (s *Scalable, rest []byte, err error) {
	cfg, count, err := parseScalableHeader(data)
	if err != nil {
		return nil, nil, err
	}
	rest = data[scalableHeaderLen:]
	if uint64(count) > uint64(len(rest))/minFilterLen {
		return nil, nil, errEOF("scalable Bloom filter")
	}
	filters := make([]*Filter, count)
	var total uint64
	for i := range filters {
		f, r, err := Decode(rest)
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
// (encoding.BinaryUnmarshaler); data must hold exactly one encoding. s keeps
// its current Sizing. On error s is unchanged. Not safe for concurrent use.
func (s *Scalable) UnmarshalBinary(data []byte) error {
	g, rest, err := DecodeScalable(data)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d trailing bytes after scalable Bloom filter", ErrFormat, len(rest))
	}
	g.cfg.Sizing = s.cfg.Sizing
	*s = *g
	return nil
}

// ReadFrom replaces s with one Scalable read from r (io.ReaderFrom), reading
// exactly its encoding. Memory grows with the bytes actually read. It
// returns io.EOF if r is empty, an error wrapping io.ErrUnexpectedEOF if r
// ends inside the encoding, and DecodeScalable's errors otherwise. s keeps
// its current Sizing; on error s is unchanged.
func (s *Scalable) ReadFrom(r io.Reader) (int64, error) {
	var hdr [scalableHeaderLen]byte
	n, err := io.ReadFull(r, hdr[:])
	total := int64(n)
	if err == io.EOF {
		return total, io.EOF
	}
	if err != nil && err != io.ErrUnexpectedEOF {
		return total, err
	}
	cfg, count, perr := parseScalableHeader(hdr[:n])
	if perr != nil {
		return total, perr
	}
	if err != nil {
		return total, errEOF("scalable Bloom filter")
	}
	filters := make([]*Filter, 0, min(count, 64))
	var size uint64
	for i := 0; i < int(count); i++ {
		f, n, err := readFilter(r)
		total += n
		if err == io.EOF {
			err = errEOF("scalable Bloom filter")
		}
		if err != nil {
			return total, fmt.Errorf("bloom: scalable sub-filter %d: %w", i, err)
		}
		if err := checkLink(&cfg, f, i, &size); err != nil {
			return total, err
		}
		filters = append(filters, f)
	}
	cfg.Sizing = s.cfg.Sizing
	*s = Scalable{cfg: cfg, links: newLinks(filters), bytes: size}
	return total, nil
}
