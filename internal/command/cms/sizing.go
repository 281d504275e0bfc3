package cms

import "math"

// dimsByProb is RedisBloom's CMS.INITBYPROB sizing (spec
// redis-sketches.md §1.2): width = ⌈2/ε⌉ in double precision, depth =
// ⌈log10f(δ) / log10f(0.5)⌉ in single precision (δ rounded to float32,
// both logarithms and the quotient float32, then widened and rounded up).
// ok is false where RedisBloom's casts end in "invalid init arguments":
// a width of 2^63 or more, or a depth ratio that is not finite.
func dimsByProb(eps, delta float64) (width, depth int64, ok bool) {
	w := math.Ceil(2 / eps)
	if !(w < 1<<63) {
		return 0, 0, false
	}
	ratio := float32(math.Log10(float64(float32(delta)))) / float32(math.Log10(float64(float32(0.5))))
	if math.IsInf(float64(ratio), 0) || math.IsNaN(float64(ratio)) {
		return 0, 0, false
	}
	d := math.Ceil(float64(ratio))
	if !(d < 1<<63) {
		return 0, 0, false
	}
	return int64(w), int64(d), true
}
