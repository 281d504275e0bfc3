package bloom

import "fmt"

// This file holds the exclusive (single-owner) add paths of Filter: the
// batch adds of filter.go without atomic instructions, and builder, which
// pipelines them over two goroutines, for building a filter that no other
// goroutine can see yet.

// addManyExclusive adds every key of keys. The result (bits and N) is
// exactly that of calling Add on each key in order, and of AddMany.
//
// It is AddMany for a filter the caller owns exclusively, typically one
// being built before it is shared: bits are read and set with plain loads
// and stores instead of atomic read-modify-writes. On amd64 each new bit
// then costs an ordinary OR instead of a LOCK'd one (about 20 cycles and a
// full fence), and the cache misses of consecutive keys overlap; building
// a 5.4 MB filter from 4.5M keys takes about half the CPU time of AddMany.
// Cost: one hash per key plus k probes (one 64-bit multiply each, no
// division); no allocation.
//
// Concurrency: NOT safe for concurrent use. No other method of f, not even
// Test or N, may run on any goroutine while addManyExclusive runs, exactly
// as for SetN or UnmarshalBinary; under -race a violation is a reported data race.
// Publish f to other goroutines only after it returns, through a
// synchronizing operation (a channel send, a mutex, sync.WaitGroup.Wait,
// an atomic.Pointer store); from then on every method, including the
// atomic AddMany, may be used concurrently as usual.
func (f *Filter) addManyExclusive(keys [][]byte) {
	var h1, h2 [exclusiveGroup]uint64
	for len(keys) > 0 {
		g := keys[:min(exclusiveGroup, len(keys))]
		keys = keys[len(g):]
		for i, key := range g {
			h1[i], h2[i] = keyHash(f.hashID, f.seed, key, zeroFilter)
		}
		f.addHashManyExclusive(h1[:len(g)], h2[:len(g)])
	}
}

// exclusiveGroup is the number of keys addManyExclusive hashes at a time
// (2 KiB of hash pairs on the stack).
const exclusiveGroup = 128

// addHashManyExclusive adds the items with hash pairs (h1[i], h2[i]), in
// order of i, as AddHash would: item i sets the bits
// x_j = (h1[i] + j·h2[i]) mod m for j = 0 … k−1, and N grows by the number of
// items that set at least one new bit. The result (bits and N) is exactly
// that of calling AddHash on each pair in order. h1 and h2 must have the
// same length; otherwise it panics (a programming error) before changing
// anything.
//
// Like addManyExclusive it uses plain loads and stores and is NOT safe for
// concurrent use: see addManyExclusive for the rules. Cost: k probes per
// pair (one 64-bit multiply each, no division); no allocation.
func (f *Filter) addHashManyExclusive(h1, h2 []uint64) {
	if len(h1) != len(h2) {
		panic(fmt.Sprintf("bloom: addHashManyExclusive: len(h1) = %d != len(h2) = %d", len(h1), len(h2)))
	}
	if f.m == 0 {
		zeroPanic(zeroFilter)
	}
	if len(h1) == 0 {
		return
	}
	k := int(f.k)
	if k > batchPositions {
		var added uint64
		for i := range h1 {
			if f.setBitsExclusive(h1[i], h2[i]) {
				added++
			}
		}
		if added > 0 {
			f.n.Add(added)
		}
		return
	}
	// Positions are computed a group at a time, then set by a separate
	// small loop (setGroupExclusive): the position arithmetic of a group
	// runs without memory stalls, and the set loop keeps its few values in
	// registers, so the out-of-order core overlaps the cache misses of
	// consecutive items (no LOCK'd instruction orders them).
	var pos [batchPositions]uint64
	b, m := f.bits, f.m
	inv := reciprocal(m)
	per := batchPositions / k
	var added uint64
	for len(h1) > 0 {
		g := min(per, len(h1))
		ps := pos[:g*k]
		for j := range g {
			x, d := h1[j], h2[j]
			for i := range ps[j*k : j*k+k] {
				ps[j*k+i] = mod(x, m, inv)
				x += d
			}
		}
		h1, h2 = h1[g:], h2[g:]
		added += setGroupExclusive(b, ps, k)
	}
	if added > 0 {
		f.n.Add(added)
	}
}

// setGroupExclusive sets the bits at positions ps (all < 64·len(b)), k
// consecutive positions per item, with plain loads and stores, and returns
// the number of items that set at least one new bit. It is not inlined on
// purpose: on its own its loop keeps every value in a register.
//
//go:noinline
func setGroupExclusive(b, ps []uint64, k int) (added uint64) {
	for len(ps) >= k {
		var fresh uint64 // nonzero iff the item set a new bit
		for _, x := range ps[:k] {
			i := x >> 6
			mask := uint64(1) << (x & 63)
			old := b[i]
			fresh |= mask &^ old
			b[i] = old | mask
		}
		if fresh != 0 {
			added++
		}
		ps = ps[k:]
	}
	return added
}

// setBitsExclusive is setBits with plain loads and stores. (The
// division-free reduction, mod, is slower here than k divisions on the
// EPYC this was measured on: one reciprocal division plus k 128-bit
// multiplies, BenchmarkScalableAddLarge 333 against 291 ns.)
func (f *Filter) setBitsExclusive(h1, h2 uint64) bool {
	b, m := f.bits, f.m
	var fresh uint64
	for i := f.k; i > 0; i-- {
		x := h1 % m
		w := &b[x>>6]
		mask := uint64(1) << (x & 63)
		old := *w
		fresh |= mask &^ old
		*w = old | mask
		h1 += h2
	}
	return fresh != 0
}

// builder fills a Filter that no other goroutine uses yet (typically a new
// one, built from a file or a snapshot before it is published) on two
// goroutines: the caller's goroutine hashes each key and computes its k bit
// positions, and a goroutine started by newBuilder sets the bits, batch
// after batch in the order of the adds, with plain loads and stores (see
// addManyExclusive). The result (bits and N) is exactly that of calling
// Add on each key in order on one goroutine; only the time differs.
//
// Use: b := newBuilder(f); b.Add(k) for every key; b.Close(). Close must
// be called exactly once, also on error paths, or the goroutine is leaked.
// From newBuilder until Close returns, f must not be used at all (not even
// Test or N); after Close returns, f may be used and shared as usual (Close
// synchronizes with the bit-setting goroutine).
//
// Positions are those of Filter: x_i = (h1 + i·h2) mod m (Kirsch &
// Mitzenmacher 2006), computed exactly.
//
// Cost: per key, one hash and k positions (one 64-bit multiply each) on the
// caller's goroutine and k plain read-modify-writes on the other; no
// allocation per key; memory: 8 batches of 32768 positions (2 MiB) besides
// the filter. Building the 4.5M-key, 5.4 MB filter of docs/BENCHMARKS.md
// takes about half the wall time of AddMany when a second core is free.
// Moving positions between cores costs some CPU, so on a machine whose
// cores are all busy the gain over addManyExclusive on one goroutine is
// small or none.
//
// A builder is not safe for concurrent use: one goroutine adds and closes.
//
// The zero builder is not usable: create one with newBuilder. On the zero
// value Add, AddString, AddHash, AddMany and Close panic with a message
// saying so.
type builder struct {
	f    *Filter
	k    int
	m    uint64
	inv  uint64
	cur  []uint64      // positions of the batch being filled
	free chan []uint64 // empty batches
	full chan []uint64 // batches to set, in order
	done chan uint64   // the setter's count of items that set a new bit
}

const (
	builderPositions = 1 << 15 // positions per batch: 256 KiB
	builderBatches   = 8       // batches in flight
)

// newBuilder starts building into f, which the builder then owns until
// Close (see builder). f may already hold keys. It starts one goroutine
// and allocates 2 MiB of batches. It cannot fail; it panics if f is the
// zero Filter (see Filter).
func newBuilder(f *Filter) *builder {
	if f.m == 0 {
		zeroPanic(zeroFilter)
	}
	b := &builder{
		f:    f,
		k:    int(f.k),
		m:    f.m,
		inv:  reciprocal(f.m),
		free: make(chan []uint64, builderBatches),
		full: make(chan []uint64, builderBatches),
		done: make(chan uint64, 1),
	}
	per := max(builderPositions/b.k, 1) * b.k // whole items per batch
	for range builderBatches {
		b.free <- make([]uint64, 0, per)
	}
	b.cur = <-b.free
	go func() {
		var added uint64
		for ps := range b.full {
			added += setGroupExclusive(f.bits, ps, b.k)
			b.free <- ps[:0]
		}
		b.done <- added
	}()
	return b
}

// Add adds key, as f.Add(key) would (in order with the other adds), and
// does not report whether a bit was new: the bits are set later, on the
// builder's goroutine; N counts the items that set a new bit, as for Add.
// It panics, as Filter.Add does, if f's hash ID is not one this package can
// compute (see CanHashKeys); use AddHash then. No allocation.
func (b *builder) Add(key []byte) {
	if b.f == nil {
		zeroPanic(zeroBuilder)
	}
	h1, h2 := keyHash(b.f.hashID, b.f.seed, key, zeroFilter)
	b.AddHash(h1, h2)
}

// AddString is Add for a string key (no copy).
func (b *builder) addString(key string) {
	if b.f == nil {
		zeroPanic(zeroBuilder)
	}
	h1, h2 := keyHashString(b.f.hashID, b.f.seed, key, zeroFilter)
	b.AddHash(h1, h2)
}

// AddHash adds the item with hash pair (h1, h2), as f.AddHash would (in
// order with the other adds): bits x_i = (h1 + i·h2) mod m, i = 0 … k−1.
// No allocation.
func (b *builder) AddHash(h1, h2 uint64) {
	cur, k, m, inv := b.cur, b.k, b.m, b.inv // locals: no reloads in the loop
	if k == 0 {
		zeroPanic(zeroBuilder)
	}
	n := len(cur)
	ps := cur[n : n+k : n+k] // within capacity (see below)
	for i := range ps {
		ps[i] = mod(h1, m, inv)
		h1 += h2
	}
	cur = cur[:n+k]
	if len(cur)+k > cap(cur) { // no room for another item: hand it over
		b.full <- cur
		cur = <-b.free
	}
	b.cur = cur
}

// AddMany adds every key of keys in order, as Add does for each.
func (b *builder) AddMany(keys [][]byte) {
	for _, k := range keys {
		b.Add(k)
	}
}

// Close sets the bits of every key added so far, waits for the builder's
// goroutine to finish, and adds to f's N the number of items that set at
// least one new bit. After Close, f may be used and shared, and the builder
// must not be used again (a second Close panics).
func (b *builder) Close() {
	if b.f == nil {
		zeroPanic(zeroBuilder)
	}
	if len(b.cur) > 0 {
		b.full <- b.cur
	}
	b.cur = nil
	close(b.full)
	if added := <-b.done; added > 0 {
		b.f.n.Add(added)
	}
}
