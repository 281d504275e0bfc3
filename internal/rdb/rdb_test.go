package rdb

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCRC64CheckValue(t *testing.T) {
	if got := CRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("CRC64 = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
	// Continuing a CRC equals computing it at once.
	if a, b := CRC64(CRC64(0, []byte("1234")), []byte("56789")), CRC64(0, []byte("123456789")); a != b {
		t.Fatalf("split CRC %#x != %#x", a, b)
	}
}

// Payloads redis-server 7.0.15 returned for DUMP (rdbcompression yes).
var redisDumps = []struct{ value, hex string }{
	{"hello", "000568656c6c6f0a006372df766534200a"},
	{"12345", "00c139300a009d94ea2793fc08b9"},
	{"-5", "00c0fb0a0049c4c6f4d7263f68"},
	{"70000", "00c2701101000a0001a408fe953095a5"},
	{strings.Repeat("a", 100), "00c30940640161 61e057000161610a00e8a3b507b06df271"},
	{"abcdefghijklmnopqrstuvwxyz0123456789", "00246162636465666768696a6b6c6d6e6f707172737475767778797a303132333435363738390a00c3d18e5aec8d8f0d"},
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLoadRedisDumps(t *testing.T) {
	for _, d := range redisDumps {
		p := unhex(t, d.hex)
		typ, obj, ver, err := Unframe(p)
		if err != nil {
			t.Fatalf("%q: %v", d.value, err)
		}
		if typ != TypeString || ver != 10 {
			t.Fatalf("%q: type %d version %d", d.value, typ, ver)
		}
		s, err := LoadString(obj, 1<<20)
		if err != nil || string(s) != d.value {
			t.Fatalf("%q: got %q, %v", d.value, s, err)
		}
	}
}

func TestDumpStringMatchesRedisWhereDeterministic(t *testing.T) {
	// Raw and integer encodings are fully determined; LZF output may
	// differ from Redis's compressor but must round-trip.
	for _, d := range redisDumps {
		got := DumpString([]byte(d.value))
		want := unhex(t, d.hex)
		if len(d.value) <= 20 || got[1]>>6 != encMark {
			if !bytes.Equal(got, want) && d.value != strings.Repeat("a", 100) {
				t.Errorf("%q: DUMP %x, Redis %x", d.value, got, want)
			}
		}
		_, obj, _, err := Unframe(got)
		if err != nil {
			t.Fatal(err)
		}
		if s, err := LoadString(obj, len(d.value)); err != nil || string(s) != d.value {
			t.Fatalf("%q: round trip %q, %v", d.value, s, err)
		}
	}
}

func TestIntegerEncoding(t *testing.T) {
	for _, c := range []struct {
		s   string
		enc int // -1: not integer-encoded
	}{{"0", encInt8}, {"-128", encInt8}, {"127", encInt8}, {"128", encInt16}, {"-32768", encInt16},
		{"32768", encInt32}, {"2147483647", encInt32}, {"-2147483648", encInt32}, {"2147483648", -1},
		{"01", -1}, {"+1", -1}, {"-0", -1}, {" 1", -1}, {"", -1}, {"1a", -1}} {
		e := intEncode([]byte(c.s))
		switch {
		case c.enc < 0 && e != nil:
			t.Errorf("%q integer-encoded as %x", c.s, e)
		case c.enc >= 0 && (e == nil || int(e[0]&0x3f) != c.enc):
			t.Errorf("%q: encoding %x, want %d", c.s, e, c.enc)
		}
		p := DumpString([]byte(c.s))
		_, obj, _, _ := Unframe(p)
		if s, err := LoadString(obj, 100); err != nil || string(s) != c.s {
			t.Errorf("%q round trip: %q %v", c.s, s, err)
		}
	}
}

func TestLZFRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		n := r.IntN(20000)
		alpha := 1 + r.IntN(255)
		in := make([]byte, n)
		for j := range in {
			if j > 10 && r.IntN(3) == 0 {
				in[j] = in[j-1-r.IntN(min(j, 9000))]
			} else {
				in[j] = byte(r.IntN(alpha))
			}
		}
		z := LZFCompress(in, len(in)+len(in)/8+64)
		if z == nil {
			if n >= 4 {
				t.Fatalf("n=%d: no output", n)
			}
			continue
		}
		out, err := LZFDecompress(z, len(in))
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("n=%d alpha=%d: round trip failed: %v", n, alpha, err)
		}
		if alpha == 1 && n > 1000 && len(z) > n/20 {
			t.Fatalf("constant input of %d bytes compressed to %d", n, len(z))
		}
	}
}

func TestLZFCompressRespectsMax(t *testing.T) {
	in := []byte("abcdefghijklmnopqrstuvwxyz0123456789") // incompressible
	if z := LZFCompress(in, len(in)-4); z != nil {
		t.Fatalf("incompressible input compressed to %d bytes (max %d)", len(z), len(in)-4)
	}
	rep := bytes.Repeat([]byte("xy"), 100)
	if z := LZFCompress(rep, 10); z == nil || len(z) > 10 {
		t.Fatalf("repetitive input: %v", z)
	}
}

func TestBadPayloads(t *testing.T) {
	good := DumpString([]byte(strings.Repeat("probly ", 50)))
	if _, _, _, err := Unframe(good); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(good); i++ {
		if _, _, _, err := Unframe(good[:i]); !errors.Is(err, ErrChecksum) {
			t.Fatalf("truncated to %d: %v", i, err)
		}
	}
	for i := 0; i < len(good)*8; i++ {
		p := bytes.Clone(good)
		p[i/8] ^= 1 << (i % 8)
		if _, _, _, err := Unframe(p); !errors.Is(err, ErrChecksum) {
			t.Fatalf("bit %d flipped: %v", i, err)
		}
	}
	// A newer RDB version than MaxVersion.
	body := append([]byte{TypeString}, AppendString(nil, []byte("x"))...)
	if _, _, _, err := Unframe(Frame(bytes.Clone(body), MaxVersion+1)); !errors.Is(err, ErrChecksum) {
		t.Fatalf("version %d: %v", MaxVersion+1, err)
	}
	// Lengths that lie.
	for _, obj := range [][]byte{
		{0x05, 'a'},                    // raw, truncated
		{0xc3, 0x02, 0x7f, 0x00, 0x00}, // LZF of 127 bytes from 2
		{0xc3, 0x01, 0x05, 0xe0},       // LZF truncated
		{0xc3, 0x02, 0x02, 0x20, 0x00}, // back reference before the start
		{0xc0},                         // int8 truncated
		{0xc4},                         // unknown encoding
		{0x82},                         // unknown length encoding
		{0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, // 2^64-1 bytes
		{0x01, 'a', 'b'},              // trailing byte
		{0xc3, 0x02, 0x00, 0x00, 'a'}, // LZF of 0 bytes
	} {
		if _, err := LoadString(obj, 1<<20); !errors.Is(err, ErrBadData) && !errors.Is(err, ErrTooLarge) {
			t.Errorf("%x: %v", obj, err)
		}
	}
	if _, err := LoadString(AppendString(nil, bytes.Repeat([]byte("a"), 1000)), 999); !errors.Is(err, ErrTooLarge) {
		t.Errorf("limit: %v", err)
	}
}

func TestAppendLen(t *testing.T) {
	for _, n := range []uint64{0, 63, 64, 16383, 16384, 1<<32 - 1, 1 << 32, 1<<64 - 1} {
		b := AppendLen(nil, n)
		got, enc, used, err := readLen(b)
		if err != nil || enc || used != len(b) || got != n {
			t.Errorf("%d: %x -> %d %v %d %v", n, b, got, enc, used, err)
		}
	}
}

func FuzzLoadString(f *testing.F) {
	for _, d := range redisDumps {
		b, _ := hex.DecodeString(strings.ReplaceAll(d.hex, " ", ""))
		f.Add(b)
	}
	f.Add(DumpString(bytes.Repeat([]byte("abc"), 300)))
	f.Fuzz(func(t *testing.T, p []byte) {
		typ, obj, _, err := Unframe(p)
		if err != nil {
			// Also exercise the decoder on unframed bytes.
			obj = p
		} else if typ != TypeString {
			return
		}
		s, err := LoadString(obj, 1<<16)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to a payload that decodes the same.
		_, obj2, _, err := Unframe(DumpString(s))
		if err != nil {
			t.Fatal(err)
		}
		s2, err := LoadString(obj2, 1<<16)
		if err != nil || !bytes.Equal(s, s2) {
			t.Fatalf("re-encoding %q: %q %v", s, s2, err)
		}
	})
}

func FuzzLZF(f *testing.F) {
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaaaaaaabcabcabcabc"), 100)
	f.Fuzz(func(t *testing.T, in []byte, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		_, _ = LZFDecompress(in, n) // must not panic
		if z := LZFCompress(in, len(in)+len(in)/8+64); z != nil {
			out, err := LZFDecompress(z, len(in))
			if err != nil || !bytes.Equal(out, in) {
				t.Fatalf("round trip of %q: %v", in, err)
			}
		}
	})
}
