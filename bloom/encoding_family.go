package bloom

import (
	"encoding/binary"
	"io"
	"math"

	"github.com/probly/probly/internal/binfmt"
)

// Encodings of the split-block (kind 6), counting (kind 4) and stable
// (kind 5) filters, specified byte by byte in docs/FORMATS.md ("Split-block
// Bloom filter", "Counting Bloom filter", "Stable Bloom filter"), in the
// classic filter's frame (see encoding.go).

const (
	sbbfHeaderLen     = 64
	countingHeaderLen = 64
	stableHeaderLen   = 80
)

// ---- split-block (kind 6) ----

const whatSBBF = "split-block Bloom filter"

func (s *SBBF) appendHeader(b []byte) []byte {
	if s.blocks == 0 {
		zeroPanic(zeroSBBF)
	}
	start := len(b)
	le := binary.LittleEndian
	b = binfmt.AppendPrefix(b, binfmt.KindSBBF)
	b = le.AppendUint16(b, uint16(HashXXH64))
	b = le.AppendUint32(b, 8) // bits per key (one per lane)
	b = le.AppendUint32(b, 0) // flags
	b = le.AppendUint64(b, s.seed)
	b = le.AppendUint64(b, s.blocks)
	b = le.AppendUint64(b, s.items())
	b = le.AppendUint64(b, s.capacity)
	b = le.AppendUint64(b, math.Float64bits(s.targetP))
	b = le.AppendUint32(b, 0) // reserved
	return binfmt.Seal(b, start)
}

// parseSBBFHeader validates a (possibly partial) SBBF header and returns
// the filter it describes, without bits.
func parseSBBFHeader(hdr []byte) (*SBBF, error) {
	if err := codec.CheckHeader(hdr, binfmt.KindSBBF, sbbfHeaderLen, whatSBBF); err != nil {
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
		return nil, codec.Formatf("split-block filter hash ID %d, want %d (xxh64)", le.Uint16(hdr[6:]), HashXXH64)
	case le.Uint32(hdr[8:]) != 8:
		return nil, codec.Formatf("split-block filter with %d bits per key, want 8", le.Uint32(hdr[8:]))
	case le.Uint32(hdr[12:]) != 0:
		return nil, codec.Formatf("unknown flags %#x", le.Uint32(hdr[12:]))
	case le.Uint32(hdr[56:]) != 0:
		return nil, codec.Formatf("reserved field is %#x, want 0", le.Uint32(hdr[56:]))
	case s.blocks == 0 || s.blocks > MaxSBBFBlocks:
		return nil, codec.Formatf("%d blocks, want 1 … %d", s.blocks, MaxSBBFBlocks)
	}
	if err := checkTargetP(s.targetP); err != nil {
		return nil, err
	}
	return s, nil
}

var sbbfFrame = frame[SBBF]{
	hdrLen: sbbfHeaderLen, what: whatSBBF,
	parse: parseSBBFHeader,
	words: func(s *SBBF) uint64 { return s.blocks * sbbfBlockWords },
	fill:  func(s *SBBF, bits []uint64) error { s.bits = bits; return nil },
}

// AppendBinary appends s's encoding (docs/FORMATS.md, "Split-block Bloom
// filter"; its body is the raw Parquet bitset) to b: 68 + 32·Blocks()
// bytes. It never fails. Safe during concurrent Adds.
func (s *SBBF) AppendBinary(b []byte) ([]byte, error) {
	return binfmt.AppendWords(s.appendHeader(b), s.bits), nil
}

// MarshalBinary returns s's encoding. It never fails.
func (s *SBBF) MarshalBinary() ([]byte, error) {
	return s.AppendBinary(make([]byte, 0, sbbfHeaderLen+s.sizeBytes()+4))
}

// WriteTo writes s's encoding to w, streaming the bitset.
func (s *SBBF) WriteTo(w io.Writer) (int64, error) {
	return binfmt.WriteWords(w, s.appendHeader(make([]byte, 0, sbbfHeaderLen)), s.bits)
}

func (s *SBBF) replace(g *SBBF) {
	s.bits, s.blocks, s.seed, s.capacity, s.targetP = g.bits, g.blocks, g.seed, g.capacity, g.targetP
	s.n.Store(g.items())
}

// UnmarshalBinary replaces s with the SBBF encoded in data, which must hold
// exactly one encoding. Validation and errors are Filter.UnmarshalBinary's;
// nothing is allocated that data does not back. On error s is unchanged.
// Not safe for concurrent use.
func (s *SBBF) UnmarshalBinary(data []byte) error {
	g, err := sbbfFrame.unmarshal(data)
	if err != nil {
		return err
	}
	s.replace(g)
	return nil
}

// ReadFrom replaces s with one SBBF read from r, reading exactly its
// encoding; memory grows with the bytes read. io.EOF if r is empty. On
// error s is unchanged. Not safe for concurrent use.
func (s *SBBF) ReadFrom(r io.Reader) (int64, error) {
	g, n, err := sbbfFrame.read(r)
	if err != nil {
		return n, err
	}
	s.replace(g)
	return n, nil
}

// ---- counting (kind 4) ----

const whatCounting = "counting Bloom filter"

func (c *Counting) appendHeader(b []byte) []byte {
	if c.m == 0 {
		zeroPanic(zeroCounting)
	}
	start := len(b)
	le := binary.LittleEndian
	b = binfmt.AppendPrefix(b, binfmt.KindCounting)
	b = le.AppendUint16(b, uint16(c.hashID))
	b = le.AppendUint32(b, c.k)
	b = le.AppendUint32(b, 4) // counter width in bits
	b = le.AppendUint64(b, c.seed)
	b = le.AppendUint64(b, c.m)
	b = le.AppendUint64(b, c.n)
	b = le.AppendUint64(b, c.capacity)
	b = le.AppendUint64(b, math.Float64bits(c.targetP))
	b = le.AppendUint32(b, 0) // reserved
	return binfmt.Seal(b, start)
}

func parseCountingHeader(hdr []byte) (*Counting, error) {
	if err := codec.CheckHeader(hdr, binfmt.KindCounting, countingHeaderLen, whatCounting); err != nil {
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
		return nil, codec.Formatf("hash ID 0 is reserved")
	case le.Uint32(hdr[12:]) != 4:
		return nil, codec.Formatf("%d-bit counters, want 4", le.Uint32(hdr[12:]))
	case le.Uint32(hdr[56:]) != 0:
		return nil, codec.Formatf("reserved field is %#x, want 0", le.Uint32(hdr[56:]))
	}
	if err := checkCountingMK(c.m, c.k); err != nil {
		return nil, paramErr(err)
	}
	if err := checkTargetP(c.targetP); err != nil {
		return nil, err
	}
	return c, nil
}

// checkPadding rejects nonzero counters at positions ≥ m.
func (c *Counting) checkPadding() error {
	if r := c.m % countersPerWord; r != 0 && c.words[len(c.words)-1]>>(r*4) != 0 {
		return codec.Formatf("padding counters past m=%d are nonzero", c.m)
	}
	return nil
}

var countingFrame = frame[Counting]{
	hdrLen: countingHeaderLen, what: whatCounting,
	parse: parseCountingHeader,
	words: func(c *Counting) uint64 { return counterWords(c.m) },
	fill: func(c *Counting, words []uint64) error {
		c.words = words
		return c.checkPadding()
	},
}

// AppendBinary appends c's encoding (docs/FORMATS.md, "Counting Bloom
// filter") to b: 68 + 8·⌈m/16⌉ bytes. It never fails.
func (c *Counting) AppendBinary(b []byte) ([]byte, error) {
	return binfmt.AppendWords(c.appendHeader(b), c.words), nil
}

// MarshalBinary returns c's encoding. It never fails.
func (c *Counting) MarshalBinary() ([]byte, error) {
	return c.AppendBinary(make([]byte, 0, countingHeaderLen+c.sizeBytes()+4))
}

// WriteTo writes c's encoding to w, streaming the counters.
func (c *Counting) WriteTo(w io.Writer) (int64, error) {
	return binfmt.WriteWords(w, c.appendHeader(make([]byte, 0, countingHeaderLen)), c.words)
}

// UnmarshalBinary replaces c with the filter encoded in data (exactly one
// encoding); validation and errors as for Filter.UnmarshalBinary (nonzero
// padding counters: ErrFormat). On error c is unchanged.
func (c *Counting) UnmarshalBinary(data []byte) error {
	g, err := countingFrame.unmarshal(data)
	if err != nil {
		return err
	}
	*c = *g
	return nil
}

// ReadFrom replaces c with one filter read from r (exactly its encoding;
// memory grows with the bytes read; io.EOF if r is empty). On error c is
// unchanged.
func (c *Counting) ReadFrom(r io.Reader) (int64, error) {
	g, n, err := countingFrame.read(r)
	if err != nil {
		return n, err
	}
	*c = *g
	return n, nil
}

// ---- stable (kind 5) ----

const whatStable = "stable Bloom filter"

func (s *Stable) appendHeader(b []byte) []byte {
	if s.m == 0 {
		zeroPanic(zeroStable)
	}
	start := len(b)
	le := binary.LittleEndian
	b = binfmt.AppendPrefix(b, binfmt.KindStable)
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
	return binfmt.Seal(b, start)
}

func parseStableHeader(hdr []byte) (*Stable, error) {
	if err := codec.CheckHeader(hdr, binfmt.KindStable, stableHeaderLen, whatStable); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	hashID := HashID(le.Uint16(hdr[6:]))
	k, d := le.Uint32(hdr[8:]), le.Uint32(hdr[12:])
	m, p := le.Uint64(hdr[24:]), le.Uint64(hdr[32:])
	targetP := math.Float64frombits(le.Uint64(hdr[56:]))
	switch {
	case hashID == 0:
		return nil, codec.Formatf("hash ID 0 is reserved")
	case le.Uint64(hdr[64:]) != 0 || le.Uint32(hdr[72:]) != 0:
		return nil, codec.Formatf("reserved fields are not 0")
	case d > MaxStableCellBits:
		return nil, codec.Formatf("%d-bit cells, want 1 … %d", d, MaxStableCellBits)
	}
	if err := checkStableParams(m, uint8(d), k, p); err != nil {
		return nil, paramErr(err)
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
			return codec.Formatf("unused bits of word %d are set", i)
		}
	}
	if r := s.m % s.perWord; r != 0 && s.words[len(s.words)-1]>>(r*uint64(s.d)) != 0 {
		return codec.Formatf("padding cells past m=%d are nonzero", s.m)
	}
	return nil
}

var stableFrame = frame[Stable]{
	hdrLen: stableHeaderLen, what: whatStable,
	parse: parseStableHeader,
	words: func(s *Stable) uint64 { return stableWords(s.m, s.d) },
	fill: func(s *Stable, words []uint64) error {
		s.words = words
		return s.checkPadding()
	},
}

// AppendBinary appends s's encoding (docs/FORMATS.md, "Stable Bloom
// filter", including the random state) to b: 84 + 8·⌈m/⌊64/d⌋⌉ bytes. It
// never fails.
func (s *Stable) AppendBinary(b []byte) ([]byte, error) {
	return binfmt.AppendWords(s.appendHeader(b), s.words), nil
}

// MarshalBinary returns s's encoding. It never fails.
func (s *Stable) MarshalBinary() ([]byte, error) {
	return s.AppendBinary(make([]byte, 0, stableHeaderLen+s.sizeBytes()+4))
}

// WriteTo writes s's encoding to w, streaming the cells.
func (s *Stable) WriteTo(w io.Writer) (int64, error) {
	return binfmt.WriteWords(w, s.appendHeader(make([]byte, 0, stableHeaderLen)), s.words)
}

// UnmarshalBinary replaces s with the filter encoded in data (exactly one
// encoding); validation and errors as for Filter.UnmarshalBinary (bits
// outside the cells: ErrFormat). On error s is unchanged.
func (s *Stable) UnmarshalBinary(data []byte) error {
	g, err := stableFrame.unmarshal(data)
	if err != nil {
		return err
	}
	*s = *g
	return nil
}

// ReadFrom replaces s with one filter read from r (exactly its encoding;
// memory grows with the bytes read; io.EOF if r is empty). On error s is
// unchanged.
func (s *Stable) ReadFrom(r io.Reader) (int64, error) {
	g, n, err := stableFrame.read(r)
	if err != nil {
		return n, err
	}
	*s = *g
	return n, nil
}
