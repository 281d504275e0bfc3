// Package guard puts an approximate-membership filter in front of a cache
// and a database, so that lookups of keys that do not exist (cache
// penetration) cost nanoseconds instead of a database query, and keeps that
// filter in step with the database through a change stream.
//
// # Request path
//
// Guard.Get(key):
//
//  1. The serving filter says "definitely absent": not found. The cache
//     and the database are never touched (Stats.Negatives).
//  2. Otherwise ("maybe", Stats.Positives), the negative cache (an
//     otter/v2 cache with a TTL) is asked; a hit means not found. It holds
//     keys the database recently did not have: repeated false positives and
//     keys deleted since the filter was built.
//  3. Otherwise the Loader (cache, then database) answers. A miss after a
//     filter positive is a false positive: it is counted
//     (Stats.BackingMisses, Stats.FalsePositives) and enters the negative
//     cache.
//
// Observed FPR = false positives / filter positives (Stats.ObservedFPR),
// as operators read it: the share of "maybe" answers that cost a wasted
// lookup. Since it depends on how many lookups are for existing keys,
// Stats.NonMemberFPR = false positives / (negatives + false positives) is
// the rate to compare with the target p, and the rebuild trigger uses the
// same ratio per version (from loader misses; see RebuildPolicy).
//
// # Lifecycle
//
// A version of the filter is built from a Snapshot (every key, plus the
// stream position the snapshot reflects), then catches up from the Stream
// starting after that position, and only then is swapped in atomically
// (an atomic.Pointer): readers never see a partially built filter. Until
// the first version is ready, and whenever the serving version's Add has
// failed, Get does not trust the filter and asks the negative cache and
// the loader for every key ("maybe"): a filter that is still loading never
// answers "definitely absent".
//
// After the swap the serving version applies every change in stream order
// (adds; deletes where the filter can delete, that is cuckoo and counting
// Bloom), and the Guard exposes the position it has applied (Applied), a
// safe watermark: every key whose add is at or before that position is
// found. A writer that needs read-your-writes publishes its change, learns
// its position and calls WaitApplied. A new version is built when a trigger of RebuildPolicy fires
// (items over capacity, estimated or observed false-positive rate over a
// multiple of the target, a failed Add) or on Rebuild; the serving version
// keeps answering and applying changes meanwhile, and the new one replaces
// it once it has caught up to at least the same position.
//
// # What it promises
//
//   - No false negatives for applied keys: Get never answers "not found"
//     for a key added at or before Applied() and not deleted since, and
//     Test never answers false for it. This includes the negative cache:
//     an add invalidates the key's entry, and a loader miss that raced with
//     an add (the loader read before the commit, the add was applied before
//     the miss was cached) is detected and dropped (see Get).
//   - Versions are published whole, at a position no earlier than the one
//     they replace; Applied never decreases.
//   - Stream failures do not stop lookups: the serving version keeps
//     answering at its applied position, and the Guard resubscribes after
//     the last change it applied, with backoff (reset whenever a change
//     arrives). A version catching up keeps the target of its first
//     subscription across resubscriptions, so one whose stream fails
//     more often than its backlog drains still gets ready.
//
// # What it assumes
//
//   - A change's stream position is assigned no earlier than its commit
//     (publish after commit, or a transactional outbox), and the stream
//     delivers changes in position order without gaps.
//   - With a deleting filter (cuckoo, counting Bloom), the snapshot is
//     exact and a delete follows the add of the same key: deleting a key
//     that was never added can remove another key's fingerprint or counts.
//     A filter without deletes (Bloom, SBBF, scalable) tolerates fuzzy
//     snapshots (read the stream head, then scan without a transaction).
//
// # Filters
//
// Adapters (and NewFilterFuncs) exist for every probly filter that has no
// false negatives: classic Bloom (NewBloom), split-block Bloom (NewSBBF),
// counting Bloom (NewCounting, deletes), scalable Bloom (NewScalable) and
// cuckoo (NewCuckoo, deletes). They are one code path: every probly
// membership filter speaks the library vocabulary (docs/LIBRARY.md:
// Add(key) error, Test(key) bool, Remove(key) bool, Stats), so an adapter
// only adds a read-write lock where the filter needs one (all but the
// lock-free classic and split-block Bloom filters) and reads its Stats
// into FilterStats. A failed Delete (the filter holds no copy of the key)
// is logged and changes nothing. The stable Bloom filter (bloom.Stable) is
// deliberately left out: it forgets items by design, so it would make the
// Guard answer "not found" for existing keys.
//
// # Cost
//
// Get: one filter test (Bloom: k memory probes, no allocation) for a
// negative; for a maybe, one negative-cache lookup (one string conversion
// of the key) and, on a cache miss, the loader. Memory: the serving filter,
// during a rebuild a second one, plus the negative cache (bounded by
// NegativeCacheSize). One goroutine runs the lifecycle; each subscription
// adds one.
//
// # Metrics
//
// Stats returns the counters and the serving version's fill, capacity,
// estimated FPR, age, applied position, stream lag and rebuild time;
// Collector exposes the same as Prometheus metrics (probly_guard_*).
//
// The NATS JetStream change stream lives in package
// github.com/probly/probly/guard/natsstream.
package guard
