package bloom

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to both decoders (classic and scalable,
// slice and stream forms). They must never panic; when a decode succeeds,
// re-encoding must reproduce exactly the bytes it consumed, and the slice
// and stream decoders must agree. Plain `go test` runs only the seed corpus
// (valid encodings and some corruptions of them).
func FuzzDecode(f *testing.F) {
	classic, scalable := encodings(f)
	for _, enc := range append(classic, scalable...) {
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
		checkDecoders(t, data)
		// Also with every checksum made valid, so the fuzzer reaches the
		// validation behind the CRCs.
		if fixed := fixCRCs(data); fixed != nil {
			checkDecoders(t, fixed)
		}
	})
}

// fixCRCs returns a copy of data with the header and bitset CRC-32Cs of a
// classic filter or of a scalable chain and its links recomputed, or nil if
// data does not start with a Bloom-family header.
func fixCRCs(data []byte) []byte {
	if len(data) < filterHeaderLen || string(data[:4]) != magic {
		return nil
	}
	b := bytes.Clone(data)
	off := 0
	if b[5] == kindScalable {
		if len(b) < scalableHeaderLen {
			return nil
		}
		reseal(b)
		off = scalableHeaderLen
	}
	for len(b)-off >= filterHeaderLen && b[off+5] == kindClassic {
		reseal(b[off:])
		m := binary.LittleEndian.Uint64(b[off+24:])
		if m == 0 || m > MaxBits {
			break
		}
		end := uint64(off) + filterHeaderLen + 8*words(m)
		if end+4 > uint64(len(b)) {
			break
		}
		binary.LittleEndian.PutUint32(b[end:], crc32.Checksum(b[off+filterHeaderLen:end], castagnoli))
		off = int(end + 4)
		if data[5] != kindScalable {
			break
		}
	}
	return b
}

func checkDecoders(t *testing.T, data []byte) {
	checkClassic(t, data)
	checkScalable(t, data)
}

func checkClassic(t *testing.T, data []byte) {
	g, rest, err := Decode(data)
	if err != nil {
		if _, err2 := new(Filter).ReadFrom(bytes.NewReader(data)); err2 == nil {
			t.Fatalf("ReadFrom accepted what Decode rejected (%v)", err)
		}
		return
	}
	used := data[:len(data)-len(rest)]
	enc, _ := g.MarshalBinary()
	if !bytes.Equal(enc, used) {
		t.Fatalf("classic re-encoding differs:\n%x\n%x", enc, used)
	}
	var r Filter
	n, err := r.ReadFrom(bytes.NewReader(data))
	if err != nil || n != int64(len(used)) || !r.equal(g) {
		t.Fatalf("ReadFrom disagrees with Decode: %d, %v", n, err)
	}
	g.TestHash(1, 2)
	g.AddHash(3, 4)
	_ = g.Stats()
}

func checkScalable(t *testing.T, data []byte) {
	s, rest, err := DecodeScalable(data)
	if err != nil {
		if _, err2 := new(Scalable).ReadFrom(bytes.NewReader(data)); err2 == nil {
			t.Fatalf("Scalable.ReadFrom accepted what DecodeScalable rejected (%v)", err)
		}
		return
	}
	used := data[:len(data)-len(rest)]
	enc, _ := s.MarshalBinary()
	if !bytes.Equal(enc, used) {
		t.Fatalf("scalable re-encoding differs:\n%x\n%x", enc, used)
	}
	var r Scalable
	n, err := r.ReadFrom(bytes.NewReader(data))
	if err != nil || n != int64(len(used)) {
		t.Fatalf("Scalable.ReadFrom disagrees with DecodeScalable: %d, %v", n, err)
	}
	if enc2, _ := r.MarshalBinary(); !bytes.Equal(enc2, used) {
		t.Fatal("Scalable.ReadFrom result differs")
	}
	s.TestHash(1, 2)
	if limit := s.config().MaxBytes; limit != 0 && limit <= 1<<20 {
		_ = s.AddHash(3, 4) // growth is bounded by MaxBytes; unbounded growth is not the decoder's concern
	}
}
