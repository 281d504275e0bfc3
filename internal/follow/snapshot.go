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
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
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
	snapFileVersion  = 1
	snapFixedHeader  = 38 // magic 8 | version 2 | flags 2 | position 8 | time 8 | count 8 | slen 2
	snapFileRecHead  = 12 // len 8 | crc 4
	snapFileMinBody  = 6  // kind 1 | klen 1 | key ≥ 1 | nchunks 1 | iter 1 | dlen 1
	snapFileTrailer  = 20 // magic 8 | count 8 | crc 4
	snapMaxStreamLen = 255

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
	// does not match.
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

// snapRecord recreates one key.
type snapRecord struct {
	kind   byte
	key    []byte
	chunks []snapChunk
}

// snapshotFile is a decoded follower snapshot. Its slices alias the
// decoded bytes.
type snapshotFile struct {
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

// snapEncoder writes a follower snapshot record by record, so a capture
// holds one copy of the data (the encoding), not two.
type snapEncoder struct {
	b     []byte
	count uint64
	slen  int
}

func newSnapEncoder(stream string, pos uint64, at time.Time) (*snapEncoder, error) {
	if len(stream) == 0 || len(stream) > snapMaxStreamLen {
		return nil, fmt.Errorf("%w: stream name of %d bytes (1 … %d)", ErrSnapshotCapture, len(stream), snapMaxStreamLen)
	}
	e := &snapEncoder{slen: len(stream)}
	e.b = append(e.b, snapFileMagic...)
	e.b = binary.LittleEndian.AppendUint16(e.b, snapFileVersion)
	e.b = binary.LittleEndian.AppendUint16(e.b, 0) // flags
	e.b = binary.LittleEndian.AppendUint64(e.b, pos)
	e.b = binary.LittleEndian.AppendUint64(e.b, uint64(at.UnixNano()))
	e.b = binary.LittleEndian.AppendUint64(e.b, 0) // count, patched by finish
	e.b = binary.LittleEndian.AppendUint16(e.b, uint16(len(stream)))
	e.b = append(e.b, stream...)
	e.b = append(e.b, 0, 0, 0, 0) // header CRC, patched by finish
	return e, nil
}

// add appends one record.
func (e *snapEncoder) add(r snapRecord) {
	start := len(e.b)
	e.b = append(e.b, make([]byte, snapFileRecHead)...)
	e.b = append(e.b, r.kind)
	e.b = binary.AppendUvarint(e.b, uint64(len(r.key)))
	e.b = append(e.b, r.key...)
	e.b = binary.AppendUvarint(e.b, uint64(len(r.chunks)))
	for _, c := range r.chunks {
		e.b = binary.AppendUvarint(e.b, uint64(c.iter))
		e.b = binary.AppendUvarint(e.b, uint64(len(c.data)))
		e.b = append(e.b, c.data...)
	}
	body := e.b[start+snapFileRecHead:]
	binary.LittleEndian.PutUint64(e.b[start:], uint64(len(body)))
	binary.LittleEndian.PutUint32(e.b[start+8:], snapCRC(body))
	e.count++
}

// finish patches the header and appends the trailer.
func (e *snapEncoder) finish() []byte {
	binary.LittleEndian.PutUint64(e.b[28:], e.count)
	h := snapFixedHeader + e.slen
	binary.LittleEndian.PutUint32(e.b[h:], snapCRC(e.b[:h]))
	e.b = append(e.b, snapFileEnd...)
	e.b = binary.LittleEndian.AppendUint64(e.b, e.count)
	e.b = binary.LittleEndian.AppendUint32(e.b, snapCRC(e.b))
	return e.b
}

// encodeSnapshot encodes s (records in order). Cost: one pass, one
// allocation of the encoded size.
func encodeSnapshot(s *snapshotFile) ([]byte, error) {
	e, err := newSnapEncoder(s.stream, s.position, s.time)
	if err != nil {
		return nil, err
	}
	for _, r := range s.records {
		e.add(r)
	}
	return e.finish(), nil
}

// snapHeader decodes and checks the header only (magic, version, flags,
// stream length, CRC, count against the bytes present). It returns the
// header's size.
func snapHeader(b []byte) (s snapshotFile, count uint64, size int, err error) {
	if len(b) < 8 || string(b[:8]) != snapFileMagic {
		return s, 0, 0, fmt.Errorf("%w: not a follower snapshot", ErrSnapshotMagic)
	}
	if len(b) < snapFixedHeader {
		return s, 0, 0, fmt.Errorf("%w: %d bytes, the header alone takes %d", ErrSnapshotTruncated, len(b), snapFixedHeader+1+4)
	}
	slen := int(binary.LittleEndian.Uint16(b[36:]))
	size = snapFixedHeader + slen + 4
	if len(b) < size {
		return s, 0, 0, fmt.Errorf("%w: %d bytes, the header takes %d", ErrSnapshotTruncated, len(b), size)
	}
	if got, want := binary.LittleEndian.Uint32(b[size-4:]), snapCRC(b[:size-4]); got != want {
		return s, 0, 0, fmt.Errorf("%w: header (stored %08x, computed %08x)", ErrSnapshotChecksum, got, want)
	}
	if v := binary.LittleEndian.Uint16(b[8:]); v != snapFileVersion {
		return s, 0, 0, fmt.Errorf("%w: format version %d (this build reads %d)", ErrSnapshotVersion, v, snapFileVersion)
	}
	if fl := binary.LittleEndian.Uint16(b[10:]); fl != 0 {
		return s, 0, 0, fmt.Errorf("%w: unknown header flags %#04x", ErrSnapshotVersion, fl)
	}
	if slen == 0 || slen > snapMaxStreamLen {
		return s, 0, 0, fmt.Errorf("%w: stream name of %d bytes (1 … %d)", ErrSnapshotCorrupt, slen, snapMaxStreamLen)
	}
	s.position = binary.LittleEndian.Uint64(b[12:])
	s.time = time.Unix(0, int64(binary.LittleEndian.Uint64(b[20:])))
	s.stream = string(b[snapFixedHeader : snapFixedHeader+slen])
	count = binary.LittleEndian.Uint64(b[28:])
	if avail := uint64(len(b) - size); avail < snapFileTrailer ||
		count > (avail-snapFileTrailer)/(snapFileRecHead+snapFileMinBody) {
		return s, 0, 0, fmt.Errorf("%w: %d records declared, the %d bytes after the header cannot hold them", ErrSnapshotTruncated, count, len(b)-size)
	}
	return s, count, size, nil
}

// decodeSnapshot validates the whole of b and returns the snapshot, or an
// error wrapping one of the ErrSnapshot* sentinels with the byte offset of
// the violation. Nothing is allocated beyond what b backs (the record and
// chunk slices are bounded by the bytes present, the data aliases b).
// Checks, in order: header (magic, CRC, version, flags, stream length,
// record count against the bytes left); each record's length against the
// bytes left, its CRC, kind, key length, chunk count and chunk lengths
// against the body, the iterators (bf/cf: ≥ 1, strictly increasing, at
// least one chunk; pf: exactly one chunk with iterator 0), unique keys;
// then the trailer's magic, count and whole-object CRC, and that b ends
// there. Cost: O(len(b)), two CRC passes.
func decodeSnapshot(b []byte) (*snapshotFile, error) {
	s, count, off, err := snapHeader(b)
	if err != nil {
		return nil, err
	}
	end := len(b) - snapFileTrailer // records must end here
	s.records = make([]snapRecord, 0, count)
	seen := make(map[string]bool, count)
	for i := uint64(0); i < count; i++ {
		if end-off < snapFileRecHead {
			return nil, fmt.Errorf("%w: record %d at offset %d: no room for its header", ErrSnapshotTruncated, i, off)
		}
		l := binary.LittleEndian.Uint64(b[off:])
		if l < snapFileMinBody {
			return nil, fmt.Errorf("%w: record %d at offset %d: length %d (at least %d)", ErrSnapshotCorrupt, i, off, l, snapFileMinBody)
		}
		if l > uint64(end-off-snapFileRecHead) {
			return nil, fmt.Errorf("%w: record %d at offset %d: length %d, %d bytes left", ErrSnapshotTruncated, i, off, l, end-off-snapFileRecHead)
		}
		body := b[off+snapFileRecHead : off+snapFileRecHead+int(l)]
		if got, want := binary.LittleEndian.Uint32(b[off+8:]), snapCRC(body); got != want {
			return nil, fmt.Errorf("%w: record %d at offset %d (stored %08x, computed %08x)", ErrSnapshotChecksum, i, off, got, want)
		}
		r, err := decodeSnapRecord(body)
		if err != nil {
			return nil, fmt.Errorf("%w: record %d at offset %d: %v", ErrSnapshotCorrupt, i, off, err)
		}
		if seen[string(r.key)] {
			return nil, fmt.Errorf("%w: record %d at offset %d: a key appears twice", ErrSnapshotCorrupt, i, off)
		}
		seen[string(r.key)] = true
		s.records = append(s.records, r)
		off += snapFileRecHead + int(l)
	}
	if off != end {
		return nil, fmt.Errorf("%w: %d bytes between the last record (offset %d) and the trailer", ErrSnapshotCorrupt, end-off, off)
	}
	if string(b[end:end+8]) != snapFileEnd {
		return nil, fmt.Errorf("%w: bad trailer magic at offset %d", ErrSnapshotCorrupt, end)
	}
	if got, want := binary.LittleEndian.Uint32(b[end+16:]), snapCRC(b[:end+16]); got != want {
		return nil, fmt.Errorf("%w: whole object (stored %08x, computed %08x)", ErrSnapshotChecksum, got, want)
	}
	if c := binary.LittleEndian.Uint64(b[end+8:]); c != count {
		return nil, fmt.Errorf("%w: trailer count %d, header count %d", ErrSnapshotCorrupt, c, count)
	}
	return &s, nil
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

// capture reads every existing key of keys through run and returns the
// encoded snapshot of stream at position pos: BF.SCANDUMP (bf) and
// CF.SCANDUMP (cf) from iterator 0 until it returns 0, GET (pf). A missing
// key has no record, and neither has an empty cuckoo filter (CF.SCANDUMP
// returns nothing for one; a key created with "capacity" is reserved again
// at start-up). The keys must not change while capture runs (the follower
// captures between batches, and clients cannot write followed keys), or
// the chunks of one key may come from different states. Errors wrap
// ErrSnapshotCapture or are run's. Cost: one command per chunk; memory:
// the encoded snapshot (about the keys' sizes) plus one key's chunks.
func capture(run runFunc, stream string, keys []keyInfo, pos uint64) ([]byte, error) {
	e, err := newSnapEncoder(stream, pos, time.Now())
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		kind, ok := kindOf(k.typ)
		if !ok {
			return nil, fmt.Errorf("%w: keys[%d] has type %q", ErrSnapshotCapture, i, k.typ)
		}
		key := []byte(k.name)
		typ, err := typeOf(run, key)
		if err != nil {
			return nil, fmt.Errorf("%w: keys[%d]: %v", ErrSnapshotCapture, i, err)
		}
		if typ == "none" {
			continue
		}
		if typ != snapTypeNames[kind] {
			return nil, fmt.Errorf("%w: keys[%d] holds a %s, not a %s", ErrSnapshotCapture, i, typ, snapTypeNames[kind])
		}
		r := snapRecord{kind: kind, key: key}
		if kind == snapKindPF {
			reply, err := run([]byte("GET"), key)
			if err != nil {
				return nil, fmt.Errorf("%w: keys[%d]: %v", ErrSnapshotCapture, i, err)
			}
			v, err := parseReply(reply)
			if err != nil || v.kind != '$' || v.null {
				return nil, fmt.Errorf("%w: keys[%d]: GET returned no string", ErrSnapshotCapture, i)
			}
			r.chunks = []snapChunk{{iter: 0, data: v.str}}
			e.add(r)
			continue
		}
		cmd := []byte("BF.SCANDUMP")
		if kind == snapKindCF {
			cmd = []byte("CF.SCANDUMP")
		}
		for iter := int64(0); ; {
			reply, err := run(cmd, key, strconv.AppendInt(nil, iter, 10))
			if err != nil {
				return nil, fmt.Errorf("%w: keys[%d]: %v", ErrSnapshotCapture, i, err)
			}
			v, err := parseReply(reply)
			if err != nil || v.kind != '*' || len(v.elems) != 2 || v.elems[0].kind != ':' || v.elems[1].kind != '$' {
				return nil, fmt.Errorf("%w: keys[%d]: %s returned no [iterator, data] pair", ErrSnapshotCapture, i, cmd)
			}
			next := v.elems[0].n
			if next == 0 {
				break
			}
			if next <= iter {
				return nil, fmt.Errorf("%w: keys[%d]: %s iterator %d after %d", ErrSnapshotCapture, i, cmd, next, iter)
			}
			r.chunks = append(r.chunks, snapChunk{iter: next, data: v.elems[1].str})
			iter = next
		}
		if len(r.chunks) > 0 {
			e.add(r)
		}
	}
	return e.finish(), nil
}

// restore validates the whole snapshot data (decodeSnapshot), checks that
// it was taken of stream, that every record names one of keys with its
// type, and that none of those keys nor positionKey exists; only then does
// it run, through run, BF.LOADCHUNK / CF.LOADCHUNK key <iter> <data> for
// every chunk of a bf / cf record and SET key <value> for a pf record, in
// the snapshot's order, and last SET positionKey <position>. It returns
// the snapshot's position.
//
// All or nothing for the caller: if a command fails, restore deletes (DEL)
// the keys it began to create and returns an error wrapping
// ErrSnapshotRestore; the position key is written only after every key
// loaded, so a crash in the middle leaves keys without a position (the
// follower then replays from the start of the stream, or halts on a gap,
// and the keys answer "maybe" until it catches up). Errors: the decoder's
// ErrSnapshot*, ErrSnapshotStream, ErrSnapshotKeys, ErrSnapshotRestore.
// Cost: decoding (O(size)), then one command per chunk; each command
// validates its chunk as from a client.
func restore(run runFunc, data []byte, stream string, keys []keyInfo, positionKey string) (uint64, error) {
	s, err := decodeSnapshot(data)
	if err != nil {
		return 0, err
	}
	if s.stream != stream {
		return 0, fmt.Errorf("%w: it was taken of stream %q, not %q", ErrSnapshotStream, s.stream, stream)
	}
	types := make(map[string]string, len(keys))
	for _, k := range keys {
		types[k.name] = k.typ
	}
	for i, r := range s.records {
		typ, ok := types[string(r.key)]
		if !ok {
			return 0, fmt.Errorf("%w: record %d names a key that is not followed", ErrSnapshotKeys, i)
		}
		if typ != kindName(r.kind) {
			return 0, fmt.Errorf("%w: record %d is a %s key, the key is followed as %s", ErrSnapshotKeys, i, kindName(r.kind), typ)
		}
		if string(r.key) == positionKey {
			return 0, fmt.Errorf("%w: record %d names the position key", ErrSnapshotKeys, i)
		}
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
	for i, r := range s.records {
		if err := check(r.key, fmt.Sprintf("the key of record %d", i)); err != nil {
			return 0, err
		}
	}
	if err := check([]byte(positionKey), "the position key"); err != nil {
		return 0, err
	}
	var created [][]byte
	fail := func(what string, err error) (uint64, error) {
		errs := []error{fmt.Errorf("%w: %s: %v", ErrSnapshotRestore, what, err)}
		for _, k := range created {
			if _, err := run([]byte("DEL"), k); err != nil {
				errs = append(errs, fmt.Errorf("follow: snapshot: removing a partly restored key: %w", err))
			}
		}
		return 0, errors.Join(errs...)
	}
	for i, r := range s.records {
		created = append(created, r.key)
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
				return fail(fmt.Sprintf("record %d chunk %d", i, j), err)
			}
		}
	}
	if _, err := run([]byte("SET"), []byte(positionKey), strconv.AppendUint(nil, s.position, 10)); err != nil {
		return fail("writing the position", err)
	}
	return s.position, nil
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
