// Package binfmttest checks encodings against committed fixture files, for
// the tests of every package whose format must not change.
package binfmttest

import (
	"bytes"
	"encoding"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Codec is what every encodable type implements (docs/LIBRARY.md,
// "Encoding").
type Codec interface {
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
	AppendBinary([]byte) ([]byte, error)
	io.WriterTo
	io.ReaderFrom
}

// CheckFixtures decodes every dir/*.bin file into a fresh value from
// newFor(file name) (nil: the test fails, unknown fixture) with
// UnmarshalBinary and with ReadFrom, and checks that MarshalBinary,
// AppendBinary and WriteTo give back the file's bytes exactly.
func CheckFixtures(t *testing.T, dir string, newFor func(name string) Codec) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no fixtures in %s", dir)
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			want, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			v := newFor(filepath.Base(name))
			if v == nil {
				t.Fatalf("fixture %s: unknown type", name)
			}
			if err := v.UnmarshalBinary(want); err != nil {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			got, err := v.MarshalBinary()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("MarshalBinary: %d bytes (err %v), want the fixture's %d bytes", len(got), err, len(want))
			}
			got, err = v.AppendBinary([]byte("xy"))
			if err != nil || string(got[:2]) != "xy" || !bytes.Equal(got[2:], want) {
				t.Fatalf("AppendBinary: err %v, bytes differ from the fixture", err)
			}
			var buf bytes.Buffer
			if n, err := v.WriteTo(&buf); err != nil || n != int64(len(want)) || !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("WriteTo: n=%d err=%v, bytes differ from the fixture", n, err)
			}
			w := newFor(filepath.Base(name))
			if n, err := w.ReadFrom(bytes.NewReader(want)); err != nil || n != int64(len(want)) {
				t.Fatalf("ReadFrom: n=%d err=%v, want %d", n, err, len(want))
			}
			if got, _ := w.MarshalBinary(); !bytes.Equal(got, want) {
				t.Fatal("ReadFrom then MarshalBinary: bytes differ from the fixture")
			}
		})
	}
}

// BenchEncoding measures MarshalBinary, WriteTo, UnmarshalBinary and
// ReadFrom of v, decoding into values from fresh.
func BenchEncoding(b *testing.B, v Codec, fresh func() Codec) {
	enc, err := v.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("MarshalBinary", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		for range b.N {
			v.MarshalBinary()
		}
	})
	b.Run("WriteTo", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		for range b.N {
			v.WriteTo(io.Discard)
		}
	})
	b.Run("UnmarshalBinary", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		g := fresh()
		for range b.N {
			if err := g.UnmarshalBinary(enc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadFrom", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		g := fresh()
		for range b.N {
			if _, err := g.ReadFrom(bytes.NewReader(enc)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// DocVector returns the bytes of the hex block that follows
// "<!-- test-vector: name -->" in the Markdown file at path (a fenced code
// block of hex byte pairs, whitespace ignored), failing t if there is none.
func DocVector(t testing.TB, path, name string) []byte {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	_, after, ok := strings.Cut(string(doc), "<!-- test-vector: "+name+" -->")
	if !ok {
		t.Fatalf("%s has no test vector %q", path, name)
	}
	parts := strings.SplitN(after, "```", 3)
	if len(parts) < 3 {
		t.Fatalf("test vector %q is not followed by a code block", name)
	}
	b, err := hex.DecodeString(strings.Join(strings.Fields(parts[1]), ""))
	if err != nil {
		t.Fatalf("test vector %q: %v", name, err)
	}
	return b
}
