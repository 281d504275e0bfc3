package bloom

import "errors"

// Sentinel errors. Every error returned by this package wraps exactly one of
// these (or io.ErrUnexpectedEOF for truncated input), so callers can test
// with errors.Is. The message of the returned error adds the offending values.
var (
	// ErrInvalidParameter reports a parameter outside its documented range:
	// n = 0, p ∉ (0, 1), NaN or ±Inf, m = 0, k = 0 or k > MaxK, an offset
	// past the end of the bitset, and similar.
	ErrInvalidParameter = errors.New("bloom: invalid parameter")

	// ErrTooLarge reports that a filter would exceed MaxBits, that a size
	// computation would overflow 64 bits, or that a Scalable would exceed
	// its ScalableConfig.MaxBytes budget.
	ErrTooLarge = errors.New("bloom: filter too large")

	// ErrIncompatible reports that two filters cannot be combined because
	// their m, k, hash ID or hash seed differ. The message names both values.
	ErrIncompatible = errors.New("bloom: incompatible filters")

	// ErrFull reports that a non-scaling Scalable has reached its capacity.
	ErrFull = errors.New("bloom: filter is full")

	// ErrChecksum reports that encoded data failed its CRC-32C check.
	ErrChecksum = errors.New("bloom: checksum mismatch")

	// ErrFormat reports encoded data that is not a valid encoding of the
	// expected kind: wrong magic number, wrong kind, a parameter out of
	// range, nonzero reserved bytes, inconsistent sizes.
	ErrFormat = errors.New("bloom: invalid format")

	// ErrVersion reports encoded data with an unsupported format version.
	ErrVersion = errors.New("bloom: unsupported format version")
)
