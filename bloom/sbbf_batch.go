package bloom

import (
	"slices"
	"sync/atomic"
)

// sbbfGroup is the number of keys the SBBF batch methods handle at once:
// they hash the whole group and compute every block address first, then
// load the first word of every block in a loop of independent loads (so
// the cache misses of the group are in flight together instead of one
// after another), and only then test or set the bits, in blocks by now in
// L1. 64 keys = 64 cache lines, well inside L1, and 1 KiB of stack.
const sbbfGroup = 64

// AddMany adds every key of keys; the bits and N are exactly those of
// calling Add on each key in order. For filters larger than the cache it is
// several times faster than a loop of Add (see sbbfGroup). No allocation.
// Safe for concurrent use. It always returns nil.
func (s *SBBF) AddMany(keys [][]byte) error {
	var hs [sbbfGroup]uint64
	for len(keys) > 0 {
		g := keys[:min(sbbfGroup, len(keys))]
		keys = keys[len(g):]
		for i, k := range g {
			hs[i] = xxh64(s.seed, k)
		}
		s.addHashMany(hs[:len(g)])
	}
	return nil
}

// AddHashMany is AddMany for precomputed hashes.
func (s *SBBF) addHashMany(hashes []uint64) {
	var blk [sbbfGroup]*[4]uint64
	for len(hashes) > 0 {
		g := hashes[:min(sbbfGroup, len(hashes))]
		hashes = hashes[len(g):]
		s.touch(g, &blk)
		var added uint64
		for i, h := range g {
			if sbbfSet(blk[i], uint32(h)) {
				added++
			}
		}
		if added > 0 {
			s.n.Add(added)
		}
	}
}

// TestMany tests every key of keys and returns out with out[i] =
// Test(keys[i]), reusing out's storage when cap(out) ≥ len(keys) (then it
// does not allocate). Keys are processed in groups whose cache misses
// overlap (see sbbfGroup). Safe for concurrent use.
func (s *SBBF) TestMany(keys [][]byte, out []bool) []bool {
	out = slices.Grow(out[:0], len(keys))[:len(keys)]
	var hs [sbbfGroup]uint64
	for done := 0; done < len(keys); {
		g := keys[done:min(done+sbbfGroup, len(keys))]
		for i, k := range g {
			hs[i] = xxh64(s.seed, k)
		}
		s.testGroup(hs[:len(g)], out[done:done+len(g)])
		done += len(g)
	}
	return out
}

// TestHashMany is TestMany for precomputed hashes.
func (s *SBBF) testHashMany(hashes []uint64, out []bool) []bool {
	out = slices.Grow(out[:0], len(hashes))[:len(hashes)]
	for done := 0; done < len(hashes); {
		n := min(sbbfGroup, len(hashes)-done)
		s.testGroup(hashes[done:done+n], out[done:done+n])
		done += n
	}
	return out
}

func (s *SBBF) testGroup(hs []uint64, out []bool) {
	var blk [sbbfGroup]*[4]uint64
	s.touch(hs, &blk)
	for i, h := range hs {
		out[i] = sbbfHas(blk[i], uint32(h))
	}
}

// touch stores the block of each hash of g (len(g) ≤ sbbfGroup) in blk and
// loads one word of each, so that all the blocks' cache misses overlap.
func (s *SBBF) touch(g []uint64, blk *[sbbfGroup]*[4]uint64) {
	bits, nb := s.bits, s.blocks
	if nb == 0 {
		zeroPanic(zeroSBBF)
	}
	for i, h := range g {
		b := sbbfBlock(bits, sbbfIndex(h, nb))
		blk[i] = b
		atomic.LoadUint64(&b[0]) // the compiler keeps atomic loads
	}
}
