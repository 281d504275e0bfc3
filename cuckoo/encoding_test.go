package cuckoo

import (
	"bytes"
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

// The documented vectors: 4 buckets of 2 slots, 8-bit fingerprints, max
// kicks 20, expansion 2, default hash; and 2 buckets of 2 slots with 16-bit
// fingerprints, max kicks 500, no expansion, seed 7. Both hold apple,
// banana and cherry.
func vectorFilter8(t testing.TB) *Filter {
	f := mustConfig(t, Config{Buckets: 4, BucketSize: 2, FingerprintBits: 8, MaxKicks: 20, Expansion: 2})
	for _, k := range vectorKeys {
		if err := f.Add([]byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func vectorFilter16(t testing.TB) *Filter {
	f := mustConfig(t, Config{Buckets: 2, BucketSize: 2, FingerprintBits: 16, Seed: 7})
	for _, k := range vectorKeys {
		if err := f.Add([]byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestVectors(t *testing.T) {
	for name, f := range map[string]*Filter{"cuckoo-8": vectorFilter8(t), "cuckoo-16": vectorFilter16(t)} {
		enc, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		want := docVector(t, name)
		if !bytes.Equal(enc, want) {
			t.Errorf("%s: encoding differs from docs/FORMATS.md:\n got % x\nwant % x", name, enc, want)
		}
		g, rest, err := Decode(want)
		if err != nil || len(rest) != 0 || !g.equal(f) {
			t.Errorf("%s: decoding the vector: %v, %d bytes left", name, err, len(rest))
		}
		for _, k := range vectorKeys {
			if !g.Test([]byte(k)) {
				t.Errorf("%s: %q missing after decode", name, k)
			}
		}
	}
}

func TestCRC32CCheckValue(t *testing.T) {
	if got := crc32.Checksum([]byte("123456789"), castagnoli); got != 0xE3069283 {
		t.Fatalf("CRC-32C check value %#x", got)
	}
}

// encodings returns encodings of assorted filters: both widths, several
// bucket sizes, several sub-filters, counters set, a budget recorded.
func encodings(t testing.TB) [][]byte {
	var out [][]byte
	add := func(f *Filter) {
		b, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	add(vectorFilter8(t))
	add(vectorFilter16(t))
	f := mustConfig(t, Config{Buckets: 2, BucketSize: 3, FingerprintBits: 8, MaxKicks: 3, Expansion: 2, MaxBytes: 4096, HashID: hashMurmur64A})
	g := mustConfig(t, Config{Buckets: 4, BucketSize: 1, FingerprintBits: 16, MaxKicks: 9, Expansion: 1, Seed: 99})
	rng := splitmix64(3)
	for i := 0; i < 60; i++ {
		if err := f.AddHash(rng.next()); err != nil {
			t.Fatal(err)
		}
		if err := g.AddHash(rng.next()); err != nil {
			t.Fatal(err)
		}
	}
	f.RemoveHash(12)
	g.RemoveHash(rng.next())
	add(f)
	add(g)
	return out
}

func TestRoundTripAndRest(t *testing.T) {
	for i, enc := range encodings(t) {
		f, rest, err := Decode(append(bytes.Clone(enc), 9, 9))
		if err != nil || !bytes.Equal(rest, []byte{9, 9}) {
			t.Fatalf("%d: %v, rest %x", i, err, rest)
		}
		again, _ := f.MarshalBinary()
		if !bytes.Equal(again, enc) || uint64(len(enc)) != f.EncodedSize() {
			t.Fatalf("%d: re-encoding differs", i)
		}
		app, _ := f.AppendBinary([]byte("xy"))
		if !bytes.Equal(app[2:], enc) {
			t.Fatalf("%d: AppendBinary differs", i)
		}
		var w bytes.Buffer
		if n, err := f.WriteTo(&w); err != nil || n != int64(len(enc)) || !bytes.Equal(w.Bytes(), enc) {
			t.Fatalf("%d: WriteTo %d %v", i, n, err)
		}
		var g Filter
		r := bytes.NewReader(append(bytes.Clone(enc), 1, 2, 3))
		if n, err := g.ReadFrom(r); err != nil || n != int64(len(enc)) || r.Len() != 3 || !g.equal(f) {
			t.Fatalf("%d: ReadFrom %d %v", i, n, err)
		}
		var u Filter
		if err := u.UnmarshalBinary(enc); err != nil || !u.equal(f) {
			t.Fatalf("%d: UnmarshalBinary %v", i, err)
		}
		if err := u.UnmarshalBinary(append(bytes.Clone(enc), 0)); !errors.Is(err, ErrFormat) {
			t.Fatalf("%d: trailing byte: %v", i, err)
		}
		if f.Stats() != u.Stats() || f.Config() != u.Config() {
			t.Fatalf("%d: stats or config differ after decode", i)
		}
	}
	// The big-table path of WriteTo/ReadFrom (several 64 KiB pieces).
	big := mustConfig(t, Config{Buckets: 1 << 16, FingerprintBits: 16, BucketSize: 2})
	for i := uint64(0); i < 50000; i++ {
		big.AddHash(i * 0x9e3779b97f4a7c15)
	}
	var w bytes.Buffer
	big.WriteTo(&w)
	enc, _ := big.MarshalBinary()
	var back Filter
	if !bytes.Equal(w.Bytes(), enc) {
		t.Fatal("WriteTo differs on a big filter")
	}
	if _, err := back.ReadFrom(&w); err != nil || !back.equal(big) {
		t.Fatal("ReadFrom of a big filter", err)
	}
}

func TestTruncated(t *testing.T) {
	for _, enc := range encodings(t) {
		for n := 0; n < len(enc); n++ {
			_, _, err := Decode(enc[:n])
			if n >= 6 && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("Decode of %d/%d bytes: %v", n, len(enc), err)
			}
			if err == nil {
				t.Fatalf("Decode of %d/%d bytes succeeded", n, len(enc))
			}
			_, err = new(Filter).ReadFrom(bytes.NewReader(enc[:n]))
			if n == 0 && err != io.EOF {
				t.Fatalf("ReadFrom of nothing: %v", err)
			}
			if n >= 6 && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("ReadFrom of %d/%d bytes: %v", n, len(enc), err)
			}
		}
	}
}

func TestEveryFlippedByte(t *testing.T) {
	for _, enc := range encodings(t)[:2] {
		for i := range enc {
			for _, bit := range []byte{1, 0x80} {
				bad := bytes.Clone(enc)
				bad[i] ^= bit
				_, _, err := Decode(bad)
				switch {
				case err == nil:
					t.Fatalf("flipping bit %#x of byte %d went unnoticed", bit, i)
				case i < 6 && !errors.Is(err, ErrFormat) && !errors.Is(err, ErrVersion):
					t.Fatalf("flipping byte %d (magic/version/kind): %v, want ErrFormat or ErrVersion", i, err)
				case i >= 6 && !errors.Is(err, ErrChecksum):
					t.Fatalf("flipping byte %d: %v, want ErrChecksum", i, err)
				}
				if _, err := new(Filter).ReadFrom(bytes.NewReader(bad)); err == nil {
					t.Fatalf("ReadFrom: flipping bit %#x of byte %d went unnoticed", bit, i)
				}
			}
		}
	}
}

// reseal recomputes the header CRC of b.
func reseal(b []byte) []byte {
	binary.LittleEndian.PutUint32(b[68:], crc32.Checksum(b[:68], castagnoli))
	return b
}

func TestDecodeErrors(t *testing.T) {
	enc := encodings(t)[2] // 8-bit, 2 buckets ×3, expansion 2, several sub-filters
	le := binary.LittleEndian
	for _, v := range []struct {
		name string
		edit func(b []byte)
		want error
	}{
		{"magic", func(b []byte) { b[0] = 'X' }, ErrFormat},
		{"version", func(b []byte) { b[4] = 2 }, ErrVersion},
		{"kind", func(b []byte) { b[5] = 1 }, ErrFormat},
		{"header CRC", func(b []byte) { b[68] ^= 1 }, ErrChecksum},
		{"table CRC", func(b []byte) { b[len(b)-1] ^= 1 }, ErrChecksum},
		{"hash ID 0", func(b []byte) { le.PutUint16(b[6:], 0); reseal(b) }, ErrFormat},
		{"fp bits", func(b []byte) { b[8] = 12; reseal(b) }, ErrFormat},
		{"bucket size 0", func(b []byte) { b[9] = 0; reseal(b) }, ErrFormat},
		{"kicks 0", func(b []byte) { le.PutUint16(b[10:], 0); reseal(b) }, ErrFormat},
		{"flags", func(b []byte) { b[12] = 1; reseal(b) }, ErrFormat},
		{"reserved", func(b []byte) { b[64] = 1; reseal(b) }, ErrFormat},
		{"buckets 0", func(b []byte) { le.PutUint64(b[24:], 0); reseal(b) }, ErrFormat},
		{"buckets not 2^k", func(b []byte) { le.PutUint64(b[24:], 3); reseal(b) }, ErrFormat},
		{"buckets 2^48", func(b []byte) { le.PutUint64(b[24:], 1<<48); reseal(b) }, ErrFormat},
		{"expansion 3", func(b []byte) { le.PutUint32(b[32:], 3); reseal(b) }, ErrFormat},
		{"expansion 65536", func(b []byte) { le.PutUint32(b[32:], 65536); reseal(b) }, ErrFormat},
		{"expansion 0 with several", func(b []byte) { le.PutUint32(b[32:], 0); reseal(b) }, ErrFormat},
		{"no sub-filter", func(b []byte) { le.PutUint32(b[36:], 0); reseal(b) }, ErrFormat},
		{"too many sub-filters", func(b []byte) { le.PutUint32(b[36:], MaxSubFilters+1); reseal(b) }, ErrFormat},
		{"over max bytes", func(b []byte) { le.PutUint64(b[56:], 10); reseal(b) }, ErrFormat},
		{"sizes overflow", func(b []byte) { le.PutUint32(b[32:], 32768); le.PutUint32(b[36:], 40); reseal(b) }, ErrFormat},
		{"one more sub-filter", func(b []byte) { le.PutUint32(b[36:], le.Uint32(b[36:])+1); reseal(b) }, io.ErrUnexpectedEOF},
	} {
		bad := bytes.Clone(enc)
		v.edit(bad)
		if _, _, err := Decode(bad); !errors.Is(err, v.want) {
			t.Errorf("%s: Decode %v, want %v", v.name, err, v.want)
		}
		if _, err := new(Filter).ReadFrom(bytes.NewReader(bad)); !errors.Is(err, v.want) {
			t.Errorf("%s: ReadFrom %v, want %v", v.name, err, v.want)
		}
	}
}

// TestDecodeNeverOverallocates declares the largest tables the format
// allows in otherwise valid headers and checks that decoding the short
// input fails without allocating more than the input could back.
func TestDecodeNeverOverallocates(t *testing.T) {
	hdr := bytes.Clone(encodings(t)[0][:headerLen])
	le := binary.LittleEndian
	le.PutUint64(hdr[24:], 1<<36) // 2^36 buckets ×2 slots = 128 GiB
	le.PutUint32(hdr[36:], 1)     // one sub-filter
	le.PutUint64(hdr[56:], 0)     // no budget recorded
	data := append(reseal(hdr), make([]byte, 4096)...)
	for name, fn := range map[string]func() error{
		"Decode":          func() error { _, _, err := Decode(data); return err },
		"ReadFrom":        func() error { _, err := new(Filter).ReadFrom(bytes.NewReader(data)); return err },
		"UnmarshalBinary": func() error { return new(Filter).UnmarshalBinary(data) },
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
	f := vectorFilter8(t)
	before, _ := f.MarshalBinary()
	bad := bytes.Clone(before)
	bad[len(bad)-2] ^= 1
	if err := f.UnmarshalBinary(bad); err == nil {
		t.Fatal("corrupt input accepted")
	}
	if _, err := f.ReadFrom(bytes.NewReader(bad)); err == nil {
		t.Fatal("corrupt input accepted by ReadFrom")
	}
	if after, _ := f.MarshalBinary(); !bytes.Equal(after, before) {
		t.Fatal("failed decode changed the filter")
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
	f := mustConfig(t, Config{Buckets: 1 << 14, BucketSize: 4, FingerprintBits: 8}) // header, one 64 KiB piece, CRC
	for i := range 3 {
		if _, err := f.WriteTo(&failWriter{after: i}); err == nil || err.Error() != "disk full" {
			t.Errorf("WriteTo failing after %d writes: %v", i, err)
		}
	}
}

func TestDecodedFilterWorks(t *testing.T) {
	f := mustConfig(t, Config{Capacity: 200, Expansion: 2, MaxKicks: 30})
	for i := 0; i < 1000; i++ {
		f.AddHash(uint64(i) * 0x9e3779b97f4a7c15)
	}
	enc, _ := f.MarshalBinary()
	g, _, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		h := uint64(i) * 0x9e3779b97f4a7c15
		if !g.TestHash(h) {
			t.Fatalf("%d lost", i)
		}
		if !g.RemoveHash(h) {
			t.Fatalf("%d not deletable", i)
		}
	}
	if g.Stats().SetBits != 0 || g.Stats().N != 0 {
		t.Fatalf("%+v", g.Stats())
	}
	if math.IsNaN(g.Stats().FPR) {
		t.Fatal("NaN")
	}
}
