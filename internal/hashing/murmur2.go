package hashing

import "encoding/binary"

// Murmur2 is Austin Appleby's 32-bit MurmurHash2 (public domain, SMHasher)
// with the given seed: h = seed ^ len, 4-byte blocks read little-endian on
// every platform, a tail of up to 3 bytes and the final avalanche, as in
// RedisBloom's MurmurHash2.c (on the little-endian machines it runs on).
// RedisBloom hashes count-min rows (seed = row) and top-k buckets (seed =
// row) and fingerprints (seed 1919) with it. It is pinned: values it
// returns may be persisted.
//
// Cost: about one multiply-xor round per 4 bytes; no allocation.
func Murmur2(data []byte, seed uint32) uint32 {
	const m = 0x5bd1e995
	const r = 24
	h := seed ^ uint32(len(data))
	for len(data) >= 4 {
		k := binary.LittleEndian.Uint32(data)
		data = data[4:]
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	switch len(data) {
	case 3:
		h ^= uint32(data[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}
