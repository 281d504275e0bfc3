package cuckoo

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the decoders (slice and stream). They
// must never panic; when a decode succeeds, re-encoding must reproduce the
// bytes it consumed, the two decoders must agree, and the filter must work.
func FuzzDecode(f *testing.F) {
	for _, enc := range encodings(f) {
		f.Add(enc)
		f.Add(append(bytes.Clone(enc), 1, 2, 3, 4))
		f.Add(enc[:len(enc)/2])
		bad := bytes.Clone(enc)
		bad[len(bad)-1] ^= 0x80
		f.Add(bad)
	}
	f.Add([]byte{})
	f.Add([]byte("PRBL"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
		if fixed := fixCRCs(data); fixed != nil {
			checkDecode(t, fixed)
		}
	})
}

// fixCRCs returns a copy of data with both CRC-32Cs recomputed (so the
// fuzzer reaches the checks behind them), or nil if data is too short or
// declares tables it does not hold.
func fixCRCs(data []byte) []byte {
	if len(data) < headerLen {
		return nil
	}
	b := reseal(bytes.Clone(data))
	h, err := parseHeader(b)
	if err != nil || uint64(len(b)-headerLen) < h.tableBytes+trailerLen {
		return b
	}
	end := headerLen + h.tableBytes
	binary.LittleEndian.PutUint32(b[end:], crc32.Checksum(b[headerLen:end], castagnoli))
	return b
}

func checkDecode(t *testing.T, data []byte) {
	g, rest, err := Decode(data)
	var s Filter
	n, serr := s.ReadFrom(bytes.NewReader(data))
	if (err == nil) != (serr == nil) {
		t.Fatalf("Decode: %v, ReadFrom: %v", err, serr)
	}
	if err != nil {
		return
	}
	used := len(data) - len(rest)
	if int64(used) != n || !s.equal(g) {
		t.Fatalf("decoders disagree: %d vs %d bytes", used, n)
	}
	enc, _ := g.MarshalBinary()
	if !bytes.Equal(enc, data[:used]) {
		t.Fatal("re-encoding differs")
	}
	// The decoded filter must be usable: insert, find, delete.
	// (A budget keeps a growth step of a crafted shape small.)
	g.setMaxBytes(g.Stats().Bytes + 1<<20)
	{
		h := uint64(0x1234567)
		before := g.Clone()
		if err := g.AddHash(h); err == nil {
			if !g.TestHash(h) || !g.RemoveHash(h) {
				t.Fatal("inserted hash lost")
			}
		} else if !g.equal(before) {
			t.Fatal("failed insert changed the decoded filter")
		}
	}
}
