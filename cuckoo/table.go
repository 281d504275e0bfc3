package cuckoo

// The table algorithm, generic over the slot type: uint8 for 8-bit
// fingerprints, uint16 for 16-bit ones. Every step follows RedisBloom's
// cuckoo.c (spec redis-compat.md §2.2) so that a filter with 8-bit
// fingerprints and MurmurHash64A is bit-for-bit a RedisBloom filter.

// altMul is the multiplier of the alternate-bucket hash:
// alt(i, fp) = (i XOR fp·altMul) mod buckets.
const altMul = 0x5bd1e995

// altBucket returns (i XOR fp·0x5bd1e995) mod buckets for mask =
// buckets − 1: the alternate bucket of a fingerprint in bucket i when i
// is a bucket index, or bucket h2 of a key when i is its hash h. Since
// buckets is a power of two, altBucket(altBucket(i, fp, m), fp, m) ==
// i&m.
func altBucket(i, fp, mask uint64) uint64 { return (i ^ fp*altMul) & mask }

type slot interface{ ~uint8 | ~uint16 }

// sub is one sub-filter: buckets·bs slots, bucket j at [j·bs, (j+1)·bs).
// A slot holding 0 is empty.
type sub[T slot] struct {
	data []T
	mask uint64 // buckets − 1 (buckets is a power of two)
	used uint64 // nonzero slots
}

func (s *sub[T]) buckets() uint64 { return s.mask + 1 }

// has reports whether bucket b holds fp.
func (s *sub[T]) has(b, bs uint64, fp T) bool {
	for _, x := range s.data[b*bs : b*bs+bs] {
		if x == fp {
			return true
		}
	}
	return false
}

// countIn returns how many slots of bucket b hold fp.
func (s *sub[T]) countIn(b, bs uint64, fp T) uint64 {
	n := uint64(0)
	for _, x := range s.data[b*bs : b*bs+bs] {
		if x == fp {
			n++
		}
	}
	return n
}

// place stores fp in the first empty slot of bucket b, if any.
func (s *sub[T]) place(b, bs uint64, fp T) bool {
	bk := s.data[b*bs : b*bs+bs]
	for j := range bk {
		if bk[j] == 0 {
			bk[j] = fp
			s.used++
			return true
		}
	}
	return false
}

// remove clears the first slot of bucket b that holds fp, if any.
func (s *sub[T]) remove(b, bs uint64, fp T) bool {
	bk := s.data[b*bs : b*bs+bs]
	for j := range bk {
		if bk[j] == fp {
			bk[j] = 0
			s.used--
			return true
		}
	}
	return false
}

// core is the list of sub-filters, oldest first.
type core[T slot] struct {
	subs []sub[T]
	bs   uint64
}

// lookup reports whether any sub-filter holds fp in either of h's buckets.
func (c *core[T]) lookup(h uint64, fp T) bool {
	for i := range c.subs {
		s := &c.subs[i]
		if s.has(h&s.mask, c.bs, fp) || s.has(altBucket(h, uint64(fp), s.mask), c.bs, fp) {
			return true
		}
	}
	return false
}

// count sums, over all sub-filters, the slots holding fp in bucket h1 and
// in bucket h2. When the two buckets coincide that bucket is counted twice,
// as RedisBloom does.
func (c *core[T]) count(h uint64, fp T) uint64 {
	n := uint64(0)
	for i := range c.subs {
		s := &c.subs[i]
		n += s.countIn(h&s.mask, c.bs, fp) + s.countIn(altBucket(h, uint64(fp), s.mask), c.bs, fp)
	}
	return n
}

// remove deletes one copy of fp: sub-filters newest first, bucket h1 before
// bucket h2.
func (c *core[T]) remove(h uint64, fp T) bool {
	for i := len(c.subs) - 1; i >= 0; i-- {
		s := &c.subs[i]
		if s.remove(h&s.mask, c.bs, fp) || s.remove(altBucket(h, uint64(fp), s.mask), c.bs, fp) {
			return true
		}
	}
	return false
}

// placeAny stores fp in the first empty slot of bucket h1, then of bucket
// h2, trying the sub-filters newest first.
func (c *core[T]) placeAny(h uint64, fp T) bool {
	for i := len(c.subs) - 1; i >= 0; i-- {
		s := &c.subs[i]
		if s.place(h&s.mask, c.bs, fp) || s.place(altBucket(h, uint64(fp), s.mask), c.bs, fp) {
			return true
		}
	}
	return false
}

// kick runs the bounded kick-out walk in the newest sub-filter. Starting at
// bucket h1 with victim slot 0, it swaps the carried fingerprint into the
// victim slot, carries the evicted one to its alternate bucket, and stops
// as soon as that bucket has an empty slot; otherwise the victim slot
// advances by one (mod bucket size). After maxKicks failed steps it walks
// the same path backwards, swapping every fingerprint back, so the
// sub-filter is exactly as it was and fp is not stored.
func (c *core[T]) kick(h uint64, fp T, maxKicks int) bool {
	s := &c.subs[len(c.subs)-1]
	bs := c.bs
	b := h & s.mask
	victim := uint64(0)
	cur := fp
	for n := 0; n < maxKicks; n++ {
		p := b*bs + victim
		cur, s.data[p] = s.data[p], cur
		b = altBucket(b, uint64(cur), s.mask)
		if s.place(b, bs, cur) {
			return true
		}
		victim = (victim + 1) % bs
	}
	for n := 0; n < maxKicks; n++ {
		victim = (victim + bs - 1) % bs
		b = altBucket(b, uint64(cur), s.mask)
		p := b*bs + victim
		cur, s.data[p] = s.data[p], cur
	}
	return false
}

// compact moves fingerprints from the newest sub-filters into free slots of
// older ones, from the newest down to sub-filter 1. A sub-filter that ends
// up empty is released if it is the newest. With stop set, compaction ends
// at the first sub-filter that could not be emptied.
func (c *core[T]) compact(stop bool) {
	for n := len(c.subs); n > 1; n-- {
		if !c.compactOne(n-1) && stop {
			return
		}
	}
}

// compactOne relocates every fingerprint of sub-filter fi that fits into an
// older sub-filter (oldest first; bucket index mod that sub-filter's bucket
// count, or the alternate of it) and reports whether all of them moved.
func (c *core[T]) compactOne(fi int) bool {
	s := &c.subs[fi]
	bs := c.bs
	ok := true
	if s.used > 0 {
		for b := uint64(0); b < s.buckets(); b++ {
			for j := uint64(0); j < bs; j++ {
				p := b*bs + j
				fp := s.data[p]
				if fp == 0 {
					continue
				}
				moved := false
				for k := 0; k < fi; k++ {
					t := &c.subs[k]
					if t.place(b&t.mask, bs, fp) || t.place(altBucket(b, uint64(fp), t.mask), bs, fp) {
						s.data[p] = 0
						s.used--
						moved = true
						break
					}
				}
				if !moved {
					ok = false
				}
			}
		}
	}
	if ok && fi == len(c.subs)-1 {
		c.subs[fi] = sub[T]{}
		c.subs = c.subs[:fi]
	}
	return ok
}

// reset empties the first sub-filter and drops the others (clearing their
// entries so that their tables can be collected).
func (c *core[T]) reset() {
	clear(c.subs[1:])
	c.subs = c.subs[:1]
	clear(c.subs[0].data)
	c.subs[0].used = 0
}

func (c *core[T]) clone() *core[T] {
	d := &core[T]{subs: make([]sub[T], len(c.subs)), bs: c.bs}
	for i, s := range c.subs {
		d.subs[i] = sub[T]{data: append([]T(nil), s.data...), mask: s.mask, used: s.used}
	}
	return d
}

func (c *core[T]) equal(d *core[T]) bool {
	if c.bs != d.bs || len(c.subs) != len(d.subs) {
		return false
	}
	for i := range c.subs {
		a, b := &c.subs[i], &d.subs[i]
		if a.mask != b.mask || len(a.data) != len(b.data) {
			return false
		}
		for j := range a.data {
			if a.data[j] != b.data[j] {
				return false
			}
		}
	}
	return true
}
