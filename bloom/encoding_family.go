package bloom

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sync/atomic"
)

// Encodings of the split-block (kind 6), counting (kind 4) and stable
// (kind 5) filters, specified byte by byte in docs/FORMATS.md ("Split-block
// Bloom filter", "Counting Bloom filter", "Stable Bloom filter"). They share
// the classic filter's frame: magic "PRBL", version 1, kind, a fixed header
// ending with its CRC-32C, then the body as little-endian uint64 words
// followed by the CRC-32C of the body.

const (
	kindSBBF     = 6
	kindCounting = 4
	kindStable   = 5

	sbbfHeaderLen     = 64
	countingHeaderLen = 64
	stableHeaderLen   = 80
)

// Kind identifies what a PRBL encoding holds (byte 5 of every PRBL
// encoding). This list is the registry of kinds for every probly package
// that writes the PRBL frame, so no two formats share a kind.
type Kind uint8

// The kinds of PRBL encodings.
const (
	KindClassic  Kind = 1 // Filter
	KindScalable Kind = 2 // Scalable
	KindCuckoo   Kind = 3 // cuckoo.Filter (package cuckoo decodes it)
	KindCounting Kind = 4 // Counting
	KindStable   Kind = 5 // Stable
	KindSBBF     Kind = 6 // SBBF
)

// String returns "classic", "scalable", "cuckoo", "counting", "stable",
// "sbbf" or "kind#N".
func (k Kind) String() string {
	switch k {
	case KindClassic:
		return "classic"
	case KindScalable:
		return "scalable"
	case KindCuckoo:
		return "cuckoo"
	case KindSBBF:
		return "sbbf"
	case KindCounting:
		return "counting"
	case KindStable:
		return "stable"
	}
	return fmt.Sprintf("kind#%d", uint8(k))
}

// PeekKind returns the kind of the encoding data starts with, from its
// first 6 bytes, without validating the rest: ErrFormat for a wrong magic
// number or an unknown kind, ErrVersion for another format version,
// io.ErrUnexpectedEOF for fewer than 6 bytes. Use it to pick the decoder
// (KindCuckoo: cuckoo.Filter's UnmarshalBinary or ReadFrom).
func PeekKind(data []byte) (Kind, error) {
	n := min(len(data), 4)
	if string(data[:n]) != magic[:n] {
		return 0, fmt.Errorf("%w: bad magic number %q, want %q", ErrFormat, data[:n], magic)
	}
	if len(data) > 4 && data[4] != formatVersion {
		return 0, fmt.Errorf("%w: version %d, this package reads version %d", ErrVersion, data[4], formatVersion)
	}
	if len(data) < 6 {
		return 0, errEOF("Bloom filter header")
	}
	k := Kind(data[5])
	if k < KindClassic || k > KindSBBF {
		return 0, fmt.Errorf("%w: unknown kind %d", ErrFormat, data[5])
	}
	return k, nil
}

// ---- shared frame ----

// sealHeader appends the CRC-32C of b[start:] to b.
func sealHeader(b []byte, start int) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// checkHeader validates the prefix, length and CRC of a fixed header of
// length n (CRC in its last 4 bytes).
func checkHeader(hdr []byte, kind byte, n int, what string) error {
	if err := checkPrefix(hdr, kind, what); err != nil {
		return err
	}
	if len(hdr) < n {
		return errEOF(what)
	}
	le := binary.LittleEndian
	if got, want := le.Uint32(hdr[n-4:]), crc32.Checksum(hdr[:n-4], castagnoli); got != want {
		return fmt.Errorf("%w: %s header CRC-32C %08x, computed %08x", ErrChecksum, what, got, want)
	}
	return nil
}

// appendBody appends the words (read atomically) and their CRC-32C.
func appendBody(b []byte, words []uint64) []byte {
	start := len(b)
	for i := range words {
		b = binary.LittleEndian.AppendUint64(b, atomic.LoadUint64(&words[i]))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// writeFrame writes hdr, the words and their CRC-32C to w, streaming the
// words in ioChunk pieces.
func writeFrame(w io.Writer, hdr []byte, words []uint64) (int64, error) {
	n, err := w.Write(hdr)
	total := int64(n)
	if err != nil {
		return total, err
	}
	buf := make([]byte, 0, ioChunk)
	crc := uint32(0)
	for i := range words {
		buf = binary.LittleEndian.AppendUint64(buf, atomic.LoadUint64(&words[i]))
		if len(buf) == ioChunk {
			crc = crc32.Update(crc, castagnoli, buf)
			n, err := w.Write(buf)
			total += int64(n)
			if err != nil {
				return total, err
			}
			buf = buf[:0]
		}
	}
	crc = crc32.Update(crc, castagnoli, buf)
	buf = binary.LittleEndian.AppendUint32(buf, crc)
	n, err = w.Write(buf)
	return total + int64(n), err
}

// decodeBody checks that data holds nw words and their CRC after hdrLen
// bytes, verifies the CRC, and only then allocates and returns the words
// with the bytes after the frame.
func decodeBody(data []byte, hdrLen int, nw uint64, what string) ([]uint64, []byte, error) {
	if uint64(len(data)-hdrLen) < 8*nw+4 {
		return nil, nil, errEOF(what)
	}
	body := data[hdrLen : uint64(hdrLen)+8*nw]
	end := uint64(hdrLen) + 8*nw + 4
	if got, want := binary.LittleEndian.Uint32(data[end-4:]), crc32.Checksum(body, castagnoli); got != want {
		return nil, nil, fmt.Errorf("%w: %s body CRC-32C %08x, computed %08x", ErrChecksum, what, got, want)
	}
	words := make([]uint64, nw)
	for i := range words {
		words[i] = binary.LittleEndian.Uint64(body[8*i:])
	}
	return words, data[end:], nil
}

// readHeader reads a fixed header of len(hdr) bytes from r and validates it
// with parse, which must accept a partial header to report format errors
// before truncation. It returns io.EOF if r is empty.
func readHeader(r io.Reader, hdr []byte, what string, parse func([]byte) error) (int64, error) {
	n, err := io.ReadFull(r, hdr)
	if err == io.EOF {
		return 0, io.EOF
	}
	if err != nil && err != io.ErrUnexpectedEOF {
		return int64(n), err
	}
	if perr := parse(hdr[:n]); perr != nil {
		return int64(n), perr
	}
	if err != nil {
		return int64(n), errEOF(what)
	}
	return int64(n), nil
}

// readBody reads nw words and their CRC-32C from r. Memory grows with the
// bytes actually read (doubling, capped at nw), never with nw alone.
func readBody(r io.Reader, nw uint64, what string) ([]uint64, int64, error) {
	words := make([]uint64, 0, min(nw, ioChunk/8))
	buf := make([]byte, ioChunk)
	var total int64
	crc := uint32(0)
	for remaining := 8 * nw; remaining > 0; {
		chunk := buf[:min(remaining, ioChunk)]
		n, err := io.ReadFull(r, chunk)
		total += int64(n)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, total, fmt.Errorf("bloom: reading %s: %w", what, err)
		}
		crc = crc32.Update(crc, castagnoli, chunk)
		if need := uint64(len(words) + len(chunk)/8); need > uint64(cap(words)) {
			nb := make([]uint64, len(words), min(nw, max(2*uint64(cap(words)), need)))
			copy(nb, words)
			words = nb
		}
		for i := 0; i < len(chunk); i += 8 {
			words = append(words, binary.LittleEndian.Uint64(chunk[i:]))
		}
		remaining -= uint64(len(chunk))
	}
	var tr [4]byte
	n, err := io.ReadFull(r, tr[:])
	total += int64(n)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, total, fmt.Errorf("bloom: reading %s: %w", what, err)
	}
	if got := binary.LittleEndian.Uint32(tr[:]); got != crc {
		return nil, total, fmt.Errorf("%w: %s body CRC-32C %08x, computed %08x", ErrChecksum, what, got, crc)
	}
	return words, total, nil
}

func checkTargetP(p float64) error {
	if !(p == 0 || (p > 0 && p < 1)) {
		return fmt.Errorf("%w: target p %v is not 0 or in (0, 1)", ErrFormat, p)
	}
	return nil
}

// ---- split-block (kind 6) ----

const whatSBBF = "split-block Bloom filter"

func (s *SBBF) appendHeader(b []byte) []byte {
	if s.blocks == 0 {
		zeroPanic(zeroSBBF)
	}
	start := len(b)
	le := binary.LittleEndian
	b = append(b, magic...)
	b = append(b, formatVersion, kindSBBF)
	b = le.AppendUint16(b, uint16(HashXXH64))
	b = le.AppendUint32(b, 8) // bits per key (one per lane)
	b = le.AppendUint32(b, 0) // flags
	b = le.AppendUint64(b, s.seed)
	b = le.AppendUint64(b, s.blocks)
	b = le.AppendUint64(b, s.items())
	b = le.AppendUint64(b, s.capacity)
	b = le.AppendUint64(b, math.Float64bits(s.targetP))
	b = le.AppendUint32(b, 0) // reserved
	return sealHeader(b, start)
}

// parseSBBFHeader validates a (possibly partial) SBBF header and returns
// the filter it describes, without bits.
func parseSBBFHeader(hdr []byte) (*SBBF, error) {
	if err := checkHeader(hdr, kindSBBF, sbbfHeaderLen, whatSBBF); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	s := &SBBF{
		seed:     le.Uint64(hdr[16:]),
		blocks:   le.Uint64(hdr[24:]),
		capacity: le.Uint64(hdr[40:]),
		targetP:  math.Float64frombits(le.Uint64(hdr[48:])),
	}
	s.n.Store(le.Uint64(hdr[32:]))
	switch {
	case HashID(le.Uint16(hdr[6:])) != HashXXH64:
		return nil, fmt.Errorf("%w: split-block filter hash ID %d, want %d (xxh64)", ErrFormat, le.Uint16(hdr[6:]), HashXXH64)
	case le.Uint32(hdr[8:]) != 8:
		return nil, fmt.Errorf("%w: split-block filter with %d bits per key, want 8", ErrFormat, le.Uint32(hdr[8:]))
	case le.Uint32(hdr[12:]) != 0:
		return nil, fmt.Errorf("%w: unknown flags %#x", ErrFormat, le.Uint32(hdr[12:]))
	case le.Uint32(hdr[56:]) != 0:
		return nil, fmt.Errorf("%w: reserved field is %#x, want 0", ErrFormat, le.Uint32(hdr[56:]))
	case s.blocks == 0 || s.blocks > MaxSBBFBlocks:
		return nil, fmt.Errorf("%w: %d blocks, want 1 … %d", ErrFormat, s.blocks, MaxSBBFBlocks)
	}
	if err := checkTargetP(s.targetP); err != nil {
		return nil, err
	}
	return s, nil
}

// EncodedSize returns the length of s's encoding: 68 + 32·numBlocks().
func (s *SBBF) EncodedSize() uint64 { return sbbfHeaderLen + s.sizeBytes() + 4 }

// AppendBinary appends s's encoding (docs/FORMATS.md, "Split-block Bloom
// filter"; its body is the raw Parquet bitset) to b. It never fails. Safe
// during concurrent Adds.
func (s *SBBF) AppendBinary(b []byte) ([]byte, error) {
	return appendBody(s.appendHeader(b), s.bits), nil
}

// MarshalBinary returns s's encoding. It never fails.
func (s *SBBF) MarshalBinary() ([]byte, error) {
	return s.AppendBinary(make([]byte, 0, s.EncodedSize()))
}

// WriteTo writes s's encoding to w, streaming the bitset.
func (s *SBBF) WriteTo(w io.Writer) (int64, error) {
	return writeFrame(w, s.appendHeader(make([]byte, 0, sbbfHeaderLen)), s.bits)
}

// DecodeSBBF decodes one SBBF from the start of data and returns it with
// the bytes that follow. Like Decode, it validates everything (ErrFormat,
// ErrVersion, ErrChecksum, io.ErrUnexpectedEOF) before allocating, and
// allocates only what data backs.
func DecodeSBBF(data []byte) (*SBBF, []byte, error) {
	s, err := parseSBBFHeader(data)
	if err != nil {
		return nil, nil, err
	}
	s.bits, data, err = decodeBody(data, sbbfHeaderLen, s.blocks*sbbfBlockWords, whatSBBF)
	if err != nil {
		return nil, nil, err
	}
	return s, data, nil
}

func (s *SBBF) replace(g *SBBF) {
	s.bits, s.blocks, s.seed, s.capacity, s.targetP = g.bits, g.blocks, g.seed, g.capacity, g.targetP
	s.n.Store(g.items())
}

// UnmarshalBinary replaces s with the SBBF encoded in data, which must hold
// exactly one encoding (trailing bytes: ErrFormat). On error s is
// unchanged. Not safe for concurrent use.
func (s *SBBF) UnmarshalBinary(data []byte) error {
	g, rest, err := DecodeSBBF(data)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d trailing bytes after %s", ErrFormat, len(rest), whatSBBF)
	}
	s.replace(g)
	return nil
}

// ReadFrom replaces s with one SBBF read from r, reading exactly its
// encoding; memory grows with the bytes read. io.EOF if r is empty. On
// error s is unchanged. Not safe for concurrent use.
func (s *SBBF) ReadFrom(r io.Reader) (int64, error) {
	var hdr [sbbfHeaderLen]byte
	var g *SBBF
	n, err := readHeader(r, hdr[:], whatSBBF, func(h []byte) (err error) {
		g, err = parseSBBFHeader(h)
		return err
	})
	if err != nil {
		return n, err
	}
	bits, m, err := readBody(r, g.blocks*sbbfBlockWords, whatSBBF)
	if err != nil {
		return n + m, err
	}
	g.bits = bits
	s.replace(g)
	return n + m, nil
}

// ---- counting (kind 4) ----

const whatCounting = "counting Bloom filter"

func (c *Counting) appendHeader(b []byte) []byte {
	if c.m == 0 {
		zeroPanic(zeroCounting)
	}
	start := len(b)
	le := binary.LittleEndian
	b = append(b, magic...)
	b = append(b, formatVersion, kindCounting)
	b = le.AppendUint16(b, uint16(c.hashID))
	b = le.AppendUint32(b, c.k)
	b = le.AppendUint32(b, 4) // counter width in bits
	b = le.AppendUint64(b, c.seed)
	b = le.AppendUint64(b, c.m)
	b = le.AppendUint64(b, c.n)
	b = le.AppendUint64(b, c.capacity)
	b = le.AppendUint64(b, math.Float64bits(c.targetP))
	b = le.AppendUint32(b, 0) // reserved
	return sealHeader(b, start)
}

func parseCountingHeader(hdr []byte) (*Counting, error) {
	if err := checkHeader(hdr, kindCounting, countingHeaderLen, whatCounting); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	c := &Counting{
		hashID:   HashID(le.Uint16(hdr[6:])),
		k:        le.Uint32(hdr[8:]),
		seed:     le.Uint64(hdr[16:]),
		m:        le.Uint64(hdr[24:]),
		n:        le.Uint64(hdr[32:]),
		capacity: le.Uint64(hdr[40:]),
		targetP:  math.Float64frombits(le.Uint64(hdr[48:])),
	}
	switch {
	case c.hashID == 0:
		return nil, fmt.Errorf("%w: hash ID 0 is reserved", ErrFormat)
	case le.Uint32(hdr[12:]) != 4:
		return nil, fmt.Errorf("%w: %d-bit counters, want 4", ErrFormat, le.Uint32(hdr[12:]))
	case le.Uint32(hdr[56:]) != 0:
		return nil, fmt.Errorf("%w: reserved field is %#x, want 0", ErrFormat, le.Uint32(hdr[56:]))
	}
	if err := checkCountingMK(c.m, c.k); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, trimPrefix(err))
	}
	if err := checkTargetP(c.targetP); err != nil {
		return nil, err
	}
	return c, nil
}

func trimPrefix(err error) string {
	s := err.Error()
	if len(s) > 7 && s[:7] == "bloom: " {
		return s[7:]
	}
	return s
}

// checkPadding rejects nonzero counters at positions ≥ m.
func (c *Counting) checkPadding() error {
	if r := c.m % countersPerWord; r != 0 && c.words[len(c.words)-1]>>(r*4) != 0 {
		return fmt.Errorf("%w: padding counters past m=%d are nonzero", ErrFormat, c.m)
	}
	return nil
}

// EncodedSize returns the length of c's encoding: 68 + 8·⌈m/16⌉.
func (c *Counting) EncodedSize() uint64 { return countingHeaderLen + c.sizeBytes() + 4 }

// AppendBinary appends c's encoding (docs/FORMATS.md, "Counting Bloom
// filter") to b. It never fails.
func (c *Counting) AppendBinary(b []byte) ([]byte, error) {
	return appendBody(c.appendHeader(b), c.words), nil
}

// MarshalBinary returns c's encoding. It never fails.
func (c *Counting) MarshalBinary() ([]byte, error) {
	return c.AppendBinary(make([]byte, 0, c.EncodedSize()))
}

// WriteTo writes c's encoding to w, streaming the counters.
func (c *Counting) WriteTo(w io.Writer) (int64, error) {
	return writeFrame(w, c.appendHeader(make([]byte, 0, countingHeaderLen)), c.words)
}

// DecodeCounting decodes one Counting filter from the start of data and
// returns it with the bytes that follow; validation and errors as for
// Decode (nonzero padding counters: ErrFormat).
func DecodeCounting(data []byte) (*Counting, []byte, error) {
	c, err := parseCountingHeader(data)
	if err != nil {
		return nil, nil, err
	}
	c.words, data, err = decodeBody(data, countingHeaderLen, counterWords(c.m), whatCounting)
	if err != nil {
		return nil, nil, err
	}
	if err := c.checkPadding(); err != nil {
		return nil, nil, err
	}
	return c, data, nil
}

// UnmarshalBinary replaces c with the filter encoded in data (exactly one
// encoding). On error c is unchanged.
func (c *Counting) UnmarshalBinary(data []byte) error {
	g, rest, err := DecodeCounting(data)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d trailing bytes after %s", ErrFormat, len(rest), whatCounting)
	}
	*c = *g
	return nil
}

// ReadFrom replaces c with one filter read from r (exactly its encoding;
// memory grows with the bytes read; io.EOF if r is empty). On error c is
// unchanged.
func (c *Counting) ReadFrom(r io.Reader) (int64, error) {
	var hdr [countingHeaderLen]byte
	var g *Counting
	n, err := readHeader(r, hdr[:], whatCounting, func(h []byte) (err error) {
		g, err = parseCountingHeader(h)
		return err
	})
	if err != nil {
		return n, err
	}
	words, m, err := readBody(r, counterWords(g.m), whatCounting)
	if err != nil {
		return n + m, err
	}
	g.words = words
	if err := g.checkPadding(); err != nil {
		return n + m, err
	}
	*c = *g
	return n + m, nil
}

// ---- stable (kind 5) ----

const whatStable = "stable Bloom filter"

func (s *Stable) appendHeader(b []byte) []byte {
	if s.m == 0 {
		zeroPanic(zeroStable)
	}
	start := len(b)
	le := binary.LittleEndian
	b = append(b, magic...)
	b = append(b, formatVersion, kindStable)
	b = le.AppendUint16(b, uint16(s.hashID))
	b = le.AppendUint32(b, s.k)
	b = le.AppendUint32(b, s.d)
	b = le.AppendUint64(b, s.seed)
	b = le.AppendUint64(b, s.m)
	b = le.AppendUint64(b, s.p)
	b = le.AppendUint64(b, s.n)
	b = le.AppendUint64(b, s.rng)
	b = le.AppendUint64(b, math.Float64bits(s.targetP))
	b = le.AppendUint64(b, 0) // reserved
	b = le.AppendUint32(b, 0) // reserved
	return sealHeader(b, start)
}

func parseStableHeader(hdr []byte) (*Stable, error) {
	if err := checkHeader(hdr, kindStable, stableHeaderLen, whatStable); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	hashID := HashID(le.Uint16(hdr[6:]))
	k, d := le.Uint32(hdr[8:]), le.Uint32(hdr[12:])
	m, p := le.Uint64(hdr[24:]), le.Uint64(hdr[32:])
	targetP := math.Float64frombits(le.Uint64(hdr[56:]))
	switch {
	case hashID == 0:
		return nil, fmt.Errorf("%w: hash ID 0 is reserved", ErrFormat)
	case le.Uint64(hdr[64:]) != 0 || le.Uint32(hdr[72:]) != 0:
		return nil, fmt.Errorf("%w: reserved fields are not 0", ErrFormat)
	case d > MaxStableCellBits:
		return nil, fmt.Errorf("%w: %d-bit cells, want 1 … %d", ErrFormat, d, MaxStableCellBits)
	}
	if err := checkStableParams(m, uint8(d), k, p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, trimPrefix(err))
	}
	if err := checkTargetP(targetP); err != nil {
		return nil, err
	}
	per := uint64(64 / d)
	return &Stable{
		m: m, d: d, perWord: per, max: uint64(1)<<d - 1, k: k, p: p,
		hashID: hashID, seed: le.Uint64(hdr[16:]), n: le.Uint64(hdr[40:]),
		rng: le.Uint64(hdr[48:]), targetP: targetP,
	}, nil
}

// stableWords returns the number of words of m cells of d bits.
func stableWords(m uint64, d uint32) uint64 {
	per := uint64(64 / d)
	return (m + per - 1) / per
}

// checkPadding rejects set bits outside the cells: the top 64 − ⌊64/d⌋·d
// bits of every word and the cells at positions ≥ m.
func (s *Stable) checkPadding() error {
	used := s.perWord * uint64(s.d)
	for i, w := range s.words {
		if used < 64 && w>>used != 0 {
			return fmt.Errorf("%w: unused bits of word %d are set", ErrFormat, i)
		}
	}
	if r := s.m % s.perWord; r != 0 && s.words[len(s.words)-1]>>(r*uint64(s.d)) != 0 {
		return fmt.Errorf("%w: padding cells past m=%d are nonzero", ErrFormat, s.m)
	}
	return nil
}

// EncodedSize returns the length of s's encoding: 84 + 8·⌈m/⌊64/d⌋⌉.
func (s *Stable) EncodedSize() uint64 { return stableHeaderLen + s.sizeBytes() + 4 }

// AppendBinary appends s's encoding (docs/FORMATS.md, "Stable Bloom
// filter", including the random state) to b. It never fails.
func (s *Stable) AppendBinary(b []byte) ([]byte, error) {
	return appendBody(s.appendHeader(b), s.words), nil
}

// MarshalBinary returns s's encoding. It never fails.
func (s *Stable) MarshalBinary() ([]byte, error) {
	return s.AppendBinary(make([]byte, 0, s.EncodedSize()))
}

// WriteTo writes s's encoding to w, streaming the cells.
func (s *Stable) WriteTo(w io.Writer) (int64, error) {
	return writeFrame(w, s.appendHeader(make([]byte, 0, stableHeaderLen)), s.words)
}

// DecodeStable decodes one Stable filter from the start of data and
// returns it with the bytes that follow; validation and errors as for
// Decode (bits outside the cells: ErrFormat).
func DecodeStable(data []byte) (*Stable, []byte, error) {
	s, err := parseStableHeader(data)
	if err != nil {
		return nil, nil, err
	}
	s.words, data, err = decodeBody(data, stableHeaderLen, stableWords(s.m, s.d), whatStable)
	if err != nil {
		return nil, nil, err
	}
	if err := s.checkPadding(); err != nil {
		return nil, nil, err
	}
	return s, data, nil
}

// UnmarshalBinary replaces s with the filter encoded in data (exactly one
// encoding). On error s is unchanged.
func (s *Stable) UnmarshalBinary(data []byte) error {
	g, rest, err := DecodeStable(data)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d trailing bytes after %s", ErrFormat, len(rest), whatStable)
	}
	*s = *g
	return nil
}

// ReadFrom replaces s with one filter read from r (exactly its encoding;
// memory grows with the bytes read; io.EOF if r is empty). On error s is
// unchanged.
func (s *Stable) ReadFrom(r io.Reader) (int64, error) {
	var hdr [stableHeaderLen]byte
	var g *Stable
	n, err := readHeader(r, hdr[:], whatStable, func(h []byte) (err error) {
		g, err = parseStableHeader(h)
		return err
	})
	if err != nil {
		return n, err
	}
	words, m, err := readBody(r, stableWords(g.m, g.d), whatStable)
	if err != nil {
		return n + m, err
	}
	g.words = words
	if err := g.checkPadding(); err != nil {
		return n + m, err
	}
	*s = *g
	return n + m, nil
}
