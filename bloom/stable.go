package bloom

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// MaxStableCellBits is the largest cell width d of a Stable filter.
const MaxStableCellBits = 8

// Stable is a stable Bloom filter (Deng & Rafiei 2006, "Approximately
// detecting duplicates for streaming data using stable Bloom filters"): a
// fixed-size memory of the recent past of an unbounded stream.
//
// FALSE NEGATIVES ARE POSSIBLE, BY DESIGN. Stable is the one structure of
// this package (and the one documented exception to probly's
// no-false-negatives invariant) whose Test may answer false for an item
// that was added: it forgets old items to make room for new ones. Use it to
// detect recent duplicates in a stream, never as a set.
//
// It has m cells of d bits (values 0 … Max = 2^d − 1). Add first
// decrements P cells (those at a random position and the P − 1 after it,
// wrapping, as Deng & Rafiei suggest; cells at 0 stay 0), then sets the
// item's k cells, chosen by double hashing as in Filter
// (x_i = (h1 + i·h2) mod m), to Max. Test reports whether all k cells are
// nonzero. After enough adds the fraction of zero cells converges to a
// stable point, whatever the length of the stream, and so does the
// false-positive rate (StablePointFPR):
//
//	FPS = (1 − (1 / (1 + 1/(P·(1/k − 1/m))))^Max)^k.
//
// An item stays present while each of its cells survives: a cell set to
// Max is decremented with probability P/m per later add, so it reaches 0
// after about Max·m/P adds on average unless another item sets it again.
// Larger cells (d) and fewer decrements (P) remember longer at the price of
// a higher stable false-positive rate.
//
// Memory: ⌈m/⌊64/d⌋⌉ 64-bit words plus a fixed header. Add costs one hash,
// P sequential cell decrements and k random cell writes; Test one hash and
// up to k random reads. Neither allocates.
//
// Concurrency: Test, TestHash, N, Stats and the encoders may run
// concurrently with each other; Add, TestAndAdd and the setters change the
// cells and the random state and must not run concurrently with any other
// use (the caller locks).
//
// The zero Stable is not usable; create one with NewStable or
// NewStableWithConfig, or call UnmarshalBinary / ReadFrom on it. On the zero value Add, Test and their forms, Stats and the
// encoders panic with a message naming these; the getters return zeros.
type Stable struct {
	words   []uint64
	m       uint64 // cells
	d       uint32 // bits per cell
	perWord uint64 // ⌊64/d⌋ cells per word
	max     uint64 // 2^d − 1
	k       uint32
	p       uint64 // cells decremented per add
	hashID  HashID
	seed    uint64
	rng     uint64 // splitmix64 state
	n       uint64 // adds
	targetP float64
}

// stableSizing returns the number of probes k and of decrements P per add
// that give a stable filter of m cells of d bits a stable-point
// false-positive rate of about p (Deng & Rafiei 2006): k = round(log2(1/p))
// (at least 1, at most m−1) and P, solved from the FPS formula (see
// Stable), rounded to the nearest integer ≥ 1. Rounding P moves the stable
// rate away from p: StablePointFPR reports the exact one. Errors wrap
// ErrInvalidParameter: m < 2, d ∉ [1, 8], p ∉ (0, 1); and ErrTooLarge if
// m·d exceeds MaxBits.
func stableSizing(m uint64, d uint8, p float64) (k uint32, decrements uint64, err error) {
	if err := checkStableMD(m, d); err != nil {
		return 0, 0, err
	}
	if !(p > 0 && p < 1) {
		return 0, 0, fmt.Errorf("%w: false-positive rate p must be in (0, 1), got %v", ErrInvalidParameter, p)
	}
	kf := math.Max(1, math.Round(-math.Log2(p)))
	kf = math.Min(kf, math.Min(float64(MaxK), float64(m-1)))
	k = uint32(kf)
	maxV := float64(uint64(1)<<d - 1)
	// (1 − p^(1/k))^(−1/Max) − 1, computed without cancellation.
	z := math.Pow(p, 1/kf)
	q := math.Expm1(-math.Log1p(-z) / maxV)
	pf := 1 / ((1/kf - 1/float64(m)) * q)
	switch {
	case !(pf < float64(m)):
		decrements = m
	case pf < 1:
		decrements = 1
	default:
		decrements = uint64(math.Round(pf))
	}
	return k, decrements, nil
}

func checkStableMD(m uint64, d uint8) error {
	switch {
	case d == 0 || d > MaxStableCellBits:
		return fmt.Errorf("%w: CellBits (d) must be in [1, %d], got %d", ErrInvalidParameter, MaxStableCellBits, d)
	case m < 2:
		return fmt.Errorf("%w: M (cells) must be at least 2, got %d", ErrInvalidParameter, m)
	case m > MaxBits/uint64(d):
		return fmt.Errorf("%w: M=%d cells of %d bits is more than MaxBits (%d)", ErrTooLarge, m, d, MaxBits)
	}
	return nil
}

// NewStable returns an empty stable filter for duplicate detection over
// a window of n adds at false-positive rate p: its stable-point
// false-positive rate (StablePointFPR, for an item not seen in the stream)
// is about p, and an item added is still reported by Test after n further
// adds (of other items) with probability at least about 1 − p. Deng &
// Rafiei size a stable filter from its memory and a target stable-point
// rate; the window n is what fixes the memory here:
//
//   - for each cell width d in [1, 8] (Max = 2^d − 1), k and P come from
//     the stable-point formula for m cells (stableSizing: k = round(log2
//     1/p), P solved from FPS = p);
//   - a cell set to Max survives n further adds unless it is decremented
//     Max times; each add decrements it with probability P/m, so the item's
//     k cells all survive with probability about
//     (Pr[Poisson(n·P/m) < Max])^k, ignoring later adds that set them again
//     (which only help); m is the smallest with 1 − that ≤ p;
//   - the d (and m) of least memory m·d wins.
//
// At p = 1% that is d = 6 and about 86 bits per item of the window (at
// 0.1%, d = 7, about 143): 9× a classic filter of n items, the price of
// bounding the false negatives as well as the false positives. Stats
// reports the result (M cells, K); StableConfig sets every parameter
// instead.
//
// The filter uses hash HashXXH3_128 seed 0 and a random decrement
// sequence; it records p as its target p (Capacity stays 0: the stream is
// unbounded). Errors wrap ErrInvalidParameter (n = 0, p ∉ (0, 1), NaN) or
// ErrTooLarge (the window needs more than MaxBits bits). Cost: a few
// thousand evaluations of the formulas, and 8·⌈m/⌊64/d⌋⌉ bytes.
func NewStable(n uint64, p float64) (*Stable, error) {
	if n == 0 {
		return nil, fmt.Errorf("%w: window n must be at least 1, got 0", ErrInvalidParameter)
	}
	if !(p > 0 && p < 1) {
		return nil, fmt.Errorf("%w: false-positive rate p must be in (0, 1), got %v", ErrInvalidParameter, p)
	}
	var best StableConfig
	for d := uint8(1); d <= MaxStableCellBits; d++ {
		m, ok := stableWindowCells(n, d, p)
		if !ok || (best.M != 0 && m*uint64(d) >= best.M*uint64(best.CellBits)) {
			continue
		}
		k, dec, err := stableSizing(m, d, p)
		if err != nil {
			return nil, err
		}
		best = StableConfig{M: m, CellBits: d, K: k, Decrements: dec}
	}
	if best.M == 0 {
		return nil, fmt.Errorf("%w: a window of n=%d adds at p=%v needs more than MaxBits (%d) bits", ErrTooLarge, n, p, MaxBits)
	}
	s := newStable(best)
	s.targetP = p
	return s, nil
}

// stableWindowCells returns the smallest m for which a stable filter of m
// cells of d bits, with stableSizing's k and P, keeps an item through n
// later adds with probability ≥ 1 − p (see NewStable), and false if none
// fits MaxBits. Only m for which stableSizing's k and P are not clipped
// (k < m, P < m) count: there the loss probability falls as m grows, so
// doubling then bisection finds the smallest.
func stableWindowCells(n uint64, d uint8, p float64) (uint64, bool) {
	kWant := uint32(math.Min(math.Max(1, math.Round(-math.Log2(p))), float64(MaxK)))
	fits := func(m uint64) bool {
		k, dec, err := stableSizing(m, d, p)
		if err != nil || k < kWant || dec >= m { // clipped by m
			return false
		}
		lambda := float64(n) * float64(dec) / float64(m)
		term := math.Exp(-lambda) // Pr[Poisson(λ) = 0]
		keep := term
		for j := 1; j < 1<<d-1; j++ {
			term *= lambda / float64(j)
			keep += term
		}
		return 1-math.Pow(math.Min(keep, 1), float64(k)) <= p
	}
	limit := MaxBits / uint64(d)
	hi := uint64(2)
	for !fits(hi) {
		if hi > limit/2 {
			return 0, false
		}
		hi *= 2
	}
	lo := max(2, hi/2)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi, true
}

// StableConfig holds the raw parameters of a Stable filter
// (NewStableWithConfig), named as in Deng & Rafiei 2006.
type StableConfig struct {
	// M is the number of cells, at least 2 (M·CellBits ≤ MaxBits).
	M uint64
	// CellBits is the cell width d in [1, MaxStableCellBits]; cells hold
	// 0 … Max = 2^d − 1.
	CellBits uint8
	// K is the number of probes per item, in [1, min(MaxK, M−1)].
	K uint32
	// Decrements is P, the number of cells each Add decrements, in [1, M].
	Decrements uint64
	// Seed is the seed of the key hash (XXH3-128); default 0. (The
	// decrement positions come from a separate random generator, seeded
	// at random.)
	Seed uint64
}

// NewStableWithConfig returns an empty stable filter with exactly the
// parameters of c (see StableConfig for their ranges). Errors wrap
// ErrInvalidParameter naming the field, or ErrTooLarge for
// M·CellBits > MaxBits. Its target p is unknown (0 in Stats);
// StablePointFPR is the rate it converges to.
func NewStableWithConfig(c StableConfig) (*Stable, error) {
	if err := checkStableParams(c.M, c.CellBits, c.K, c.Decrements); err != nil {
		return nil, err
	}
	return newStable(c), nil
}

// newStable returns an empty Stable with c's parameters (checked by the
// caller) and a random decrement sequence.
func newStable(c StableConfig) *Stable {
	per := uint64(64 / c.CellBits)
	return &Stable{
		words:   make([]uint64, (c.M+per-1)/per),
		m:       c.M,
		d:       uint32(c.CellBits),
		perWord: per,
		max:     uint64(1)<<c.CellBits - 1,
		k:       c.K,
		p:       c.Decrements,
		hashID:  HashXXH3_128,
		seed:    c.Seed,
		rng:     rand.Uint64(),
	}
}

func checkStableParams(m uint64, d uint8, k uint32, decrements uint64) error {
	if err := checkStableMD(m, d); err != nil {
		return err
	}
	if k == 0 || k > MaxK || uint64(k) >= m {
		return fmt.Errorf("%w: K (probes) must be in [1, min(%d, M−1)], got %d", ErrInvalidParameter, MaxK, k)
	}
	if decrements == 0 || decrements > m {
		return fmt.Errorf("%w: Decrements (P) must be in [1, M=%d], got %d", ErrInvalidParameter, m, decrements)
	}
	return nil
}

// M returns the number of cells.
func (s *Stable) numBits() uint64 { return s.m }

// K returns the number of probes per item.
func (s *Stable) numHashes() uint32 { return s.k }

// CellBits returns the cell width d; cells hold 0 … 2^d − 1.
func (s *Stable) cellBits() uint8 { return uint8(s.d) }

// Decrements returns P, the number of cells each Add decrements.
func (s *Stable) decrements() uint64 { return s.p }

// N returns the number of Adds so far (the stream length).
func (s *Stable) items() uint64 { return s.n }

// TargetP returns the stable-point rate the filter was configured for
// (NewStable's p; 0 for NewStableWithConfig).
func (s *Stable) targetRate() float64 { return s.targetP }

// SizeBytes returns the memory of the cells in bytes.
func (s *Stable) sizeBytes() uint64 { return uint64(len(s.words)) * 8 }

// HashID returns the ID of the hash the filter's pairs come from.
func (s *Stable) hashKind() HashID { return s.hashID }

// HashSeed returns the seed of the filter's hash.
func (s *Stable) hashSeed() uint64 { return s.seed }

// SetHash sets the hash the key methods use, as Filter.SetHash does.
func (s *Stable) setHash(id HashID, seed uint64) error {
	if id == 0 {
		return fmt.Errorf("%w: hash ID 0 is reserved", ErrInvalidParameter)
	}
	s.hashID, s.seed = id, seed
	return nil
}

// SetRandSeed sets the state of the generator that picks the cells to
// decrement, making the filter's evolution reproducible. The state is part
// of the encoding.
func (s *Stable) setRandSeed(seed uint64) { s.rng = seed }

// StablePointFPR returns the false-positive rate the filter converges to
// on a stream of distinct items, whatever its length (Deng & Rafiei 2006,
// Theorem 2 and eq. 4):
//
//	FPS = (1 − (1 / (1 + 1/(P·(1/k − 1/m))))^Max)^k,
//
// where (1/(1 + 1/(P·(1/k − 1/m))))^Max is the limit of the probability
// that a cell is 0. The distance to it shrinks by a factor of about
// e^(−(P+k)/m) per add, so the rate is within 1% of FPS after roughly
// 5·Max·m/(P+k) adds.
func (s *Stable) stablePointFPR() float64 {
	k, m, p := float64(s.k), float64(s.m), float64(s.p)
	zero := math.Pow(1/(1+1/(p*(1/k-1/m))), float64(s.max))
	return math.Pow(1-zero, k)
}

func (s *Stable) cell(x uint64) uint64 {
	return s.words[x/s.perWord] >> (x % s.perWord * uint64(s.d)) & s.max
}

// Add records key as the newest item of the stream: it decrements P cells
// at a random position and sets key's k cells to Max. It always returns
// nil: a stable filter cannot fail (it forgets old items instead). Cost:
// one hash, P sequential and k random cell writes; no allocation. Not safe
// for concurrent use.
func (s *Stable) Add(key []byte) error {
	h1, h2 := keyHash(s.hashID, s.seed, key, zeroStable)
	s.addHash(h1, h2)
	return nil
}

// addString is Add for a string key.
func (s *Stable) addString(key string) {
	h1, h2 := keyHashString(s.hashID, s.seed, key, zeroStable)
	s.addHash(h1, h2)
}

// AddHash is Add for a hash pair. It always returns nil.
func (s *Stable) AddHash(h1, h2 uint64) error {
	s.addHash(h1, h2)
	return nil
}

func (s *Stable) addHash(h1, h2 uint64) {
	if s.m == 0 {
		zeroPanic(zeroStable)
	}
	s.decrement()
	w, m, per, d, mx := s.words, s.m, s.perWord, s.d, s.max
	for i := s.k; i > 0; i-- {
		x := h1 % m
		w[x/per] |= mx << (x % per * uint64(d))
		h1 += h2
	}
	s.n++
}

// decrement lowers P consecutive cells (wrapping) from a random start.
func (s *Stable) decrement() {
	s.rng += 0x9e3779b97f4a7c15 // splitmix64
	z := s.rng
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	x, _ := bits.Mul64(z^z>>31, s.m) // uniform start in [0, m)
	w, per, d, mx := s.words, s.perWord, uint64(s.d), s.max
	wi, sh := x/per, x%per*d
	for left := s.p; left > 0; left-- {
		if w[wi]>>sh&mx != 0 {
			w[wi] -= 1 << sh
		}
		x++
		sh += d
		if sh >= per*d {
			wi, sh = wi+1, 0
		}
		if x == s.m {
			x, wi, sh = 0, 0, 0
		}
	}
}

// Test reports whether key was seen recently: false means it was never
// added OR it was added long enough ago to be forgotten (a false negative,
// by design; see Stable); true means it was added recently or is a false
// positive, with probability about StablePointFPR for an item never seen.
// No allocation; safe concurrently with other Tests.
func (s *Stable) Test(key []byte) bool {
	h1, h2 := keyHash(s.hashID, s.seed, key, zeroStable)
	return s.TestHash(h1, h2)
}

// TestString is Test for a string key.
func (s *Stable) testString(key string) bool {
	h1, h2 := keyHashString(s.hashID, s.seed, key, zeroStable)
	return s.TestHash(h1, h2)
}

// TestHash is Test for a hash pair (same caveat: false negatives are
// possible for old items).
func (s *Stable) TestHash(h1, h2 uint64) bool {
	w, m, per, d, mx := s.words, s.m, s.perWord, uint64(s.d), s.max
	if m == 0 || per == 0 { // the zero Stable; also lets the compiler drop its divide checks
		zeroPanic(zeroStable)
	}
	for i := s.k; i > 0; i-- {
		x := h1 % m
		if w[x/per]>>(x%per*d)&mx == 0 {
			return false
		}
		h1 += h2
	}
	return true
}

// TestAndAdd reports whether key was seen recently (Test, with its false
// negatives for old items) and then adds it: the duplicate-detection step
// of Deng & Rafiei. The error is always nil. Not safe for concurrent use.
func (s *Stable) TestAndAdd(key []byte) (seenRecently bool, err error) {
	h1, h2 := keyHash(s.hashID, s.seed, key, zeroStable)
	seenRecently = s.TestHash(h1, h2)
	s.addHash(h1, h2)
	return seenRecently, nil
}

// Stats returns the filter's statistics, counting a nonzero cell as a set
// bit: M cells, K, Bytes, N adds, SetBits = nonzero cells, FillRatio =
// SetBits/M, FPR = fill^K (the current false-positive rate given
// the cells; it approaches StablePointFPR), Cardinality =
// −(M/K)·ln(1 − fill) (the number of recent distinct items a classic filter
// of this fill would hold; +Inf when no cell is 0), Capacity 0 (unbounded)
// and P (the target p). Cost: one pass over the cells.
func (s *Stable) Stats() Stats {
	if s.m == 0 {
		zeroPanic(zeroStable)
	}
	var set uint64
	for x := uint64(0); x < s.m; {
		w := s.words[x/s.perWord]
		for j := uint64(0); j < s.perWord && x < s.m; j, x = j+1, x+1 {
			if w>>(j*uint64(s.d))&s.max != 0 {
				set++
			}
		}
	}
	st := classicStats(s.m, s.k, set)
	st.Bytes, st.N, st.P = s.sizeBytes(), s.n, s.targetP
	return st
}

// Reset empties s: every cell 0 and N = 0, with the same parameters, hash,
// seed and target p (the decrement generator goes on from its state).
// Cost: one pass; no allocation. Not safe for concurrent use.
func (s *Stable) Reset() {
	if s.m == 0 {
		zeroPanic(zeroStable)
	}
	clear(s.words)
	s.n = 0
}

// Clone returns an independent copy of s (including its random state).
func (s *Stable) clone() *Stable {
	c := *s
	c.words = slices.Clone(s.words)
	return &c
}

// Equal reports whether s and g have the same parameters, state and cells.
func (s *Stable) equal(g *Stable) bool {
	return s.m == g.m && s.d == g.d && s.k == g.k && s.p == g.p && s.hashID == g.hashID &&
		s.seed == g.seed && s.rng == g.rng && s.n == g.n &&
		math.Float64bits(s.targetP) == math.Float64bits(g.targetP) && slices.Equal(s.words, g.words)
}
