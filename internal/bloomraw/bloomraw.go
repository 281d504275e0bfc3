// Package bloomraw is the server's backdoor into package bloom: the
// operations only internal/redisbloom (and the CLI's bulk builder) need,
// which must not be public because they can break a filter's invariants
// (set the item count, overwrite bits, restore a chain without
// validation) or name a hash the bloom package cannot compute.
//
// The pattern (docs/LIBRARY.md, "How the server uses the library"):
// package bloom keeps its implementation and, in its init, calls Register
// with a Hooks value instantiated over its own types; an adapter fetches
// it once with Get and calls the fields. This package imports nothing from
// probly, so there is no import cycle; only the module can import it.
//
// The hooks do no more validation than the unexported functions they
// wrap: callers validate their input first (redisbloom validates the Redis
// header and chunk offsets).
package bloomraw

// HashMurmur64A is the hash ID of RedisBloom's pair h1 = MurmurHash64A(key,
// 0xc6a4a7935bd1e995), h2 = MurmurHash64A(key, h1)
// (internal/hashing.RedisBloomPair). Package bloom records it but cannot
// compute it: filters with this ID take only pre-computed hashes.
const HashMurmur64A = 2

// Link is one sub-filter of a scalable filter: F is bloom.Filter.
type Link[F any] struct {
	Filter    *F
	Capacity  uint64  // items the sub-filter was sized for
	ErrorRate float64 // false-positive rate it was sized for
}

// Hooks are package bloom's server-only operations. F is bloom.Filter,
// B bloom.SBBF, S bloom.Scalable, T bloom.Stable and C
// bloom.ScalableConfig.
type Hooks[F, B, S, T, C any] struct {
	// FilterN is the filter's item count; SetN overwrites it.
	FilterN    func(f *F) uint64
	FilterSetN func(f *F, n uint64)
	// FilterM, FilterK and FilterBytes are the bit count, probe count and
	// bitset size in bytes.
	FilterM     func(f *F) uint64
	FilterK     func(f *F) uint32
	FilterBytes func(f *F) uint64
	// FilterSetHash records the hash ID (any, e.g. HashMurmur64A) and seed.
	FilterSetHash func(f *F, id uint16, seed uint64) error
	// ReadBitsAt copies bitset bytes from byte offset off into dst and
	// returns the count; WriteBitsAt overwrites bitset bytes (it may clear
	// bits).
	ReadBitsAt  func(f *F, dst []byte, off uint64) int
	WriteBitsAt func(f *F, src []byte, off uint64) error
	// FilterEqual compares parameters, count and bits.
	FilterEqual func(f, g *F) bool
	// AddHashManyExclusive adds pre-computed pairs without atomic
	// operations (the caller owns the filter exclusively).
	AddHashManyExclusive func(f *F, h1, h2 []uint64)

	// CanHashKeys reports whether the filter's hash ID is one package
	// bloom computes from keys (false: only the *Hash methods work).
	CanHashKeys func(f *F) bool
	// NewBuilder starts a bulk build into f, which the Builder owns until
	// Close: a goroutine sets the bits with plain stores.
	NewBuilder func(f *F) Builder

	// SBBFSeed and SBBFSetSeed read and replace a split-block filter's
	// hash seed (SetSeed only on an empty filter); SBBFAddHashMany and
	// SBBFTestHashMany are the batch forms on pre-computed hashes.
	SBBFSeed         func(b *B) uint64
	SBBFSetSeed      func(b *B, seed uint64)
	SBBFAddHashMany  func(b *B, h []uint64)
	SBBFTestHashMany func(b *B, h []uint64, out []bool) []bool

	// SBBFFalsePositiveRate is the theoretical false-positive rate of a
	// split-block filter of blocks blocks holding n items;
	// StablePointFPR the rate a stable filter converges to. Used by
	// scripts/fpr-plot.
	SBBFFalsePositiveRate func(blocks, n uint64) float64
	StablePointFPR        func(t *T) float64
	// StableSizing is the k and P (decrements) that give a stable filter
	// of m cells of d bits a stable-point rate of about p (Deng & Rafiei
	// 2006), for scripts/fpr-plot's fixed-memory comparison.
	StableSizing func(m uint64, d uint8, p float64) (k uint32, decrements uint64, err error)

	// Restore builds a
	// scalable filter from sub-filters without checking them against the
	// configuration's growth rule.
	Restore func(cfg C, links []Link[F]) (*S, error)
	// Links returns a copy of the sub-filter list, oldest first.
	Links func(s *S) []Link[F]
	// NumLinks, N, Capacity and Bytes are the sub-filter count, items
	// added, Σ capacity and Σ bitset bytes.
	NumLinks func(s *S) int
	N        func(s *S) uint64
	Capacity func(s *S) uint64
	Bytes    func(s *S) uint64
	// Config is the configuration with defaults filled in;
	// SetMaxBytes replaces its byte limit for future growth.
	Config      func(s *S) C
	SetMaxBytes func(s *S, n uint64)
	// Clone is a deep copy.
	Clone func(s *S) *S
}

// Builder fills a classic filter no other goroutine uses yet; see
// NewBuilder. It is not safe for concurrent use.
type Builder interface {
	Add(key []byte)
	AddHash(h1, h2 uint64)
	AddMany(keys [][]byte)
	// Close sets the remaining bits and waits; the filter may then be
	// shared.
	Close()
}

var hooks any

// Register records package bloom's hooks; bloom calls it from init.
func Register(h any) { hooks = h }

// Get returns the registered hooks as H (a Hooks instantiated over
// bloom's types). It panics if bloom registered none of that type: a
// programming error found at start-up, since adapters call it while their
// package initialises.
func Get[H any]() H {
	h, ok := hooks.(H)
	if !ok {
		panic("bloomraw: package bloom registered no hooks of this type")
	}
	return h
}
