package cms

import "errors"

// Sentinel errors. Every error this package returns wraps exactly one of
// them (or io.ErrUnexpectedEOF for truncated input), behind the "cms: "
// prefix, so callers test with errors.Is; the message adds the values.
var (
	// ErrInvalidParameter reports a parameter outside its documented
	// range: ε or δ not in (0, 1) (NaN and ±Inf included), a width or
	// depth of 0, an unknown hash ID, a Murmur2 seed above 2^32−1,
	// weights that do not match the sources.
	ErrInvalidParameter = errors.New("cms: invalid parameter")

	// ErrTooLarge reports a sketch of more than MaxCells counters (the
	// platform's bound on 32-bit systems), from New or NewWithConfig.
	ErrTooLarge = errors.New("cms: sketch too large")

	// ErrIncompatible reports a merge of sketches that differ in width,
	// depth, hash ID or seed.
	ErrIncompatible = errors.New("cms: incompatible sketches")

	// ErrOverflow reports a merge whose weighted sums do not fit: a cell
	// outside [0, MaxCount], a negative total or an int64 overflow on the
	// way (see MergeWeighted). The sketch is unchanged.
	ErrOverflow = errors.New("cms: merge overflow")

	// ErrFormat reports encoded data that is not a count-min sketch
	// encoding: magic number, kind, a parameter out of range, nonzero
	// reserved bytes, trailing bytes.
	ErrFormat = errors.New("cms: invalid format")

	// ErrVersion reports an encoding of an unsupported format version.
	ErrVersion = errors.New("cms: unsupported format version")

	// ErrChecksum reports encoded data that failed its CRC-32C check.
	ErrChecksum = errors.New("cms: checksum mismatch")
)
