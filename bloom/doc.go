// Package bloom implements Bloom filters: the classic filter (Filter) and the
// scalable chain of filters (Scalable).
//
// A Bloom filter is a set that answers membership queries approximately and
// takes much less memory than the set itself (Bloom 1970). Test(x) returns
// false only if x was never added: there are no false negatives. It returns
// true for every key that was added, and also, with a small probability p,
// for keys that were not (a false positive). Keys cannot be listed, counted
// exactly or removed.
//
// # Cost
//
// A Filter is a bitset of m bits, plus a fixed header of about 100 bytes. Add
// and Test hash the key once and then touch k bits, each in a different
// random place: k memory accesses (cache misses, for a filter larger than
// the cache) and k 64-bit divisions. Test stops at the first zero bit, so a
// negative answer usually costs about two accesses. Neither allocates.
//
// # Parameters
//
// For n keys and a target false-positive rate p, New picks the classic
// optimum
//
//	m = ⌈−n·ln p / (ln 2)²⌉ bits (≈ 9.59 bits per key at p = 1%),
//	k = round((m/n)·ln 2) probes (7 at p = 1%),
//
// and NewWithMK takes m and k directly. After n distinct keys the expected
// false-positive rate is
//
//	FPR ≈ (1 − e^(−k·n/m))^k,
//
// and, given the current fraction of set bits (the fill), it is fill^k,
// which is what Stats.EstimatedFPR reports. The number of distinct keys can
// be estimated from the fill as −(m/k)·ln(1 − fill) (Swamidass & Baldi
// 2007). Adding more keys than the filter was sized for does not fail, but
// the false-positive rate rises towards 1; a Scalable grows instead.
//
// These formulas assume k independent hash functions. Double hashing (below)
// makes a key's probes dependent; asymptotically that does not change the
// false-positive rate, but small filters pay a little. Averaged over many
// filters with k = 8 at half fill, the measured rate exceeds fill^k by about
// 6% at m ≈ 1100 bits, 1.3% at m ≈ 11000 and 0.3% at m ≈ 110000. The test
// suite pins this down (TestDoubleHashingSmallM).
//
// # Hashing
//
// Each key is hashed once into a 128-bit pair (h1, h2); the k probe
// positions come from double hashing (Kirsch & Mitzenmacher 2006):
//
//	x_i = (h1 + i·h2) mod m,   i = 0 … k−1,
//
// in uint64 wrap-around arithmetic, which keeps the asymptotic false-positive
// rate of k independent hash functions. The default pair is XXH3-128 of the
// key with seed 0 (Hash; hash ID HashXXH3_128); the hash ID and seed are
// recorded in every encoding so a filter is never probed with another hash.
// Every operation also takes a precomputed pair (AddHash, TestHash), so a
// program can hash once and probe many filters, or use another hash such as
// RedisBloom's MurmurHash64A pair (HashMurmur64A). All index arithmetic is
// 64-bit: filters of more than 2^32 bits work, up to MaxBits.
//
// # Assumptions
//
// The false-positive rate is a probability over the hash function, so it
// assumes keys that do not depend on it. XXH3 is fast, not cryptographic:
// anyone who knows the seed (0 by default) can search for keys that test
// positive. Where keys come from an adversary, give filters a secret seed
// (Filter.SetHash, ScalableConfig.HashSeed); false negatives remain
// impossible either way.
//
// # Scalable filters
//
// A Scalable (Almeida, Baquero, Preguiça & Hutchison 2007, "Scalable Bloom
// Filters") is a chain of Filters for sets whose size is not known in
// advance. When the newest filter holds its capacity, a new one with Growth
// times the capacity and Tightening (r) times the error rate is appended.
// Sub-filter i has error rate p0·(1−r)·r^i, so the compound false-positive
// rate, at most Σ p0·(1−r)·r^i, stays below p0 however many sub-filters
// there are, provided each sub-filter meets its own rate. Tiny first
// sub-filters do not quite: with the small-filter cost above and the noisy
// fill of a filter of a few hundred items, a chain with capacity 100, growth
// 2 and p0 = 1% measured about 1.14% averaged over 8 chains of 200k items,
// and about 1.02% with capacity 1000. Start at a capacity of 1000 or more
// when the bound matters. The add semantics are RedisBloom's, so the same
// code serves as the server's BF.* filter with RedisBloom's sizing (which
// shares this property).
//
// # Concurrency
//
// A Filter is safe for concurrent Add and Test from many goroutines: bits are
// set with atomic OR and read with atomic loads, without a lock. A Scalable
// is not: callers serialize modifications with their own lock.
//
// # Encoding
//
// Both types implement encoding.BinaryMarshaler, encoding.BinaryUnmarshaler,
// encoding.BinaryAppender, io.WriterTo and io.ReaderFrom in a versioned,
// self-describing, CRC-32C-checked format, specified byte by byte in
// docs/FORMATS.md of this module. Decoders validate the whole input before
// allocating or changing anything, and never allocate more than the input
// backs: corrupted or truncated input gives an error (ErrChecksum,
// ErrFormat, ErrVersion, io.ErrUnexpectedEOF), never a filter with missing
// keys.
package bloom
