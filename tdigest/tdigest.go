package tdigest

import (
	"fmt"
	"math"
)

// DefaultCompression is RedisBloom's default compression (TDIGEST.CREATE
// without COMPRESSION): 610 nodes, 9,760 bytes of nodes.
const DefaultCompression = 100

// MaxCompression is the largest compression: its capacity 6·C + 10 still
// fits a C int (t-digest-c stores it in one; spec open question 9).
const MaxCompression = (math.MaxInt32 - 10) / 6

// NodeBytes is the memory of one node (mean and weight).
const NodeBytes = 16

// Config holds a Digest's parameters.
type Config struct {
	// Compression C, in [1, MaxCompression]: larger is more accurate and
	// larger (cap = 6·C + 10 nodes). 0 means DefaultCompression.
	Compression int
}

// Capacity returns the node capacity 6·c + 10 of compression c.
func Capacity(c int) int { return 6*c + 10 }

// node is one centroid or buffered value.
type node struct {
	mean   float64
	weight int64
}

// Digest is a merging t-digest. Build one with New or NewWithConfig (or
// decode one into a zero Digest); Add on a zero Digest panics.
type Digest struct {
	compression float64
	cap         int
	min, max    float64
	// nodes[:merged] are sorted centroids, nodes[merged:] the buffer;
	// len(nodes) = merged + unmerged ≤ cap.
	nodes          []node
	merged         int
	mergedWeight   int64
	unmergedWeight int64
	compressions   int64
}

// New returns an empty digest of the given compression, in
// [1, MaxCompression] (ErrInvalidParameter otherwise).
func New(compression int) (*Digest, error) {
	if compression < 1 || compression > MaxCompression {
		return nil, fmt.Errorf("%w: compression %d, want 1 … %d", ErrInvalidParameter, compression, MaxCompression)
	}
	return NewWithConfig(Config{Compression: compression})
}

// NewWithConfig returns an empty digest of c.Compression (0:
// DefaultCompression). It allocates no nodes yet: the node array grows
// with the values, up to 16·Capacity bytes.
func NewWithConfig(c Config) (*Digest, error) {
	if c.Compression == 0 {
		c.Compression = DefaultCompression
	}
	if c.Compression < 1 || c.Compression > MaxCompression {
		return nil, fmt.Errorf("%w: compression %d, want 1 … %d", ErrInvalidParameter, c.Compression, MaxCompression)
	}
	d := &Digest{compression: float64(c.Compression), cap: Capacity(c.Compression)}
	d.Reset()
	return d, nil
}

// Compression returns the digest's compression C.
func (d *Digest) Compression() int { return int(d.compression) }

// Reset empties the digest; compression, capacity and the node memory stay.
func (d *Digest) Reset() {
	d.min, d.max = math.MaxFloat64, -math.MaxFloat64
	d.nodes = d.nodes[:0]
	d.merged = 0
	d.mergedWeight, d.unmergedWeight, d.compressions = 0, 0, 0
}

// Add adds one value x (weight 1). x must be finite (ErrInvalidParameter);
// ErrOverflow if the total weight would pass math.MaxInt64.
func (d *Digest) Add(x float64) error { return d.AddWeighted(x, 1) }

// AddWeighted adds x with weight w ≥ 1: w copies of x at once. Errors as
// Add, and ErrInvalidParameter for w = 0 or w > math.MaxInt64.
func (d *Digest) AddWeighted(x float64, w uint64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("%w: value %v is not finite", ErrInvalidParameter, x)
	}
	if w == 0 || w > math.MaxInt64 {
		return fmt.Errorf("%w: weight %d, want 1 … 2^63-1", ErrInvalidParameter, w)
	}
	return d.add(x, int64(w))
}

// add is td_add: compress when the array is full, check for overflow,
// then append {x, w} to the buffer.
func (d *Digest) add(x float64, w int64) error {
	if d.cap == 0 {
		panic("tdigest: Add on a zero Digest: make it with tdigest.New or tdigest.NewWithConfig")
	}
	if len(d.nodes) >= d.cap-1 {
		d.compress()
	}
	if len(d.nodes) >= d.cap {
		return fmt.Errorf("%w: no room for a node", ErrOverflow)
	}
	uw, ok := addInt64(d.unmergedWeight, w)
	if !ok {
		return fmt.Errorf("%w: unmerged weight", ErrOverflow)
	}
	if _, ok := addInt64(uw, d.mergedWeight); !ok {
		return fmt.Errorf("%w: total weight", ErrOverflow)
	}
	if x < d.min {
		d.min = x
	}
	if x > d.max {
		d.max = x
	}
	if len(d.nodes) == cap(d.nodes) {
		d.grow()
	}
	d.nodes = append(d.nodes, node{x, w})
	d.unmergedWeight = uw
	return nil
}

// grow doubles the node array, capped at d.cap.
func (d *Digest) grow() {
	n := min(d.cap, max(2*cap(d.nodes), 64))
	nb := make([]node, len(d.nodes), n)
	copy(nb, d.nodes)
	d.nodes = nb
}

func addInt64(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// Compress merges the buffer into the centroids (td_compress); queries do
// it themselves. A digest of total weight ≤ 1 is sorted but not merged
// (upstream's MOD-13821, kept).
func (d *Digest) Compress() { d.compress() }

func (d *Digest) compress() {
	if len(d.nodes) == d.merged {
		return
	}
	n := d.nodes
	sortNodes(n)
	T := float64(d.mergedWeight) + float64(d.unmergedWeight)
	if T <= 1 {
		return
	}
	// ((2π)·T)·ln T, each product rounded (no fused multiply-add).
	denom := float64(float64(2*math.Pi*T) * math.Log(T))
	normalizer := d.compression / denom
	cur := 0
	soFar := 0.0
	for i := 1; i < len(n); i++ {
		pw := float64(n[cur].weight) + float64(n[i].weight)
		z := float64(pw * normalizer)
		q0 := soFar / T
		q2 := (soFar + pw) / T
		if z <= float64(q0*(1-q0)) && z <= float64(q2*(1-q2)) {
			n[cur].weight += n[i].weight
			delta := n[i].mean - n[cur].mean
			n[cur].mean += float64(delta*float64(n[i].weight)) / float64(n[cur].weight)
		} else {
			soFar += float64(n[cur].weight)
			cur++
			n[cur] = n[i]
		}
		if cur != i {
			n[i] = node{}
		}
	}
	d.nodes = n[:cur+1]
	d.merged = cur + 1
	d.mergedWeight = int64(T)
	d.unmergedWeight = 0
	d.compressions++
}

// sortNodes is t-digest-c's quicksort by mean (middle pivot swapped to the
// end, Lomuto partition), with an explicit stack instead of recursion: the
// ranges are disjoint, so the order they are sorted in does not matter,
// and the result (the order among equal means included) is upstream's.
func sortNodes(n []node) {
	type span struct{ lo, hi int }
	stack := []span{{0, len(n) - 1}}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		lo, hi := s.lo, s.hi
		if lo >= hi {
			continue
		}
		if hi-lo == 1 {
			if n[lo].mean > n[hi].mean {
				n[lo], n[hi] = n[hi], n[lo]
			}
			continue
		}
		p := lo + (hi-lo)/2
		pivot := n[p].mean
		n[p], n[hi] = n[hi], n[p]
		i := lo - 1
		for j := lo; j < hi; j++ {
			if n[j].mean < pivot {
				i++
				n[i], n[j] = n[j], n[i]
			}
		}
		q := i + 1
		n[q], n[hi] = n[hi], n[q]
		if q > lo {
			stack = append(stack, span{lo, q - 1})
		}
		stack = append(stack, span{q + 1, hi})
	}
}

// Merge adds every centroid of other to d (td_merge): both digests are
// compressed first — so Merge writes other too — then other's nodes are
// added with their weights, in order. ErrOverflow if the total weight
// would pass math.MaxInt64; d then holds the nodes added before it.
// d's compression is unchanged; see MergeAll for a fresh result.
// d.Merge(d) doubles every weight's count, merging a copy.
func (d *Digest) Merge(other *Digest) error {
	if other == d {
		other = d.Clone() // adding to d must not change what is read
	}
	d.compress()
	other.compress()
	for _, nd := range other.nodes {
		if err := d.add(nd.mean, nd.weight); err != nil {
			return err
		}
	}
	return nil
}

// MergeAll returns a new digest of the given compression (0: the largest
// compression of ds) into which every digest of ds is merged in order
// (Merge: each of ds is compressed). It is RedisBloom's TDIGEST.MERGE:
// the same digest may appear several times and counts each time. Errors:
// ErrInvalidParameter (compression, or no digests with compression 0),
// ErrOverflow (no digest is returned).
func MergeAll(compression int, ds ...*Digest) (*Digest, error) {
	if compression == 0 {
		for _, x := range ds {
			compression = max(compression, x.Compression())
		}
		if compression == 0 {
			return nil, fmt.Errorf("%w: no digests to take the compression from", ErrInvalidParameter)
		}
	}
	out, err := New(compression)
	if err != nil {
		return nil, err
	}
	for _, x := range ds {
		if err := out.Merge(x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Clone returns a deep copy of d.
func (d *Digest) Clone() *Digest {
	c := *d
	c.nodes = append(make([]node, 0, cap(d.nodes)), d.nodes...)
	return &c
}

// Count returns the number of values added (the total weight, merged and
// buffered).
func (d *Digest) Count() uint64 { return uint64(d.mergedWeight) + uint64(d.unmergedWeight) }

// Stats describes a digest (docs/LIBRARY.md, "Stats"); Stats does not
// compress.
type Stats struct {
	Compression    int    // C
	Capacity       int    // node capacity 6·C + 10
	MergedNodes    int    // sorted centroids
	UnmergedNodes  int    // buffered values
	MergedWeight   uint64 // weight of the centroids
	UnmergedWeight uint64 // weight of the buffer
	N              uint64 // values added: MergedWeight + UnmergedWeight
	Compressions   uint64 // merge passes since creation or Reset
	Bytes          uint64 // memory of the node array now (grows up to 16·Capacity)
}

// Stats returns d's statistics.
func (d *Digest) Stats() Stats {
	return Stats{
		Compression: d.Compression(), Capacity: d.cap,
		MergedNodes: d.merged, UnmergedNodes: len(d.nodes) - d.merged,
		MergedWeight: uint64(d.mergedWeight), UnmergedWeight: uint64(d.unmergedWeight),
		N: d.Count(), Compressions: uint64(d.compressions), Bytes: uint64(cap(d.nodes)) * NodeBytes,
	}
}
