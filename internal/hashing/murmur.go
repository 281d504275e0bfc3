// Package hashing holds the pinned, persisted hash functions of probly.
//
// Everything here is stable across processes, platforms and versions:
// values computed by these functions may be stored on disk or exchanged
// with other programs. (Never use hash/maphash for anything persisted.)
//
// MurmurHash64A is Austin Appleby's 64-bit MurmurHash2 variant "64A"
// (public domain, SMHasher), reading 8-byte blocks little-endian on every
// platform. It is the hash used by Redis's HyperLogLog (seed 0xadc83b19)
// and by RedisBloom's 64-bit Bloom filters (see RedisBloomPair).
//
// Cost: one pass over the input, about one multiply-xor round per 8 bytes;
// no allocations.
package hashing

import "github.com/probly/probly/hll"

// MurmurHash64A returns the 64-bit MurmurHash2 (variant 64A) of data with
// the given seed. It is hll.MurmurHash64A (the one copy in the project).
func MurmurHash64A(data []byte, seed uint64) uint64 { return hll.MurmurHash64A(data, seed) }

// RedisBloomSeed is the seed of the first hash of RedisBloom's 64-bit
// filters (equal to the Murmur multiplier constant).
const RedisBloomSeed = 0xc6a4a7935bd1e995

// RedisBloomPair returns the hash pair RedisBloom's FORCE64 Bloom filters
// use for an item: a = MurmurHash64A(item, 0xc6a4a7935bd1e995) and
// b = MurmurHash64A(item, a). Probe i of a filter of m bits is
// (a + i·b) mod m in wrapping 64-bit arithmetic.
func RedisBloomPair(item []byte) (a, b uint64) {
	a = MurmurHash64A(item, RedisBloomSeed)
	b = MurmurHash64A(item, a)
	return a, b
}
