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

// linkParams is one link as bloom_init sizes it.
type linkParams struct {
	entries, bits, bytes uint64
	hashes               uint32
	bpe                  float64
	n2                   uint8 // > 0: positions are taken mod 2^n2
}

// modBits is the modulus of the link's bit positions: 2^n2 for a
// power-of-two link, else bits.
func (l linkParams) modBits() uint64 {
	if l.n2 > 0 {
		return 1 << l.n2
	}
	return l.bits
}

// initLink sizes a link of entries items at errorRate as RedisBloom's
// bloom_init does under a chain's options (SBChain_AddLink passes them on
// every growth):
//
//   - ENTS_IS_BITS: n2 = entries (≤ 63 here; RedisBloom allows 64, an
//     undefined shift), bits = 2^n2, entries = ⌊bits/bpe⌋;
//   - else NOROUND: LinkSize;
//   - else: n2 = logb(entries·bpe) + 1 (refused above 63), bits = 2^n2,
//     entries += ⌊(bits − entries·bpe) / bpe⌋, the items the rounding
//     adds;
//
// then bytes = bits rounded up to 64 over 8, bits = 8·bytes, hashes =
// ⌈0.693147180559945·bpe⌉. Only LOADCHUNK'd headers have options other
// than NOROUND|FORCE64. Errors wrap bloom.ErrInvalidParameter where
// bloom_init returns 1 and bloom.ErrTooLarge past bloom.MaxBits or
// bloom.MaxK.
func initLink(entries uint64, errorRate float64, options uint32) (linkParams, error) {
	if options&OptEntsIsBits == 0 && options&OptNoRound != 0 {
		bpe, bits, bytes, k, err := LinkSize(entries, errorRate)
		return linkParams{entries: entries, bits: bits, bytes: bytes, hashes: k, bpe: bpe}, err
	}
	if entries == 0 || !(errorRate > 0 && errorRate < 1) {
		return linkParams{}, fmt.Errorf("%w: capacity %d, error rate %v", bloom.ErrInvalidParameter, entries, errorRate)
	}
	l := linkParams{entries: entries, bpe: BPE(errorRate)}
	if options&OptEntsIsBits != 0 {
		if entries > 63 {
			return linkParams{}, fmt.Errorf("%w: 2^%d bits", bloom.ErrTooLarge, entries)
		}
		l.n2 = uint8(entries)
		l.bits = 1 << l.n2
		l.entries = uint64(float64(l.bits) / l.bpe)
	} else {
		prod := float64(entries) * l.bpe
		bn2 := math.Logb(prod)
		if !(bn2 >= -1 && bn2 < 63) {
			return linkParams{}, fmt.Errorf("%w: %d entries at %v", bloom.ErrTooLarge, entries, errorRate)
		}
		l.n2 = uint8(bn2 + 1)
		l.bits = 1 << l.n2
		l.entries += uint64(float64(uint64(float64(l.bits)-prod)) / l.bpe)
	}
	if l.bits%64 != 0 {
		l.bytes = (l.bits/64 + 1) * 8
	} else {
		l.bytes = l.bits / 8
	}
	l.bits = l.bytes * 8
	if l.bits > bloom.MaxBits {
		return linkParams{}, fmt.Errorf("%w: %d bits", bloom.ErrTooLarge, l.bits)
	}
	k, ok := hashesFor(l.bpe)
	if !ok {
		return linkParams{}, fmt.Errorf("%w: error rate %v needs more than %d hashes", bloom.ErrTooLarge, errorRate, bloom.MaxK)
	}
	l.hashes = k
	return l, nil
}
