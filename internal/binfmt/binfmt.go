// Package binfmt is the one implementation of probly's binary framing
// (docs/FORMATS.md): the "PRBL" magic number and version, the registry of
// PRBL kinds, the registry of hash IDs, CRC-32C, the fixed header sealed by
// its own CRC, the body followed by its CRC, and reads that never allocate
// more than the input backs. Every public package that persists a structure
// (bloom, cuckoo, hll) builds its encodings from these pieces, so the
// framing exists once.
//
// Errors are made by a Codec, which carries the calling package's prefix
// and its ErrFormat, ErrVersion and ErrChecksum values, so errors.Is works
// against the public package's errors.
package binfmt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync/atomic"
)

// Magic and Version open every PRBL encoding (bytes 0 … 4).
const (
	Magic   = "PRBL"
	Version = 1
)

// IOChunk is the piece size, in bytes, of streamed writes and reads.
const IOChunk = 1 << 16

// Kind identifies what a PRBL encoding holds (byte 5). This list is the
// registry of kinds for every probly package, so no two formats share one.
type Kind uint8

// The kinds of PRBL encodings (docs/FORMATS.md, "PRBL kinds").
const (
	KindClassic  Kind = 1 // bloom.Filter
	KindScalable Kind = 2 // bloom.Scalable
	KindCuckoo   Kind = 3 // cuckoo.Filter
	KindCounting Kind = 4 // bloom.Counting
	KindStable   Kind = 5 // bloom.Stable
	KindSBBF     Kind = 6 // bloom.SBBF
	KindCountMin Kind = 7 // cms.Sketch
	KindTopK     Kind = 8 // topk.Sketch
	KindTDigest  Kind = 9 // tdigest.Digest

	kindLast = KindTDigest // the highest registered kind
)

// String returns "classic", "scalable", "cuckoo", "counting", "stable",
// "sbbf", "count-min", "topk", "tdigest" or "kind#N".
func (k Kind) String() string {
	switch k {
	case KindClassic:
		return "classic"
	case KindScalable:
		return "scalable"
	case KindCuckoo:
		return "cuckoo"
	case KindCounting:
		return "counting"
	case KindStable:
		return "stable"
	case KindSBBF:
		return "sbbf"
	case KindCountMin:
		return "count-min"
	case KindTopK:
		return "topk"
	case KindTDigest:
		return "tdigest"
	}
	return fmt.Sprintf("kind#%d", uint8(k))
}

// The registry of hash IDs (docs/FORMATS.md, "Hash IDs"): the number every
// persisted structure records for the function that hashed its keys. 0 is
// reserved. Public packages re-export, typed, the IDs they can compute.
const (
	HashXXH3_128      = 1 // "xxh3-128", Bloom pair: XXH3-128 (lo, hi) with the seed
	HashMurmur64APair = 2 // "murmur64a", Bloom pair: RedisBloom's two MurmurHash64A calls
	HashXXH3_64       = 3 // "xxh3-64", cuckoo: XXH3-64 with the seed
	HashMurmur64A     = 4 // "murmur64a-single", cuckoo: MurmurHash64A with the seed
	HashXXH64         = 5 // "xxh64", split-block: XXH64 with the seed (Parquet: seed 0)
	HashMurmur2       = 6 // "murmur2", 32-bit MurmurHash2 (RedisBloom's count-min and top-k), seeds per structure
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC returns the CRC-32C (Castagnoli) of b.
func CRC(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// UpdateCRC returns crc extended by b.
func UpdateCRC(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }

// AppendPrefix appends magic, version and kind to b.
func AppendPrefix(b []byte, kind Kind) []byte {
	b = append(b, Magic...)
	return append(b, Version, byte(kind))
}

// Seal appends the CRC-32C of b[start:] to b, little-endian: the last field
// of every fixed header and every body trailer.
func Seal(b []byte, start int) []byte {
	return binary.LittleEndian.AppendUint32(b, CRC(b[start:]))
}

// Errors of PeekKind (the Probly codec).
var (
	ErrFormat   = errors.New("probly: invalid format")
	ErrVersion  = errors.New("probly: unsupported format version")
	ErrChecksum = errors.New("probly: checksum mismatch")
)

// Probly is the codec of PeekKind, for callers that do not yet know which
// package decodes the data.
var Probly = &Codec{Pkg: "probly", Format: ErrFormat, Version: ErrVersion, Checksum: ErrChecksum}

// PeekKind returns the kind of the PRBL encoding data starts with, from its
// first 6 bytes, without validating the rest: ErrFormat for a wrong magic
// number or an unknown kind, ErrVersion for another version,
// io.ErrUnexpectedEOF for fewer than 6 bytes.
func PeekKind(data []byte) (Kind, error) {
	c := Probly
	if err := c.prefix(data, 0, "PRBL encoding"); err != nil {
		return 0, err
	}
	k := Kind(data[5])
	if k < KindClassic || k > kindLast {
		return 0, fmt.Errorf("%w: unknown kind %d", c.Format, data[5])
	}
	return k, nil
}

// Codec makes a package's framing errors: each wraps one of its sentinel
// errors (or io.ErrUnexpectedEOF) behind the package's prefix.
type Codec struct {
	Pkg                       string // "bloom", "cuckoo", …
	Format, Version, Checksum error
}

// Formatf returns an error wrapping c.Format.
func (c *Codec) Formatf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", c.Format, fmt.Sprintf(format, args...))
}

// EOF returns an error wrapping io.ErrUnexpectedEOF: input ended inside what.
func (c *Codec) EOF(what string) error {
	return fmt.Errorf("%s: decoding %s: %w", c.Pkg, what, io.ErrUnexpectedEOF)
}

// ChecksumErr returns an error wrapping c.Checksum for a CRC mismatch of
// part (e.g. "header", "body") of what.
func (c *Codec) ChecksumErr(what, part string, got, want uint32) error {
	return fmt.Errorf("%w: %s %s CRC-32C %08x, computed %08x", c.Checksum, what, part, got, want)
}

// Trailing returns nil for an empty rest, else ErrFormat: UnmarshalBinary
// takes exactly one encoding.
func (c *Codec) Trailing(rest []byte, what string) error {
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d trailing bytes after %s", c.Format, len(rest), what)
	}
	return nil
}

// prefix validates whatever part of magic, version and kind data holds
// (kind 0: any kind), then that data holds all six bytes.
func (c *Codec) prefix(data []byte, kind Kind, what string) error {
	n := min(len(data), 4)
	if string(data[:n]) != Magic[:n] {
		return fmt.Errorf("%w: bad magic number %q, want %q", c.Format, data[:n], Magic)
	}
	if len(data) > 4 && data[4] != Version {
		return fmt.Errorf("%w: %s version %d, this package reads version %d", c.Version, what, data[4], Version)
	}
	if kind != 0 && len(data) > 5 && Kind(data[5]) != kind {
		return fmt.Errorf("%w: kind %d (%v), want %d (%s)", c.Format, data[5], Kind(data[5]), uint8(kind), what)
	}
	if len(data) < 6 {
		return c.EOF(what)
	}
	return nil
}

// CheckHeader validates a (possibly partial) fixed header of n bytes whose
// last 4 bytes are the CRC-32C of the others: magic (ErrFormat), version
// (ErrVersion), kind (ErrFormat) as far as hdr goes, then its length
// (io.ErrUnexpectedEOF) and CRC (ErrChecksum).
func (c *Codec) CheckHeader(hdr []byte, kind Kind, n int, what string) error {
	if err := c.prefix(hdr, kind, what); err != nil {
		return err
	}
	if len(hdr) < n {
		return c.EOF(what)
	}
	if got, want := binary.LittleEndian.Uint32(hdr[n-4:]), CRC(hdr[:n-4]); got != want {
		return c.ChecksumErr(what, "header", got, want)
	}
	return nil
}

// AppendWords appends words as little-endian uint64s (each read
// atomically, so concurrent atomic writers are safe) and their CRC-32C.
func AppendWords(b []byte, words []uint64) []byte {
	start := len(b)
	for i := range words {
		b = binary.LittleEndian.AppendUint64(b, atomic.LoadUint64(&words[i]))
	}
	return Seal(b, start)
}

// WriteWords writes hdr, then words and their CRC-32C to w, streaming the
// words in IOChunk pieces. It returns the bytes written and the first
// write error.
func WriteWords(w io.Writer, hdr []byte, words []uint64) (int64, error) {
	n, err := w.Write(hdr)
	total := int64(n)
	if err != nil {
		return total, err
	}
	buf := make([]byte, 0, IOChunk)
	crc := uint32(0)
	for i := range words {
		buf = binary.LittleEndian.AppendUint64(buf, atomic.LoadUint64(&words[i]))
		if len(buf) == IOChunk {
			crc = UpdateCRC(crc, buf)
			n, err := w.Write(buf)
			total += int64(n)
			if err != nil {
				return total, err
			}
			buf = buf[:0]
		}
	}
	crc = UpdateCRC(crc, buf)
	buf = binary.LittleEndian.AppendUint32(buf, crc)
	n, err = w.Write(buf)
	return total + int64(n), err
}

// Body returns the n body bytes after hdrLen bytes of data, once data is
// known to hold them and their CRC-32C (io.ErrUnexpectedEOF otherwise) and
// the CRC matches (ErrChecksum), with the bytes after the trailer. It
// allocates nothing.
func (c *Codec) Body(data []byte, hdrLen int, n uint64, what string) (body, rest []byte, err error) {
	if uint64(len(data)-hdrLen) < n || uint64(len(data)-hdrLen)-n < 4 {
		return nil, nil, c.EOF(what)
	}
	end := uint64(hdrLen) + n
	body = data[hdrLen:end]
	if got, want := binary.LittleEndian.Uint32(data[end:]), CRC(body); got != want {
		return nil, nil, c.ChecksumErr(what, "body", got, want)
	}
	return body, data[end+4:], nil
}

// DecodeWords is Body for a body of nw little-endian uint64 words: only
// after the checks does it allocate the words (8·nw bytes, which data
// backs).
func (c *Codec) DecodeWords(data []byte, hdrLen int, nw uint64, what string) ([]uint64, []byte, error) {
	if nw > uint64(len(data))/8 {
		return nil, nil, c.EOF(what)
	}
	body, rest, err := c.Body(data, hdrLen, 8*nw, what)
	if err != nil {
		return nil, nil, err
	}
	words := make([]uint64, nw)
	for i := range words {
		words[i] = binary.LittleEndian.Uint64(body[8*i:])
	}
	return words, rest, nil
}

// ReadHeader reads a fixed header of len(hdr) bytes from r and validates it
// with parse, which must accept a partial header so that format errors are
// reported before truncation. It returns io.EOF if r is empty, and an error
// wrapping io.ErrUnexpectedEOF if r ends inside a header parse accepts.
func (c *Codec) ReadHeader(r io.Reader, hdr []byte, what string, parse func([]byte) error) (int64, error) {
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
		return int64(n), c.EOF(what)
	}
	return int64(n), nil
}

func (c *Codec) readErr(what string, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%s: reading %s: %w", c.Pkg, what, err)
}

// readTrailer reads the 4-byte CRC after a body and compares it with crc.
func (c *Codec) readTrailer(r io.Reader, crc uint32, what string) (int64, error) {
	var tr [4]byte
	n, err := io.ReadFull(r, tr[:])
	if err != nil {
		return int64(n), c.readErr(what, err)
	}
	if got := binary.LittleEndian.Uint32(tr[:]); got != crc {
		return int64(n), c.ChecksumErr(what, "body", got, crc)
	}
	return int64(n), nil
}

// ReadWords reads nw little-endian words and their CRC-32C from r. Memory
// grows with the bytes actually read (doubling, capped at nw), never with
// nw alone.
func (c *Codec) ReadWords(r io.Reader, nw uint64, what string) ([]uint64, int64, error) {
	words := make([]uint64, 0, min(nw, IOChunk/8))
	buf := make([]byte, IOChunk)
	var total int64
	crc := uint32(0)
	for remaining := 8 * nw; remaining > 0; {
		chunk := buf[:min(remaining, IOChunk)]
		n, err := io.ReadFull(r, chunk)
		total += int64(n)
		if err != nil {
			return nil, total, c.readErr(what, err)
		}
		crc = UpdateCRC(crc, chunk)
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
	n, err := c.readTrailer(r, crc, what)
	return words, total + n, err
}

// ReadBody reads n body bytes and their CRC-32C from r. Memory grows with
// the bytes actually read (IOChunk at a time), never with n alone.
func (c *Codec) ReadBody(r io.Reader, n uint64, what string) ([]byte, int64, error) {
	body := make([]byte, 0, min(n, IOChunk))
	var total int64
	for uint64(len(body)) < n {
		k := min(n-uint64(len(body)), IOChunk)
		start := len(body)
		body = append(body, make([]byte, k)...)
		m, err := io.ReadFull(r, body[start:])
		total += int64(m)
		if err != nil {
			return nil, total, c.readErr(what, err)
		}
	}
	m, err := c.readTrailer(r, CRC(body), what)
	return body, total + m, err
}

// CRCWriter writes to W, counting the bytes (N) and summing their CRC-32C
// (Sum); Trailer then writes the sum. It streams a body whose bytes are
// produced piecewise.
type CRCWriter struct {
	W   io.Writer
	N   int64
	Sum uint32
}

// Write implements io.Writer.
func (w *CRCWriter) Write(p []byte) (int, error) {
	w.Sum = UpdateCRC(w.Sum, p)
	n, err := w.W.Write(p)
	w.N += int64(n)
	return n, err
}

// Trailer writes the CRC-32C of the bytes written so far, and returns the
// total count written (the trailer's 4 bytes included, not the sum's).
func (w *CRCWriter) Trailer() (int64, error) {
	n, err := w.W.Write(binary.LittleEndian.AppendUint32(nil, w.Sum))
	w.N += int64(n)
	return w.N, err
}

// SparsePage is the granularity of ReadSparse: 4096 bytes, the page size
// of the platforms probly runs on.
const SparsePage = 4096

// IsZero reports whether b holds only zero bytes. It reads b and never
// writes it, so on an untouched page of fresh memory it costs no resident
// memory (the kernel maps its shared zero page).
func IsZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// ReadSparse reads exactly n bytes from r (IOChunk at a time), extends crc
// (CRC-32C) by them and returns it, and calls write(off, p) for each
// SparsePage-aligned piece p at byte offset off of the n bytes that is not
// all zero. It decodes a body in place into a destination that starts out
// zero (a fresh allocation, whose pages the kernel maps on first write):
// pages whose bytes are all zero are never written, so they stay
// untouched and cost no resident memory. Memory: one IOChunk buffer. The
// first read error stops it (io.ErrUnexpectedEOF if r ends early), and so
// does write's first error.
func ReadSparse(r io.Reader, n uint64, crc uint32, write func(off uint64, p []byte) error) (uint32, error) {
	buf := make([]byte, min(n, IOChunk))
	for off := uint64(0); off < n; {
		chunk := buf[:min(n-off, IOChunk)]
		if _, err := io.ReadFull(r, chunk); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return crc, err
		}
		crc = UpdateCRC(crc, chunk)
		for i := 0; i < len(chunk); i += SparsePage {
			p := chunk[i:min(i+SparsePage, len(chunk))]
			if !IsZero(p) {
				if err := write(off+uint64(i), p); err != nil {
					return crc, err
				}
			}
		}
		off += uint64(len(chunk))
	}
	return crc, nil
}
