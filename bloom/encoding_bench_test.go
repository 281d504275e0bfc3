package bloom_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/probly/probly/bloom"
)

// Encoding throughput of a classic filter of 1M items at p = 0.01 (1.2 MB).
func BenchmarkFilterEncoding(b *testing.B) {
	f, err := bloom.New(1_000_000, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100_000 {
		f.Add([]byte{byte(i), byte(i >> 8), byte(i >> 16)})
	}
	enc, _ := f.MarshalBinary()
	b.Run("MarshalBinary", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		for range b.N {
			f.MarshalBinary()
		}
	})
	b.Run("WriteTo", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		for range b.N {
			f.WriteTo(io.Discard)
		}
	})
	b.Run("UnmarshalBinary", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		var g bloom.Filter
		for range b.N {
			if err := g.UnmarshalBinary(enc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadFrom", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		var g bloom.Filter
		for range b.N {
			if _, err := g.ReadFrom(bytes.NewReader(enc)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
