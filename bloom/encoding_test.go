package bloom

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
)

var (
	_ encoding.BinaryMarshaler   = (*Filter)(nil)
	_ encoding.BinaryUnmarshaler = (*Filter)(nil)
	_ encoding.BinaryAppender    = (*Filter)(nil)
	_ io.WriterTo                = (*Filter)(nil)
	_ io.ReaderFrom              = (*Filter)(nil)
	_ encoding.BinaryMarshaler   = (*Scalable)(nil)
	_ encoding.BinaryUnmarshaler = (*Scalable)(nil)
	_ encoding.BinaryAppender    = (*Scalable)(nil)
	_ io.WriterTo                = (*Scalable)(nil)
	_ io.ReaderFrom              = (*Scalable)(nil)
)

// Test vectors, also printed in docs/FORMATS.md.
const (
	vectorClassic = `
50 52 42 4c 01 01 01 00 03 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00 0f 00 00 00 00 00 00 00
03 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00
9a 99 99 99 99 99 b9 3f 00 00 00 00 36 61 1b 37
e1 43 00 00 00 00 00 00 40 85 a7 24`

	vectorScalable = `
50 52 42 4c 01 02 01 00 02 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00
02 00 00 00 00 00 00 00 9a 99 99 99 99 99 b9 3f
00 00 00 00 00 00 e0 3f 59 f3 f8 c2 1f 6e a5 01
00 00 00 00 00 00 00 00 00 00 00 00 4b 10 01 15
50 52 42 4c 01 01 01 00 05 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00 0d 00 00 00 00 00 00 00
02 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00
9a 99 99 99 99 99 a9 3f 00 00 00 00 16 fa 8a d2
6e 14 00 00 00 00 00 00 af 5f cd 53 50 52 42 4c
01 01 01 00 05 00 00 00 00 00 00 00 00 00 00 00
00 00 00 00 1f 00 00 00 00 00 00 00 01 00 00 00
00 00 00 00 04 00 00 00 00 00 00 00 9a 99 99 99
99 99 99 3f 00 00 00 00 2d 51 4e 92 00 02 08 61
00 00 00 00 50 43 c0 28`
)

var vectorKeys = []string{"apple", "banana", "cherry"}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// docVector extracts the hex block that follows "<!-- test-vector: name -->"
// in docs/FORMATS.md.
func docVector(t *testing.T, name string) []byte {
	t.Helper()
	doc, err := os.ReadFile("../docs/FORMATS.md")
	if err != nil {
		t.Fatalf("reading docs/FORMATS.md: %v", err)
	}
	_, after, ok := strings.Cut(string(doc), "<!-- test-vector: "+name+" -->")
	if !ok {
		t.Fatalf("docs/FORMATS.md has no test vector %q", name)
	}
	parts := strings.SplitN(after, "```", 3)
	if len(parts) < 3 {
		t.Fatalf("test vector %q is not followed by a code block", name)
	}
	return unhex(t, parts[1])
}

func vectorFilter(t *testing.T) *Filter {
	f := mustNew(t, 3, 0.1)
	for _, k := range vectorKeys {
		f.addString(k)
	}
	return f
}

func vectorChain(t *testing.T) *Scalable {
	// The sizing is not encoded; the vector's links are sized by the classic
	// formula (docs/FORMATS.md).
	s := mustScalable(t, ScalableConfig{Capacity: 2, ErrorRate: 0.1, Growth: 2, Sizing: optimalSizing})
	for _, k := range vectorKeys {
		if _, err := s.addString(k); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestCRC32CCheckValue(t *testing.T) {
	if got := crc32.Checksum([]byte("123456789"), castagnoli); got != 0xE3069283 {
		t.Fatalf("CRC-32C check value %#x", got)
	}
}

func TestVectorClassic(t *testing.T) {
	want := unhex(t, vectorClassic)
	if doc := docVector(t, "bloom-classic"); !bytes.Equal(doc, want) {
		t.Fatalf("docs/FORMATS.md vector differs from the test's:\n%x\n%x", doc, want)
	}
	f := vectorFilter(t)
	if f.numBits() != 15 || f.numHashes() != 3 || f.items() != 3 || f.bits[0] != 0x43e1 {
		t.Fatalf("vector filter m=%d k=%d n=%d word=%#x", f.numBits(), f.numHashes(), f.items(), f.bits[0])
	}
	got, _ := f.MarshalBinary()
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding differs from the vector:\n%s", hex.Dump(got))
	}
	g, rest, err := Decode(want)
	if err != nil || len(rest) != 0 || !g.equal(f) || g.capacityN() != 3 || g.targetRate() != 0.1 || g.hashKind() != HashXXH3_128 {
		t.Fatalf("decoding the vector: %v", err)
	}
	for _, k := range vectorKeys {
		if !g.testString(k) {
			t.Fatalf("decoded vector lost %q", k)
		}
	}
}

func TestVectorScalable(t *testing.T) {
	want := unhex(t, vectorScalable)
	if doc := docVector(t, "bloom-scalable"); !bytes.Equal(doc, want) {
		t.Fatalf("docs/FORMATS.md vector differs from the test's")
	}
	s := vectorChain(t)
	got, _ := s.MarshalBinary()
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding differs from the vector:\n%s", hex.Dump(got))
	}
	links := s.linkList()
	if len(links) != 2 || links[0].Filter.numBits() != 13 || links[0].Filter.numHashes() != 5 || links[0].Filter.items() != 2 ||
		links[1].Filter.numBits() != 31 || links[1].Filter.numHashes() != 5 || links[1].Filter.items() != 1 ||
		links[0].ErrorRate != 0.05 || links[1].ErrorRate != 0.025 || links[1].Capacity != 4 {
		t.Fatalf("vector chain differs from the documented one")
	}
	d, rest, err := DecodeScalable(want)
	if err != nil || len(rest) != 0 {
		t.Fatalf("decoding the vector: %v", err)
	}
	again, _ := d.MarshalBinary()
	if !bytes.Equal(again, want) || d.items() != 3 || d.config().Tightening != 0.5 {
		t.Fatal("decoded vector does not re-encode identically")
	}
	for _, k := range vectorKeys {
		if !d.testString(k) {
			t.Fatalf("decoded vector lost %q", k)
		}
	}
}

// encodings returns a set of valid encodings of both kinds, for the
// corruption tests and the fuzz seed corpus.
func encodings(t testing.TB) (classic, scalable [][]byte) {
	add := func(f *Filter) {
		b, _ := f.MarshalBinary()
		classic = append(classic, b)
	}
	f, _ := New(3, 0.1)
	for _, k := range vectorKeys {
		f.addString(k)
	}
	add(f)
	g, _ := NewWithConfig(Config{M: 200, K: 4})
	_ = g.setHash(hashMurmur64A, 0)
	g.AddHash(1, 2)
	add(g)
	h, _ := NewWithConfig(Config{M: 128, K: 2})
	_ = h.setHash(HashXXH3_128, 77)
	add(h)
	addS := func(s *Scalable) {
		b, _ := s.MarshalBinary()
		scalable = append(scalable, b)
	}
	s, _ := NewScalableWithConfig(ScalableConfig{Capacity: 2, ErrorRate: 0.1, Growth: 2})
	for _, k := range vectorKeys {
		_, _ = s.addString(k)
	}
	addS(s)
	s2, _ := NewScalableWithConfig(ScalableConfig{Capacity: 5, ErrorRate: 0.2, MaxBytes: 1000, Seed: 3})
	_, _ = s2.addString("x")
	addS(s2)
	return classic, scalable
}

func TestRoundTripAndRest(t *testing.T) {
	f := mustNew(t, 100_000, 0.01) // > 64 KiB: WriteTo/ReadFrom stream several chunks
	var buf []byte
	for i := uint64(0); i < 50_000; i++ {
		f.Add(userKey(buf, i))
	}
	enc, err := f.MarshalBinary()
	if err != nil || uint64(len(enc)) != f.EncodedSize() {
		t.Fatalf("MarshalBinary: %d bytes, %v", len(enc), err)
	}
	tail := []byte{0xde, 0xad, 0xbe, 0xef}
	g, rest, err := Decode(append(enc, tail...))
	if err != nil || !bytes.Equal(rest, tail) || !g.equal(f) {
		t.Fatalf("Decode with tail: rest=%x err=%v", rest, err)
	}
	var u Filter
	if err := u.UnmarshalBinary(enc); err != nil || !u.equal(f) {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	if err := u.UnmarshalBinary(append(enc, tail...)); !errors.Is(err, ErrFormat) {
		t.Fatalf("UnmarshalBinary with trailing bytes: %v", err)
	}
	if app, _ := f.AppendBinary([]byte("hdr")); !bytes.Equal(app[3:], enc) || string(app[:3]) != "hdr" {
		t.Fatal("AppendBinary")
	}

	s := mustScalable(t, ScalableConfig{Capacity: 1000, ErrorRate: 0.01, Growth: 2, MaxBytes: 1 << 20})
	for i := uint64(0); i < 10_000; i++ {
		_ = s.Add(prefixKey(buf, i))
	}
	senc, _ := s.MarshalBinary()
	if uint64(len(senc)) != s.EncodedSize() {
		t.Fatal("Scalable.EncodedSize")
	}
	d, rest, err := DecodeScalable(append(senc, tail...))
	if err != nil || !bytes.Equal(rest, tail) {
		t.Fatalf("DecodeScalable with tail: %v", err)
	}
	if again, _ := d.MarshalBinary(); !bytes.Equal(again, senc) || d.items() != s.items() || d.sizeBytes() != s.sizeBytes() {
		t.Fatal("scalable round trip differs")
	}
	var us Scalable
	if err := us.UnmarshalBinary(append(senc, tail...)); !errors.Is(err, ErrFormat) {
		t.Fatalf("Scalable.UnmarshalBinary with trailing bytes: %v", err)
	}
	// UnmarshalBinary keeps the receiver's Sizing.
	sizing := func(n uint64, p float64) (uint64, uint32, error) { return 64, 1, nil }
	us.setSizing(sizing)
	if err := us.UnmarshalBinary(senc); err != nil || us.config().Sizing == nil || us.config().Capacity != 1000 {
		t.Fatalf("Scalable.UnmarshalBinary: %v", err)
	}

	// A stream of several objects: WriteTo output equals MarshalBinary, and
	// ReadFrom consumes exactly one object.
	var stream bytes.Buffer
	for _, w := range []io.WriterTo{f, s, f} {
		before := stream.Len()
		n, err := w.WriteTo(&stream)
		if err != nil || int(n) != stream.Len()-before {
			t.Fatalf("WriteTo: %d, %v", n, err)
		}
	}
	if !bytes.Equal(stream.Bytes()[:len(enc)], enc) || !bytes.Equal(stream.Bytes()[len(enc):len(enc)+len(senc)], senc) {
		t.Fatal("WriteTo output differs from MarshalBinary")
	}
	r := bytes.NewReader(stream.Bytes())
	var rf, rf2 Filter
	var rs Scalable
	if n, err := rf.ReadFrom(r); err != nil || n != int64(len(enc)) || !rf.equal(f) {
		t.Fatalf("ReadFrom 1: %d %v", n, err)
	}
	if n, err := rs.ReadFrom(r); err != nil || n != int64(len(senc)) {
		t.Fatalf("ReadFrom 2: %d %v", n, err)
	}
	if again, _ := rs.MarshalBinary(); !bytes.Equal(again, senc) {
		t.Fatal("Scalable.ReadFrom differs")
	}
	if _, err := rf2.ReadFrom(r); err != nil || !rf2.equal(f) {
		t.Fatalf("ReadFrom 3: %v", err)
	}
	if _, err := rf2.ReadFrom(r); err != io.EOF {
		t.Fatalf("ReadFrom at end of stream: %v, want io.EOF", err)
	}
	if _, err := rs.ReadFrom(r); err != io.EOF {
		t.Fatalf("Scalable.ReadFrom at end of stream: %v, want io.EOF", err)
	}
}

// TestTruncated checks that every proper prefix of an encoding is reported as
// io.ErrUnexpectedEOF, by Decode and by ReadFrom (except the empty input,
// which ReadFrom reports as io.EOF).
func TestTruncated(t *testing.T) {
	classic, scalable := encodings(t)
	big, _ := mustNew(t, 100_000, 0.01).MarshalBinary()
	classic = append(classic, big)
	for _, enc := range classic {
		for n := 0; n < len(enc); n++ {
			if n > 200 && n < len(enc)-200 && n%997 != 0 {
				continue
			}
			if _, _, err := Decode(enc[:n]); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("Decode of %d/%d bytes: %v", n, len(enc), err)
			}
			var f Filter
			if err := f.UnmarshalBinary(enc[:n]); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("UnmarshalBinary of %d/%d bytes: %v", n, len(enc), err)
			}
			_, err := f.ReadFrom(bytes.NewReader(enc[:n]))
			if n == 0 && err != io.EOF || n > 0 && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("ReadFrom of %d/%d bytes: %v", n, len(enc), err)
			}
		}
	}
	for _, enc := range scalable {
		for n := 0; n < len(enc); n++ {
			if _, _, err := DecodeScalable(enc[:n]); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("DecodeScalable of %d/%d bytes: %v", n, len(enc), err)
			}
			var s Scalable
			_, err := s.ReadFrom(bytes.NewReader(enc[:n]))
			if n == 0 && err != io.EOF || n > 0 && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("Scalable.ReadFrom of %d/%d bytes: %v", n, len(enc), err)
			}
		}
	}
}

// TestEveryFlippedByte flips each byte of valid encodings (two ways) and
// requires an error (checksum, format or version), never a panic and never a
// successfully decoded filter.
func TestEveryFlippedByte(t *testing.T) {
	classic, scalable := encodings(t)
	for _, enc := range classic {
		for i := range enc {
			for _, x := range []byte{0x01, 0xff} {
				bad := bytes.Clone(enc)
				bad[i] ^= x
				_, _, err := Decode(bad)
				if err == nil {
					t.Fatalf("flipping byte %d by %#x was not detected", i, x)
				}
				checkFlipError(t, i, err)
				if _, err := new(Filter).ReadFrom(bytes.NewReader(bad)); err == nil {
					t.Fatalf("ReadFrom: flipping byte %d was not detected", i)
				}
			}
		}
	}
	for _, enc := range scalable {
		for i := range enc {
			for _, x := range []byte{0x01, 0xff} {
				bad := bytes.Clone(enc)
				bad[i] ^= x
				// Each link is a whole classic encoding with its own magic,
				// version and kind, so ErrFormat/ErrVersion can come from any
				// link's first 6 bytes, not only the container's.
				_, _, err := DecodeScalable(bad)
				if err == nil || !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrFormat) && !errors.Is(err, ErrVersion) {
					t.Fatalf("flipping byte %d by %#x: %v", i, x, err)
				}
				if _, err := new(Scalable).ReadFrom(bytes.NewReader(bad)); err == nil {
					t.Fatalf("Scalable.ReadFrom: flipping byte %d was not detected", i)
				}
			}
		}
	}
}

// checkFlipError: a flipped byte in the magic, version or kind (offsets
// 0 … 5) is ErrFormat or ErrVersion; anywhere after, the CRCs catch it
// first, so it is ErrChecksum.
func checkFlipError(t *testing.T, i int, err error) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("flipping byte %d was not detected", i)
	case i < 6 && !errors.Is(err, ErrFormat) && !errors.Is(err, ErrVersion):
		t.Fatalf("flipping byte %d (magic/version/kind): %v, want ErrFormat or ErrVersion", i, err)
	case i >= 6 && !errors.Is(err, ErrChecksum):
		t.Fatalf("flipping byte %d: %v, want ErrChecksum", i, err)
	}
}

// reseal recomputes the header CRC of a classic (kind 1) or scalable
// (kind 2) header after a test edits it, so validation past the CRC is
// exercised.
func reseal(b []byte) []byte {
	at := 60
	if b[5] == kindScalable {
		at = 76
	}
	binary.LittleEndian.PutUint32(b[at:], crc32.Checksum(b[:at], castagnoli))
	return b
}

func TestDecodeErrors(t *testing.T) {
	classic, scalable := encodings(t)
	c, s := classic[0], scalable[0]
	edit := func(src []byte, fn func(b []byte)) []byte {
		b := bytes.Clone(src)
		fn(b)
		return reseal(b)
	}
	le := binary.LittleEndian
	for name, tc := range map[string]struct {
		data     []byte
		scalable bool
		want     error
	}{
		"magic":               {edit(c, func(b []byte) { b[0] = 'X' }), false, ErrFormat},
		"not probly":          {[]byte("GIF89a..."), false, ErrFormat},
		"short bad magic":     {[]byte("PR?"), false, ErrFormat},
		"version 2":           {edit(c, func(b []byte) { b[4] = 2 }), false, ErrVersion},
		"version 0":           {edit(c, func(b []byte) { b[4] = 0 }), false, ErrVersion},
		"kind":                {edit(c, func(b []byte) { b[5] = 9 }), false, ErrFormat},
		"scalable as classic": {s, false, ErrFormat},
		"classic as scalable": {c, true, ErrFormat},
		"k 0":                 {edit(c, func(b []byte) { le.PutUint32(b[8:], 0) }), false, ErrFormat},
		"k huge":              {edit(c, func(b []byte) { le.PutUint32(b[8:], MaxK+1) }), false, ErrFormat},
		"flags":               {edit(c, func(b []byte) { b[12] = 1 }), false, ErrFormat},
		"m 0":                 {edit(c, func(b []byte) { le.PutUint64(b[24:], 0) }), false, ErrFormat},
		"m over MaxBits":      {edit(c, func(b []byte) { le.PutUint64(b[24:], MaxBits+1) }), false, ErrFormat},
		"m bigger":            {edit(c, func(b []byte) { le.PutUint64(b[24:], 65) }), false, io.ErrUnexpectedEOF},
		"m smaller":           {edit(c, func(b []byte) { le.PutUint64(b[24:], 1) }), false, ErrFormat}, // padding bits set
		"target p NaN":        {edit(c, func(b []byte) { le.PutUint64(b[48:], math.Float64bits(math.NaN())) }), false, ErrFormat},
		"target p 1":          {edit(c, func(b []byte) { le.PutUint64(b[48:], math.Float64bits(1)) }), false, ErrFormat},
		"reserved":            {edit(c, func(b []byte) { b[57] = 1 }), false, ErrFormat},
		"hash 0":              {edit(c, func(b []byte) { le.PutUint16(b[6:], 0) }), false, ErrFormat},
		"header crc":          {func() []byte { b := bytes.Clone(c); b[61] ^= 1; return b }(), false, ErrChecksum},
		"bitset crc":          {func() []byte { b := bytes.Clone(c); b[64] ^= 1; return b }(), false, ErrChecksum},
		"chain 0 links":       {edit(s, func(b []byte) { le.PutUint32(b[8:], 0) }), true, ErrFormat},
		"chain more links":    {edit(s, func(b []byte) { le.PutUint32(b[8:], 3) }), true, io.ErrUnexpectedEOF},
		"chain fewer links":   {edit(s, func(b []byte) { le.PutUint32(b[8:], 1) }), true, nil},
		"chain capacity 0":    {edit(s, func(b []byte) { le.PutUint64(b[24:], 0) }), true, ErrFormat},
		"chain error 0":       {edit(s, func(b []byte) { le.PutUint64(b[40:], 0) }), true, ErrFormat},
		"chain tightening 0":  {edit(s, func(b []byte) { le.PutUint64(b[48:], 0) }), true, ErrFormat},
		"chain tightening 1":  {edit(s, func(b []byte) { le.PutUint64(b[48:], math.Float64bits(1)) }), true, ErrFormat},
		"chain min error 0":   {edit(s, func(b []byte) { le.PutUint64(b[56:], 0) }), true, ErrFormat},
		"chain max bytes":     {edit(s, func(b []byte) { le.PutUint64(b[64:], 9) }), true, ErrFormat},
		"chain hash differs":  {edit(s, func(b []byte) { le.PutUint16(b[6:], 2) }), true, ErrFormat},
		"chain seed differs":  {edit(s, func(b []byte) { b[16] = 1 }), true, ErrFormat},
		"chain flags":         {edit(s, func(b []byte) { b[12] = 1 }), true, ErrFormat},
		"chain reserved":      {edit(s, func(b []byte) { b[72] = 1 }), true, ErrFormat},
		"chain version":       {edit(s, func(b []byte) { b[4] = 7 }), true, ErrVersion},
	} {
		var err error
		var rerr error
		if tc.scalable {
			var rest []byte
			_, rest, err = DecodeScalable(tc.data)
			if tc.want == nil && (err != nil || len(rest) == 0) {
				t.Errorf("%s: err %v, rest %d bytes; want success with a rest", name, err, len(rest))
				continue
			}
			_, rerr = new(Scalable).ReadFrom(bytes.NewReader(tc.data))
		} else {
			_, _, err = Decode(tc.data)
			_, rerr = new(Filter).ReadFrom(bytes.NewReader(tc.data))
		}
		if tc.want == nil {
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: Decode error %v, want %v", name, err, tc.want)
		}
		if !errors.Is(rerr, tc.want) {
			t.Errorf("%s: ReadFrom error %v, want %v", name, rerr, tc.want)
		}
	}
}

// TestDecodeNeverOverallocates declares the largest sizes the format allows
// in otherwise valid headers and checks that decoding the short input fails
// without allocating more than the input could back.
func TestDecodeNeverOverallocates(t *testing.T) {
	classic, scalable := encodings(t)
	hdr := bytes.Clone(classic[0][:filterHeaderLen])
	binary.LittleEndian.PutUint64(hdr[24:], MaxBits) // 128 GiB declared
	binary.LittleEndian.PutUint32(hdr[8:], MaxK)
	reseal(hdr)
	data := append(hdr, make([]byte, 4096)...)
	chain := bytes.Clone(scalable[0])
	binary.LittleEndian.PutUint32(chain[8:], math.MaxUint32) // 4 billion links declared
	reseal(chain)
	for name, fn := range map[string]func() error{
		"Decode":             func() error { _, _, err := Decode(data); return err },
		"ReadFrom":           func() error { _, err := new(Filter).ReadFrom(bytes.NewReader(data)); return err },
		"DecodeScalable":     func() error { _, _, err := DecodeScalable(chain); return err },
		"Scalable.ReadFrom":  func() error { _, err := new(Scalable).ReadFrom(bytes.NewReader(chain)); return err },
		"UnmarshalBinary":    func() error { return new(Filter).UnmarshalBinary(data) },
		"Scalable.Unmarshal": func() error { return new(Scalable).UnmarshalBinary(chain) },
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := fn()
		runtime.ReadMemStats(&after)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: %v, want io.ErrUnexpectedEOF", name, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("%s allocated %d bytes for a %d-byte input", name, alloc, len(data))
		}
	}
}

func TestUnmarshalLeavesStateOnError(t *testing.T) {
	f := vectorFilter(t)
	before, _ := f.MarshalBinary()
	bad := bytes.Clone(before)
	bad[70] ^= 1
	if err := f.UnmarshalBinary(bad); err == nil {
		t.Fatal("corrupt input accepted")
	}
	if _, err := f.ReadFrom(bytes.NewReader(bad)); err == nil {
		t.Fatal("corrupt input accepted by ReadFrom")
	}
	if after, _ := f.MarshalBinary(); !bytes.Equal(after, before) {
		t.Fatal("failed decode changed the filter")
	}
	s := vectorChain(t)
	sb, _ := s.MarshalBinary()
	badS := bytes.Clone(sb)
	badS[len(badS)-1] ^= 1
	if err := s.UnmarshalBinary(badS); err == nil {
		t.Fatal("corrupt chain accepted")
	}
	if _, err := s.ReadFrom(bytes.NewReader(badS)); err == nil {
		t.Fatal("corrupt chain accepted by ReadFrom")
	}
	if after, _ := s.MarshalBinary(); !bytes.Equal(after, sb) {
		t.Fatal("failed decode changed the chain")
	}
}

type failWriter struct{ after int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.after <= 0 {
		return 0, errors.New("disk full")
	}
	w.after--
	return len(p), nil
}

func TestWriteToErrors(t *testing.T) {
	f := mustNew(t, 100_000, 0.01) // header, one 64 KiB chunk, rest + CRC: 3 writes
	for i := range 3 {
		if _, err := f.WriteTo(&failWriter{after: i}); err == nil || err.Error() != "disk full" {
			t.Errorf("WriteTo failing after %d writes: %v", i, err)
		}
	}
	s := vectorChain(t)
	for i := range 4 {
		if _, err := s.WriteTo(&failWriter{after: i}); err == nil {
			t.Errorf("Scalable.WriteTo failing after %d writes: no error", i)
		}
	}
}
