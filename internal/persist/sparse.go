package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/probly/probly/internal/binfmt"
)

// Value bodies of snapshot format version 3 (docs/FORMATS.md, "Snapshot"):
// a value's encoding (its MarshalBinary bytes, size bytes long) is stored
// as segments, each "zeros uvarint | lits uvarint | lits bytes": zeros
// zero bytes of the encoding, then lits bytes stored as they are. Runs of
// zero bytes (a large filter that holds few items is mostly zero) take a
// few bytes, and neither writing nor reading them touches the pages of
// the value that hold them.
const (
	sparseBlock = 256     // zero runs are found in aligned blocks of this many bytes
	maxLiteral  = 1 << 16 // longest literal run of one segment
)

// sparseWriter writes the version 3 body of the bytes written to it to w.
// Close ends the body. Reset reuses it (and its buffers) for another
// value.
type sparseWriter struct {
	w     io.Writer
	size  uint64 // bytes of the encoding taken so far
	block [sparseBlock]byte
	nb    int    // bytes in block
	zeros uint64 // zero bytes before lit
	lit   []byte
	hdr   []byte
	err   error
}

func (s *sparseWriter) Reset(w io.Writer) {
	s.w, s.size, s.nb, s.zeros, s.lit, s.err = w, 0, 0, 0, s.lit[:0], nil
}

func (s *sparseWriter) Write(p []byte) (int, error) {
	n := len(p)
	s.size += uint64(n)
	for len(p) > 0 && s.err == nil {
		if s.nb == 0 && len(p) >= sparseBlock {
			s.add(p[:sparseBlock])
			p = p[sparseBlock:]
			continue
		}
		c := copy(s.block[s.nb:], p)
		s.nb += c
		p = p[c:]
		if s.nb == sparseBlock {
			s.add(s.block[:])
			s.nb = 0
		}
	}
	if s.err != nil {
		return 0, s.err
	}
	return n, nil
}

// add takes one block (a short one only at the end).
func (s *sparseWriter) add(b []byte) {
	if binfmt.IsZero(b) {
		if len(s.lit) > 0 {
			s.emit()
		}
		s.zeros += uint64(len(b))
		return
	}
	if len(s.lit)+len(b) > maxLiteral {
		s.emit()
	}
	s.lit = append(s.lit, b...)
}

// emit writes the pending segment.
func (s *sparseWriter) emit() {
	if s.err != nil {
		return
	}
	s.hdr = binary.AppendUvarint(binary.AppendUvarint(s.hdr[:0], s.zeros), uint64(len(s.lit)))
	if _, s.err = s.w.Write(s.hdr); s.err == nil && len(s.lit) > 0 {
		_, s.err = s.w.Write(s.lit)
	}
	s.zeros, s.lit = 0, s.lit[:0]
}

// Close writes what is pending and returns the first write error.
func (s *sparseWriter) Close() error {
	if s.nb > 0 {
		s.add(s.block[:s.nb])
		s.nb = 0
	}
	if s.zeros > 0 || len(s.lit) > 0 {
		s.emit()
	}
	return s.err
}

// errRecord is a record whose structure is invalid although its checksum
// matched; readSnapshot reports it with the record's offset.
type errRecord struct{ msg string }

func (e *errRecord) Error() string { return e.msg }

func recordErr(format string, a ...any) error { return &errRecord{fmt.Sprintf(format, a...)} }

// byteSrc is what a record is read from: a bytes.Reader (a record read
// whole) or a bufio.Reader (a large record streamed from the file).
type byteSrc interface {
	io.Reader
	io.ByteReader
}

// recReader reads the left stored bytes of one record and no more.
type recReader struct {
	r    byteSrc
	left uint64
}

func (r *recReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, recordErr("record ends inside its value")
	}
	if uint64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.r.Read(p)
	r.left -= uint64(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // the record's length was checked against the file
	}
	return n, err
}

func (r *recReader) ReadByte() (byte, error) {
	if r.left == 0 {
		return 0, recordErr("record ends inside its value")
	}
	b, err := r.r.ReadByte()
	if err == nil {
		r.left--
	} else if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return b, err
}

// uvarint reads one uvarint field named what.
func (r *recReader) uvarint(what string) (uint64, error) {
	x, err := binary.ReadUvarint(r)
	var re *errRecord
	if err != nil && !errors.As(err, &re) && err != io.ErrUnexpectedEOF {
		return 0, recordErr("bad %s", what)
	}
	if err != nil {
		return 0, recordErr("record ends inside its %s", what)
	}
	return x, nil
}

// bytes reads n bytes (n ≤ r.left, checked).
func (r *recReader) bytes(n uint64, what string) ([]byte, error) {
	if n > r.left {
		return nil, recordErr("bad %s length %d (%d bytes left in the record)", what, n, r.left)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

// sparseReader yields the size bytes of a value whose version 3 body r
// holds, zero runs expanded.
type sparseReader struct {
	r          *recReader
	left       uint64 // bytes of the encoding still to yield
	zeros, lit uint64 // left in the current segment
	// zeroed: the caller reads into memory that is all zero already (a
	// fresh allocation, filled once in order), so zero runs are skipped
	// without writing: their pages stay untouched, and a record whose
	// size claims much more than its body holds costs no resident memory
	// before its decoder refuses it.
	zeroed bool
}

func (s *sparseReader) Read(p []byte) (int, error) {
	if s.left == 0 {
		return 0, io.EOF
	}
	for s.zeros == 0 && s.lit == 0 {
		z, err := s.r.uvarint("segment")
		if err != nil {
			return 0, err
		}
		l, err := s.r.uvarint("segment")
		if err != nil {
			return 0, err
		}
		if z == 0 && l == 0 || z > s.left || l > s.left-z {
			return 0, recordErr("segment of %d zero and %d stored bytes where %d bytes of the value are left", z, l, s.left)
		}
		s.zeros, s.lit = z, l
	}
	if uint64(len(p)) > s.left {
		p = p[:s.left]
	}
	if s.zeros > 0 {
		k := min(uint64(len(p)), s.zeros)
		if !s.zeroed {
			clear(p[:k])
		}
		s.zeros -= k
		s.left -= k
		return int(k), nil
	}
	k := min(uint64(len(p)), s.lit)
	n, err := s.r.Read(p[:k])
	s.lit -= uint64(n)
	s.left -= uint64(n)
	return n, err
}
