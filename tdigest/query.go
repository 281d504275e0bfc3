package tdigest

import "math"

// Every query but Min and Max compresses the buffer first (spec §3.2,
// "Which commands compress"), so queries write the digest.

// Min returns the smallest value added, exactly; NaN if the digest is
// empty. It does not compress.
func (d *Digest) Min() float64 {
	if d.Count() == 0 {
		return math.NaN()
	}
	return d.min
}

// Max returns the largest value added, exactly; NaN if the digest is
// empty. It does not compress.
func (d *Digest) Max() float64 {
	if d.Count() == 0 {
		return math.NaN()
	}
	return d.max
}

// wavg is t-digest-c's weighted_average: (x1·a + x2·b)/(a+b) for the
// ordered pair, clamped to [x1, x2].
func wavg(x1, a, x2, b float64) float64 {
	if x1 > x2 {
		x1, a, x2, b = x2, b, x1, a
	}
	x := (float64(x1*a) + float64(x2*b)) / (a + b)
	if x2 < x {
		x = x2
	}
	if x1 > x {
		return x1
	}
	return x
}

// walk is the state of td_internal_iterate_centroids_to_index across the
// quantiles of one non-decreasing run.
type walk struct {
	soFar float64
	pos   int
}

func (d *Digest) newWalk() walk { return walk{soFar: float64(d.nodes[0].weight) / 2} }

// at returns the value at (fractional) rank index; d has ≥ 2 centroids.
func (d *Digest) at(w *walk, index float64) float64 {
	n := d.nodes[:d.merged]
	W := float64(d.mergedWeight)
	lw := float64(n[0].weight)
	if lw > 1 && index < lw/2 {
		return d.min + float64((index-1)/(lw/2-1)*(n[0].mean-d.min))
	}
	if index > float64(d.mergedWeight-1) {
		return d.max
	}
	last := len(n) - 1
	rw, rm := float64(n[last].weight), n[last].mean
	if rw > 1 && W-index <= rw/2 {
		return d.max - float64((W-index-1)/(rw/2-1)*(d.max-rm))
	}
	for ; w.pos < last; w.pos++ {
		nw, nwNext := float64(n[w.pos].weight), float64(n[w.pos+1].weight)
		dw := (nw + nwNext) / 2
		if w.soFar+dw > index {
			left, right := 0.0, 0.0
			if nw == 1 {
				if index-w.soFar < 0.5 {
					return n[w.pos].mean
				}
				left = 0.5
			}
			if nwNext == 1 {
				if w.soFar+dw-index <= 0.5 {
					return n[w.pos+1].mean
				}
				right = 0.5
			}
			z1 := index - w.soFar - left
			z2 := w.soFar + dw - index - right
			return wavg(n[w.pos].mean, z2, n[w.pos+1].mean, z1)
		}
		w.soFar += dw
	}
	z1 := index - W - rw/2
	z2 := rw/2 - z1
	return wavg(rm, z1, d.max, z2)
}

// Quantile returns the estimated value at quantile q ∈ [0, 1] (td_value_at:
// NaN for q outside [0, 1] or an empty digest; q·N < 1 gives Min). It is
// ByRank's rule; Quantiles is TDIGEST.QUANTILE's.
func (d *Digest) Quantile(q float64) float64 {
	d.compress()
	if q < 0 || q > 1 || d.merged == 0 {
		return math.NaN()
	}
	if d.merged == 1 {
		return d.nodes[0].mean
	}
	index := q * float64(d.mergedWeight)
	if index < 1 {
		return d.min
	}
	w := d.newWalk()
	return d.at(&w, index)
}

// Quantiles appends to dst the estimated values at each of qs, as
// TDIGEST.QUANTILE computes them: qs is cut into maximal non-decreasing
// runs, each evaluated with one walk over the centroids (td_quantiles), so
// results can differ in the last bits from Quantile's. A q outside [0, 1]
// gives NaN. O(len(qs) + runs·cap).
func (d *Digest) Quantiles(dst []float64, qs ...float64) []float64 {
	d.compress()
	var w walk
	for i, q := range qs {
		switch {
		case d.merged == 0 || q < 0 || q > 1 || math.IsNaN(q):
			dst = append(dst, math.NaN())
			continue
		case d.merged == 1:
			dst = append(dst, d.nodes[0].mean)
			continue
		}
		if i == 0 || q < qs[i-1] {
			w = d.newWalk()
		}
		dst = append(dst, d.at(&w, q*float64(d.mergedWeight)))
	}
	return dst
}

// CDF returns the estimated fraction of values ≤ x, counting half of the
// values equal to x (td_cdf): 0 below Min, 1 above Max, NaN for an empty
// digest (or a single buffered value).
func (d *Digest) CDF(x float64) float64 {
	d.compress()
	if d.merged == 0 {
		return math.NaN()
	}
	if x < d.min {
		return 0
	}
	if x > d.max {
		return 1
	}
	n := d.nodes[:d.merged]
	if len(n) == 1 {
		width := d.max - d.min
		if x-d.min <= width {
			return 0.5
		}
		return (x - d.min) / width
	}
	W := float64(d.mergedWeight)
	lm, lw := n[0].mean, float64(n[0].weight)
	if x < lm {
		width := lm - d.min
		if width > 0 {
			if x == d.min {
				return 0.5 / W
			}
			return (1 + float64((x-d.min)/width*(lw/2-1))) / W
		}
		return 0
	}
	last := len(n) - 1
	rm, rw := n[last].mean, float64(n[last].weight)
	if x > rm {
		width := d.max - rm
		if width > 0 {
			if x == d.max {
				return 1 - 0.5/W
			}
			return 1 - (1+float64((d.max-x)/width*(rw/2-1)))/W
		}
		return 1
	}
	soFar := 0.0
	for i := 0; i < last; i++ {
		if n[i].mean == x {
			dw := 0.0
			for ; i < len(n) && n[i].mean == x; i++ {
				dw += float64(n[i].weight)
			}
			return (soFar + dw/2) / W
		}
		if n[i].mean <= x && x < n[i+1].mean {
			nw, nwNext := float64(n[i].weight), float64(n[i+1].weight)
			m, mNext := n[i].mean, n[i+1].mean
			if mNext-m > 0 {
				left, right := 0.0, 0.0
				if nw == 1 {
					if nwNext == 1 {
						return (soFar + 1) / W
					}
					left = 0.5
				} else if nwNext == 1 {
					right = 0.5
				}
				dw := (nw + nwNext) / 2
				base := soFar + nw/2 + left
				return (base + float64((dw-left-right)*(x-m))/(mNext-m)) / W
			}
			return (soFar + (nw+nwNext)/2) / W
		}
		soFar += float64(n[i].weight)
	}
	return 1 - 0.5/W
}

// Rank returns the estimated number of values smaller than x, as
// TDIGEST.RANK: −2 for an empty digest, −1 below Min, Count() above Max,
// else CDF(x)·Count() rounded half down. A NaN CDF (a single buffered
// value) gives math.MinInt64, as RedisBloom on x86-64.
func (d *Digest) Rank(x float64) int64 { return d.rank(x, false) }

// RevRank returns the estimated number of values larger than x, as
// TDIGEST.REVRANK: −2 for an empty digest, Count() below Min, −1 above
// Max, else round(Count() − round(CDF(x)·Count())).
func (d *Digest) RevRank(x float64) int64 { return d.rank(x, true) }

func (d *Digest) rank(x float64, rev bool) int64 {
	size := float64(d.Count())
	var r float64
	switch {
	case size == 0:
		return -2
	case x < d.min:
		if rev {
			return int64(size)
		}
		return -1
	case x > d.max:
		if rev {
			return -1
		}
		return int64(size)
	}
	c := float64(d.CDF(x) * size)
	if rev {
		r = math.Round(size - math.Round(c))
	} else {
		r = halfRoundDown(c)
	}
	if math.IsNaN(r) {
		return math.MinInt64
	}
	return int64(r)
}

// halfRoundDown rounds f to an integer, halves toward zero.
func halfRoundDown(f float64) float64 {
	t := math.Trunc(f)
	if math.Abs(f-t) <= 0.5 {
		return t
	}
	if f < 0 {
		return t - 1
	}
	return t + 1
}

// ByRank returns the estimated value of rank r (0 = the smallest), as
// TDIGEST.BYRANK: NaN for an empty digest, Min for r = 0, +Inf for
// r ≥ Count(), else Quantile(r/Count()).
func (d *Digest) ByRank(r uint64) float64 { return d.byRank(r, false) }

// ByRevRank returns the estimated value of reverse rank r (0 = the
// largest), as TDIGEST.BYREVRANK: NaN for an empty digest, Max for r = 0,
// −Inf for r ≥ Count(), else Quantile((Count()−r−1)/Count()).
func (d *Digest) ByRevRank(r uint64) float64 { return d.byRank(r, true) }

func (d *Digest) byRank(r uint64, rev bool) float64 {
	s := d.Count()
	switch {
	case s == 0:
		return math.NaN()
	case r == 0 && rev:
		return d.max
	case r == 0:
		return d.min
	case r >= s && rev:
		return math.Inf(-1)
	case r >= s:
		return math.Inf(1)
	}
	if rev {
		r = s - r - 1
	}
	return d.Quantile(float64(r) / float64(s))
}

// TrimmedMean returns the mean of the values between quantiles lo and hi,
// 0 ≤ lo < hi ≤ 1 (td_trimmed_mean): NaN for lo or hi outside [0, 1] or an
// empty digest, the centroid's mean for a single centroid.
func (d *Digest) TrimmedMean(lo, hi float64) float64 {
	d.compress()
	if lo < 0 || lo > 1 || hi < 0 || hi > 1 || d.merged == 0 {
		return math.NaN()
	}
	if d.merged == 1 {
		return d.nodes[0].mean
	}
	W := float64(d.mergedWeight)
	a, b := math.Floor(W*lo), math.Ceil(W*hi)
	done, sum, count := 0.0, 0.0, 0.0
	for _, nd := range d.nodes[:d.merged] {
		w := float64(nd.weight)
		add := w
		add -= fmin(fmax(0, a-done), add)
		add = fmin(fmax(0, b-done), add)
		done += w
		sum += float64(nd.mean * add)
		count += add
		if done >= b {
			break
		}
	}
	return sum / count
}

func fmin(a, b float64) float64 {
	if a < b {
		return a
	}
	return b
}

func fmax(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}
