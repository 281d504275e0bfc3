package cuckoo_test

import (
	"testing"

	"github.com/probly/probly/cuckoo"
	"github.com/probly/probly/internal/binfmt/binfmttest"
)

// Encoding throughput of a cuckoo filter of 1M items at p = 0.01.
func BenchmarkFilterEncoding(b *testing.B) {
	f, err := cuckoo.New(1_000_000, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100_000 {
		f.Add([]byte{byte(i), byte(i >> 8), byte(i >> 16)})
	}
	binfmttest.BenchEncoding(b, f, func() binfmttest.Codec { return new(cuckoo.Filter) })
}
