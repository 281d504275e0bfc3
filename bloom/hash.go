package bloom

import (
	"fmt"

	"github.com/zeebo/xxh3"

	"github.com/probly/probly/internal/binfmt"
)

// HashID identifies the function that turns a key into the hash pair
// (h1, h2) from which a filter derives its bit positions. It is recorded in
// every encoding (docs/FORMATS.md), so a filter is never queried with a hash
// other than the one that built it.
type HashID uint16

const (
	// HashXXH3_128 is the default: XXH3-128 of the key with the filter's
	// 64-bit seed (seed 0 = plain XXH3-128); h1 is the low 64 bits of the
	// digest and h2 the high 64 bits. This is what Hash returns.
	HashXXH3_128 HashID = binfmt.HashXXH3_128

	// hashMurmur64A is RedisBloom's pair: h1 = MurmurHash64A(key,
	// 0xc6a4a7935bd1e995), h2 = MurmurHash64A(key, h1). The seed field is
	// unused (0). This package does not implement it (the server does):
	// filters with this ID are used through AddHash/TestHash only.
	hashMurmur64A HashID = binfmt.HashMurmur64APair
)

// String returns a short name for the hash ID ("xxh3-128", "murmur64a",
// "xxh64" or "hash#N").
func (id HashID) String() string {
	switch id {
	case HashXXH3_128:
		return "xxh3-128"
	case hashMurmur64A:
		return "murmur64a"
	case HashXXH64:
		return "xxh64"
	}
	return fmt.Sprintf("hash#%d", uint16(id))
}

// CanHashKeys reports whether this package can hash keys under id, i.e.
// whether the key methods (Add, Test, ...) work on a filter with that hash
// ID. Only HashXXH3_128 (any seed) can; for other IDs the caller computes
// the pair and uses the *Hash methods.
func canHashKeys(id HashID) bool { return id == HashXXH3_128 }

// Hash returns the pinned default hash pair of key: XXH3-128 with seed 0,
// h1 = low 64 bits, h2 = high 64 bits (hash ID HashXXH3_128). It does not
// allocate; cost is one pass over key. Programs that test one key against
// many filters can hash once and call the *Hash methods.
func Hash(key []byte) (h1, h2 uint64) {
	r := xxh3.Hash128(key)
	return r.Lo, r.Hi
}

// HashString is Hash for a string key, without a conversion copy.
func hashString(key string) (h1, h2 uint64) {
	r := xxh3.HashString128(key)
	return r.Lo, r.Hi
}

// keyHash hashes key under (id, seed). The default case is inlined by the
// caller's fast path; everything else goes through hashSlow. zero is the
// caller's zero-value panic message (hash ID 0 is only found in a zero
// value).
func keyHash(id HashID, seed uint64, key []byte, zero string) (h1, h2 uint64) {
	if id == HashXXH3_128 && seed == 0 {
		r := xxh3.Hash128(key)
		return r.Lo, r.Hi
	}
	return hashSlow(id, seed, key, zero)
}

func keyHashString(id HashID, seed uint64, key string, zero string) (h1, h2 uint64) {
	if id == HashXXH3_128 && seed == 0 {
		r := xxh3.HashString128(key)
		return r.Lo, r.Hi
	}
	return hashSlow(id, seed, []byte(key), zero)
}

func hashSlow(id HashID, seed uint64, key []byte, zero string) (h1, h2 uint64) {
	if id == 0 {
		zeroPanic(zero)
	}
	if id != HashXXH3_128 {
		// A programming error: a key method was called on a filter whose
		// pairs come from a hash this package cannot compute. Guessing a
		// hash would create false negatives, so refuse loudly.
		panic(fmt.Sprintf("bloom: key method called on a filter with hash ID %d (%v); compute the pair and use the *Hash methods (see CanHashKeys)", uint16(id), id))
	}
	r := xxh3.Hash128Seed(key, seed)
	return r.Lo, r.Hi
}
