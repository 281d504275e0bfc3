package follow

// Follower snapshots: the followed keys and the stream position they are
// consistent with, as one self-describing object (docs/FORMATS.md,
// "Follower snapshot"). A replica that starts empty loads the newest
// snapshot from a JetStream object store and follows the stream from the
// snapshot's position + 1, instead of replaying the whole stream (which
// retention may have truncated).
//
// A snapshot carries no value encoding of its own: each record holds the
// chunks of the Redis interchange that recreates the key (BF.SCANDUMP →
// BF.LOADCHUNK for a bf key, CF.SCANDUMP → CF.LOADCHUNK for cf, GET → SET
// for an HLL string), so loading one is replaying commands through the one
// command path, logged to the AOF like any write, and every chunk is
// validated by the command that loads it.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/resp"
	"github.com/probly/probly/internal/strval"
)

// Layout constants of the follower snapshot (docs/FORMATS.md).
const (
	snapFileMagic    = "PRBLYFSN" // first 8 bytes
	snapFileEnd      = "PRBLYFEN" // first 8 bytes of the trailer
	snapFileVersion  = 2          // written; version 1 is still read
	snapFixedHeader  = 38         // magic 8 | version 2 | flags 2 | position 8 | time 8 | count 8 | slen 2
	snapFileRecHead  = 12         // len 8 | crc 4
	snapFileMinBody  = 6          // kind 1 | klen 1 | key ≥ 1 | nchunks 1 | iter 1 | dlen 1
	snapFileTrailer  = 20         // magic 8 | count 8 | crc 4
	snapMaxStreamLen = 255
	// snapMaxRecord bounds a version 2 record's body: one SCANDUMP chunk
	// (at most 16 MiB) and its key. A version 1 record holds a whole key
	// and is bounded by the object's size only.
	snapMaxRecord = 64 << 20

	// Record kinds: which interchange recreates the key.
	snapKindBF = 1 // BF.SCANDUMP → BF.LOADCHUNK
	snapKindCF = 2 // CF.SCANDUMP → CF.LOADCHUNK
	snapKindPF = 3 // GET → SET (an HLL is a Redis string)
)

// Errors of the follower snapshot decoder and of capture and restore.
// Every refusal wraps exactly one of them, behind the "follow: snapshot:"
// prefix and a reason with the byte offset.
var (
	// ErrSnapshotMagic: the bytes are not a follower snapshot.
	ErrSnapshotMagic = errors.New("follow: snapshot: bad magic")
	// ErrSnapshotVersion: a format version or header flags this build
	// does not read.
	ErrSnapshotVersion = errors.New("follow: snapshot: unsupported version")
	// ErrSnapshotTruncated: fewer bytes than the header and the records
	// declare.
	ErrSnapshotTruncated = errors.New("follow: snapshot: truncated")
	// ErrSnapshotChecksum: a CRC-32C (header, record or whole object)
	// or the object's SHA-256 digest does not match.
	ErrSnapshotChecksum = errors.New("follow: snapshot: checksum mismatch")
	// ErrSnapshotCorrupt: the structure is invalid although the checksums
	// match (bad varint, count, kind, iterator, duplicate key, bytes after
	// the trailer): a bug or a forged object.
	ErrSnapshotCorrupt = errors.New("follow: snapshot: corrupt")
	// ErrSnapshotTooLarge: the object is larger than the configured
	// maximum (SnapshotConfig.MaxBytes).
	ErrSnapshotTooLarge = errors.New("follow: snapshot: too large")
	// ErrSnapshotStream: the snapshot was taken of another stream, or its
	// position does not fit the stream (ahead of its last message, or
	// before messages retention removed).
	ErrSnapshotStream = errors.New("follow: snapshot: does not fit the stream")
	// ErrSnapshotKeys: a record names a key that is not followed, with
	// another type, or a key (or the position key) that already exists.
	ErrSnapshotKeys = errors.New("follow: snapshot: keys do not match")
	// ErrSnapshotCapture: a key could not be read consistently (a reply
	// that is not what SCANDUMP or GET returns, a key of another type).
	ErrSnapshotCapture = errors.New("follow: snapshot: capture failed")
	// ErrSnapshotRestore: a command that recreates a key failed; the keys
	// created so far were deleted again.
	ErrSnapshotRestore = errors.New("follow: snapshot: restore failed")
	// ErrNoSnapshot: the bucket or the object does not exist.
	ErrNoSnapshot = errors.New("follow: snapshot: none published")
)

var snapCastagnoli = crc32.MakeTable(crc32.Castagnoli)

func snapCRC(b []byte) uint32 { return crc32.Checksum(b, snapCastagnoli) }

// keyInfo is one followed key: its name and its configured type ("bf",
// "cf" or "pf").
type keyInfo struct {
	name string
	typ  string
}

// snapChunk is one step of a key's interchange: the iterator and the data
// of BF/CF.LOADCHUNK key <iter> <data>, or (iter 0) the value of SET.
type snapChunk struct {
	iter int64
	data []byte
}

// snapRecord recreates one key (decodeSnapshot), or part of one
// (snapReader.next: one version 2 record, one chunk).
type snapRecord struct {
	kind   byte
	key    []byte
	chunks []snapChunk
}

// snapshotFile is a decoded follower snapshot: one record per key.
type snapshotFile struct {
	version  uint16
	stream   string
	position uint64
	time     time.Time
	records  []snapRecord
}

func kindOf(typ string) (byte, bool) {
	switch typ {
	case "bf":
		return snapKindBF, true
	case "cf":
		return snapKindCF, true
	case "pf":
		return snapKindPF, true
	}
	return 0, false
}

func kindName(k byte) string {
	switch k {
	case snapKindBF:
		return "bf"
	case snapKindCF:
		return "cf"
	case snapKindPF:
		return "pf"
	}
	return "kind " + strconv.Itoa(int(k))
}

// snapEncoder writes a version 2 follower snapshot front to back to an
// io.Writer, one record per chunk: nothing is patched afterwards, so the
// writer may be a pipe, a file or an upload. Memory: a 64 KiB buffer; a
// chunk's data is written from the caller's slice, not copied.
type snapEncoder struct {
	w     *bufio.Writer
	crc   uint32 // CRC-32C of every byte written
	n     int64  // bytes written
	count uint64
	err   error  // first write error; later writes are skipped
	head  []byte // scratch for a record's head and body prefix
}

func newSnapEncoder(w io.Writer, stream string, pos uint64, at time.Time) (*snapEncoder, error) {
	if len(stream) == 0 || len(stream) > snapMaxStreamLen {
		return nil, fmt.Errorf("%w: stream name of %d bytes (1 … %d)", ErrSnapshotCapture, len(stream), snapMaxStreamLen)
	}
	e := &snapEncoder{w: bufio.NewWriterSize(w, 64<<10)}
	b := append([]byte(nil), snapFileMagic...)
	b = binary.LittleEndian.AppendUint16(b, snapFileVersion)
	b = binary.LittleEndian.AppendUint16(b, 0) // flags
	b = binary.LittleEndian.AppendUint64(b, pos)
	b = binary.LittleEndian.AppendUint64(b, uint64(at.UnixNano()))
	b = binary.LittleEndian.AppendUint64(b, 0) // count: 0 in version 2, see the trailer
	b = binary.LittleEndian.AppendUint16(b, uint16(len(stream)))
	b = append(b, stream...)
	b = binary.LittleEndian.AppendUint32(b, snapCRC(b))
	e.write(b)
	return e, e.err
}

func (e *snapEncoder) write(p []byte) {
	if e.err != nil {
		return
	}
	e.crc = crc32.Update(e.crc, snapCastagnoli, p)
	_, e.err = e.w.Write(p)
	e.n += int64(len(p))
}

// record writes one record: kind, key and chunks (the encoder writes one
// chunk per record; other counts only for tests of the decoder).
func (e *snapEncoder) record(kind byte, key []byte, chunks []snapChunk) error {
	// p: the body's bytes other than the chunks' data; ends[i]: where the
	// prefix (i = 0) and chunk i-1's iterator and length end in p.
	p := append(e.head[:0], kind)
	p = binary.AppendUvarint(p, uint64(len(key)))
	p = append(p, key...)
	p = binary.AppendUvarint(p, uint64(len(chunks)))
	ends := append(make([]int, 0, len(chunks)+1), len(p))
	size := 0
	for _, c := range chunks {
		p = binary.AppendUvarint(p, uint64(c.iter))
		p = binary.AppendUvarint(p, uint64(len(c.data)))
		ends = append(ends, len(p))
		size += len(c.data)
	}
	e.head = p
	if size += len(p); size > snapMaxRecord {
		return fmt.Errorf("%w: a record of %d bytes (at most %d)", ErrSnapshotCapture, size, snapMaxRecord)
	}
	crc := crc32.Checksum(p[:ends[0]], snapCastagnoli)
	for i, c := range chunks {
		crc = crc32.Update(crc, snapCastagnoli, p[ends[i]:ends[i+1]])
		crc = crc32.Update(crc, snapCastagnoli, c.data)
	}
	var h [snapFileRecHead]byte
	binary.LittleEndian.PutUint64(h[:], uint64(size))
	binary.LittleEndian.PutUint32(h[8:], crc)
	e.write(h[:])
	e.write(p[:ends[0]])
	for i, c := range chunks {
		e.write(p[ends[i]:ends[i+1]])
		e.write(c.data)
	}
	e.count++
	return e.err
}

// finish writes the trailer, flushes, and returns the object's size.
func (e *snapEncoder) finish() (int64, error) {
	t := append([]byte(snapFileEnd), make([]byte, 8)...)
	binary.LittleEndian.PutUint64(t[8:], e.count)
	e.write(t)
	e.write(binary.LittleEndian.AppendUint32(nil, e.crc))
	if e.err == nil {
		e.err = e.w.Flush()
	}
	return e.n, e.err
}

// encodeSnapshot encodes s (records in order; one record per chunk, a
// key without chunks as one record without chunks, which the decoder
// refuses). Cost: one pass, one allocation of the encoded size.
func encodeSnapshot(s *snapshotFile) ([]byte, error) {
	var buf bytes.Buffer
	e, err := newSnapEncoder(&buf, s.stream, s.position, s.time)
	if err != nil {
		return nil, err
	}
	for _, r := range s.records {
		if len(r.chunks) == 0 {
			err = e.record(r.kind, r.key, nil)
		}
		for _, c := range r.chunks {
			if err = e.record(r.kind, r.key, []snapChunk{c}); err != nil {
				break
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if _, err := e.finish(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// snapReader decodes a follower snapshot from a stream, record by record,
// checking every record's CRC before returning it: at most one record is
// in memory (a version 2 record is one chunk, at most snapMaxRecord; a
// version 1 record is a whole key). Errors wrap one of the ErrSnapshot*
// sentinels with the byte offset of the violation; a read error of the
// underlying reader is returned wrapped as it is (ErrSnapshotTruncated
// for an early end).
//
// Checks, in order: header (magic, CRC, version, flags, stream length;
// version 1: the record count against the size; version 2: count 0);
// each record's length against the bytes left (and, version 2, against
// snapMaxRecord), its CRC, kind, key length, chunk count and chunk
// lengths against the body, the iterators (bf/cf: ≥ 1, strictly
// increasing, at least one chunk; pf: exactly one chunk with iterator 0),
// unique keys (version 2: a key's records are consecutive, one chunk
// each, and a record with the previous record's key continues it: same
// kind, bf or cf, a larger iterator); then the trailer's magic, count and
// whole-object CRC, and that the stream ends there.
type snapReader struct {
	r     *bufio.Reader
	size  int64 // the object's size
	off   int64 // bytes consumed
	crc   uint32
	hdr   snapshotFile // header fields, no records
	count uint64       // version 1: records declared
	n     uint64       // records read
	body  []byte
	seen  map[string]bool
	last  snapRecord // version 2: the previous record (key copied)
	done  bool
}

// newSnapReader reads and checks the header of the size-byte snapshot r
// delivers.
func newSnapReader(r io.Reader, size int64) (*snapReader, error) {
	d := &snapReader{r: bufio.NewReaderSize(r, 64<<10), size: size, seen: map[string]bool{}}
	b := make([]byte, min(size, snapFixedHeader))
	if err := d.read(b, "the header"); err != nil {
		return nil, err
	}
	if len(b) < 8 || string(b[:8]) != snapFileMagic {
		return nil, fmt.Errorf("%w: not a follower snapshot", ErrSnapshotMagic)
	}
	if len(b) < snapFixedHeader {
		return nil, fmt.Errorf("%w: %d bytes, the header alone takes %d", ErrSnapshotTruncated, size, snapFixedHeader+1+4)
	}
	slen := int(binary.LittleEndian.Uint16(b[36:]))
	hsize := int64(snapFixedHeader + slen + 4)
	if size < hsize {
		return nil, fmt.Errorf("%w: %d bytes, the header takes %d", ErrSnapshotTruncated, size, hsize)
	}
	b = append(b, make([]byte, slen+4)...)
	if err := d.read(b[snapFixedHeader:], "the header"); err != nil {
		return nil, err
	}
	if got, want := binary.LittleEndian.Uint32(b[hsize-4:]), snapCRC(b[:hsize-4]); got != want {
		return nil, fmt.Errorf("%w: header (stored %08x, computed %08x)", ErrSnapshotChecksum, got, want)
	}
	v := binary.LittleEndian.Uint16(b[8:])
	if v != 1 && v != 2 {
		return nil, fmt.Errorf("%w: format version %d (this build reads 1 and 2)", ErrSnapshotVersion, v)
	}
	if fl := binary.LittleEndian.Uint16(b[10:]); fl != 0 {
		return nil, fmt.Errorf("%w: unknown header flags %#04x", ErrSnapshotVersion, fl)
	}
	if slen == 0 || slen > snapMaxStreamLen {
		return nil, fmt.Errorf("%w: stream name of %d bytes (1 … %d)", ErrSnapshotCorrupt, slen, snapMaxStreamLen)
	}
	d.hdr = snapshotFile{version: v, stream: string(b[snapFixedHeader : snapFixedHeader+slen]),
		position: binary.LittleEndian.Uint64(b[12:]), time: time.Unix(0, int64(binary.LittleEndian.Uint64(b[20:])))}
	d.count = binary.LittleEndian.Uint64(b[28:])
	switch avail := uint64(size - hsize); {
	case v == 2 && d.count != 0:
		return nil, fmt.Errorf("%w: a version 2 header with record count %d (must be 0)", ErrSnapshotCorrupt, d.count)
	case v == 1 && (avail < snapFileTrailer || d.count > (avail-snapFileTrailer)/(snapFileRecHead+snapFileMinBody)):
		return nil, fmt.Errorf("%w: %d records declared, the %d bytes after the header cannot hold them", ErrSnapshotTruncated, d.count, avail)
	}
	return d, nil
}

// read fills p from the stream, adding it to the whole-object CRC.
func (d *snapReader) read(p []byte, what string) error {
	n, err := io.ReadFull(d.r, p)
	d.crc = crc32.Update(d.crc, snapCastagnoli, p[:n])
	d.off += int64(n)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("%w: %s at offset %d: the stream ended after %d bytes", ErrSnapshotTruncated, what, d.off-int64(n), d.off)
	case err != nil:
		return fmt.Errorf("follow: snapshot: reading %s at offset %d: %w", what, d.off-int64(n), err)
	}
	return nil
}

// next returns the next record and whether it continues the previous
// record's key (version 2), or ok false after the trailer checked out.
// The record's slices are valid until the next call.
func (d *snapReader) next() (r snapRecord, cont, ok bool, err error) {
	if d.done {
		return r, false, false, nil
	}
	if d.size-d.off < snapFileTrailer {
		return r, false, false, fmt.Errorf("%w: offset %d: no room for the trailer", ErrSnapshotTruncated, d.off)
	}
	left := d.size - snapFileTrailer - d.off // bytes before the trailer
	if d.hdr.version == 1 && d.n == d.count || d.hdr.version == 2 && left == 0 {
		return r, false, false, d.trailer(left)
	}
	i, off := d.n, d.off
	if left < snapFileRecHead {
		return r, false, false, fmt.Errorf("%w: record %d at offset %d: no room for its header", ErrSnapshotTruncated, i, off)
	}
	var h [snapFileRecHead]byte
	if err := d.read(h[:], fmt.Sprintf("record %d", i)); err != nil {
		return r, false, false, err
	}
	l := binary.LittleEndian.Uint64(h[:])
	switch {
	case l < snapFileMinBody:
		return r, false, false, fmt.Errorf("%w: record %d at offset %d: length %d (at least %d)", ErrSnapshotCorrupt, i, off, l, snapFileMinBody)
	case l > uint64(left-snapFileRecHead):
		return r, false, false, fmt.Errorf("%w: record %d at offset %d: length %d, %d bytes left", ErrSnapshotTruncated, i, off, l, left-snapFileRecHead)
	case d.hdr.version == 2 && l > snapMaxRecord:
		return r, false, false, fmt.Errorf("%w: record %d at offset %d: length %d (at most %d)", ErrSnapshotCorrupt, i, off, l, snapMaxRecord)
	}
	if uint64(cap(d.body)) < l {
		d.body = nil // free the smaller buffer first
		d.body = make([]byte, l)
	}
	body := d.body[:l]
	if err := d.read(body, fmt.Sprintf("record %d", i)); err != nil {
		return r, false, false, err
	}
	if got, want := binary.LittleEndian.Uint32(h[8:]), snapCRC(body); got != want {
		return r, false, false, fmt.Errorf("%w: record %d at offset %d (stored %08x, computed %08x)", ErrSnapshotChecksum, i, off, got, want)
	}
	r, err = decodeSnapRecord(body)
	if err != nil {
		return r, false, false, fmt.Errorf("%w: record %d at offset %d: %v", ErrSnapshotCorrupt, i, off, err)
	}
	if d.hdr.version == 2 {
		if len(r.chunks) != 1 {
			return r, false, false, fmt.Errorf("%w: record %d at offset %d: %d chunks (a version 2 record has 1)", ErrSnapshotCorrupt, i, off, len(r.chunks))
		}
		if cont = d.n > 0 && bytes.Equal(r.key, d.last.key); cont {
			if r.kind != d.last.kind || r.kind == snapKindPF || r.chunks[0].iter <= d.last.chunks[0].iter {
				return r, false, false, fmt.Errorf("%w: record %d at offset %d: does not continue the previous record of its key (kind %s after %s, iterator %d after %d)",
					ErrSnapshotCorrupt, i, off, kindName(r.kind), kindName(d.last.kind), r.chunks[0].iter, d.last.chunks[0].iter)
			}
		}
		d.last = snapRecord{kind: r.kind, key: append(d.last.key[:0], r.key...), chunks: []snapChunk{{iter: r.chunks[0].iter}}}
	}
	if !cont {
		if d.seen[string(r.key)] {
			return r, false, false, fmt.Errorf("%w: record %d at offset %d: a key appears twice", ErrSnapshotCorrupt, i, off)
		}
		d.seen[string(r.key)] = true
	}
	d.n++
	return r, cont, true, nil
}

// trailer checks the trailer (left: bytes between the records and it)
// and that the stream ends after it.
func (d *snapReader) trailer(left int64) error {
	if left != 0 {
		return fmt.Errorf("%w: %d bytes between the last record (offset %d) and the trailer", ErrSnapshotCorrupt, left, d.off)
	}
	end := d.off
	t := make([]byte, snapFileTrailer)
	if err := d.read(t[:16], "the trailer"); err != nil {
		return err
	}
	sum := d.crc
	if err := d.read(t[16:], "the trailer"); err != nil {
		return err
	}
	if string(t[:8]) != snapFileEnd {
		return fmt.Errorf("%w: bad trailer magic at offset %d", ErrSnapshotCorrupt, end)
	}
	if got := binary.LittleEndian.Uint32(t[16:]); got != sum {
		return fmt.Errorf("%w: whole object (stored %08x, computed %08x)", ErrSnapshotChecksum, got, sum)
	}
	want := d.count
	if d.hdr.version == 2 {
		want = d.n
	}
	if c := binary.LittleEndian.Uint64(t[8:]); c != want {
		return fmt.Errorf("%w: trailer count %d, %d records", ErrSnapshotCorrupt, c, want)
	}
	// The stream must end here (an object store reader checks its digest
	// at the end).
	switch n, err := io.ReadFull(d.r, t[:1]); {
	case n > 0:
		return fmt.Errorf("%w: bytes after the trailer (offset %d)", ErrSnapshotCorrupt, d.off)
	case err != nil && !errors.Is(err, io.EOF):
		return fmt.Errorf("follow: snapshot: reading after the trailer: %w", err)
	}
	d.done = true
	return nil
}

// decodeSnapshot validates the whole of b (snapReader) and returns the
// snapshot, one record per key (a version 2 key's records merged). Cost:
// O(len(b)); the records are copied.
func decodeSnapshot(b []byte) (*snapshotFile, error) {
	d, err := newSnapReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	s := d.hdr
	for {
		r, cont, ok, err := d.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return &s, nil
		}
		chunks := make([]snapChunk, len(r.chunks))
		for i, c := range r.chunks {
			chunks[i] = snapChunk{c.iter, bytes.Clone(c.data)}
		}
		if cont {
			last := &s.records[len(s.records)-1]
			last.chunks = append(last.chunks, chunks...)
		} else {
			s.records = append(s.records, snapRecord{kind: r.kind, key: bytes.Clone(r.key), chunks: chunks})
		}
	}
}

// decodeSnapRecord decodes one checksummed record body.
func decodeSnapRecord(p []byte) (snapRecord, error) {
	var r snapRecord
	r.kind = p[0]
	if r.kind < snapKindBF || r.kind > snapKindPF {
		return r, fmt.Errorf("unknown kind %d", r.kind)
	}
	off := 1
	uv := func(what string) (uint64, error) {
		x, k := binary.Uvarint(p[off:])
		if k <= 0 {
			return 0, fmt.Errorf("bad %s varint at body offset %d", what, off)
		}
		off += k
		return x, nil
	}
	klen, err := uv("key length")
	if err != nil {
		return r, err
	}
	if klen == 0 || klen > uint64(len(p)-off) {
		return r, fmt.Errorf("key length %d, %d bytes left", klen, len(p)-off)
	}
	r.key = p[off : off+int(klen) : off+int(klen)]
	off += int(klen)
	n, err := uv("chunk count")
	if err != nil {
		return r, err
	}
	// Every chunk takes at least 2 bytes (iterator and length varints).
	if n == 0 || n > uint64(len(p)-off)/2 {
		return r, fmt.Errorf("chunk count %d, %d bytes left", n, len(p)-off)
	}
	if r.kind == snapKindPF && n != 1 {
		return r, fmt.Errorf("a pf record has %d chunks, not 1", n)
	}
	r.chunks = make([]snapChunk, n)
	for i := range r.chunks {
		it, err := uv("iterator")
		if err != nil {
			return r, err
		}
		switch {
		case it > math.MaxInt64:
			return r, fmt.Errorf("chunk %d: iterator %d out of range", i, it)
		case r.kind == snapKindPF && it != 0:
			return r, fmt.Errorf("a pf chunk has iterator %d, not 0", it)
		case r.kind != snapKindPF && it == 0:
			return r, fmt.Errorf("chunk %d: iterator 0", i)
		case i > 0 && int64(it) <= r.chunks[i-1].iter:
			return r, fmt.Errorf("chunk %d: iterator %d after %d (must increase)", i, it, r.chunks[i-1].iter)
		}
		dl, err := uv("chunk length")
		if err != nil {
			return r, err
		}
		if dl > uint64(len(p)-off) {
			return r, fmt.Errorf("chunk %d: length %d, %d bytes left", i, dl, len(p)-off)
		}
		r.chunks[i] = snapChunk{iter: int64(it), data: p[off : off+int(dl) : off+int(dl)]}
		off += int(dl)
	}
	if off != len(p) {
		return r, fmt.Errorf("%d bytes after the last chunk", len(p)-off)
	}
	return r, nil
}

// runFunc runs one command through the command table and returns its
// RESP2 reply; an error reply (at any depth) is returned as an error.
type runFunc func(args ...[]byte) (reply []byte, err error)

// tableRunner runs commands through a command table (command.Table.Run,
// internal records allowed) as the follower's connection (ID -1,
// authenticated, RESP2), and remembers the highest AOF sequence they
// wrote. The follower applies changes through one (Follower.exec), the
// snapshot capture and restore through others. Not safe for concurrent
// use.
type tableRunner struct {
	table  *command.Table
	ctx    command.Ctx
	conn   command.Conn
	w      resp.Writer
	maxSeq uint64 // highest AOF sequence written (for Deps.Wait)
}

// runPolicy is the follower's: its records may be internal, and nothing
// is checked beyond the command's own rules.
var runPolicy = command.Policy{Internal: true}

func newTableRunner(t *command.Table, store *keyspace.Store, cfg *config.Registry, srv command.Server) *tableRunner {
	r := &tableRunner{table: t, conn: command.Conn{ID: -1, Proto: 2, Authed: true, Name: "follow"}}
	r.ctx = command.Ctx{R: resp.New(&r.w, 2), Store: store, Config: cfg, Conn: &r.conn, Server: srv}
	return r
}

// do runs one command and returns its RESP2 reply (valid until the next
// call) and the AOF sequence it wrote; an error reply, at any depth, is an
// error (the outcome's, not parsed from the reply).
func (r *tableRunner) do(args ...[]byte) ([]byte, uint64, error) {
	r.w.Reset()
	r.ctx.Args = args
	o := r.runGated()
	r.ctx.Args = nil
	r.maxSeq = max(r.maxSeq, o.Seq)
	if !o.Ran {
		return nil, 0, fmt.Errorf("follow: cannot run %s", args[0])
	}
	if o.Failed {
		return nil, o.Seq, fmt.Errorf("%s: %s", o.Spec.Name, o.Err)
	}
	return r.w.Bytes(), o.Seq, nil
}

// runGated runs r.ctx.Args through the table holding the store's command
// gate shared, as every command execution does, so that none interleaves
// with a client's EXEC (a transaction sees no half-applied change).
func (r *tableRunner) runGated() command.Outcome {
	r.ctx.Store.Shared()
	defer r.ctx.Store.SharedDone()
	return r.table.Run(&r.ctx, &runPolicy)
}

// run is a runFunc. The reply is a copy (it survives the next call).
// Cost: the command's, plus copying its reply.
func (r *tableRunner) run(args ...[]byte) ([]byte, error) {
	reply, _, err := r.do(args...)
	reply = bytes.Clone(reply)
	r.w.Reset()
	r.w.Shrink(4 << 10) // do not keep a large chunk's buffer
	return reply, err
}

// respValue is a parsed RESP2 reply: kind '+', '-', ':', '$' or '*'.
type respValue struct {
	kind  byte
	str   []byte // '+', '-', '$' (nil for a null bulk)
	n     int64  // ':'
	null  bool   // "$-1" or "*-1"
	elems []respValue
}

// parseReply parses exactly one RESP2 value filling b (nested at most 4
// deep), bounded by the bytes present.
func parseReply(b []byte) (respValue, error) {
	v, rest, err := parseValue(b, 0)
	if err == nil && len(rest) != 0 {
		err = fmt.Errorf("%d bytes after the reply", len(rest))
	}
	return v, err
}

func parseValue(b []byte, depth int) (respValue, []byte, error) {
	var v respValue
	i := bytes.Index(b, []byte("\r\n"))
	if len(b) == 0 || i < 1 {
		return v, nil, errors.New("malformed reply")
	}
	v.kind = b[0]
	head := string(b[1:i])
	b = b[i+2:]
	switch v.kind {
	case '+', '-':
		v.str = []byte(head)
	case ':':
		n, err := strconv.ParseInt(head, 10, 64)
		if err != nil {
			return v, nil, errors.New("malformed integer reply")
		}
		v.n = n
	case '$':
		n, err := strconv.Atoi(head)
		switch {
		case err != nil || n < -1:
			return v, nil, errors.New("malformed bulk reply")
		case n == -1:
			v.null = true
		case len(b) < n+2 || string(b[n:n+2]) != "\r\n":
			return v, nil, errors.New("truncated bulk reply")
		default:
			v.str, b = b[:n:n], b[n+2:]
		}
	case '*':
		n, err := strconv.Atoi(head)
		switch {
		case err != nil || n < -1 || n > len(b)/3:
			return v, nil, errors.New("malformed array reply")
		case depth >= 4:
			return v, nil, errors.New("reply nested too deep")
		case n == -1:
			v.null = true
		}
		for range max(n, 0) {
			var e respValue
			if e, b, err = parseValue(b, depth+1); err != nil {
				return v, nil, err
			}
			v.elems = append(v.elems, e)
		}
	default:
		return v, nil, fmt.Errorf("unexpected reply type %q", v.kind)
	}
	return v, b, nil
}

// Type names of the followed kinds (the TYPE reply).
var snapTypeNames = map[byte]string{snapKindBF: "MBbloom--", snapKindCF: "MBbloomCF", snapKindPF: strval.TypeName}

// typeOf runs TYPE key: "none" for a missing key.
func typeOf(run runFunc, key []byte) (string, error) {
	reply, err := run([]byte("TYPE"), key)
	if err != nil {
		return "", err
	}
	v, err := parseReply(reply)
	if err != nil || v.kind != '+' {
		return "", fmt.Errorf("TYPE: unexpected reply %q", reply)
	}
	return string(v.str), nil
}

// capture is captureTo into memory (tests): the encoded snapshot.
func capture(run runFunc, stream string, keys []keyInfo, pos uint64) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := captureTo(run, &buf, stream, keys, pos); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// captureTo reads every existing key of keys through run and writes the
// snapshot of stream at position pos to w, record by record (version 2:
// one record per chunk), and returns its size: BF.SCANDUMP (bf) and
// CF.SCANDUMP (cf) from iterator 0 until it returns 0, GET (pf). A missing
// key has no record, and neither has an empty cuckoo filter (CF.SCANDUMP
// returns nothing for one; a key created with "capacity" is reserved again
// at start-up). The keys must not change while capture runs (the follower
// captures between batches, and clients cannot write followed keys), or
// the chunks of one key may come from different states. Errors wrap
// ErrSnapshotCapture or are run's or w's. Cost: one command per chunk;
// memory: one chunk (at most 16 MiB) and its reply, never a whole key
// beyond what GET of an HLL returns.
func captureTo(run runFunc, w io.Writer, stream string, keys []keyInfo, pos uint64) (int64, error) {
	e, err := newSnapEncoder(w, stream, pos, time.Now())
	if err != nil {
		return 0, err
	}
	for i, k := range keys {
		kind, ok := kindOf(k.typ)
		if !ok {
			return 0, fmt.Errorf("%w: keys[%d] has type %q", ErrSnapshotCapture, i, k.typ)
		}
		key := []byte(k.name)
		typ, err := typeOf(run, key)
		if err != nil {
			return 0, fmt.Errorf("%w: keys[%d]: %v", ErrSnapshotCapture, i, err)
		}
		if typ == "none" {
			continue
		}
		if typ != snapTypeNames[kind] {
			return 0, fmt.Errorf("%w: keys[%d] holds a %s, not a %s", ErrSnapshotCapture, i, typ, snapTypeNames[kind])
		}
		if kind == snapKindPF {
			reply, err := run([]byte("GET"), key)
			if err != nil {
				return 0, fmt.Errorf("%w: keys[%d]: %v", ErrSnapshotCapture, i, err)
			}
			v, err := parseReply(reply)
			if err != nil || v.kind != '$' || v.null {
				return 0, fmt.Errorf("%w: keys[%d]: GET returned no string", ErrSnapshotCapture, i)
			}
			if err := e.record(kind, key, []snapChunk{{iter: 0, data: v.str}}); err != nil {
				return 0, fmt.Errorf("follow: snapshot: writing keys[%d]: %w", i, err)
			}
			continue
		}
		cmd := []byte("BF.SCANDUMP")
		if kind == snapKindCF {
			cmd = []byte("CF.SCANDUMP")
		}
		for iter := int64(0); ; {
			reply, err := run(cmd, key, strconv.AppendInt(nil, iter, 10))
			if err != nil {
				return 0, fmt.Errorf("%w: keys[%d]: %v", ErrSnapshotCapture, i, err)
			}
			v, err := parseReply(reply)
			if err != nil || v.kind != '*' || len(v.elems) != 2 || v.elems[0].kind != ':' || v.elems[1].kind != '$' {
				return 0, fmt.Errorf("%w: keys[%d]: %s returned no [iterator, data] pair", ErrSnapshotCapture, i, cmd)
			}
			next := v.elems[0].n
			if next == 0 {
				break
			}
			if next <= iter {
				return 0, fmt.Errorf("%w: keys[%d]: %s iterator %d after %d", ErrSnapshotCapture, i, cmd, next, iter)
			}
			if err := e.record(kind, key, []snapChunk{{iter: next, data: v.elems[1].str}}); err != nil {
				return 0, fmt.Errorf("follow: snapshot: writing keys[%d]: %w", i, err)
			}
			iter = next
		}
	}
	n, err := e.finish()
	if err != nil {
		return 0, fmt.Errorf("follow: snapshot: writing: %w", err)
	}
	return n, nil
}

// restore is restoreFrom of the encoded snapshot data.
func restore(run runFunc, data []byte, stream string, keys []keyInfo, positionKey string) (uint64, error) {
	d, err := newSnapReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return 0, err
	}
	return restoreFrom(run, d, stream, keys, positionKey)
}

// restoreFrom loads the snapshot d reads (its header already checked)
// record by record: it checks that it was taken of stream and that
// positionKey does not exist; then for each record, once its CRC checked
// out (snapReader.next), that a key's first record names one of keys
// with its type and a key that does not exist, and runs through run
// BF.LOADCHUNK / CF.LOADCHUNK key <iter> <data> for each chunk of a bf /
// cf record and SET key <value> for a pf record; after the trailer
// checked out (whole-object CRC, count, the end of the stream, and so
// the object store's digest), last SET positionKey <position>. It returns
// the snapshot's position.
//
// All or nothing for the caller: if a record or the trailer is refused
// (damaged, truncated, a key that does not match) or a command fails,
// restore deletes (DEL) the keys it began to create and returns the
// error: the decoder's ErrSnapshot*, ErrSnapshotStream, ErrSnapshotKeys,
// ErrSnapshotRestore (a command failed). The position key is written only
// after every key loaded and the whole object checked out, so a crash in
// the middle leaves keys without a position (the follower then replays
// from the start of the stream, or halts on a gap, and the keys answer
// "maybe" until it catches up; while loading, the follower is not caught
// up, so they answer "maybe" too). Cost: one command per chunk; each
// command validates its chunk as from a client; memory: one record.
func restoreFrom(run runFunc, d *snapReader, stream string, keys []keyInfo, positionKey string) (uint64, error) {
	if d.hdr.stream != stream {
		return 0, fmt.Errorf("%w: it was taken of stream %q, not %q", ErrSnapshotStream, d.hdr.stream, stream)
	}
	types := make(map[string]string, len(keys))
	for _, k := range keys {
		types[k.name] = k.typ
	}
	check := func(key []byte, what string) error {
		typ, err := typeOf(run, key)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrSnapshotRestore, what, err)
		}
		if typ != "none" {
			return fmt.Errorf("%w: %s exists", ErrSnapshotKeys, what)
		}
		return nil
	}
	if err := check([]byte(positionKey), "the position key"); err != nil {
		return 0, err
	}
	var created [][]byte
	fail := func(err error) (uint64, error) {
		errs := []error{err}
		for _, k := range created {
			if _, err := run([]byte("DEL"), k); err != nil {
				errs = append(errs, fmt.Errorf("follow: snapshot: removing a partly restored key: %w", err))
			}
		}
		return 0, errors.Join(errs...)
	}
	for {
		i := d.n
		r, cont, ok, err := d.next()
		if err != nil {
			return fail(err)
		}
		if !ok {
			break
		}
		if !cont {
			typ, followed := types[string(r.key)]
			switch {
			case !followed:
				return fail(fmt.Errorf("%w: record %d names a key that is not followed", ErrSnapshotKeys, i))
			case typ != kindName(r.kind):
				return fail(fmt.Errorf("%w: record %d is a %s key, the key is followed as %s", ErrSnapshotKeys, i, kindName(r.kind), typ))
			case string(r.key) == positionKey:
				return fail(fmt.Errorf("%w: record %d names the position key", ErrSnapshotKeys, i))
			}
			if err := check(r.key, fmt.Sprintf("the key of record %d", i)); err != nil {
				return fail(err)
			}
			created = append(created, bytes.Clone(r.key))
		}
		for j, c := range r.chunks {
			var err error
			switch r.kind {
			case snapKindBF:
				_, err = run([]byte("BF.LOADCHUNK"), r.key, strconv.AppendInt(nil, c.iter, 10), c.data)
			case snapKindCF:
				_, err = run([]byte("CF.LOADCHUNK"), r.key, strconv.AppendInt(nil, c.iter, 10), c.data)
			default:
				_, err = run([]byte("SET"), r.key, c.data)
			}
			if err != nil {
				return fail(fmt.Errorf("%w: record %d chunk %d: %v", ErrSnapshotRestore, i, j, err))
			}
		}
	}
	if _, err := run([]byte("SET"), []byte(positionKey), strconv.AppendUint(nil, d.hdr.position, 10)); err != nil {
		return fail(fmt.Errorf("%w: writing the position: %v", ErrSnapshotRestore, err))
	}
	return d.hdr.position, nil
}

// readPositionKey reads a position key from store: (0, false) if it is
// missing. A value that is not a decimal u64 string is an error.
func readPositionKey(store *keyspace.Store, key string) (pos uint64, ok bool, err error) {
	store.View([]byte(key), func(v keyspace.Value) {
		switch s := v.(type) {
		case nil:
		case *strval.String:
			ok = true
			if pos, err = strconv.ParseUint(string(s.B), 10, 64); err != nil {
				err = errors.New("follow: the position key (position_key) holds a value that is not a stream sequence")
			}
		default:
			err = fmt.Errorf("follow: the position key (position_key) holds a %s, not a string", v.TypeName())
		}
	})
	return pos, ok, err
}
