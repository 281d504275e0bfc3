package tdigest

import (
	"errors"

	"github.com/probly/probly/internal/binfmt"
)

// Errors, wrapped with %w behind the "tdigest: " prefix.
var (
	// ErrInvalidParameter: a compression outside [1, MaxCompression], a
	// non-finite value, a weight of 0, a quantile or cut outside [0, 1].
	ErrInvalidParameter = errors.New("tdigest: invalid parameter")
	// ErrOverflow: the total weight would exceed math.MaxInt64. The
	// digest is unchanged by the value that would overflow.
	ErrOverflow = errors.New("tdigest: weight overflow")
	// ErrFormat, ErrVersion, ErrChecksum: decoding errors (docs/FORMATS.md).
	ErrFormat   = errors.New("tdigest: invalid format")
	ErrVersion  = errors.New("tdigest: unsupported format version")
	ErrChecksum = errors.New("tdigest: checksum mismatch")
)

var codec = &binfmt.Codec{Pkg: "tdigest", Format: ErrFormat, Version: ErrVersion, Checksum: ErrChecksum}
