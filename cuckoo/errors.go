package cuckoo

import "errors"

// Sentinel errors. Every error returned by this package wraps exactly one of
// these (or io.ErrUnexpectedEOF for truncated input), so callers can test
// with errors.Is. The message of the returned error adds the offending values.
var (
	// ErrInvalidParameter reports a parameter outside its documented range:
	// a bucket size of 0 or above 255, a fingerprint width other than 8 or
	// 16, a capacity of 0, p ∉ (0, 1), a sub-filter or offset that does not
	// exist, and similar.
	ErrInvalidParameter = errors.New("cuckoo: invalid parameter")

	// ErrFull reports that an Add found no room, the bounded kick-out
	// walk failed and the filter may not grow (Expansion NoGrowth). The filter is
	// exactly as it was before the call: no fingerprint was dropped.
	ErrFull = errors.New("cuckoo: filter is full")

	// ErrTooLarge reports that a filter, or the sub-filter an Add needed
	// to add, would exceed Config.MaxBytes, MaxTableBytes or MaxSubFilters.
	// As with ErrFull, the filter is unchanged.
	ErrTooLarge = errors.New("cuckoo: filter too large")

	// ErrChecksum reports that encoded data failed its CRC-32C check.
	ErrChecksum = errors.New("cuckoo: checksum mismatch")

	// ErrFormat reports encoded data that is not a valid encoding of a
	// cuckoo filter: wrong magic number or kind, a parameter out of range,
	// nonzero reserved bytes, inconsistent sizes.
	ErrFormat = errors.New("cuckoo: invalid format")

	// ErrVersion reports encoded data with an unsupported format version.
	ErrVersion = errors.New("cuckoo: unsupported format version")
)
