// Package bloom implements the Bloom filter family: the classic filter
// (Filter), the scalable chain of filters (Scalable), the split-block filter
// bit-compatible with Apache Parquet (SBBF), the counting filter with
// deletion (Counting) and the stable filter for unbounded streams (Stable),
// sharing one hashing, sizing, statistics (Stats) and encoding core.
//
// Every type speaks the vocabulary of docs/LIBRARY.md, shared with package
// cuckoo and the sketch packages: two constructors, one from (n, p) (New,
// NewSBBF, NewCounting, NewScalable, NewStable) and one from the raw
// parameters of a Config whose Seed field is the one way to seed the hash
// (NewWithConfig, NewSBBFWithConfig, NewCountingWithConfig,
// NewScalableWithConfig, NewStableWithConfig); Add(key) error,
// Test(key) bool, TestAndAdd(key) (bool, error) (the bool: present before
// the add), Remove(key) bool and Count(key) uint64 on Counting, with *Hash
// and *Many forms; Merge/Intersect, Reset, Stats (fields M, K, Bytes, N,
// SetBits, FillRatio, FPR, Cardinality, Capacity, P) and the encoding
// interfaces. Add can fail only on a Scalable (ErrFull without growth,
// ErrTooLarge past MaxBytes); on the other types it always returns nil.
//
// A Bloom filter is a set that answers membership queries approximately and
// takes much less memory than the set itself (Bloom 1970). Test(x) returns
// false only if x was never added: there are no false negatives. It returns
// true for every key that was added, and also, with a small probability p,
// for keys that were not (a false positive). Keys cannot be listed or
// counted exactly, and only a Counting filter can remove them. The Stable
// filter is the one exception to "no false negatives": it forgets old keys
// by design (see "Stable filters").
//
// # Cost
//
// A Filter is a bitset of m bits, plus a fixed header of about 100 bytes. Add
// and Test hash the key once and then touch k bits, each in a different
// random place: k memory accesses (cache misses, for a filter larger than
// the cache) and k 64-bit divisions. Test stops at the first zero bit, so a
// negative answer usually costs about two accesses. Neither allocates.
//
// The batch forms are faster per key. AddMany and TestMany hash a group of
// keys, compute all their positions with a multiply instead of a division
// (an exact Barrett reduction), load every word involved in a loop of
// independent loads, and only then set or test the bits: the cache misses
// of the whole group are in flight at once instead of one after another,
// which for a filter larger than the cache makes them faster than a loop
// of Add or Test (each key still costs up to k cache lines; an SBBF's
// costs one). Both are safe for concurrent use (atomic
// loads and ORs). To fill a filter that no other goroutine sees yet (a
// build, before the filter is published), addManyExclusive and
// addHashManyExclusive do the same with plain loads and stores instead of
// atomic read-modify-writes, in about half the CPU time of AddMany; a
// Builder splits that work over two goroutines, hashing and computing
// positions on the caller's while another sets the bits, which halves the
// wall time of AddMany when a second core is free (and gains little over
// addManyExclusive when every core is busy). Both give exactly the bits and
// N of calling Add on each key in order, and nothing else may use the
// filter while they run (see their docs for the rules).
//
// # Parameters
//
// For n keys and a target false-positive rate p, New picks the classic
// optimum
//
//	m = ⌈−n·ln p / (ln 2)²⌉ bits (≈ 9.59 bits per key at p = 1%),
//	k = round((m/n)·ln 2) probes (7 at p = 1%),
//
// and NewWithConfig takes m and k directly. p must be in [MinP, 1), where MinP
// = 2^-64 ≈ 5.4e-20 (k = 64 probes, 92 bits per key): double hashing
// cannot deliver smaller rates, so New refuses them (see MinP).
// After n distinct keys the expected
// false-positive rate is
//
//	FPR ≈ (1 − e^(−k·n/m))^k,
//
// and, given the current fraction of set bits (the fill), it is fill^k,
// which is what Stats.FPR reports. The number of distinct keys can
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
// one this package does not compute. All index arithmetic is
// 64-bit: filters of more than 2^32 bits work, up to MaxBits.
//
// # Assumptions
//
// The false-positive rate is a probability over the hash function, so it
// assumes keys that do not depend on it. XXH3 is fast, not cryptographic:
// anyone who knows the seed (0 by default) can search for keys that test
// positive. Where keys come from an adversary, give filters a secret seed
// (the Seed field of each Config); false negatives remain
// impossible either way.
//
// # Scalable filters
//
// A Scalable (Almeida, Baquero, Preguiça & Hutchison 2007, "Scalable Bloom
// Filters") is a chain of Filters for sets whose size is not known in
// advance. When the newest filter holds its capacity, a new one with Growth
// times the capacity and Tightening (r) times the error rate is appended.
// Sub-filter i has error rate p0·(1−r)·r^i, so the compound false-positive
// rate, at most Σ p0·(1−r)·r^i (Almeida et al.'s P0/(1−r) with P0 =
// p0·(1−r) the first sub-filter's rate), stays below p0 however many
// sub-filters there are, provided each sub-filter meets its own rate. With
// the classic formula tiny first sub-filters do not quite: with the
// small-filter cost above and the noisy fill of a filter of a few hundred
// items, a chain with capacity 100, growth 2 and p0 = 1% measures about
// 1.1%. The default sizing of sub-filters therefore enlarges
// small sub-filters until they meet their rates with high probability (for
// 0.1% more memory in all): the same chain measures about 0.7% after 10M
// items. Double hashing cannot reach rates below about 1/(m·k), so
// sub-filters of a few items at tiny rates (growth 1, small capacity, many
// links) still exceed theirs; see chainsizing.go. A floor on the sub-filters'
// rate (MinErrorRate) keeps them from underflowing. The add semantics are
// RedisBloom's, so the same code serves as the server's BF.* filter with
// RedisBloom's sizing (which has the classic formula's overshoot).
//
// # Split-block filters
//
// An SBBF is a blocked Bloom filter (Putze, Sanders & Singler 2007, "Cache-,
// Hash- and Space-Efficient Bloom Filters") in the split-block form of the
// Apache Parquet format (BloomFilter.md of apache/parquet-format): the 64-bit
// XXH64 hash of a key (seed 0, as Parquet) picks one 256-bit block, and the
// low 32 bits, multiplied by eight fixed salts, pick one bit in each of the
// block's eight 32-bit lanes. A lookup touches one 32-byte block: one cache
// miss, against about k for a Filter, and no division. The price is memory:
// blocks are unevenly loaded, so at equal size the false-positive rate is
// higher. sbbfSizing sizes by the block-aware rate (a Poisson mixture over
// block loads, evaluated numerically): 10.5 bits per key at p = 1% against
// 9.6 for the classic filter, 16.9 against 14.4 at 0.1%. The bitset is
// Parquet's byte for byte (ParquetBitset, NewSBBFFromParquet, AppendParquet,
// DecodeParquet), checked against the parquet-testing conformance file.
// TestMany and AddMany hash a group of keys and touch all their blocks
// before using them, so the cache misses of a group overlap; for filters
// larger than the cache they are several times faster than a loop of Test.
// By default the block access uses unsafe pointer arithmetic without bounds
// checks (the block index is always in range by construction); the purego
// build tag selects a bounds-checked twin, and the tests run under both.
//
// # Counting filters
//
// A Counting filter (Fan, Cao, Almeida & Broder 2000, "Summary Cache")
// replaces each bit by a 4-bit counter, so items can be removed. Counters
// saturate at 15 and then stay there: an overflow can only keep removed
// items as false positives, never lose present ones. Remove refuses (it
// returns false and changes nothing) an item one of whose counters is 0. Removing
// an item that was never added but tests positive cannot be detected and
// can cause false negatives later; only remove what was added. It takes 4×
// the memory of a classic filter at the same false-positive rate.
//
// # Stable filters
//
// A Stable filter (Deng & Rafiei 2006, "Approximately detecting duplicates
// for streaming data using stable Bloom filters") keeps a fixed-size memory
// of the recent past of an unbounded stream: each Add decrements P cells
// before setting the item's k cells to their maximum, so the fraction of
// set cells, and the false-positive rate, converge to a stable point
// (StablePointFPR) however long the stream. It is the one documented
// exception to the package's promise: old items are forgotten, so Test can
// return false for an item that was added (a false negative, by design).
// Use it to detect recent duplicates, never as a set. NewStable(n, p)
// sizes it for a window: an item stays detectable for n further adds with
// probability about 1 − p, and the stable-point false-positive rate is
// about p (see NewStable); NewStableWithConfig takes m, d, k and P.
//
// # Concurrency
//
// A Filter and an SBBF are safe for concurrent Add and Test from many
// goroutines: bits are set with atomic OR and read with atomic loads,
// without a lock. A Scalable, a Counting and a Stable filter are not:
// callers serialize modifications with their own lock (concurrent reads
// alone are safe).
//
// # Encoding
//
// Every type implements encoding.BinaryMarshaler,
// encoding.BinaryUnmarshaler, encoding.BinaryAppender, io.WriterTo and
// io.ReaderFrom in one versioned, self-describing, CRC-32C-checked format
// (magic "PRBL"; kinds 1 classic, 2 scalable, 4 counting, 5 stable, 6
// split-block, and 3 for package cuckoo's filter), specified byte by byte in
// docs/FORMATS.md of this module. Decoders validate the whole input before
// allocating or changing anything, and never allocate more than the input
// backs: corrupted or truncated input gives an error (ErrChecksum,
// ErrFormat, ErrVersion, io.ErrUnexpectedEOF), never a filter with missing
// keys.
package bloom
