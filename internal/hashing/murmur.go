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

import "encoding/binary"

// MurmurHash64A is Austin Appleby's 64-bit MurmurHash2 variant "64A"
// (public domain, SMHasher) with the given seed: h = seed ^ (len·m),
// 8-byte blocks read little-endian on every platform, a tail of up to 7
// bytes and the final avalanche, exactly as Redis's endian-neutral copy in
// hyperloglog.c. It is pinned: values it returns may be persisted.
//
// It is the single copy of the function in probly: the HyperLogLog
// package and RedisBloom's Bloom and cuckoo hashes call it with their own
// seeds.
//
// Cost: about one multiply-xor round per 8 bytes; no allocation.
func MurmurHash64A(data []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ (uint64(len(data)) * m)
	for len(data) >= 8 {
		k := binary.LittleEndian.Uint64(data)
		data = data[8:]
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
	}
	tail := data
	switch len(tail) {
	case 7:
		h ^= uint64(tail[6]) << 48
		fallthrough
	case 6:
		h ^= uint64(tail[5]) << 40
		fallthrough
	case 5:
		h ^= uint64(tail[4]) << 32
		fallthrough
	case 4:
		h ^= uint64(tail[3]) << 24
		fallthrough
	case 3:
		h ^= uint64(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint64(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint64(tail[0])
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

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
