package redisbloom

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// legacyHeader is a one-link header without FORCE64 (options 1) whose
// link has 1 byte (8 bits, not a multiple of 64), error and bpe 0.1, 1
// hash, 100 entries, nothing added, growth 2.
func legacyHeader() []byte {
	return []byte("\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00" +
		"\x01\x00\x00\x00\x00\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x9a\x99\x99\x99\x99\x99\xb9\x3f\x9a\x99\x99\x99\x99\x99\xb9\x3f\x01\x00\x00\x00" +
		"\x64\x00\x00\x00\x00\x00\x00\x00\x00")
}

// A legacy chain keeps its header byte for byte, its 1-byte link in
// SCANDUMP, BF.INFO's Size and the snapshot, and survives a snapshot
// round trip with its bits.
func TestLegacyChainRoundTrip(t *testing.T) {
	hdr := legacyHeader()
	c, err := DecodeHeader(hdr, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Add([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if !c.Exists([]byte("a")) {
		t.Fatal("added item not found")
	}
	if c.SizeBytes() != 1 || c.InfoSize() != 32+64+1 {
		t.Fatalf("SizeBytes %d, InfoSize %d", c.SizeBytes(), c.InfoSize())
	}
	next, chunk := c.DumpChunk(1)
	if next != 2 || len(chunk) != 1 || chunk[0] == 0 {
		t.Fatalf("DumpChunk(1) = %d, %x", next, chunk)
	}
	want := append([]byte(nil), hdr...)
	binary.LittleEndian.PutUint64(want[0:], 1)  // chain size
	binary.LittleEndian.PutUint64(want[36:], 1) // link size
	if !bytes.Equal(c.Header(), want) {
		t.Fatalf("header after one add:\n%x\nwant\n%x", c.Header(), want)
	}
	snap, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	d, err := UnmarshalChain(snap, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Equal(d) || !d.Exists([]byte("a")) {
		t.Fatal("snapshot round trip changed the chain")
	}
	// A chunk past the 1-byte link has no link; one that crosses it is too big.
	if err := c.LoadChunk(3, []byte{0}); err != ErrNoLink {
		t.Fatalf("LoadChunk past the link: %v", err)
	}
	if err := c.LoadChunk(3, []byte{0, 0}); err != ErrChunkTooBig {
		t.Fatalf("LoadChunk across the link: %v", err)
	}
}
