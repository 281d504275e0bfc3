package binfmt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
)

var (
	errF = errors.New("t: format")
	errV = errors.New("t: version")
	errC = errors.New("t: checksum")
	tc   = &Codec{Pkg: "t", Format: errF, Version: errV, Checksum: errC}
)

func TestCRC(t *testing.T) {
	// The CRC-32C check value (RFC 3720 B.4, "123456789").
	if got := CRC([]byte("123456789")); got != 0xE3069283 {
		t.Fatalf("CRC = %08x", got)
	}
	if got := UpdateCRC(CRC([]byte("1234")), []byte("56789")); got != 0xE3069283 {
		t.Fatalf("UpdateCRC = %08x", got)
	}
}

func TestPeekKind(t *testing.T) {
	for k := KindClassic; k <= kindLast; k++ {
		got, err := PeekKind(AppendPrefix(nil, k))
		if err != nil || got != k {
			t.Errorf("PeekKind(%v) = %v, %v", k, got, err)
		}
	}
	for _, c := range []struct {
		data []byte
		want error
	}{
		{nil, io.ErrUnexpectedEOF},
		{[]byte("PRB"), io.ErrUnexpectedEOF},
		{[]byte("PRBL\x01"), io.ErrUnexpectedEOF},
		{[]byte("XRBL\x01\x01"), ErrFormat},
		{[]byte("PRBL\x02\x01"), ErrVersion},
		{[]byte("PRBL\x01\x00"), ErrFormat},
		{[]byte("PRBL\x01\xff"), ErrFormat},
		{append([]byte("PRBL\x01"), byte(kindLast+1)), ErrFormat},
	} {
		if _, err := PeekKind(c.data); !errors.Is(err, c.want) {
			t.Errorf("PeekKind(%q): %v, want %v", c.data, err, c.want)
		}
	}
	names := map[Kind]string{KindClassic: "classic", KindScalable: "scalable", KindCuckoo: "cuckoo",
		KindCounting: "counting", KindStable: "stable", KindSBBF: "sbbf", KindCountMin: "count-min", KindTDigest: "tdigest", 200: "kind#200"}
	for k, s := range names {
		if k.String() != s {
			t.Errorf("Kind(%d).String() = %q, want %q", k, k.String(), s)
		}
	}
}

// frame builds a 16-byte header (prefix, 6 bytes of payload, CRC) and a
// body of words.
func frame(kind Kind, words []uint64) []byte {
	b := AppendPrefix(nil, kind)
	b = append(b, 1, 2, 3, 4, 5, 6)
	b = Seal(b, 0)
	return AppendWords(b, words)
}

func TestHeaderAndBody(t *testing.T) {
	words := []uint64{1, 2, 3, 1 << 63}
	data := frame(KindCounting, words)
	if len(data) != 16+32+4 {
		t.Fatalf("len %d", len(data))
	}
	if err := tc.CheckHeader(data, KindCounting, 16, "x"); err != nil {
		t.Fatal(err)
	}
	got, rest, err := tc.DecodeWords(append(bytes.Clone(data), "tail"...), 16, 4, "x")
	if err != nil || string(rest) != "tail" || len(got) != 4 || got[3] != 1<<63 {
		t.Fatalf("DecodeWords %v %v %q", got, err, rest)
	}
	// WriteWords writes the same bytes as AppendWords.
	var buf bytes.Buffer
	if n, err := WriteWords(&buf, data[:16], words); err != nil || n != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("WriteWords n=%d err=%v", n, err)
	}
	// ReadHeader + ReadWords read exactly the frame.
	r := bytes.NewReader(append(bytes.Clone(data), 'z'))
	hdr := make([]byte, 16)
	n, err := tc.ReadHeader(r, hdr, "x", func(h []byte) error { return tc.CheckHeader(h, KindCounting, 16, "x") })
	if err != nil || n != 16 {
		t.Fatal(n, err)
	}
	w, m, err := tc.ReadWords(r, 4, "x")
	if err != nil || m != 36 || w[2] != 3 || r.Len() != 1 {
		t.Fatalf("ReadWords %v %d %v, %d left", w, m, err, r.Len())
	}
	// Errors: each strict prefix is short or empty, each flipped byte is a
	// format, version or checksum error.
	for i := range data {
		_, _, err := tc.DecodeWords(data[:i], 16, 4, "x")
		if herr := tc.CheckHeader(data[:i], KindCounting, 16, "x"); herr != nil {
			err = herr
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("prefix %d: %v", i, err)
		}
		bad := bytes.Clone(data)
		bad[i] ^= 0x10
		err = tc.CheckHeader(bad, KindCounting, 16, "x")
		if err == nil {
			_, _, err = tc.DecodeWords(bad, 16, 4, "x")
		}
		if !errors.Is(err, errF) && !errors.Is(err, errV) && !errors.Is(err, errC) {
			t.Fatalf("flip %d: %v", i, err)
		}
		if _, err := tc.ReadHeader(bytes.NewReader(data[:i]), make([]byte, 16), "x", func(h []byte) error {
			return tc.CheckHeader(h, KindCounting, 16, "x")
		}); i == 0 && err != io.EOF || i > 0 && i < 16 && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("ReadHeader of %d bytes: %v", i, err)
		}
	}
	if err := tc.CheckHeader(data, KindStable, 16, "x"); !errors.Is(err, errF) {
		t.Fatalf("wrong kind: %v", err)
	}
	if err := tc.Trailing([]byte("x"), "x"); !errors.Is(err, errF) {
		t.Fatalf("Trailing: %v", err)
	}
}

// TestBoundedAllocation: a header that declares far more than the input
// holds allocates nothing (slices) or only what was read (readers).
func TestBoundedAllocation(t *testing.T) {
	data := frame(KindClassic, []uint64{7})
	huge := uint64(1) << 40
	if _, _, err := tc.DecodeWords(data, 16, huge, "x"); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("DecodeWords: %v", err)
	}
	if _, _, err := tc.Body(data, 16, huge*8, "x"); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Body: %v", err)
	}
	r := bytes.NewReader(make([]byte, 1<<20))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, _, err := tc.ReadWords(r, huge, "x"); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("ReadWords: %v", err)
	}
	runtime.ReadMemStats(&after)
	// 1 MiB read: the words grow by doubling, so at most about 4 MiB in all.
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Fatalf("ReadWords of 1 MiB declaring 8 TiB allocated %d bytes", got)
	}
	r.Seek(0, io.SeekStart)
	if _, _, err := tc.ReadBody(r, huge, "x"); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("ReadBody: %v", err)
	}
}

func TestCRCWriter(t *testing.T) {
	var buf bytes.Buffer
	w := &CRCWriter{W: &buf}
	w.Write([]byte("1234"))
	w.Write([]byte("56789"))
	n, err := w.Trailer()
	if err != nil || n != 13 || binary.LittleEndian.Uint32(buf.Bytes()[9:]) != 0xE3069283 {
		t.Fatalf("n=%d err=%v % x", n, err, buf.Bytes())
	}
	body, m, err := tc.ReadBody(bytes.NewReader(buf.Bytes()), 9, "x")
	if err != nil || m != 13 || string(body) != "123456789" {
		t.Fatalf("ReadBody %q %d %v", body, m, err)
	}
}
