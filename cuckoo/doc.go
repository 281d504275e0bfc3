// Package cuckoo implements the cuckoo filter (Fan, Andersen, Kaminsky &
// Mitzenmacher 2014, "Cuckoo Filter: Practically Better Than Bloom"): an
// approximate set that, unlike a Bloom filter, supports deleting keys and
// counting copies.
//
// It follows probly's library vocabulary (docs/LIBRARY.md): New(n, p) and
// NewWithConfig build a Filter, which grows by default; Add, Test,
// TestAndAdd, Remove and Count (with *Hash and *Many forms), Compact,
// Reset and Stats use the same words and return conventions as every
// other probly package.
//
// # What it promises
//
// Test(x) is false only if x was never added or every added copy was
// removed: there are no false negatives, including after an Add fails. An
// Add that finds no room runs a bounded kick-out walk and, if that fails
// too, undoes every move it made, so the filter is exactly as it was and
// returns ErrFull (or, when the filter grows, adds a sub-filter). Popular Go cuckoo filters drop an evicted fingerprint at
// that point, turning keys that were inserted successfully into false
// negatives; this one never does (TestNoKeyLostWhenFull).
//
// The one documented way to lose a key: Remove(x) of a key x that was
// never added can remove the fingerprint of another key y that shares x's
// fingerprint and one of its buckets, and y is then no longer found.
// Remove only keys you added.
//
// # Structure and parameters
//
// Each key is hashed once into a 64-bit h (default XXH3-64, hash ID
// HashXXH3; the *Hash methods take any h). From h come a fingerprint of f
// bits and two buckets (partial-key cuckoo hashing):
//
//	fp = h mod (2^f − 1) + 1          (1 … 2^f − 1; 0 marks an empty slot)
//	h1 = h,   h2 = h1 XOR fp·0x5bd1e995
//	bucket_i = h_i mod buckets         (buckets is a power of two)
//
// so the alternate bucket of a fingerprint in bucket i is
// (i XOR fp·0x5bd1e995) mod buckets, computable without the key, and
// alt(alt(i)) = i. A bucket has b slots (BucketSize, 1 … 255, default 4);
// a slot holds one fingerprint of f = 8 or 16 bits (FingerprintBits,
// default 16), taking one or two bytes.
//
// A filter is a list of sub-filters. The first has
// nextPow2(Capacity / b) buckets; when an Add finds no room, a sub-filter
// with e times the buckets of the previous one is added (Expansion e,
// default 2, rounded up to a power of two; NoGrowth turns this off). An
// Add tries an empty slot in bucket h1, then h2, in every sub-filter from
// the newest to the oldest; then kicks fingerprints out along a path of at
// most MaxKicks steps in the newest sub-filter; then grows. Test, Count
// and Remove probe both buckets of every sub-filter. Compact moves
// fingerprints from newer sub-filters into free slots of older ones and
// releases emptied sub-filters.
//
// With 8-bit fingerprints and MurmurHash64A (seed 0) as the hash, this is
// exactly RedisBloom's cuckoo filter, bit for bit: probly's server runs its
// CF.* commands on this package, compatibly with RedisBloom; the choice of
// insert order, victim slots and undo walk follows RedisBloom's cuckoo.c.
//
// # False-positive rate
//
// A key never inserted is reported present when a slot in one of its two
// buckets holds its fingerprint. With load α (fraction of slots in use) in
// one sub-filter, that has probability
//
//	FPR ≈ 1 − (1 − 1/(2^f − 1))^(2b·α) ≈ 2b·α / (2^f − 1),
//
// about 2b/2^f for a full table, and the rates of the sub-filters add up.
// Stats().FPR evaluates the formula for the current loads. At full
// load:
//
//	bucket size b   f = 8 bits   f = 16 bits   highest load reached
//	1               0.78 %       0.0031 %      ~50 %
//	2               1.57 %       0.0061 %      ~84 %
//	4               3.14 %       0.0122 %      ~95 %
//	8               6.27 %       0.0244 %      ~98 %
//
// TestFalsePositiveRate measures the rate at 50%, 80% and 95% load for
// both widths (2^14 buckets, at least 100/p probes of keys never inserted)
// and requires it inside the 99.99% binomial interval around the formula
// and below the full-table rate. Measured with bucket size 4:
//
//	load   f = 8: theory   measured   f = 16: theory   measured
//	50 %   1.56 %          1.55 %     6.1·10⁻⁵         5.7·10⁻⁵
//	80 %   2.48 %          2.47 %     9.8·10⁻⁵         1.1·10⁻⁴
//	95 %   2.94 %          2.96 %     1.16·10⁻⁴        0.88·10⁻⁴
//
// and with bucket size 2 (RedisBloom's default): 0.783 % / 0.793 % and
// 1.25 % / 1.25 % (f = 8, 50 % and 80 %), 3.05·10⁻⁵ / 3.02·10⁻⁵ and
// 4.88·10⁻⁵ / 4.98·10⁻⁵ (f = 16).
//
// # Cost
//
// Memory: the tables, b·f/8 bytes per bucket, plus about 100 bytes; a
// filter at load α spends about f/α bits per key. Test and Count hash
// the key once and read two buckets per sub-filter (two cache misses for a
// large filter); Remove the same. Add is usually as cheap and at most
// MaxKicks swaps (twice that when the walk fails and is undone), plus the
// allocation of a new sub-filter when it grows. Nothing allocates except
// growth, Clone and encoding.
//
// # Concurrency
//
// A Filter is not safe for concurrent use when any goroutine modifies it.
// Concurrent read-only calls (Test, Count, Stats, encoding) are safe.
// Serialize modifications with a sync.RWMutex.
//
// # Encoding
//
// Filter implements encoding.BinaryMarshaler, encoding.BinaryUnmarshaler,
// encoding.BinaryAppender, io.WriterTo and io.ReaderFrom in the versioned,
// CRC-32C-checked format of the bloom package's family (magic "PRBL", kind
// 3), specified byte by byte in docs/FORMATS.md of this module. Decoders
// validate the whole input before allocating or changing anything and
// never allocate more than the input backs.
package cuckoo
