package redisbloom

import (
	"fmt"
	"math"

	"github.com/probly/probly/bloom"
)

// The constants RedisBloom's bloom_init uses. They are ln²2 and ln 2
// truncated to 15 decimals; the truncation matters (error 0.25 gives
// hashes = 3 with 0.693147180559945, 2 with a rounded ln 2 in some cases).
const (
	bpeDenom = 0.480453013918201
	ln2Trunc = 0.693147180559945
)

// BPE returns RedisBloom's bits per entry for an error rate:
// |−ln(error) / 0.480453013918201|, with a correctly rounded ln (see
// logCR), which is what glibc's log gives for every error rate we have
// compared (spec §8.1).
func BPE(errorRate float64) float64 {
	return math.Abs(-cachedLogCR(errorRate) / bpeDenom)
}

// hashesFor returns ceil(0.693147180559945·bpe) as RedisBloom computes the
// probe count, and whether it is a usable k (1 … bloom.MaxK).
func hashesFor(bpe float64) (uint32, bool) {
	h := math.Ceil(ln2Trunc * bpe)
	if !(h >= 1 && h <= float64(bloom.MaxK)) {
		return 0, false
	}
	return uint32(h), true
}

// LinkSize returns the parameters of a RedisBloom link for entries items at
// errorRate (bloom_init with NOROUND|FORCE64):
//
//	bpe    = |−ln(error) / 0.480453013918201|
//	bits   = (uint64)(entries·bpe), 1 if that is 0
//	bytes  = bits rounded up to a multiple of 64, over 8
//	bits   = bytes·8
//	hashes = ceil(0.693147180559945·bpe)
//
// It returns an error wrapping bloom.ErrTooLarge when the bit count does not
// fit bloom.MaxBits or the probe count exceeds bloom.MaxK, and one wrapping
// bloom.ErrInvalidParameter for entries = 0 or an error rate outside (0, 1).
func LinkSize(entries uint64, errorRate float64) (bpe float64, bits, bytes uint64, hashes uint32, err error) {
	if entries == 0 {
		return 0, 0, 0, 0, fmt.Errorf("%w: capacity 0", bloom.ErrInvalidParameter)
	}
	if !(errorRate > 0 && errorRate < 1) {
		return 0, 0, 0, 0, fmt.Errorf("%w: error rate %v not in (0, 1)", bloom.ErrInvalidParameter, errorRate)
	}
	bpe = BPE(errorRate)
	prod := float64(entries) * bpe
	if !(prod < float64(bloom.MaxBits)) {
		return 0, 0, 0, 0, fmt.Errorf("%w: %d entries at %v need %.4g bits", bloom.ErrTooLarge, entries, errorRate, prod)
	}
	bits = uint64(prod)
	if bits == 0 {
		bits = 1
	}
	if bits%64 != 0 {
		bytes = (bits/64 + 1) * 8
	} else {
		bytes = bits / 8
	}
	bits = bytes * 8
	h, ok := hashesFor(bpe)
	if !ok {
		return 0, 0, 0, 0, fmt.Errorf("%w: error rate %v needs more than %d hashes", bloom.ErrTooLarge, errorRate, bloom.MaxK)
	}
	return bpe, bits, bytes, h, nil
}

// sizing is LinkSize as a bloom.Sizing.
func sizing(capacity uint64, p float64) (uint64, uint32, error) {
	_, bits, _, k, err := LinkSize(capacity, p)
	return bits, k, err
}
