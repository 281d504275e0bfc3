// Package cms is a count-min sketch: approximate occurrence counts of the
// keys of a stream too large to count exactly, in fixed memory.
//
// Source: G. Cormode and S. Muthukrishnan, "An improved data stream
// summary: the count-min sketch and its applications", Journal of
// Algorithms 55(1):58–75, 2005.
//
// Promise. A sketch of Width w and Depth d, after increments totalling N,
// answers Count(x) ≥ the true count of x for every key (it never
// undercounts; the one exception is a counter that reached MaxCount, which
// saturates and then reads as "at least MaxCount"), and Count(x) ≤ true +
// ε·N with probability at least 1 − δ for each query, where ε = e/w and
// δ = e^−d (Markov's inequality on each row, rows independent). New(ε, δ)
// picks w = ⌈e/ε⌉ and d = ⌈ln(1/δ)⌉; Stats reports ε and δ of any sketch.
// The error grows with N, not with the key's own count: the sketch suits
// heavy keys, and reads a light key as noise of order ε·N.
//
// Cost. 4·w·d bytes; Add and Count hash the key once (HashXXH3) or once
// per row (HashMurmur2) and touch one counter per row; Merge and
// MergeWeighted are linear in the counters.
//
// Hashing. The default column function, HashXXH3, derives every row from
// one XXH3-128 of the key. HashMurmur2 is RedisBloom's (row i:
// MurmurHash2(key, i) mod w), so a sketch with the same width and depth
// has the same counters as a RedisBloom CMS key fed the same increments;
// the server's CMS.* commands use it.
//
// Merging. Merge adds another sketch of the same shape; MergeWeighted
// forms Σ w_k·sketch_k with integer weights (negative ones subtract),
// refusing with ErrOverflow, before any change, a result that does not fit
// in the counters, as RedisBloom's CMS.MERGE … WEIGHTS does.
//
// The package follows probly's library vocabulary (docs/LIBRARY.md): New
// and NewWithConfig, Add / AddHash / Count, Merge, Reset, Stats, the
// binary encoding of docs/FORMATS.md ("Count-min sketch") shared with the
// server's snapshots, and errors wrapping ErrInvalidParameter,
// ErrTooLarge, ErrIncompatible, ErrOverflow, ErrFormat, ErrVersion and
// ErrChecksum.
package cms
