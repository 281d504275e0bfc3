package bloom

import (
	"hash/crc32"

	"github.com/probly/probly/internal/binfmt"
)

// Test-only names for the decoders that read one encoding from the start
// of data and return the rest (the public API has only UnmarshalBinary and
// ReadFrom, docs/LIBRARY.md "Encoding").

type Kind = binfmt.Kind

const (
	KindClassic  = binfmt.KindClassic
	KindScalable = binfmt.KindScalable
	KindCuckoo   = binfmt.KindCuckoo
	KindCounting = binfmt.KindCounting
	KindStable   = binfmt.KindStable
	KindSBBF     = binfmt.KindSBBF
)

func Decode(data []byte) (*Filter, []byte, error)           { return classicFrame.decode(data) }
func DecodeScalable(data []byte) (*Scalable, []byte, error) { return decodeScalable(data) }
func DecodeSBBF(data []byte) (*SBBF, []byte, error)         { return sbbfFrame.decode(data) }
func DecodeCounting(data []byte) (*Counting, []byte, error) { return countingFrame.decode(data) }
func DecodeStable(data []byte) (*Stable, []byte, error)     { return stableFrame.decode(data) }

func (f *Filter) EncodedSize() uint64   { return f.encodedSize() }
func (s *Scalable) EncodedSize() uint64 { return s.encodedSize() }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	magic        = binfmt.Magic
	kindClassic  = byte(binfmt.KindClassic)
	kindScalable = byte(binfmt.KindScalable)
	kindSBBF     = byte(binfmt.KindSBBF)
	kindCounting = byte(binfmt.KindCounting)
	kindStable   = byte(binfmt.KindStable)
)
