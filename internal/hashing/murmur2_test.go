package hashing

import "testing"

// The vectors of redis-sketches.md §4.1 (RedisBloom's own MurmurHash2.c).
func TestMurmur2(t *testing.T) {
	seeds := []uint32{0, 1, 2, 3, 4, 1919}
	vectors := []struct {
		in   string
		want [6]uint32
	}{
		{"", [6]uint32{0x00000000, 0x5bd15e36, 0xb7a2bc6d, 0x13759a54, 0x6f4778db, 0x4a8566e0}},
		{"a", [6]uint32{0x92685f5e, 0x2550b18c, 0x2cf62649, 0x86b7b9f4, 0xb9b6c23e, 0xf23cf517}},
		{"b", [6]uint32{0x86b7b9f4, 0x2cf62649, 0x2550b18c, 0x92685f5e, 0xfbeb9e30, 0x2adfed97}},
		{"foo", [6]uint32{0x8fea6375, 0x0bcc2e5a, 0x71b51c90, 0x03f30a09, 0x5fc1bbbb, 0x4064c400}},
		{"bar", [6]uint32{0x27f6e557, 0xfc397da9, 0x4d32e629, 0x62f78def, 0x00b38fd6, 0x2f60f28e}},
		{"baz", [6]uint32{0xbc8fdb67, 0x290d1382, 0x013f69f3, 0xe5847d4a, 0x37d6e5dc, 0x813cfc74}},
		{"hello world", [6]uint32{0x44a81419, 0x83ea5dee, 0xd94a2afb, 0xc1b1edd0, 0x0c154bc6, 0xfba01f39}},
		{"item1", [6]uint32{0x2aeedca2, 0x0137b104, 0xe7f56ec1, 0xa4aa9be3, 0x13093175, 0x447883b5}},
	}
	for _, v := range vectors {
		for i, seed := range seeds {
			if got := Murmur2([]byte(v.in), seed); got != v.want[i] {
				t.Errorf("Murmur2(%q, %d) = %08x, want %08x", v.in, seed, got, v.want[i])
			}
		}
	}
}
