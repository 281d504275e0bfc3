package cms

import (
	"encoding/binary"
	"testing"
)

// Benchmarks of the hot path (bench/cms_test.go compares with other
// libraries).
func BenchmarkAdd(b *testing.B) {
	for _, c := range []Config{{Width: 2719, Depth: 5}, {Width: 2719, Depth: 5, Hash: HashMurmur2}} {
		s, _ := NewWithConfig(c)
		b.Run(s.hashID.String(), func(b *testing.B) {
			var k [16]byte
			for i := 0; i < b.N; i++ {
				binary.LittleEndian.PutUint64(k[:], uint64(i)*0x9e3779b97f4a7c15)
				s.Add(k[:])
			}
		})
	}
}

func BenchmarkCount(b *testing.B) {
	for _, c := range []Config{{Width: 2719, Depth: 5}, {Width: 2719, Depth: 5, Hash: HashMurmur2}} {
		s, _ := NewWithConfig(c)
		b.Run(s.hashID.String(), func(b *testing.B) {
			var k [16]byte
			var sink uint64
			for i := 0; i < b.N; i++ {
				binary.LittleEndian.PutUint64(k[:], uint64(i)*0x9e3779b97f4a7c15)
				sink += s.Count(k[:])
			}
			_ = sink
		})
	}
}
