package tdigest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/probly/probly/internal/binfmt"
)

func sample(t testing.TB) *Digest {
	d := mustNew(t, 50)
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		d.Add(r.NormFloat64())
	}
	return d // 1000 values at C = 50: centroids and a buffer
}

// equalDigest compares two digests' full state bit for bit.
func equalDigest(a, b *Digest) bool {
	ea, _ := a.MarshalBinary()
	eb, _ := b.MarshalBinary()
	return bytes.Equal(ea, eb) // the header holds every counter
}

func TestEncodingRoundTrip(t *testing.T) {
	for _, d := range []*Digest{mustNew(t, 100), mustNew(t, 100, 5), sample(t), mustNew(t, 1000, seq(1, 10, 1)...)} {
		enc, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if len(enc) != hdrLen+NodeBytes*len(d.nodes)+4 {
			t.Fatalf("length %d", len(enc))
		}
		var x Digest
		if err := x.UnmarshalBinary(enc); err != nil {
			t.Fatal(err)
		}
		if !equalDigest(d, &x) {
			t.Fatalf("round trip %v vs %v", d, &x)
		}
		var buf bytes.Buffer
		n, err := d.WriteTo(&buf)
		if err != nil || n != int64(len(enc)) || !bytes.Equal(buf.Bytes(), enc) {
			t.Fatalf("WriteTo %d %v", n, err)
		}
		var y Digest
		if m, err := y.ReadFrom(&buf); err != nil || m != n || !equalDigest(d, &y) {
			t.Fatalf("ReadFrom %d %v", m, err)
		}
		// The decoded digest evolves exactly as the original.
		a, b := d.Clone(), &x
		for i := range 3000 {
			a.Add(float64(i % 17))
			b.Add(float64(i % 17))
		}
		if a.Quantile(0.3) != b.Quantile(0.3) || !equalDigest(a, b) {
			t.Fatal("decoded digest diverges")
		}
	}
}

func TestEncodingErrors(t *testing.T) {
	enc, _ := sample(t).MarshalBinary()
	reseal := func(b []byte) []byte {
		binary.LittleEndian.PutUint32(b[64:], binfmt.CRC(b[:64]))
		n := len(b) - 4
		binary.LittleEndian.PutUint32(b[n:], binfmt.CRC(b[hdrLen:n]))
		return b
	}
	mod := func(f func(b []byte)) []byte {
		b := bytes.Clone(enc)
		f(b)
		return reseal(b)
	}
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, io.ErrUnexpectedEOF},
		{"short header", enc[:30], io.ErrUnexpectedEOF},
		{"short body", enc[:len(enc)-5], io.ErrUnexpectedEOF},
		{"trailing", append(bytes.Clone(enc), 0), ErrFormat},
		{"magic", mod(func(b []byte) { b[0] = 'X' }), ErrFormat},
		{"version", mod(func(b []byte) { b[4] = 2 }), ErrVersion},
		{"kind", mod(func(b []byte) { b[5] = 1 }), ErrFormat},
		{"header crc", func() []byte { b := bytes.Clone(enc); b[10] ^= 1; return b }(), ErrChecksum},
		{"body crc", func() []byte { b := bytes.Clone(enc); b[hdrLen] ^= 1; return b }(), ErrChecksum},
		{"compression 0", mod(func(b []byte) { binary.LittleEndian.PutUint32(b[8:], 0) }), ErrFormat},
		{"compression huge", mod(func(b []byte) { binary.LittleEndian.PutUint32(b[8:], MaxCompression+1) }), ErrFormat},
		{"too many nodes", mod(func(b []byte) { binary.LittleEndian.PutUint32(b[12:], 1<<30) }), ErrFormat},
		{"reserved", mod(func(b []byte) { b[6] = 1 }), ErrFormat},
		{"weight without nodes", mod(func(b []byte) { binary.LittleEndian.PutUint64(b[48:], 0) }), ErrFormat},
		{"negative weight", mod(func(b []byte) { binary.LittleEndian.PutUint64(b[56:], 1<<63) }), ErrFormat},
		{"nan mean", mod(func(b []byte) { binary.LittleEndian.PutUint64(b[hdrLen:], math.Float64bits(math.NaN())) }), ErrFormat},
		{"zero weight", mod(func(b []byte) { binary.LittleEndian.PutUint64(b[hdrLen+8:], 0) }), ErrFormat},
		{"min > max", mod(func(b []byte) { binary.LittleEndian.PutUint64(b[24:], math.Float64bits(1e300)) }), ErrFormat},
	}
	for _, c := range cases {
		d := sample(t)
		before, _ := d.MarshalBinary()
		err := d.UnmarshalBinary(c.data)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if after, _ := d.MarshalBinary(); !bytes.Equal(before, after) {
			t.Errorf("%s: the receiver changed on error", c.name)
		}
		var x Digest
		if _, err := x.ReadFrom(bytes.NewReader(c.data)); err == nil && c.name != "trailing" {
			t.Errorf("%s: ReadFrom accepted it", c.name)
		}
	}
}

// FuzzUnmarshal: any input is rejected with an error or decodes to a
// digest whose encoding is the input and on which every query runs.
func FuzzUnmarshal(f *testing.F) {
	for _, d := range []*Digest{mustNew(f, 100), mustNew(f, 100, 5), mustNew(f, 20, seq(1, 500, 1)...)} {
		enc, _ := d.MarshalBinary()
		f.Add(enc)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Digest
		if err := d.UnmarshalBinary(data); err != nil {
			return
		}
		enc, _ := d.MarshalBinary()
		if !bytes.Equal(enc, data) {
			t.Fatal("re-encoding differs")
		}
		var r Digest
		if _, err := r.ReadFrom(bytes.NewReader(data)); err != nil {
			t.Fatalf("ReadFrom rejects what UnmarshalBinary accepts: %v", err)
		}
		d.Quantiles(nil, 0, 0.5, 1)
		d.CDF(0)
		d.Rank(1)
		d.ByRank(1)
		d.TrimmedMean(0.1, 0.9)
		d.Add(1)
	})
}
