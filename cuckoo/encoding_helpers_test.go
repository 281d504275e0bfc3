package cuckoo

import "hash/crc32"

// Test-only names: Decode reads one encoding from the start of data and
// returns the rest (the public API has only UnmarshalBinary and ReadFrom,
// docs/LIBRARY.md "Encoding").

func Decode(data []byte) (*Filter, []byte, error) { return decode(data) }

func (f *Filter) EncodedSize() uint64 { return f.encodedSize() }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)
