package bloom_test

import (
	"bytes"
	"encoding"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probly/probly/bloom"
)

// codec is what every encodable type implements (docs/LIBRARY.md, "Encoding").
type codec interface {
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
	AppendBinary([]byte) ([]byte, error)
	io.WriterTo
	io.ReaderFrom
}

// TestFormatFixtures decodes every file under testdata/format, written by
// the code of commit ae2a351 (see testdata/format/README.md), and checks
// that each encoding entry point writes it back byte for byte.
func TestFormatFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "format", "*.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			want, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			mk := fixtureType(t, filepath.Base(name))
			v := mk()
			if err := v.UnmarshalBinary(want); err != nil {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			got, err := v.MarshalBinary()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("MarshalBinary: %d bytes (err %v), want the fixture's %d bytes", len(got), err, len(want))
			}
			got, err = v.AppendBinary([]byte("xy"))
			if err != nil || !bytes.Equal(got[2:], want) || string(got[:2]) != "xy" {
				t.Fatalf("AppendBinary: err %v, bytes differ from the fixture", err)
			}
			var buf bytes.Buffer
			if n, err := v.WriteTo(&buf); err != nil || n != int64(len(want)) || !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("WriteTo: n=%d err=%v, bytes differ from the fixture", n, err)
			}
			w := mk()
			if n, err := w.ReadFrom(bytes.NewReader(want)); err != nil || n != int64(len(want)) {
				t.Fatalf("ReadFrom: n=%d err=%v, want %d", n, err, len(want))
			}
			if got, _ := w.MarshalBinary(); !bytes.Equal(got, want) {
				t.Fatal("ReadFrom then MarshalBinary: bytes differ from the fixture")
			}
		})
	}
}

func hasPrefix(name, p string) bool { return strings.HasPrefix(name, p) }

func fixtureType(t *testing.T, name string) func() codec {
	switch {
	case hasPrefix(name, "classic-"):
		return func() codec { return new(bloom.Filter) }
	case hasPrefix(name, "scalable-"):
		return func() codec { return new(bloom.Scalable) }
	case hasPrefix(name, "counting-"):
		return func() codec { return new(bloom.Counting) }
	case hasPrefix(name, "stable-"):
		return func() codec { return new(bloom.Stable) }
	case hasPrefix(name, "sbbf-"):
		return func() codec { return new(bloom.SBBF) }
	}
	t.Fatalf("fixture %s: unknown type", name)
	return nil
}
