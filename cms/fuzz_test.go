package cms

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/probly/probly/internal/binfmt"
)

func sealOf(b []byte) []byte { return binary.LittleEndian.AppendUint32(nil, binfmt.CRC(b)) }

// fixCRCs returns data with both CRC-32Cs recomputed where data holds
// them, so the fuzzer reaches the checks behind them.
func fixCRCs(data []byte) []byte {
	if len(data) < headerLen {
		return nil
	}
	b := bytes.Clone(data)
	copy(b[headerLen-4:], sealOf(b[:headerLen-4]))
	sh, err := parseHeader(b)
	if err != nil || uint64(len(b)-headerLen) < sh.cellBytes()+trailerLen {
		return b
	}
	end := headerLen + sh.cellBytes()
	copy(b[end:], sealOf(b[headerLen:end]))
	return b
}

// FuzzDecode: the decoders never panic, agree with each other, and what
// they accept re-encodes to the same bytes and works.
func FuzzDecode(f *testing.F) {
	for _, c := range []Config{{Width: 5, Depth: 2, Hash: HashMurmur2}, {Width: 3, Depth: 1, Seed: 4}} {
		s, _ := NewWithConfig(c)
		s.AddN([]byte("a"), 7)
		enc, _ := s.MarshalBinary()
		f.Add(enc)
		f.Add(enc[:len(enc)/2])
		f.Add(append(bytes.Clone(enc), 1))
	}
	f.Add([]byte("PRBL\x01\x07"))
	f.Fuzz(func(t *testing.T, data []byte) {
		check(t, data)
		if fixed := fixCRCs(data); fixed != nil {
			check(t, fixed)
		}
	})
}

func check(t *testing.T, data []byte) {
	var u, r Sketch
	err := u.UnmarshalBinary(data)
	n, rerr := r.ReadFrom(bytes.NewReader(data))
	if err == nil && rerr != nil {
		t.Fatalf("UnmarshalBinary accepts, ReadFrom: %v", rerr)
	}
	if rerr == nil {
		if again, _ := r.MarshalBinary(); !bytes.Equal(again, data[:n]) {
			t.Fatal("ReadFrom result re-encodes differently")
		}
	}
	if err != nil {
		return
	}
	if again, _ := u.MarshalBinary(); !bytes.Equal(again, data) {
		t.Fatal("re-encoding differs")
	}
	before := u.Count([]byte("k"))
	if after := u.AddN([]byte("k"), 1); after < min(before+1, MaxCount) {
		t.Fatalf("estimate %d after %d", after, before)
	}
}
