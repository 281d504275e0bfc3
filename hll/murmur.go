package hll

import "github.com/probly/probly/internal/redishll"

// DefaultSeed is the MurmurHash64A seed of Hash and of every sketch (it is
// the seed Redis's HyperLogLog uses, so sketches of precision 14 are
// interchangeable with Redis's).
const DefaultSeed = redishll.Seed

// Hash returns the 64-bit hash a Sketch computes for an element:
// MurmurHash64A(elem, DefaultSeed) (Austin Appleby's 64-bit MurmurHash2
// variant "64A", 8-byte blocks read little-endian on every platform). It is
// pinned: values it returns may be persisted. Sketch.AddHash(Hash(x)) is
// the same as Sketch.Add(x). Cost: about one multiply-xor round per 8
// bytes; no allocation.
func Hash(elem []byte) uint64 { return redishll.Hash(elem) }
