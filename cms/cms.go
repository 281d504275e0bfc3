package cms

import (
	"fmt"
	"math"
	"math/bits"
)

// Limits.
const (
	// MaxCount is the largest value a cell holds (2^32 − 1). A cell that
	// reaches it saturates: it stays there, and an estimate of MaxCount
	// means "at least MaxCount".
	MaxCount = math.MaxUint32
	// MaxCells bounds Width·Depth (2^36 cells, 256 GiB of counters; on
	// 32-bit platforms the address space bounds it lower: 2^29 cells).
	MaxCells = 1 << 36

	maxCells = min(MaxCells, math.MaxInt/8) // the platform's bound
)

// Config gives a sketch's raw parameters (NewWithConfig).
type Config struct {
	// Width is the number of counters per row, ≥ 1. The error bound is
	// ε = e/Width (see Stats). Width·Depth is at most MaxCells.
	Width uint64
	// Depth is the number of rows, ≥ 1. The failure probability is
	// δ = e^−Depth.
	Depth uint32
	// Hash chooses the column function: HashXXH3 (the default, also for
	// 0) or HashMurmur2 (RedisBloom's cells).
	Hash HashID
	// Seed is the hash seed (default 0). With HashMurmur2 it must be at
	// most 2^32 − 1.
	Seed uint64
}

// Sketch is a count-min sketch (Cormode & Muthukrishnan, "An improved data
// stream summary: the count-min sketch and its applications", J.
// Algorithms 55(1), 2005): Depth rows of Width saturating 32-bit counters.
// Adding n copies of a key adds n to one counter per row; the estimate of
// a key is the minimum of its counters. The zero value is not usable:
// every method but UnmarshalBinary and ReadFrom panics on it with a
// message naming New and NewWithConfig.
//
// Concurrency: safe for concurrent readers (Count, CountHash, Stats,
// encoding); writers (Add*, Merge*, Reset, UnmarshalBinary, ReadFrom)
// need exclusive access.
type Sketch struct {
	width  uint64
	depth  uint32
	hashID HashID
	seed   uint64
	count  uint64
	cells  []uint32 // row-major: row i is cells[i·width : (i+1)·width]
}

// New returns an empty sketch sized for the question "estimate counts to
// within ε·N with probability at least 1 − δ", N being the total of all
// increments, by the paper's rule: Width = ⌈e/ε⌉, Depth = ⌈ln(1/δ)⌉
// (at least 1), HashXXH3 with seed 0. ε and δ must lie in (0, 1), and
// the sketch must fit in MaxCells (else ErrTooLarge); otherwise
// ErrInvalidParameter.
// Example: ε = 0.001, δ = 0.01 gives 2719 × 5 (54 KiB).
//
// RedisBloom's CMS.INITBYPROB sizes differently (Width = ⌈2/ε⌉, Depth =
// ⌈log2(1/δ)⌉ in single precision), which gives the same guarantee with
// Markov's bound at 1/2 per row instead of 1/e; the server uses that rule
// (internal/command/cms) and NewWithConfig.
//
// Cost: one allocation of 4·Width·Depth bytes.
func New(epsilon, delta float64) (*Sketch, error) {
	if !(epsilon > 0 && epsilon < 1) {
		return nil, fmt.Errorf("%w: epsilon %v not in (0, 1)", ErrInvalidParameter, epsilon)
	}
	if !(delta > 0 && delta < 1) {
		return nil, fmt.Errorf("%w: delta %v not in (0, 1)", ErrInvalidParameter, delta)
	}
	w := math.Ceil(math.E / epsilon)
	d := math.Max(1, math.Ceil(math.Log(1/delta)))
	if w > maxCells || d > maxCells || w*d > maxCells {
		return nil, fmt.Errorf("%w: epsilon %v, delta %v need %v × %v cells, more than %d", ErrTooLarge, epsilon, delta, w, d, uint64(maxCells))
	}
	return NewWithConfig(Config{Width: uint64(w), Depth: uint32(d)})
}

// NewWithConfig returns an empty sketch with c's parameters, or
// ErrInvalidParameter naming the field that is out of range (see Config),
// or ErrTooLarge for more than MaxCells counters.
// Cost: one allocation of 4·Width·Depth bytes.
func NewWithConfig(c Config) (*Sketch, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.Hash == 0 {
		c.Hash = HashXXH3
	}
	return &Sketch{width: c.Width, depth: c.Depth, hashID: c.Hash, seed: c.Seed,
		cells: make([]uint32, c.Width*uint64(c.Depth))}, nil
}

func (c Config) validate() error {
	switch {
	case c.Width == 0:
		return fmt.Errorf("%w: width 0", ErrInvalidParameter)
	case c.Depth == 0:
		return fmt.Errorf("%w: depth 0", ErrInvalidParameter)
	case c.Width > maxCells || uint64(c.Depth) > maxCells/c.Width:
		return fmt.Errorf("%w: width %d × depth %d is more than %d cells", ErrTooLarge, c.Width, c.Depth, uint64(maxCells))
	case c.Hash != 0 && c.Hash != HashXXH3 && c.Hash != HashMurmur2:
		return fmt.Errorf("%w: unknown hash ID %d", ErrInvalidParameter, uint16(c.Hash))
	case c.Hash == HashMurmur2 && c.Seed > math.MaxUint32:
		return fmt.Errorf("%w: seed %#x above 2^32-1 for %v", ErrInvalidParameter, c.Seed, HashMurmur2)
	}
	return nil
}

// Add adds one occurrence of key. It cannot fail (a counter that would
// pass MaxCount stays at MaxCount). Cost: one hash and Depth counter
// updates; no allocation.
func (s *Sketch) Add(key []byte) { s.AddN(key, 1) }

// AddN adds n occurrences of key (n = 0 changes nothing but is answered)
// and returns key's new estimate: the minimum of its counters after the
// update. Each counter becomes min(counter + n, MaxCount), computed
// exactly; the total N grows by n modulo 2^64 (it is not saturated, as in
// RedisBloom). An estimate of MaxCount means every counter of key is
// saturated. Cost as Add.
func (s *Sketch) AddN(key []byte, n uint64) uint64 {
	s.ready()
	if s.hashID == HashMurmur2 {
		est := uint64(MaxCount)
		base := uint64(0)
		for i := range s.depth {
			est = min(est, bump(&s.cells[base+murmurColumn(key, uint32(s.seed), i, s.width)], n))
			base += s.width
		}
		s.count += n
		return est
	}
	h1, h2 := Hash(key, s.seed)
	return s.addPair(h1, h2, n)
}

// AddHash is AddN on the pair Hash(key, seed) returns, for a HashXXH3
// sketch with that seed. It panics on a HashMurmur2 sketch, whose rows
// are not derived from one pair.
func (s *Sketch) AddHash(h1, h2 uint64, n uint64) uint64 {
	s.ready()
	s.pairOnly()
	return s.addPair(h1, h2, n)
}

func (s *Sketch) addPair(h1, h2 uint64, n uint64) uint64 {
	est := uint64(MaxCount)
	base := uint64(0)
	for i := range s.depth {
		est = min(est, bump(&s.cells[base+pairColumn(h1, h2, i, s.width)], n))
		base += s.width
	}
	s.count += n
	return est
}

// bump adds n to the counter *p, saturating, and returns the counter.
func bump(p *uint32, n uint64) uint64 {
	if n >= MaxCount-uint64(*p) {
		*p = MaxCount
	} else {
		*p += uint32(n)
	}
	return uint64(*p)
}

// Count returns the estimate of key's occurrences: the minimum of its
// counters. It never undercounts (unless a counter saturated: then it is
// MaxCount, a lower bound); with probability at least 1 − δ it exceeds
// the truth by at most ε·N (Stats). A key never added may answer more
// than 0. Cost: one hash and Depth reads; no allocation.
func (s *Sketch) Count(key []byte) uint64 {
	s.ready()
	est := uint64(MaxCount)
	if s.hashID == HashMurmur2 {
		for i := range s.depth {
			est = min(est, uint64(s.cells[uint64(i)*s.width+murmurColumn(key, uint32(s.seed), i, s.width)]))
		}
		return est
	}
	h1, h2 := Hash(key, s.seed)
	return s.countPair(h1, h2)
}

// CountHash is Count on a pair from Hash; it panics on a HashMurmur2
// sketch (see AddHash).
func (s *Sketch) CountHash(h1, h2 uint64) uint64 {
	s.ready()
	s.pairOnly()
	return s.countPair(h1, h2)
}

func (s *Sketch) countPair(h1, h2 uint64) uint64 {
	est := uint64(MaxCount)
	base := uint64(0)
	for i := range s.depth {
		est = min(est, uint64(s.cells[base+pairColumn(h1, h2, i, s.width)]))
		base += s.width
	}
	return est
}

// ready panics on the zero Sketch.
func (s *Sketch) ready() {
	if s.depth == 0 {
		panic("cms: use of a zero Sketch: create it with cms.New or cms.NewWithConfig")
	}
}

func (s *Sketch) pairOnly() {
	if s.hashID != HashXXH3 {
		panic("cms: AddHash/CountHash need a HashXXH3 sketch; this one uses " + s.hashID.String() + " (use Add/Count)")
	}
}

// Merge adds other's counters and total into s: MergeWeighted with s and
// other, weights 1 and 1. Errors: ErrIncompatible (other parameters),
// ErrOverflow (a counter sum above MaxCount or a total above 2^63−1; s is
// unchanged). Cost as MergeWeighted.
func (s *Sketch) Merge(other *Sketch) error {
	return s.MergeWeighted([]*Sketch{s, other}, []int64{1, 1})
}

// MergeWeighted replaces s's counters and total by the weighted sums
// Σ weights[k]·srcs[k] (s's own content counts only if s is among srcs;
// a sketch may be listed more than once), exactly as RedisBloom's
// CMS.MERGE … WEIGHTS (spec redis-sketches.md §1.2). Every source must
// have s's width, depth, hash ID and seed (ErrIncompatible), and
// len(weights) must equal len(srcs) ≥ 1 (ErrInvalidParameter).
//
// Overflow is checked before anything is written, and any failure is
// ErrOverflow with s unchanged: for every cell each product and each
// running sum must fit in int64 and the final sum must lie in [0,
// MaxCount]; each total is taken as unsigned, must be at most 2^63−1, and
// its products and running sums must fit in int64 with a final sum ≥ 0.
// So weights 1, −1 subtract a sketch, and negative weights never leave a
// negative counter.
//
// Cost: one pass over len(srcs)·Width·Depth counters and 8·Width·Depth
// bytes of int64 sums, allocated once.
func (s *Sketch) MergeWeighted(srcs []*Sketch, weights []int64) error {
	s.ready()
	if len(srcs) == 0 || len(srcs) != len(weights) {
		return fmt.Errorf("%w: %d sources, %d weights", ErrInvalidParameter, len(srcs), len(weights))
	}
	for _, o := range srcs {
		if !s.compatible(o) {
			return fmt.Errorf("%w: %d×%d %v seed %d and %d×%d %v seed %d", ErrIncompatible,
				s.width, s.depth, s.hashID, s.seed, o.width, o.depth, o.hashID, o.seed)
		}
	}
	a := newSum(s)
	for k, o := range srcs {
		a.add(o, weights[k])
	}
	if !a.apply(s) {
		return fmt.Errorf("%w: weighted sums do not fit", ErrOverflow)
	}
	return nil
}

func (s *Sketch) compatible(o *Sketch) bool {
	return o.width == s.width && o.depth == s.depth && o.hashID == s.hashID && o.seed == s.seed
}

// sum accumulates MergeWeighted's weighted sums source by source, which
// gives every cell the same sequence of products and partial sums as
// RedisBloom's cell-by-cell loop, hence the same overflow verdict.
type sum struct {
	cells  []int64
	total  int64
	failed bool
}

func newSum(like *Sketch) *sum { return &sum{cells: make([]int64, len(like.cells))} }

// add adds w·src (src compatible with the sketch the sum was made for).
func (a *sum) add(src *Sketch, w int64) {
	if a.failed {
		return
	}
	ok := src.count <= math.MaxInt64
	if ok {
		a.total, ok = mulAdd(a.total, int64(src.count), w)
	}
	for j, c := range src.cells {
		if !ok {
			break
		}
		a.cells[j], ok = mulAdd(a.cells[j], int64(c), w)
	}
	a.failed = !ok
}

// apply checks the final sums and, if they fit, writes them to dst (of
// the sums' size) and reports true; else dst is unchanged.
func (a *sum) apply(dst *Sketch) bool {
	if a.failed || a.total < 0 || len(a.cells) != len(dst.cells) {
		return false
	}
	for _, v := range a.cells {
		if v < 0 || v > MaxCount {
			return false
		}
	}
	for j, v := range a.cells {
		dst.cells[j] = uint32(v)
	}
	dst.count = uint64(a.total)
	return true
}

// mulAdd returns sum + a·b and whether the product and the sum fit in
// int64.
func mulAdd(sum, a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(magnitude(a), magnitude(b))
	neg := (a < 0) != (b < 0)
	if hi != 0 || lo > 1<<63 || (lo == 1<<63 && !neg) {
		return 0, false
	}
	p := int64(lo) // lo = 2^63 (negative product only) is MinInt64
	if neg && lo != 1<<63 {
		p = -p
	}
	r := sum + p
	if (p > 0 && r < sum) || (p < 0 && r > sum) {
		return 0, false
	}
	return r, true
}

// magnitude returns |x| as a uint64 (MinInt64 gives 2^63).
func magnitude(x int64) uint64 {
	if x < 0 {
		return uint64(-x)
	}
	return uint64(x)
}

// Reset sets every counter and the total back to 0; the parameters stay.
func (s *Sketch) Reset() {
	s.ready()
	clear(s.cells)
	s.count = 0
}

// Stats describes a sketch. Computing it reads no counter (O(1)).
type Stats struct {
	Width uint64 // counters per row
	Depth uint32 // rows
	M     uint64 // counters in all: Width·Depth
	K     int    // hash functions (one per row): Depth
	Bytes uint64 // memory of the counters: 4·M
	// N is the total of all increments (modulo 2^64), the N of the error
	// bound.
	N uint64
	// Epsilon (e/Width) and Delta (e^−Depth) are the guarantee of the
	// paper for these dimensions: Count exceeds the truth by more than
	// Epsilon·N with probability at most Delta.
	Epsilon, Delta float64
	Hash           HashID
	Seed           uint64
}

// Stats returns the sketch's parameters and total.
func (s *Sketch) Stats() Stats {
	s.ready()
	m := s.width * uint64(s.depth)
	return Stats{Width: s.width, Depth: s.depth, M: m, K: int(s.depth), Bytes: 4 * m, N: s.count,
		Epsilon: math.E / float64(s.width), Delta: math.Exp(-float64(s.depth)), Hash: s.hashID, Seed: s.seed}
}

// Clone returns a deep copy of s.
func (s *Sketch) Clone() *Sketch {
	s.ready()
	c := *s
	c.cells = append([]uint32(nil), s.cells...)
	return &c
}
