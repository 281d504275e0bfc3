package bloom

import (
	"fmt"
	"math"
)

// chainSizingZ is the number of standard deviations of a sub-filter's
// false-positive rate, due to the randomness of its fill, that chainSizingFn
// keeps below the target: 3.09 is the one-sided 99.9% normal quantile.
const chainSizingZ = 3.09

// chainSizingMaxGrowth caps chainSizingFn at this multiple of the classic m.
const chainSizingMaxGrowth = 2

// chainSizingFn is the default Sizing of a Scalable's sub-filters. It keeps
// optimalSizing's k and enlarges m, to at most twice optimalSizing's, until
// a Filter of m bits holding n items meets p with high probability rather
// than only on average, by the bound
//
//	(1 − ρ)·(E[F] + 3.09·SD[F] + C(k,2)/m·fill^(k−1)·(1 − fill)) + Σ_{d|m, d<k} φ(d)/m · D_d,
//
// where
//
//   - fill = 1 − (1 − 1/m)^(k·n) is the expected fraction of set bits and F
//     = fill^k the classic rate; the occupancy variance of k·n probes into m
//     bits gives E[F] and SD[F] by the delta method (a filter of a few
//     hundred items has a rate ±13% from its fill alone);
//   - C(k,2)/m bounds the chance that two of a key's k probe positions
//     coincide, leaving k − 1 distinct bits to test;
//   - the sum charges the strides h2 whose additive order d in Z_m is less
//     than k (φ(d) residues each, ρ = Σ φ(d)/m): without 64-bit wrap-around
//     their k probes would cover only d bits; each wrap of h1 + i·h2 shifts
//     them, so D_d averages fill^min(k, j·d) over j = 1 … ⌈k/d⌉ wraps.
//     h2 ≡ 0 mod m (d = 1, probability 1/m) is the worst case: its rate is
//     about fill/k instead of fill^k.
//
// For large sub-filters every correction vanishes and m is within 0.5% of
// the classic one (k is rounded); for the small first sub-filters of a chain
// they matter: at n = 100, p = 0.005 the classic m = 1103 bits give a
// measured rate of about 0.0054 and chainSizingFn's 1189 bits about 0.0037.
// With classic sizing a chain with capacity 100, growth 2 and p0 = 1%
// measured about 1.1% after 10M keys; with chainSizingFn about 0.7%, for 0.1%
// more memory (TestScalableAcceptance).
//
// Double hashing has a floor: the keys whose stride h2 is a multiple of m
// (probability 1/m) test far fewer than k distinct bits, which gives every
// Filter a rate of at least about 1/(m·k), however small p. Measured: a
// classic 100-item filter sized for p = 1e-6 (m = 2876, k = 20) has a rate
// of 7e-5, and one sized for p = 1e-9 (m = 4314, k = 30) 2e-5; at twice those
// sizes, 7e-6 and 4e-6. chainSizingFn never goes beyond twice the classic m:
// where the bound is not met there, it returns the doubled size, whose rate
// then exceeds p. This only concerns small sub-filters at tiny rates, such
// as the later links of a chain with growth 1 and a small capacity; the
// model above is also least accurate there (the measured rate can be a few
// times the bound).
//
// Errors are optimalSizing's, except that p may be below MinP (a
// Scalable's sub-filter rates are bounded by ScalableConfig.MinErrorRate
// instead, 1e-300 by default), and ErrTooLarge if twice the classic m would
// exceed MaxBits and the bound is not met below it. chainSizingFn is a
// Sizing.
func chainSizingFn(n uint64, p float64) (m uint64, k uint32, err error) {
	m0, k, err := classicSizing(n, p) // no MinP floor: see MinErrorRate
	if err != nil {
		return 0, 0, err
	}
	ok := func(m uint64) bool { return doubleHashingFPRBound(m, k, n) <= p }
	if ok(m0) {
		return m0, k, nil
	}
	hi := min(chainSizingMaxGrowth*m0, MaxBits)
	if !ok(hi) {
		if chainSizingMaxGrowth*m0 > MaxBits {
			return 0, 0, fmt.Errorf("%w: n=%d, p=%v needs more than MaxBits (%d) bits with chainSizingFn", ErrTooLarge, n, p, MaxBits)
		}
		return hi, k, nil
	}
	lo := m0
	for hi-lo > 1 { // a boundary with !ok(lo), ok(hi)
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, k, nil
}

// doubleHashingFPRBound is chainSizingFn's bound on the false-positive rate
// of a classic Filter of m bits and k probes holding n items.
func doubleHashingFPRBound(m uint64, k uint32, n uint64) float64 {
	mf, kf := float64(m), float64(k)
	t := kf * float64(n) // probes
	a := math.Exp(t * math.Log1p(-1/mf))
	fill := 1 - a
	if fill <= 0 {
		return 0
	}
	// Variance of the number of zero bits after t uniform probes.
	var v float64
	if mf < 1e7 {
		b := math.Exp(t * math.Log1p(-2/mf))
		v = mf*a + mf*(mf-1)*b - mf*mf*a*a
	} else {
		lam := t / mf
		e := math.Exp(-lam)
		v = mf * e * (1 - (1+lam)*e)
	}
	sd := math.Sqrt(math.Max(v, 0)) / mf
	fk := math.Pow(fill, kf)
	rel := sd / fill
	base := fk*(1+kf*(kf-1)/2*rel*rel) + chainSizingZ*kf*fk*rel
	base += kf * (kf - 1) / 2 / mf * fk / fill * (1 - fill)
	// Strides of small additive order: d | m, d < k.
	var rho, short float64
	for d := uint64(1); d < uint64(k) && d <= m; d++ {
		if m%d != 0 {
			continue
		}
		w := float64(totient(d)) / mf
		rho += w
		wraps := (uint64(k) + d - 1) / d
		var avg float64
		for j := uint64(1); j <= wraps; j++ {
			avg += math.Pow(fill, float64(min(uint64(k), j*d)))
		}
		short += w * avg / float64(wraps)
	}
	return (1-rho)*base + short
}

// totient returns Euler's φ(d) for d ≥ 1.
func totient(d uint64) uint64 {
	r := d
	for q := uint64(2); q*q <= d; q++ {
		if d%q == 0 {
			for d%q == 0 {
				d /= q
			}
			r -= r / q
		}
	}
	if d > 1 {
		r -= r / d
	}
	return r
}
