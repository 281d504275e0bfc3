package cms

import (
	"fmt"
	"math/bits"

	"github.com/zeebo/xxh3"

	"github.com/probly/probly/internal/binfmt"
	"github.com/probly/probly/internal/hashing"
)

// HashID identifies how a sketch maps a key to one column per row. It is
// recorded in every encoding (docs/FORMATS.md, "Count-min sketch"), so a
// sketch is never queried with another function than the one that built
// it. The numbers come from the one registry of docs/FORMATS.md ("Hash
// IDs").
type HashID uint16

const (
	// HashXXH3 is the default: one XXH3-128 of the key with the seed gives
	// a pair (h1, h2) = (low, high 64 bits); row i uses the column
	// ⌊mix(h1 + i·h2) · width / 2^64⌋, where mix is the SplitMix64
	// finalizer (so that rows stay independent for any width, unlike
	// plain double hashing modulo a composite width). One hash per key
	// whatever the depth.
	HashXXH3 HashID = binfmt.HashXXH3_128

	// HashMurmur2 is RedisBloom's CMS hash: row i uses the column
	// MurmurHash2(key, seed+i) mod width, with Appleby's 32-bit
	// MurmurHash2 (spec redis-sketches.md §1.2). With seed 0 a sketch
	// places every item in the same cells as RedisBloom's. It costs one
	// hash of the key per row, and widths above 2^32 leave the columns
	// beyond 2^32 unused.
	HashMurmur2 HashID = binfmt.HashMurmur2
)

// String returns "xxh3-128", "murmur2" or "hash#N".
func (id HashID) String() string {
	switch id {
	case HashXXH3:
		return "xxh3-128"
	case HashMurmur2:
		return "murmur2"
	}
	return fmt.Sprintf("hash#%d", uint16(id))
}

// Hash returns the pair (h1, h2) a HashXXH3 sketch with the given seed
// derives its columns from: the low and high 64 bits of XXH3-128 of key
// (seed 0: plain XXH3-128). A program that adds one key to many sketches
// hashes once and calls AddHash. It does not allocate.
func Hash(key []byte, seed uint64) (h1, h2 uint64) {
	var u xxh3.Uint128
	if seed == 0 {
		u = xxh3.Hash128(key)
	} else {
		u = xxh3.Hash128Seed(key, seed)
	}
	return u.Lo, u.Hi
}

// pairColumn is row i's column under HashXXH3.
func pairColumn(h1, h2 uint64, i uint32, width uint64) uint64 {
	x := h1 + uint64(i)*h2
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	hi, _ := bits.Mul64(x, width)
	return hi
}

// murmurColumn is row i's column under HashMurmur2.
func murmurColumn(key []byte, seed uint32, i uint32, width uint64) uint64 {
	return uint64(hashing.Murmur2(key, seed+i)) % width
}
