// Package tdigest is the merging t-digest of Dunning and Ertl: a compact
// summary of a stream of numbers that answers quantile, CDF and rank
// questions, most accurately near the tails (the p99.9 as well as the
// median), and that merges with other digests.
//
// It follows probly's library vocabulary (docs/LIBRARY.md): New(compression)
// and NewWithConfig build a Digest; Add, Merge, Reset and Stats use the same
// words as bloom, cuckoo and hll; the queries are Quantile, Quantiles, CDF,
// Rank, RevRank, ByRank, ByRevRank, TrimmedMean, Min and Max.
//
// # Promise
//
// Min and Max are exact. Quantile(q) interpolates between centroids whose
// weight is bounded by the scale function 2π·T·ln T·q(1−q)/C (T the total
// weight, C the compression), so a centroid near quantile q holds at most
// about that fraction of the data: the rank error of a quantile estimate is
// of order q(1−q)·2π·ln T/C in absolute quantile terms, small at the tails.
// The accuracy tests of this package check, on uniform, normal,
// exponential and heavily tied data, that the true rank of Quantile(q)
// differs from q by at most 3·max(q(1−q)·2π·ln T/C, 1/T) (plus the width
// of ties) — the scale-function bound of Dunning & Ertl (2019), §2.1 and
// §3, with a safety factor 3 for interpolation (their Fig. 5 reports errors
// well inside it). Values equal to a tied value get the CDF of the middle
// of its run.
//
// The results are bit-identical to RedisBloom 8.x's TDIGEST.* commands,
// which use t-digest-c at commit 5b89d70: same capacity, same buffer, same
// quicksort (its order among equal means decides which weights merge),
// same merge pass and same query rules, quirks included. In particular a
// digest whose total weight is 1 never merges its buffer, so its Quantile
// and CDF are NaN (upstream bug MOD-13821, kept for compatibility).
//
// # Representation and cost
//
// A Digest of compression C holds at most cap = 6·C + 10 nodes of 16 bytes
// (mean float64, weight int64): sorted centroids followed by a buffer of
// incoming values. The node array grows on demand up to cap, so memory is
// at most 16·cap bytes plus a small header (9,760 bytes at the default
// C = 100).
//
//   - Add: O(1) amortised; when the array is full, one compression: a
//     quicksort of all nodes (O(cap·log cap) typically, O(cap²) when many
//     means are equal, as upstream) and one linear merge pass.
//   - Queries: one compression if the buffer is not empty, then O(cap).
//   - Merge: compresses both digests, then adds every node of the source.
//
// # Concurrency
//
// Unlike bloom and hll, every query (Quantile, CDF, Rank …) compresses the
// buffer first and so writes the digest: a Digest needs exclusive access
// for queries too. Min, Max, Stats and the encoding methods only read.
//
// # Sources
//
//   - T. Dunning, O. Ertl, "Computing Extremely Accurate Quantiles Using
//     t-Digests", arXiv:1902.04023 (2019): the merging digest.
//   - RedisBloom's t-digest-c (deps/t-digest-c, commit 5b89d70) as specified
//     by probly's shared/spec/redis-sketches.md §3.2–§3.4: the exact
//     operation order this package reproduces.
package tdigest
