package bloom

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"
)

// Parquet interchange (BloomFilter.md and parquet.thrift). A Parquet column
// chunk's Bloom filter is a Thrift-compact BloomFilterHeader
//
//	struct BloomFilterHeader {
//	  1: required i32 numBytes;                       // bitset length
//	  2: required BloomFilterAlgorithm algorithm;     // union { 1: BLOCK }
//	  3: required BloomFilterHash hash;               // union { 1: XXHASH }
//	  4: required BloomFilterCompression compression; // union { 1: UNCOMPRESSED }
//	}
//
// followed by numBytes bytes of bitset: blocks of eight little-endian
// uint32 lanes. The raw bitset is the same bytes as the body of probly's own
// SBBF encoding (docs/FORMATS.md, "Split-block Bloom filter").

// NewSBBFFromParquet returns an SBBF holding a copy of a raw Parquet
// split-block bitset (the bytes after the BloomFilterHeader). Its length
// must be a positive multiple of 32 bytes (ErrInvalidParameter otherwise,
// ErrTooLarge past MaxSBBFBlocks blocks). The hash is XXH64 seed 0; N,
// capacity and target p are unknown (0): Stats estimates the cardinality.
// It allocates len(bitset) bytes.
func NewSBBFFromParquet(bitset []byte) (*SBBF, error) {
	if len(bitset) == 0 || len(bitset)%sbbfBlockBytes != 0 {
		return nil, fmt.Errorf("%w: a Parquet split-block bitset is a positive multiple of 32 bytes, got %d", ErrInvalidParameter, len(bitset))
	}
	s, err := NewSBBFWithConfig(SBBFConfig{Blocks: uint64(len(bitset)) / sbbfBlockBytes})
	if err != nil {
		return nil, err
	}
	for i := range s.bits {
		s.bits[i] = binary.LittleEndian.Uint64(bitset[8*i:])
	}
	return s, nil
}

// ParquetBitset returns a copy of the raw bitset in Parquet's layout
// (32·numBlocks() bytes, eight little-endian uint32 lanes per block). Safe
// for concurrent use.
func (s *SBBF) ParquetBitset() []byte {
	return s.AppendParquetBitset(make([]byte, 0, s.sizeBytes()))
}

// AppendParquetBitset appends the raw Parquet bitset to b.
func (s *SBBF) AppendParquetBitset(b []byte) []byte {
	if s.blocks == 0 {
		zeroPanic(zeroSBBF)
	}
	for i := range s.bits {
		b = binary.LittleEndian.AppendUint64(b, atomic.LoadUint64(&s.bits[i]))
	}
	return b
}

// AppendParquet appends what a Parquet writer stores at a column chunk's
// bloom_filter_offset: the Thrift-compact BloomFilterHeader (numBytes,
// BLOCK, XXHASH, UNCOMPRESSED: 16 bytes for a 1 KiB filter) followed by
// the bitset. It returns an error wrapping ErrIncompatible if the filter
// has a nonzero seed (Parquet readers hash with seed 0) and one wrapping
// ErrTooLarge if the bitset exceeds the 2^31−1 bytes numBytes can hold.
func (s *SBBF) AppendParquet(b []byte) ([]byte, error) {
	if s.blocks == 0 {
		zeroPanic(zeroSBBF)
	}
	if s.seed != 0 {
		return b, fmt.Errorf("%w: seed %#x != seed 0 of Parquet's XXH64", ErrIncompatible, s.seed)
	}
	if s.sizeBytes() > math.MaxInt32 {
		return b, fmt.Errorf("%w: %d-byte bitset does not fit Parquet's i32 numBytes", ErrTooLarge, s.sizeBytes())
	}
	b = append(b, 0x15) // field 1, i32
	b = binary.AppendUvarint(b, uint64(uint32(s.sizeBytes())<<1))
	for range 3 {
		// fields 2, 3, 4: a union struct whose field 1 is an empty struct
		b = append(b, 0x1c, 0x1c, 0x00, 0x00)
	}
	b = append(b, 0x00) // end of BloomFilterHeader
	return s.AppendParquetBitset(b), nil
}

// DecodeParquet decodes a Parquet Bloom filter (BloomFilterHeader, then the
// bitset) from the start of data and returns it with the bytes that follow.
// It accepts only what this package implements, algorithm BLOCK, hash
// XXHASH and compression UNCOMPRESSED, and skips unknown header fields as
// Thrift requires. Errors wrap ErrFormat (malformed header, unsupported
// algorithm, numBytes not a positive multiple of 32) or io.ErrUnexpectedEOF
// (data shorter than the header or the declared bitset); the bitset is
// allocated only after checking that data holds it.
func DecodeParquet(data []byte) (s *SBBF, rest []byte, err error) {
	r := thriftReader{b: data}
	var numBytes int64
	haveNum := false
	var alg, hash, comp int16 = -1, -1, -1
	var last int16
	for {
		id, typ, err := r.fieldHeader(&last)
		if err != nil {
			return nil, nil, err
		}
		if typ == thriftStop {
			break
		}
		switch {
		case id == 1 && typ == thriftI32:
			v, err := r.varint()
			if err != nil {
				return nil, nil, err
			}
			if v > math.MaxUint32 {
				return nil, nil, fmt.Errorf("%w: Parquet BloomFilterHeader numBytes overflows i32", ErrFormat)
			}
			numBytes, haveNum = int64(int32(uint32(v>>1)^-uint32(v&1))), true
		case id >= 2 && id <= 4 && typ == thriftStruct:
			which, err := r.union()
			if err != nil {
				return nil, nil, err
			}
			switch id {
			case 2:
				alg = which
			case 3:
				hash = which
			default:
				comp = which
			}
		default:
			if err := r.skip(typ, 0); err != nil {
				return nil, nil, err
			}
		}
	}
	switch {
	case !haveNum || alg < 0 || hash < 0 || comp < 0:
		return nil, nil, fmt.Errorf("%w: Parquet BloomFilterHeader lacks a required field", ErrFormat)
	case alg != 1:
		return nil, nil, fmt.Errorf("%w: Parquet Bloom filter algorithm %d, only 1 (BLOCK) is supported", ErrFormat, alg)
	case hash != 1:
		return nil, nil, fmt.Errorf("%w: Parquet Bloom filter hash %d, only 1 (XXHASH) is supported", ErrFormat, hash)
	case comp != 1:
		return nil, nil, fmt.Errorf("%w: Parquet Bloom filter compression %d, only 1 (UNCOMPRESSED) is supported", ErrFormat, comp)
	case numBytes <= 0 || numBytes%sbbfBlockBytes != 0:
		return nil, nil, fmt.Errorf("%w: Parquet Bloom filter numBytes %d is not a positive multiple of 32", ErrFormat, numBytes)
	}
	body := r.b[r.off:]
	if int64(len(body)) < numBytes {
		return nil, nil, codec.EOF("Parquet Bloom filter")
	}
	s, err = NewSBBFFromParquet(body[:numBytes])
	if err != nil {
		return nil, nil, err
	}
	return s, body[numBytes:], nil
}

// A minimal reader of the Thrift compact protocol: enough to parse and skip
// the fields of a BloomFilterHeader, with a nesting limit.
type thriftReader struct {
	b   []byte
	off int
}

const (
	thriftStop   = 0
	thriftI32    = 5
	thriftStruct = 12
	thriftDepth  = 16
)

func (r *thriftReader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, codec.EOF("Parquet BloomFilterHeader")
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *thriftReader) varint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.off:])
	switch {
	case n == 0:
		return 0, codec.EOF("Parquet BloomFilterHeader")
	case n < 0:
		return 0, fmt.Errorf("%w: Parquet BloomFilterHeader varint overflows 64 bits", ErrFormat)
	}
	r.off += n
	return v, nil
}

// fieldHeader reads a field header: (id, type), or type thriftStop.
func (r *thriftReader) fieldHeader(last *int16) (int16, byte, error) {
	c, err := r.byte()
	if err != nil || c == thriftStop {
		return 0, thriftStop, err
	}
	typ, delta := c&0x0f, int16(c>>4)
	if delta != 0 {
		*last += delta
	} else {
		v, err := r.varint()
		if err != nil {
			return 0, 0, err
		}
		*last = int16(uint16(v>>1) ^ -uint16(v&1))
	}
	return *last, typ, nil
}

// union reads a union struct and returns the ID of its one set field.
func (r *thriftReader) union() (int16, error) {
	var last, which int16 = 0, -1
	for {
		id, typ, err := r.fieldHeader(&last)
		if err != nil {
			return 0, err
		}
		if typ == thriftStop {
			if which < 0 {
				return 0, fmt.Errorf("%w: empty union in Parquet BloomFilterHeader", ErrFormat)
			}
			return which, nil
		}
		if which >= 0 {
			return 0, fmt.Errorf("%w: union with two fields in Parquet BloomFilterHeader", ErrFormat)
		}
		if err := r.skip(typ, 1); err != nil {
			return 0, err
		}
		which = max(id, 0) // 0: a field ID no Parquet version defines
	}
}

// skip skips one value of the given compact type.
func (r *thriftReader) skip(typ byte, depth int) error {
	if depth > thriftDepth {
		return fmt.Errorf("%w: Parquet BloomFilterHeader nested too deeply", ErrFormat)
	}
	switch typ {
	case 1, 2: // boolean true/false, in the type nibble
		return nil
	case 3: // byte
		_, err := r.byte()
		return err
	case 4, 5, 6: // i16, i32, i64: zigzag varints
		_, err := r.varint()
		return err
	case 7: // double
		if len(r.b)-r.off < 8 {
			return codec.EOF("Parquet BloomFilterHeader")
		}
		r.off += 8
		return nil
	case 8: // binary: varint length, bytes
		n, err := r.varint()
		if err != nil {
			return err
		}
		if n > uint64(len(r.b)-r.off) {
			return codec.EOF("Parquet BloomFilterHeader")
		}
		r.off += int(n)
		return nil
	case 9, 10: // list, set: size and element type
		c, err := r.byte()
		if err != nil {
			return err
		}
		n := uint64(c >> 4)
		if n == 15 {
			if n, err = r.varint(); err != nil {
				return err
			}
		}
		et := c & 0x0f
		for i := uint64(0); i < n; i++ {
			if err := r.skipElem(et, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 11: // map: size, then key/value types unless empty
		n, err := r.varint()
		if err != nil || n == 0 {
			return err
		}
		c, err := r.byte()
		if err != nil {
			return err
		}
		for i := uint64(0); i < n; i++ {
			if err := r.skipElem(c>>4, depth+1); err != nil {
				return err
			}
			if err := r.skipElem(c&0x0f, depth+1); err != nil {
				return err
			}
		}
		return nil
	case thriftStruct:
		var last int16
		for {
			_, t, err := r.fieldHeader(&last)
			if err != nil {
				return err
			}
			if t == thriftStop {
				return nil
			}
			if err := r.skip(t, depth+1); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("%w: unknown Thrift compact type %d in Parquet BloomFilterHeader", ErrFormat, typ)
}

// skipElem skips a collection element: booleans take a whole byte there.
func (r *thriftReader) skipElem(typ byte, depth int) error {
	if typ == 1 || typ == 2 {
		_, err := r.byte()
		return err
	}
	if r.off >= len(r.b) {
		// Every element takes at least one byte: a huge declared count on a
		// short input ends here instead of looping.
		return codec.EOF("Parquet BloomFilterHeader")
	}
	return r.skip(typ, depth)
}
