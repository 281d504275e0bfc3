package persist

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
)

// On-disk constants. The byte layout is documented in docs/FORMATS.md.
const (
	aofMagic     = "PRBLYAOF" // first 8 bytes of every AOF file
	snapMagic    = "PRBLYPDB" // first 8 bytes of dump.pdb
	snapEndMagic = "PRBLYEND" // first 8 bytes of the snapshot trailer

	// FormatVersion is the version written into snapshot headers: 2 adds
	// each entry's expire time, 3 stores each value's runs of zero bytes
	// as counts (sparse bodies, sparse.go) and gives each record's header
	// the value's size, 4 lets the entries come in any order (keys are
	// still unique; versions before it list them sorted). Versions 1 to 3
	// are still read; other versions are refused with ErrVersion.
	FormatVersion = 4
	snapVersion1  = 1
	snapVersion2  = 2
	snapVersion4  = 4
	// AOFFormatVersion is the version written into AOF headers. Version 2
	// generations end with an end-of-generation record when another
	// generation follows them; version 1 files (written before it) have
	// none and are still read. Other versions are refused with ErrVersion.
	AOFFormatVersion = 2
	aofVersion1      = 1

	aofHeaderSize   = 24 // magic 8 | version 2 | flags 2 | gen 8 | crc 4
	frameHeaderSize = 8  // len 4 | crc 4
	snapHeaderSize  = 40 // magic 8 | version 2 | flags 2 | reserved 4 | gen 8 | time 8 | count 8 | crc 4 (see FORMATS)
	snapRecHeader   = 20 // len 8 | size 8 | crc 4 (version 3)
	snapRecHeaderV2 = 12 // len 8 | crc 4 (versions 1 and 2)
	snapMinRecord   = snapRecHeaderV2 + 2
	snapTrailerSize = 20 // magic 8 | count 8 | crc 4

	// End-of-generation record (AOF version 2): a frame whose payload is
	// argc 0 (never a command) | kind 1 | next gen u64 | records u64 |
	// offset u64.
	eogPayloadSize = 2 + 3*8
	eogFrameSize   = frameHeaderSize + eogPayloadSize
	ctrlEndOfGen   = 1

	// MaxRecordSize bounds the payload of one AOF record (1 GiB). Append
	// refuses larger records with ErrRecordTooLarge; recovery treats a
	// larger length field as damage.
	MaxRecordSize = 1 << 30
	// MaxArgs bounds the number of arguments of one AOF record.
	MaxArgs = 1 << 24

	snapshotName = "dump.pdb"
	lockName     = "LOCK"
	tmpSuffix    = ".tmp"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func aofFileName(gen uint64) string { return fmt.Sprintf("appendonly.%d.aof", gen) }

// encodeAOFHeader returns the 24-byte header of AOF generation gen, in
// the current format version.
func encodeAOFHeader(gen uint64) []byte { return encodeAOFHeaderVersion(gen, AOFFormatVersion) }

func encodeAOFHeaderVersion(gen uint64, version uint16) []byte {
	b := make([]byte, aofHeaderSize)
	copy(b, aofMagic)
	binary.LittleEndian.PutUint16(b[8:], version)
	binary.LittleEndian.PutUint16(b[10:], 0) // flags
	binary.LittleEndian.PutUint64(b[12:], gen)
	binary.LittleEndian.PutUint32(b[20:], crc32c(b[:20]))
	return b
}

// checkAOFHeader validates a 24-byte AOF header for generation gen. It
// returns a reason and the sentinel to wrap, or a nil sentinel.
func checkAOFHeader(b []byte, gen uint64) (reason string, sentinel error) {
	if string(b[:8]) != aofMagic {
		return "not a probly AOF file (bad magic)", ErrCorrupt
	}
	if got, want := binary.LittleEndian.Uint32(b[20:]), crc32c(b[:20]); got != want {
		return fmt.Sprintf("header checksum mismatch (stored %08x, computed %08x)", got, want), ErrCorrupt
	}
	if v := binary.LittleEndian.Uint16(b[8:]); v != aofVersion1 && v != AOFFormatVersion {
		return fmt.Sprintf("AOF format version %d (this build reads %d and %d)", v, aofVersion1, AOFFormatVersion), ErrVersion
	}
	if fl := binary.LittleEndian.Uint16(b[10:]); fl != 0 {
		return fmt.Sprintf("unknown AOF header flags %#04x", fl), ErrVersion
	}
	if g := binary.LittleEndian.Uint64(b[12:]); g != gen {
		return fmt.Sprintf("header says generation %d but the file name says %d", g, gen), ErrCorrupt
	}
	return "", nil
}

// aofHeaderVersion returns the version field of a valid AOF header.
func aofHeaderVersion(b []byte) uint16 { return binary.LittleEndian.Uint16(b[8:]) }

// endOfGen is the content of an end-of-generation record: the last record
// of a version 2 generation that another generation follows. It is
// written when the AOF switches to generation next, and says that this
// generation holds records command records and that the record itself
// starts at byte offset (so the file had exactly offset bytes before it).
type endOfGen struct {
	next    uint64
	records uint64
	offset  int64
}

// appendEndOfGen appends the framed end-of-generation record e to dst.
func appendEndOfGen(dst []byte, e endOfGen) []byte {
	var p [eogPayloadSize]byte
	p[0] = 0 // argc 0: a control record, never a command
	p[1] = ctrlEndOfGen
	binary.LittleEndian.PutUint64(p[2:], e.next)
	binary.LittleEndian.PutUint64(p[10:], e.records)
	binary.LittleEndian.PutUint64(p[18:], uint64(e.offset))
	var h [frameHeaderSize]byte
	binary.LittleEndian.PutUint32(h[:], eogPayloadSize)
	binary.LittleEndian.PutUint32(h[4:], crc32c(p[:]))
	return append(append(dst, h[:]...), p[:]...)
}

// isControl reports whether a checksummed payload is a control record
// (argc 0) rather than a command.
func isControl(p []byte) bool { return len(p) > 0 && p[0] == 0 }

// decodeEndOfGen decodes a control record's payload.
func decodeEndOfGen(p []byte) (endOfGen, error) {
	if len(p) < 2 || p[1] != ctrlEndOfGen {
		kind := -1
		if len(p) >= 2 {
			kind = int(p[1])
		}
		return endOfGen{}, fmt.Errorf("unknown control record (kind %d, %d bytes)", kind, len(p))
	}
	if len(p) != eogPayloadSize {
		return endOfGen{}, fmt.Errorf("end-of-generation record of %d bytes (want %d)", len(p), eogPayloadSize)
	}
	off := binary.LittleEndian.Uint64(p[18:])
	if off > 1<<62 {
		return endOfGen{}, fmt.Errorf("end-of-generation record with offset %d", off)
	}
	return endOfGen{
		next:    binary.LittleEndian.Uint64(p[2:]),
		records: binary.LittleEndian.Uint64(p[10:]),
		offset:  int64(off),
	}, nil
}

// payloadSize returns the encoded payload size of args, or an error if the
// record is empty or too large.
func payloadSize(args [][]byte) (int, error) {
	if len(args) == 0 {
		return 0, ErrEmptyRecord
	}
	if len(args) > MaxArgs {
		return 0, fmt.Errorf("%w: %d arguments (max %d)", ErrRecordTooLarge, len(args), MaxArgs)
	}
	n := uvarintLen(uint64(len(args)))
	for _, a := range args {
		if len(a) > MaxRecordSize {
			return 0, fmt.Errorf("%w: argument of %d bytes (max record %d)", ErrRecordTooLarge, len(a), MaxRecordSize)
		}
		n += uvarintLen(uint64(len(a))) + len(a)
		if n > MaxRecordSize {
			return 0, fmt.Errorf("%w: more than %d bytes", ErrRecordTooLarge, MaxRecordSize)
		}
	}
	return n, nil
}

// appendFrame appends one framed AOF record (len | crc32c(payload) |
// payload) to dst. psize is payloadSize(args), used to size dst once.
func appendFrame(dst []byte, args [][]byte, psize int) []byte {
	start := len(dst)
	dst = slices.Grow(dst, frameHeaderSize+psize)
	dst = append(dst, make([]byte, frameHeaderSize)...)
	dst = binary.AppendUvarint(dst, uint64(len(args)))
	for _, a := range args {
		dst = binary.AppendUvarint(dst, uint64(len(a)))
		dst = append(dst, a...)
	}
	payload := dst[start+frameHeaderSize:]
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32c(payload))
	return dst
}

// decodeArgs decodes a complete, checksummed payload. The returned slices
// alias p.
func decodeArgs(p []byte) ([][]byte, error) {
	argc, k := binary.Uvarint(p)
	if k <= 0 {
		return nil, fmt.Errorf("bad argument count")
	}
	off := k
	// Every argument takes at least one byte (its length), so argc is
	// bounded by the payload before anything is allocated.
	if argc == 0 || argc > MaxArgs || argc > uint64(len(p)-off) {
		return nil, fmt.Errorf("bad argument count %d", argc)
	}
	// First pass: validate the structure without allocating.
	for i := uint64(0); i < argc; i++ {
		l, k := binary.Uvarint(p[off:])
		if k <= 0 {
			return nil, fmt.Errorf("bad length of argument %d", i)
		}
		off += k
		if l > uint64(len(p)-off) {
			return nil, fmt.Errorf("argument %d length %d exceeds the record", i, l)
		}
		off += int(l)
	}
	if off != len(p) {
		return nil, fmt.Errorf("%d trailing bytes after the arguments", len(p)-off)
	}
	args := make([][]byte, argc)
	off = k
	for i := range args {
		l, k := binary.Uvarint(p[off:])
		off += k
		args[i] = p[off : off+int(l) : off+int(l)]
		off += int(l)
	}
	return args, nil
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// byteSource is what walkPayload reads from (a *bufio.Reader).
type byteSource interface {
	ReadByte() (byte, error)
	Discard(n int) (int, error)
}

// walkPayload walks the payload encoding over at most avail bytes of r
// without allocating. It returns the payload size and true if a complete
// payload ends within avail bytes; false if the bytes run out first (what
// a torn write looks like) or the structure is invalid.
func walkPayload(r byteSource, avail int64) (int64, bool) {
	var used int64
	readUvarint := func() (uint64, bool) {
		var x uint64
		var s uint
		for i := 0; i < binary.MaxVarintLen64; i++ {
			if used >= avail {
				return 0, false
			}
			b, err := r.ReadByte()
			if err != nil {
				return 0, false
			}
			used++
			if b < 0x80 {
				if i == binary.MaxVarintLen64-1 && b > 1 {
					return 0, false
				}
				return x | uint64(b)<<s, true
			}
			x |= uint64(b&0x7f) << s
			s += 7
		}
		return 0, false
	}
	argc, ok := readUvarint()
	if !ok || argc == 0 || argc > MaxArgs {
		return 0, false
	}
	for i := uint64(0); i < argc; i++ {
		l, ok := readUvarint()
		if !ok || l > uint64(avail-used) {
			return 0, false
		}
		for l > 0 {
			step := l
			if step > 1<<20 {
				step = 1 << 20
			}
			n, err := r.Discard(int(step))
			used += int64(n)
			if err != nil {
				return 0, false
			}
			l -= step
		}
	}
	return used, true
}
