package redisbloom

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/probly/probly/internal/binfmt"
)

// Snapshot encoding of a Chain (MarshalBinary / UnmarshalChain). It reuses
// the SCANDUMP pieces, so a chain loaded from RedisBloom survives a
// snapshot byte for byte:
//
//	off  size  field
//	0    4     magic "PRBC" (probly RedisBloom chain)
//	4    1     format version (1)
//	5    1     hash ID (2 = hashMurmur64A: RedisBloomPair)
//	6    2     reserved, zero
//	8    4     H: length of the SCANDUMP header, u32 little-endian
//	12   H     SCANDUMP header (spec §1.4; size, options, growth, links)
//	12+H B     the link bit arrays in link order, B = Σ link bytes
//	…    4     CRC-32C (Castagnoli) of every preceding byte, little-endian
//
// The decoder checks magic, version, hash ID, reserved bytes and the
// header (same rules as BF.LOADCHUNK) and that the length is exactly
// 12+H+B+4 before allocating the bit arrays, so a decode allocates at most
// the input's length and never more than the budget; the checksum is
// checked once the bits are read (ReadChain decodes in place).
const (
	snapMagic    = "PRBC"
	snapVersion  = 1
	snapPrefix   = 12
	snapChecksum = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary encodes c in the snapshot format above (WriteTo into one
// buffer of the encoding's size).
func (c *Chain) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	b.Grow(snapPrefix + c.HeaderSize() + int(c.SizeBytes()) + snapChecksum)
	_, err := c.WriteTo(&b)
	return b.Bytes(), err
}

// WriteTo writes MarshalBinary's encoding of c to w (io.WriterTo),
// binfmt.IOChunk bytes at a time, and returns the bytes written and the
// first write error. It reads the bits without writing them, so the
// untouched pages of a large, sparsely used filter stay untouched (and
// cost no resident memory) while it runs. Memory: one IOChunk buffer.
// Safe for concurrent use with readers; the bits must not change
// meanwhile (a snapshot writes a frozen value).
func (c *Chain) WriteTo(w io.Writer) (int64, error) {
	hs := c.HeaderSize()
	b := make([]byte, 0, max(binfmt.IOChunk, snapPrefix+hs))
	b = append(b, snapMagic...)
	b = append(b, snapVersion, byte(hashMurmur64A), 0, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(hs))
	b = c.AppendHeader(b)
	cw := &binfmt.CRCWriter{W: w}
	if _, err := cw.Write(b); err != nil {
		return cw.N, err
	}
	buf := b[:binfmt.IOChunk]
	for i, l := range raw.Links(c.sc) {
		size := c.meta[i].bytes
		for off := uint64(0); off < size; {
			k := raw.ReadBitsAt(l.Filter, buf[:min(size-off, binfmt.IOChunk)], off)
			if k == 0 {
				return cw.N, fmt.Errorf("redisbloom: internal error: link %d holds fewer than %d bytes", i, size)
			}
			if _, err := cw.Write(buf[:k]); err != nil {
				return cw.N, err
			}
			off += uint64(k)
		}
	}
	return cw.Trailer()
}

// UnmarshalChain decodes a snapshot made by MarshalBinary: ReadChain on
// data, which must hold exactly one encoding.
func UnmarshalChain(data []byte, budget uint64) (*Chain, error) {
	return ReadChain(bytes.NewReader(data), uint64(len(data)), budget)
}

// ReadChain decodes a snapshot made by MarshalBinary from r, which holds
// exactly n bytes of it, in place: it validates magic, version, hash ID,
// reserved bytes and the header (same rules as BF.LOADCHUNK) and that n
// is exactly 12+H+B+4, allocates the bit arrays once (at most n bytes,
// never more than the budget) and streams the bits into them
// binfmt.IOChunk bytes at a time, writing only the pages that are not all
// zero (binfmt.ReadSparse), so a sparsely used filter loads without
// touching the pages it does not use. The CRC-32C is checked at the end;
// on a mismatch the chain is dropped. budget bounds the chain's
// MemoryUsage (0 = DefaultBudget) and becomes its growth budget. Every
// error is ErrBadData (wrapping r's read error, if any). Memory beyond
// the chain: the header and one IOChunk buffer.
func ReadChain(r io.Reader, n, budget uint64) (*Chain, error) {
	if budget == 0 {
		budget = DefaultBudget
	}
	var pre [snapPrefix]byte
	if n < snapPrefix+snapChecksum {
		return nil, ErrBadData
	}
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, readErr(err)
	}
	if !bytes.Equal(pre[:4], []byte(snapMagic)) || pre[4] != snapVersion || pre[5] != byte(hashMurmur64A) || pre[6] != 0 || pre[7] != 0 {
		return nil, ErrBadData
	}
	hs := uint64(binary.LittleEndian.Uint32(pre[8:]))
	if hs > n-snapPrefix-snapChecksum {
		return nil, ErrBadData
	}
	hdr := make([]byte, hs) // bounded by n
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, readErr(err)
	}
	h, err := parseHeader(hdr, budget)
	if err != nil {
		return nil, err
	}
	if n-snapPrefix-snapChecksum-hs != h.totalBytes {
		return nil, ErrBadData
	}
	c, err := h.build(budget)
	if err != nil {
		return nil, err
	}
	crc := crc32.Update(crc32.Checksum(pre[:], castagnoli), castagnoli, hdr)
	for i, l := range raw.Links(c.sc) {
		crc, err = binfmt.ReadSparse(r, c.meta[i].bytes, crc, func(off uint64, p []byte) error {
			return raw.WriteBitsAt(l.Filter, p, off)
		})
		if err != nil {
			return nil, readErr(err)
		}
	}
	var tr [snapChecksum]byte
	if _, err := io.ReadFull(r, tr[:]); err != nil {
		return nil, readErr(err)
	}
	if binary.LittleEndian.Uint32(tr[:]) != crc {
		return nil, ErrBadData
	}
	return c, nil
}

// readErr is ErrBadData for input that ended early, else ErrBadData
// wrapping the read error.
func readErr(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return ErrBadData
	}
	return fmt.Errorf("%w: %w", ErrBadData, err)
}
