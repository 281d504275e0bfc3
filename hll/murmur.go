package hll

import "encoding/binary"

// RedisSeed is the MurmurHash64A seed Redis's HyperLogLog uses.
const RedisSeed = 0xadc83b19

// MurmurHash64A is Austin Appleby's 64-bit MurmurHash2 variant "64A"
// (public domain, SMHasher) with the given seed: h = seed ^ (len·m),
// 8-byte blocks read little-endian on every platform, a tail of up to 7
// bytes and the final avalanche, exactly as Redis's endian-neutral copy in
// hyperloglog.c. It is pinned: values it returns may be persisted.
//
// It is the single copy of the function in probly: RedisBloom's Bloom and
// cuckoo hashes (internal/hashing) call it with their own seeds.
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

// Hash returns the 64-bit hash Redis's HyperLogLog computes for an element:
// MurmurHash64A(elem, seed 0xadc83b19). Sketch.AddHash(Hash(x)) is the
// same as Sketch.Add(x).
func Hash(elem []byte) uint64 { return MurmurHash64A(elem, RedisSeed) }
