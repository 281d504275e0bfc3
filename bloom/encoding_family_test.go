package bloom

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"errors"
	"github.com/probly/probly/internal/binfmt"
	"hash/crc32"
	"io"
	"runtime"
	"slices"
	"testing"
)

var (
	_ encoding.BinaryMarshaler   = (*SBBF)(nil)
	_ encoding.BinaryUnmarshaler = (*SBBF)(nil)
	_ encoding.BinaryAppender    = (*SBBF)(nil)
	_ io.WriterTo                = (*SBBF)(nil)
	_ io.ReaderFrom              = (*SBBF)(nil)
	_ encoding.BinaryMarshaler   = (*Counting)(nil)
	_ encoding.BinaryUnmarshaler = (*Counting)(nil)
	_ encoding.BinaryAppender    = (*Counting)(nil)
	_ io.WriterTo                = (*Counting)(nil)
	_ io.ReaderFrom              = (*Counting)(nil)
	_ encoding.BinaryMarshaler   = (*Stable)(nil)
	_ encoding.BinaryUnmarshaler = (*Stable)(nil)
	_ encoding.BinaryAppender    = (*Stable)(nil)
	_ io.WriterTo                = (*Stable)(nil)
	_ io.ReaderFrom              = (*Stable)(nil)
)

// Test vectors, also printed in docs/FORMATS.md.
const (
	vectorSBBF = `
50 52 42 4c 01 06 05 00 08 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00
03 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00
9a 99 99 99 99 99 b9 3f 00 00 00 00 97 8c f8 f8
04 20 01 00 00 10 02 20 00 20 80 04 00 40 05 00
00 10 02 02 80 08 00 04 00 01 00 a0 40 04 00 20
64 f9 7d e0`

	vectorCounting = `
50 52 42 4c 01 04 01 00 03 00 00 00 04 00 00 00
00 00 00 00 00 00 00 00 0f 00 00 00 00 00 00 00
04 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00
9a 99 99 99 99 99 b9 3f 00 00 00 00 06 28 ea 98
02 00 30 11 22 00 00 01 01 d4 b2 76`

	vectorStable = `
50 52 42 4c 01 05 01 00 02 00 00 00 03 00 00 00
00 00 00 00 00 00 00 00 14 00 00 00 00 00 00 00
04 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00
40 74 df 7d 2c 6d a6 da 00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00 00 00 00 00 19 72 01 8a
06 80 03 00 f0 df 00 00 55 ec 99 49`
)

func vectorSBBFFilter(t testing.TB) *SBBF {
	s := mustSBBF(t, 3, 0.1)
	for _, k := range vectorKeys {
		s.addString(k)
	}
	return s
}

func vectorCountingFilter(t testing.TB) *Counting {
	c := mustCounting(t, 3, 0.1)
	for _, k := range append(vectorKeys, "apple") {
		c.addString(k)
	}
	return c
}

func vectorStableFilter(t testing.TB) *Stable {
	s, err := NewStableWithConfig(StableConfig{M: 20, CellBits: 3, K: 2, Decrements: 4})
	if err != nil {
		t.Fatal(err)
	}
	s.setRandSeed(1)
	for _, k := range vectorKeys {
		s.addString(k)
	}
	return s
}

func TestFamilyVectors(t *testing.T) {
	s := vectorSBBFFilter(t)
	if s.numBlocks() != 1 || s.items() != 3 {
		t.Fatalf("SBBF vector: blocks %d n %d", s.numBlocks(), s.items())
	}
	c := vectorCountingFilter(t)
	if c.numBits() != 15 || c.numHashes() != 3 || c.items() != 4 || c.words[0] != 0x0100002211300002 || c.CountHash(Hash([]byte("apple"))) != 2 {
		t.Fatalf("counting vector: m %d k %d n %d word %#x", c.numBits(), c.numHashes(), c.items(), c.words[0])
	}
	st := vectorStableFilter(t)
	var cells []uint64
	for x := uint64(0); x < st.numBits(); x++ {
		cells = append(cells, st.cell(x))
	}
	if st.words[0] != 0x0000dff000038006 || fmtCells(cells) != "6 0 0 0 0 7 0 0 0 0 0 0 7 7 7 6 0 0 0 0" {
		t.Fatalf("stable vector: word %#x cells %v", st.words[0], cells)
	}
	for _, v := range []struct {
		name, hex string
		enc       []byte
		decode    func([]byte) (any, []byte, error)
		equal     func(any) bool
	}{
		{"bloom-sbbf", vectorSBBF, mustMarshal(t, s),
			func(b []byte) (any, []byte, error) { return DecodeSBBF(b) },
			func(g any) bool { return g.(*SBBF).equal(s) }},
		{"bloom-counting", vectorCounting, mustMarshal(t, c),
			func(b []byte) (any, []byte, error) { return DecodeCounting(b) },
			func(g any) bool { return g.(*Counting).equal(c) }},
		{"bloom-stable", vectorStable, mustMarshal(t, st),
			func(b []byte) (any, []byte, error) { return DecodeStable(b) },
			func(g any) bool { return g.(*Stable).equal(st) }},
	} {
		want := unhex(t, v.hex)
		if doc := docVector(t, v.name); !bytes.Equal(doc, want) {
			t.Errorf("%s: docs/FORMATS.md vector differs from the test's", v.name)
		}
		if !bytes.Equal(v.enc, want) {
			t.Errorf("%s: encoding differs from the vector:\n%x", v.name, v.enc)
		}
		g, rest, err := v.decode(want)
		if err != nil || len(rest) != 0 || !v.equal(g) {
			t.Errorf("%s: decoding the vector: %v", v.name, err)
		}
	}
	// The SBBF body is the Parquet bitset, and the keys are present.
	if !bytes.Equal(unhex(t, vectorSBBF)[64:96], s.ParquetBitset()) {
		t.Error("SBBF vector body is not the Parquet bitset")
	}
	for _, k := range vectorKeys {
		if !s.testString(k) || !c.testString(k) || !st.testString(k) {
			t.Errorf("vector filters lost %q", k)
		}
	}
}

func fmtCells(c []uint64) string {
	var b []byte
	for i, v := range c {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, byte('0'+v))
	}
	return string(b)
}

func mustMarshal(t testing.TB, m encoding.BinaryMarshaler) []byte {
	t.Helper()
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// familyCodec is one decoder of the family, in all its forms.
type familyCodec struct {
	kind   Kind
	decode func([]byte) (encoding.BinaryMarshaler, []byte, error)
	read   func(io.Reader) (encoding.BinaryMarshaler, int64, error)
	unmar  func([]byte) error
}

var familyCodecs = []familyCodec{
	{KindSBBF,
		func(b []byte) (encoding.BinaryMarshaler, []byte, error) { return nilIfErr(DecodeSBBF(b)) },
		func(r io.Reader) (encoding.BinaryMarshaler, int64, error) {
			s := new(SBBF)
			n, err := s.ReadFrom(r)
			return s, n, err
		},
		func(b []byte) error { return new(SBBF).UnmarshalBinary(b) }},
	{KindCounting,
		func(b []byte) (encoding.BinaryMarshaler, []byte, error) { return nilIfErr(DecodeCounting(b)) },
		func(r io.Reader) (encoding.BinaryMarshaler, int64, error) {
			c := new(Counting)
			n, err := c.ReadFrom(r)
			return c, n, err
		},
		func(b []byte) error { return new(Counting).UnmarshalBinary(b) }},
	{KindStable,
		func(b []byte) (encoding.BinaryMarshaler, []byte, error) { return nilIfErr(DecodeStable(b)) },
		func(r io.Reader) (encoding.BinaryMarshaler, int64, error) {
			s := new(Stable)
			n, err := s.ReadFrom(r)
			return s, n, err
		},
		func(b []byte) error { return new(Stable).UnmarshalBinary(b) }},
}

func nilIfErr[T encoding.BinaryMarshaler](v T, rest []byte, err error) (encoding.BinaryMarshaler, []byte, error) {
	if err != nil {
		return nil, nil, err
	}
	return v, rest, nil
}

// familyEncodings returns encodings of filters of every new kind with
// various shapes and contents, by kind.
func familyEncodings(t testing.TB) map[Kind][][]byte {
	out := map[Kind][][]byte{}
	var buf []byte
	for _, n := range []uint64{1, 100, 3000} {
		s := mustSBBF(t, n, 0.01)
		s.setHashSeed(n)
		c := mustCounting(t, n, 0.05)
		st := mustStable(t, 20+n, uint8(1+n%8), 0.02)
		st.setRandSeed(n)
		for i := uint64(0); i < n; i++ {
			buf = userKey(buf, i)
			s.Add(buf)
			c.Add(buf)
			c.Add(buf)
			st.Add(buf)
		}
		out[KindSBBF] = append(out[KindSBBF], mustMarshal(t, s))
		out[KindCounting] = append(out[KindCounting], mustMarshal(t, c))
		out[KindStable] = append(out[KindStable], mustMarshal(t, st))
	}
	for d := uint8(1); d <= 8; d++ {
		st, _ := NewStableWithConfig(StableConfig{M: 97, CellBits: d, K: 3, Decrements: 5})
		st.setRandSeed(uint64(d))
		for i := uint64(0); i < 50; i++ {
			st.Add(counterKey(buf, i))
		}
		out[KindStable] = append(out[KindStable], mustMarshal(t, st))
	}
	return out
}

func TestFamilyRoundTrip(t *testing.T) {
	encs := familyEncodings(t)
	for _, codec := range familyCodecs {
		for _, enc := range encs[codec.kind] {
			if k, err := binfmt.PeekKind(enc); err != nil || k != codec.kind {
				t.Fatalf("PeekKind %v %v, want %v", k, err, codec.kind)
			}
			// Slice decoder with trailing bytes, re-encoding, AppendBinary.
			g, rest, err := codec.decode(append(bytes.Clone(enc), "tail"...))
			if err != nil || string(rest) != "tail" {
				t.Fatalf("%v: decode: %v, rest %q", codec.kind, err, rest)
			}
			if re := mustMarshal(t, g); !bytes.Equal(re, enc) {
				t.Fatalf("%v: re-encoding differs", codec.kind)
			}
			if ab, _ := g.(encoding.BinaryAppender).AppendBinary([]byte("pre")); !bytes.Equal(ab[3:], enc) || string(ab[:3]) != "pre" {
				t.Fatalf("%v: AppendBinary", codec.kind)
			}
			// Stream: WriteTo then ReadFrom, reading exactly the encoding.
			var w bytes.Buffer
			if n, err := g.(io.WriterTo).WriteTo(&w); err != nil || n != int64(len(enc)) || !bytes.Equal(w.Bytes(), enc) {
				t.Fatalf("%v: WriteTo %d %v", codec.kind, n, err)
			}
			w.WriteString("tail")
			r, n, err := codec.read(&w)
			if err != nil || n != int64(len(enc)) || w.String() != "tail" || !bytes.Equal(mustMarshal(t, r), enc) {
				t.Fatalf("%v: ReadFrom %d %v", codec.kind, n, err)
			}
			if err := codec.unmar(enc); err != nil {
				t.Fatalf("%v: UnmarshalBinary: %v", codec.kind, err)
			}
			if err := codec.unmar(append(bytes.Clone(enc), 0)); !errors.Is(err, ErrFormat) {
				t.Fatalf("%v: trailing byte: %v", codec.kind, err)
			}
			// Every other decoder refuses this kind.
			for _, other := range familyCodecs {
				if other.kind != codec.kind {
					if _, _, err := other.decode(enc); !errors.Is(err, ErrFormat) {
						t.Fatalf("%v decoder accepted %v: %v", other.kind, codec.kind, err)
					}
				}
			}
			if _, _, err := Decode(enc); !errors.Is(err, ErrFormat) {
				t.Fatalf("classic Decode accepted %v", codec.kind)
			}
		}
	}
	// The decoded filters keep working and keep their keys.
	s, _, _ := DecodeSBBF(encs[KindSBBF][2])
	c, _, _ := DecodeCounting(encs[KindCounting][2])
	var buf []byte
	for i := uint64(0); i < 3000; i++ {
		buf = userKey(buf, i)
		if !s.Test(buf) || c.Count(buf) < 2 {
			t.Fatalf("decoded filters lost %q", buf)
		}
	}
	// A decoded stable filter continues exactly like the original.
	a := mustStable(t, 500, 2, 0.01)
	a.setRandSeed(9)
	for i := uint64(0); i < 300; i++ {
		a.Add(userKey(buf, i))
	}
	b, _, err := DecodeStable(mustMarshal(t, a))
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(300); i < 600; i++ {
		a.Add(userKey(buf, i))
		b.Add(userKey(buf, i))
	}
	if !a.equal(b) {
		t.Fatal("decoded stable filter diverges from the original")
	}
}

// TestFamilyTruncatedAndFlipped: every strict prefix of every vector fails
// (io.ErrUnexpectedEOF once the prefix is recognizable, io.EOF for the
// stream reader on empty input), and so does every single flipped bit, in
// both the slice and the stream decoder.
func TestFamilyTruncatedAndFlipped(t *testing.T) {
	vectors := map[Kind][]byte{
		KindSBBF:     unhex(t, vectorSBBF),
		KindCounting: unhex(t, vectorCounting),
		KindStable:   unhex(t, vectorStable),
	}
	for _, codec := range familyCodecs {
		enc := vectors[codec.kind]
		for n := 0; n < len(enc); n++ {
			_, _, err := codec.decode(enc[:n])
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("%v: prefix of %d bytes: %v", codec.kind, n, err)
			}
			_, _, err = codec.read(bytes.NewReader(enc[:n]))
			if n == 0 && err != io.EOF || n > 0 && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("%v: ReadFrom of a %d-byte prefix: %v", codec.kind, n, err)
			}
		}
		for i := range enc {
			for bit := 0; bit < 8; bit++ {
				bad := bytes.Clone(enc)
				bad[i] ^= 1 << bit
				if _, _, err := codec.decode(bad); err == nil {
					t.Fatalf("%v: flipping bit %d of byte %d went unnoticed", codec.kind, bit, i)
				}
				if _, _, err := codec.read(bytes.NewReader(bad)); err == nil {
					t.Fatalf("%v: ReadFrom: flipping bit %d of byte %d went unnoticed", codec.kind, bit, i)
				}
			}
		}
	}
}

// resealFamily recomputes the header and body CRC-32Cs of a family
// encoding, so that a test can reach the validation behind them.
func resealFamily(b []byte) []byte {
	if len(b) < 6 {
		return b
	}
	var hl int
	var nw uint64
	le := binary.LittleEndian
	switch b[5] {
	case kindSBBF:
		hl = sbbfHeaderLen
		if len(b) >= hl {
			nw = le.Uint64(b[24:]) * sbbfBlockWords
		}
	case kindCounting:
		hl = countingHeaderLen
		if len(b) >= hl {
			nw = counterWords(le.Uint64(b[24:]))
		}
	case kindStable:
		hl = stableHeaderLen
		if len(b) >= hl {
			if d := le.Uint32(b[12:]); d >= 1 && d <= 64 {
				nw = stableWords(le.Uint64(b[24:]), d)
			}
		}
	default:
		return b
	}
	if len(b) < hl {
		return b
	}
	le.PutUint32(b[hl-4:], crc32.Checksum(b[:hl-4], castagnoli))
	if nw <= uint64(len(b)) && uint64(hl)+8*nw+4 <= uint64(len(b)) {
		end := uint64(hl) + 8*nw
		le.PutUint32(b[end:], crc32.Checksum(b[hl:end], castagnoli))
	}
	return b
}

func TestFamilyDecodeErrors(t *testing.T) {
	type mod struct {
		name string
		kind Kind
		off  int
		val  []byte
		want error
	}
	u32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	u64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	mods := []mod{
		{"sbbf hash ID", KindSBBF, 6, []byte{1, 0}, ErrFormat},
		{"sbbf k", KindSBBF, 8, u32(7), ErrFormat},
		{"sbbf flags", KindSBBF, 12, u32(1), ErrFormat},
		{"sbbf blocks 0", KindSBBF, 24, u64(0), ErrFormat},
		{"sbbf blocks huge", KindSBBF, 24, u64(MaxSBBFBlocks + 1), ErrFormat},
		{"sbbf blocks 2", KindSBBF, 24, u64(2), io.ErrUnexpectedEOF},
		{"sbbf target p", KindSBBF, 48, u64(0x7ff8000000000001), ErrFormat},
		{"sbbf reserved", KindSBBF, 56, u32(1), ErrFormat},
		{"counting hash 0", KindCounting, 6, []byte{0, 0}, ErrFormat},
		{"counting k 0", KindCounting, 8, u32(0), ErrFormat},
		{"counting width", KindCounting, 12, u32(8), ErrFormat},
		{"counting m 0", KindCounting, 24, u64(0), ErrFormat},
		{"counting m huge", KindCounting, 24, u64(MaxCounters + 1), ErrFormat},
		{"counting m 14 (padding)", KindCounting, 24, u64(14), ErrFormat},
		{"counting m 17", KindCounting, 24, u64(17), io.ErrUnexpectedEOF},
		{"counting target p", KindCounting, 48, u64(0x3ff0000000000000), ErrFormat},
		{"counting reserved", KindCounting, 56, u32(1), ErrFormat},
		{"stable hash 0", KindStable, 6, []byte{0, 0}, ErrFormat},
		{"stable k 0", KindStable, 8, u32(0), ErrFormat},
		{"stable k ≥ m", KindStable, 8, u32(20), ErrFormat},
		{"stable d 0", KindStable, 12, u32(0), ErrFormat},
		{"stable d 9", KindStable, 12, u32(9), ErrFormat},
		{"stable d 2 (padding)", KindStable, 12, u32(2), ErrFormat},
		{"stable m 1", KindStable, 24, u64(1), ErrFormat},
		{"stable m 15 (padding)", KindStable, 24, u64(15), ErrFormat},
		{"stable P 0", KindStable, 32, u64(0), ErrFormat},
		{"stable P > m", KindStable, 32, u64(21), ErrFormat},
		{"stable target p", KindStable, 56, u64(0xbff0000000000000), ErrFormat},
		{"stable reserved", KindStable, 64, u64(1), ErrFormat},
		{"stable reserved 2", KindStable, 72, u32(1), ErrFormat},
	}
	vectors := map[Kind]string{KindSBBF: vectorSBBF, KindCounting: vectorCounting, KindStable: vectorStable}
	for _, m := range mods {
		b := unhex(t, vectors[m.kind])
		copy(b[m.off:], m.val)
		resealFamily(b)
		i := slices.IndexFunc(familyCodecs, func(c familyCodec) bool { return c.kind == m.kind })
		codec := familyCodecs[i]
		if _, _, err := codec.decode(b); !errors.Is(err, m.want) {
			t.Errorf("%s: %v, want %v", m.name, err, m.want)
		}
		if _, _, err := codec.read(bytes.NewReader(b)); !errors.Is(err, m.want) {
			t.Errorf("%s: ReadFrom %v, want %v", m.name, err, m.want)
		}
	}
	// Checksums: header and body.
	for _, codec := range familyCodecs {
		b := unhex(t, vectors[codec.kind])
		b[len(b)-1] ^= 1
		if _, _, err := codec.decode(b); !errors.Is(err, ErrChecksum) {
			t.Errorf("%v body CRC: %v", codec.kind, err)
		}
		b = unhex(t, vectors[codec.kind])
		b[20] ^= 1
		if _, _, err := codec.decode(b); !errors.Is(err, ErrChecksum) {
			t.Errorf("%v header CRC: %v", codec.kind, err)
		}
		b = unhex(t, vectors[codec.kind])
		b[4] = 2
		if _, _, err := codec.decode(b); !errors.Is(err, ErrVersion) {
			t.Errorf("%v version: %v", codec.kind, err)
		}
	}
}

// TestFamilyDecodeNeverOverallocates: headers declaring the largest sizes,
// followed by a few bytes, are refused before any large allocation by the
// slice decoders, and the stream decoders allocate only in proportion to
// the bytes they actually read.
func TestFamilyDecodeNeverOverallocates(t *testing.T) {
	le := binary.LittleEndian
	huge := map[Kind]func([]byte){
		KindSBBF:     func(b []byte) { le.PutUint64(b[24:], MaxSBBFBlocks) },
		KindCounting: func(b []byte) { le.PutUint64(b[24:], MaxCounters) },
		KindStable: func(b []byte) {
			le.PutUint32(b[12:], 1)
			le.PutUint64(b[24:], MaxBits)
			le.PutUint64(b[32:], 4)
		},
	}
	vectors := map[Kind]string{KindSBBF: vectorSBBF, KindCounting: vectorCounting, KindStable: vectorStable}
	for _, codec := range familyCodecs {
		b := unhex(t, vectors[codec.kind])
		huge[codec.kind](b)
		resealFamily(b)
		b = append(b, make([]byte, 1<<20)...) // 1 MiB of body, not the declared 2^37+ bytes
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, _, err1 := codec.decode(b)
		_, _, err2 := codec.read(bytes.NewReader(b))
		runtime.ReadMemStats(&after)
		if !errors.Is(err1, io.ErrUnexpectedEOF) || !errors.Is(err2, io.ErrUnexpectedEOF) {
			t.Errorf("%v: %v / %v, want io.ErrUnexpectedEOF", codec.kind, err1, err2)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 8<<20 {
			t.Errorf("%v: decoding a huge header with 1 MiB of data allocated %d bytes", codec.kind, d)
		}
	}
}

// FuzzDecodeFamily feeds arbitrary bytes to the SBBF, counting, stable and
// Parquet decoders. They must never panic; a successful decode must
// re-encode to exactly the bytes consumed, and the stream decoder must
// agree with the slice decoder. Plain `go test` runs the seed corpus.
func FuzzDecodeFamily(f *testing.F) {
	for _, encs := range familyEncodings(f) {
		for _, enc := range encs {
			f.Add(enc)
			f.Add(enc[:len(enc)/2])
			bad := bytes.Clone(enc)
			bad[len(bad)/2] ^= 0x10
			f.Add(bad)
		}
	}
	for _, v := range []string{vectorSBBF, vectorCounting, vectorStable} {
		f.Add(unhex(f, v))
	}
	pq, _ := vectorSBBFFilter(f).AppendParquet(nil)
	f.Add(pq)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFamily(t, data)
		checkFamily(t, resealFamily(bytes.Clone(data)))
		if s, rest, err := DecodeParquet(data); err == nil {
			used := data[:len(data)-len(rest)]
			if s.sizeBytes() > uint64(len(used)) {
				t.Fatalf("Parquet decoder allocated %d bytes from %d", s.sizeBytes(), len(used))
			}
			s.AddHash(1)
			_ = s.Stats()
		}
	})
}

func checkFamily(t *testing.T, data []byte) {
	for _, codec := range familyCodecs {
		g, rest, err := codec.decode(data)
		if err != nil {
			if _, _, err2 := codec.read(bytes.NewReader(data)); err2 == nil {
				t.Fatalf("%v: ReadFrom accepted what the slice decoder rejected (%v)", codec.kind, err)
			}
			continue
		}
		used := data[:len(data)-len(rest)]
		if enc := mustMarshal(t, g); !bytes.Equal(enc, used) {
			t.Fatalf("%v: re-encoding differs", codec.kind)
		}
		r, n, err := codec.read(bytes.NewReader(data))
		if err != nil || n != int64(len(used)) || !bytes.Equal(mustMarshal(t, r), used) {
			t.Fatalf("%v: ReadFrom disagrees: %d %v", codec.kind, n, err)
		}
		switch g := g.(type) {
		case *SBBF:
			g.AddHash(3)
			g.TestHash(4)
			_ = g.Stats()
		case *Counting:
			g.AddHash(1, 2)
			_ = g.RemoveHash(1, 2)
			_ = g.Stats()
		case *Stable:
			g.AddHash(1, 2)
			g.TestHash(3, 4)
			_ = g.Stats()
		}
	}
}
