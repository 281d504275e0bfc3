package redisbloom

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
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
// The decoder checks magic, version, hash ID, reserved bytes, checksum and
// the header (same rules as BF.LOADCHUNK) and that the length is exactly
// 12+H+B+4 before allocating the bit arrays, so a decode allocates at most
// the input's length and never more than the budget.
const (
	snapMagic    = "PRBC"
	snapVersion  = 1
	snapPrefix   = 12
	snapChecksum = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary encodes c in the snapshot format above.
func (c *Chain) MarshalBinary() ([]byte, error) {
	hs := c.HeaderSize()
	total := snapPrefix + hs + int(c.SizeBytes()) + snapChecksum
	b := make([]byte, 0, total)
	b = append(b, snapMagic...)
	b = append(b, snapVersion, byte(hashMurmur64A), 0, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(hs))
	b = c.AppendHeader(b)
	for i, l := range raw.Links(c.sc) {
		start := len(b)
		b = b[:start+int(c.meta[i].bytes)]
		raw.ReadBitsAt(l.Filter, b[start:], 0)
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	return b, nil
}

// UnmarshalChain decodes a snapshot made by MarshalBinary. budget bounds
// the chain's MemoryUsage (0 = DefaultBudget) and becomes the chain's
// growth budget. Every error is ErrBadData; nothing is allocated beyond
// len(data) before the input is fully validated.
func UnmarshalChain(data []byte, budget uint64) (*Chain, error) {
	if budget == 0 {
		budget = DefaultBudget
	}
	if len(data) < snapPrefix+snapChecksum || !bytes.Equal(data[:4], []byte(snapMagic)) ||
		data[4] != snapVersion || data[5] != byte(hashMurmur64A) || data[6] != 0 || data[7] != 0 {
		return nil, ErrBadData
	}
	body := data[:len(data)-snapChecksum]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(body):]) {
		return nil, ErrBadData
	}
	hs := uint64(binary.LittleEndian.Uint32(data[8:]))
	if hs > uint64(len(body)-snapPrefix) {
		return nil, ErrBadData
	}
	h, err := parseHeader(body[snapPrefix:snapPrefix+hs], budget)
	if err != nil {
		return nil, err
	}
	bitsData := body[snapPrefix+hs:]
	if uint64(len(bitsData)) != h.totalBytes {
		return nil, ErrBadData
	}
	c, err := h.build(budget)
	if err != nil {
		return nil, err
	}
	for i, l := range raw.Links(c.sc) {
		n := c.meta[i].bytes
		if err := raw.WriteBitsAt(l.Filter, bitsData[:n], 0); err != nil {
			return nil, ErrBadData
		}
		bitsData = bitsData[n:]
	}
	return c, nil
}
