package cuckoo

import (
	"fmt"

	"github.com/zeebo/xxh3"

	"github.com/probly/probly/internal/binfmt"
)

// HashID identifies the function that turned a key into the 64-bit hash h
// from which a filter derives fingerprints and buckets. It is recorded in
// every encoding (docs/FORMATS.md, "Cuckoo filter"), so a filter is never
// queried with a hash other than the one that built it. The numbers come
// from the one registry of docs/FORMATS.md ("Hash IDs"); this package
// exports only the ID it computes.
type HashID uint16

// HashXXH3 is the default: XXH3-64 of the key with the filter's seed (seed
// 0 = plain XXH3-64). This is what Hash returns.
const HashXXH3 HashID = binfmt.HashXXH3_64

// hashMurmur64A is MurmurHash64A of the key with the filter's seed
// (internal/cuckooraw.HashMurmur64A): the server's RedisBloom-compatible
// filters record it; this package does not compute it.
const hashMurmur64A HashID = binfmt.HashMurmur64A

// String returns a short name for the hash ID ("xxh3-64", "murmur64a-single" or
// "hash#N").
func (id HashID) String() string {
	switch id {
	case HashXXH3:
		return "xxh3-64"
	case hashMurmur64A:
		return "murmur64a-single"
	}
	return fmt.Sprintf("hash#%d", uint16(id))
}

// CanHashKeys reports whether this package can hash keys under id, i.e.
// whether the key methods (Add, Test, …) work on a filter with that hash
// ID. Only HashXXH3 (any seed) can; a filter decoded with another ID is
// used through the *Hash methods, with h computed by the caller.
func CanHashKeys(id HashID) bool { return id == HashXXH3 }

// Hash returns the pinned default hash of key: XXH3-64 with seed 0 (hash ID
// HashXXH3). It does not allocate. Programs that probe one key against many
// filters can hash once and call the *Hash methods.
func Hash(key []byte) uint64 { return xxh3.Hash(key) }

func (f *Filter) hashKey(key []byte) uint64 {
	if f.hashID == HashXXH3 {
		if f.seed == 0 {
			return xxh3.Hash(key)
		}
		return xxh3.HashSeed(key, f.seed)
	}
	panic(f.hashPanic())
}

// hashPanic is the message for a key method called on a filter whose hash
// this package cannot compute: guessing a hash would create false
// negatives, so the call is refused loudly (a programming error).
func (f *Filter) hashPanic() string {
	if f.c8 == nil && f.c16 == nil {
		return zeroFilter
	}
	return fmt.Sprintf("cuckoo: key method called on a filter with hash ID %d (%v); compute the hash and use the *Hash methods (see CanHashKeys)", uint16(f.hashID), f.hashID)
}
