package persist

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/probly/probly/internal/keyspace"
)

// dirListing is what Open finds in the data directory.
type dirListing struct {
	gens    []uint64 // AOF generations, ascending
	hasSnap bool
	// pending holds the generations that exist as appendonly.<gen>.aof.tmp:
	// a switch to that generation was interrupted (the file is created and
	// its directory entry made durable before the previous generation gets
	// its end-of-generation record). tmpAOFs are their paths, removed once
	// recovery has repaired the previous generation.
	pending map[uint64]bool
	tmpAOFs []string
}

// scanDir lists AOF generations and removes leftover temporary snapshot
// files; leftover temporary AOF files are listed, for recover to remove.
func (d *DB) scanDir() (dirListing, error) {
	l := dirListing{pending: map[uint64]bool{}}
	ents, err := os.ReadDir(d.dir)
	if err != nil {
		return l, fmt.Errorf("persist: read data directory: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case e.IsDir():
			continue
		case strings.HasSuffix(name, tmpSuffix) && strings.HasPrefix(name, "appendonly."):
			if gen, ok := parseAOFName(strings.TrimSuffix(name, tmpSuffix)); ok {
				l.pending[gen] = true
			}
			l.tmpAOFs = append(l.tmpAOFs, d.path(name))
		case strings.HasSuffix(name, tmpSuffix) && strings.HasPrefix(name, "snapshot."):
			if err := os.Remove(d.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return l, fmt.Errorf("persist: remove leftover temporary file: %w", err)
			}
			d.log.Info("persist: removed leftover temporary file", "file", d.path(name))
		case name == snapshotName:
			l.hasSnap = true
		default:
			if gen, ok := parseAOFName(name); ok {
				l.gens = append(l.gens, gen)
			}
		}
	}
	slices.Sort(l.gens)
	return l, nil
}

// parseAOFName parses "appendonly.<gen>.aof" with gen >= 1 in canonical
// decimal.
func parseAOFName(name string) (uint64, bool) {
	s, ok := strings.CutPrefix(name, "appendonly.")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ".aof")
	if !ok {
		return 0, false
	}
	gen, err := strconv.ParseUint(s, 10, 64)
	if err != nil || gen == 0 || strconv.FormatUint(gen, 10) != s {
		return 0, false
	}
	return gen, true
}

func (d *DB) recover(decode Decoder, load func(string, keyspace.Value) error, replay func([][]byte) error) error {
	l, err := d.scanDir()
	if err != nil {
		return err
	}
	start := uint64(1) // first generation to replay
	var entries []snapEntry
	var snapSaved time.Time
	if l.hasSnap {
		var hdr snapHeader
		hdr, entries, err = readSnapshot(d.path(snapshotName), decode)
		if err != nil {
			return err
		}
		start, snapSaved = hdr.gen, hdr.saved
		if st, err := os.Stat(d.path(snapshotName)); err == nil {
			d.baseSize.Store(st.Size())
		}
		d.log.Info("persist: snapshot verified", "file", d.path(snapshotName), "keys", len(entries),
			"saved", hdr.saved, "next_generation", hdr.gen)
	}
	var stale, live []uint64
	for _, g := range l.gens {
		if g < start {
			stale = append(stale, g)
		} else {
			live = append(live, g)
		}
	}
	if l.hasSnap && len(live) == 0 {
		// The snapshot was written after its generation was created, and
		// that file is never deleted while the snapshot is current: it
		// was removed (or dump.pdb was restored without it). The writes
		// made after the snapshot, if there were any, are in it.
		return fmt.Errorf("%w: %s (saved %s) says the writes made after it are in %s, but %s is missing; "+
			"refusing to start from the snapshot alone, which would lose them. Restore %s (and the generations after it) "+
			"from the backup it belongs to; or, to start from the snapshot alone and lose whatever was written after it "+
			"(for example when only dump.pdb was restored), run `probly check-aof --fix --dir %s`, which creates an empty %s",
			ErrMissingGeneration, d.path(snapshotName), snapSaved.UTC().Format(time.RFC3339), aofFileName(start),
			d.path(aofFileName(start)), aofFileName(start), d.dir, aofFileName(start))
	}
	if len(live) > 0 && live[0] != start {
		if l.hasSnap {
			return fmt.Errorf("%w: %s covers the AOF up to generation %d, but the next AOF found is %s (%s is missing)%s",
				ErrMissingGeneration, d.path(snapshotName), start-1, d.path(aofFileName(live[0])), aofFileName(start), d.lossHint(aofFileName(start)))
		}
		return fmt.Errorf("%w: no %s, so replay must start at %s, but the first AOF found is %s%s",
			ErrMissingGeneration, snapshotName, aofFileName(1), d.path(aofFileName(live[0])), d.lossHint(aofFileName(1)))
	}
	for i := 1; i < len(live); i++ {
		if live[i] != live[i-1]+1 {
			return fmt.Errorf("%w: %s is missing between %s and %s%s", ErrMissingGeneration,
				aofFileName(live[i-1]+1), aofFileName(live[i-1]), aofFileName(live[i]), d.lossHint(aofFileName(live[i-1]+1)))
		}
	}
	// Check every AOF header before changing any state.
	for _, g := range live {
		if err := d.checkHeader(g, g == live[len(live)-1]); err != nil {
			return err
		}
	}

	// A key whose expire time has passed is dropped; a live one's time is
	// set by replaying its canonical record, PEXPIREAT key unix-ms.
	now := time.Now().UnixMilli()
	for _, e := range entries {
		if e.expire != 0 && now > e.expire {
			continue
		}
		if err := load(e.key, e.value); err != nil {
			return fmt.Errorf("persist: load key %q from %s: %w", e.key, d.path(snapshotName), err)
		}
		if e.expire != 0 {
			rec := [][]byte{[]byte("PEXPIREAT"), []byte(e.key), strconv.AppendInt(nil, e.expire, 10)}
			if err := replay(rec); err != nil {
				return fmt.Errorf("persist: set the expire time of key %q from %s: %w", e.key, d.path(snapshotName), err)
			}
		}
	}
	entries = nil

	var total int64
	var lastRes replayed
	for i, g := range live {
		last := i == len(live)-1
		res, err := d.replayFile(g, last, l.pending[g+1], replay)
		if err != nil {
			return err
		}
		total += res.size
		d.changes.Add(res.records)
		lastRes = res
		d.log.Info("persist: AOF generation replayed", "file", d.path(aofFileName(g)), "records", res.records,
			"bytes", res.size, "format_version", res.version, "last", last)
	}

	cur := start
	if len(live) == 0 {
		if err := d.createAOF(start); err != nil {
			return err
		}
		total = aofHeaderSize
		lastRes = replayed{size: aofHeaderSize, version: AOFFormatVersion}
	} else {
		cur = live[len(live)-1]
	}
	f, err := os.OpenFile(d.path(aofFileName(cur)), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("persist: open AOF: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("persist: stat AOF: %w", err)
	}
	d.f, d.gen, d.off = f, cur, st.Size()
	d.fileVer, d.fileRec = lastRes.version, lastRes.records
	d.fileGen.Store(cur)
	d.aofSize.Store(total)

	// Generations below the snapshot's cut are obsolete (a snapshot that
	// was interrupted while deleting them).
	for _, g := range stale {
		p := d.path(aofFileName(g))
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.log.Warn("persist: cannot remove obsolete AOF", "file", p, "err", err)
		} else {
			d.log.Info("persist: removed AOF already covered by the snapshot", "file", p)
		}
	}
	// The generation before an interrupted switch no longer ends with an
	// end-of-generation record (replayFile removed it durably), so the
	// temporary files that proved the switch was under way can go.
	for _, p := range l.tmpAOFs {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("persist: remove leftover temporary file: %w", err)
		}
		d.log.Info("persist: removed leftover temporary file", "file", p)
	}
	return nil
}

// createAOF creates AOF generation gen with its header, fsyncs it and the
// directory.
func (d *DB) createAOF(gen uint64) error {
	p := d.path(aofFileName(gen))
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("persist: create AOF: %w", err)
	}
	if _, err := f.Write(encodeAOFHeader(gen)); err != nil {
		f.Close()
		return fmt.Errorf("persist: write %s: %w", p, err)
	}
	err = d.fsync(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(d.dir)
	}
	if err != nil {
		return fmt.Errorf("persist: create %s: %w", p, err)
	}
	return nil
}

// checkHeader validates the header of AOF generation gen. A header cut
// short in the last generation (a crash while creating it) is accepted
// here and repaired by replayFile.
func (d *DB) checkHeader(gen uint64, last bool) error {
	p := d.path(aofFileName(gen))
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("persist: open AOF: %w", err)
	}
	defer f.Close()
	if last {
		if blank, err := blankAOF(f); err != nil || blank {
			return err
		}
	}
	var b [aofHeaderSize]byte
	n, err := io.ReadFull(f, b[:])
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: %s at byte offset %d: file header cut short (%d of %d bytes) in a file that is not the last%s",
				ErrCorrupt, p, n, n, aofHeaderSize, d.fixHint())
		}
		return fmt.Errorf("persist: read %s: %w", p, err)
	}
	if reason, sentinel := checkAOFHeader(b[:], gen); sentinel != nil {
		hint := ""
		if sentinel == ErrCorrupt {
			hint = d.fixHint()
		}
		return fmt.Errorf("%w: %s at byte offset 0: %s%s", sentinel, p, reason, hint)
	}
	return nil
}

// blankAOF reports whether f is shorter than an AOF header or holds only
// zero bytes: a generation whose creation was interrupted before its header
// reached the disk (the header is fsynced before any record is written).
func blankAOF(f *os.File) (bool, error) {
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	if st.Size() < aofHeaderSize {
		return true, nil
	}
	if st.Size() > 1<<20 {
		return false, nil
	}
	return allZero(f, 0, st.Size())
}

// replayed is what replayFile found in one generation.
type replayed struct {
	size    int64  // bytes after recovery (header and end-of-generation record included)
	records uint64 // command records replayed
	version uint16 // header format version
}

// replayFile replays AOF generation gen. In the last generation a torn
// tail is truncated, and so is an end-of-generation record whose next
// generation was being created when the process stopped (nextPending: its
// temporary file exists). A version 2 generation that is not the last must
// end with its end-of-generation record; the last one must not unless
// nextPending (the next generation was removed).
func (d *DB) replayFile(gen uint64, last, nextPending bool, replay func([][]byte) error) (replayed, error) {
	var res replayed
	p := d.path(aofFileName(gen))
	flag := os.O_RDONLY
	if last {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(p, flag, 0)
	if err != nil {
		return res, fmt.Errorf("persist: open AOF: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return res, fmt.Errorf("persist: stat %s: %w", p, err)
	}
	size := st.Size()
	blank, err := blankAOF(f)
	if err != nil {
		return res, fmt.Errorf("persist: read %s: %w", p, err)
	}
	if blank {
		// Only accepted for the last file (checkHeader): a crash while
		// the generation was being created, before any record.
		d.log.Warn("persist: AOF header cut short or never written; rewriting it", "file", p, "bytes", size)
		if err := f.Truncate(0); err != nil {
			return res, fmt.Errorf("persist: repair %s: %w", p, err)
		}
		if _, err := f.WriteAt(encodeAOFHeader(gen), 0); err != nil {
			return res, fmt.Errorf("persist: repair %s: %w", p, err)
		}
		if err := d.fsync(f); err != nil {
			return res, fmt.Errorf("persist: repair %s: %w", p, err)
		}
		return replayed{size: aofHeaderSize, version: AOFFormatVersion}, nil
	}
	var hdr [aofHeaderSize]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return res, fmt.Errorf("persist: read %s: %w", p, err)
	}
	res.version = aofHeaderVersion(hdr[:])

	sc, err := scanAOF(f, size, gen, res.version, func(off int64, args [][]byte) error {
		if err := replay(args); err != nil {
			return fmt.Errorf("persist: replay record at byte offset %d of %s: %w", off, p, err)
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("persist: read %s: %w", p, err)
	}
	if sc.cbErr != nil {
		return res, sc.cbErr
	}
	off, n := sc.good, sc.records
	res.records = n
	if sc.txOpen && !sc.badPayload && (off != size || (sc.eog == nil && last) || (sc.eog != nil && last && nextPending)) {
		// A torn tail, or the end of the current generation, inside a
		// transaction unit: the unit is cut off whole, from its MULTI.
		return d.cutOpenTx(f, p, sc, size, last, res)
	}
	if sc.txOpen && sc.eog != nil {
		d.log.Warn("persist: a transaction left open at the end of an AOF generation was not applied (its EXEC was never logged)",
			"file", p, "offset", sc.txAt)
	}
	if sc.badPayload {
		// The checksum matched, so this is not a torn write.
		return res, fmt.Errorf("%w: %s at byte offset %d (record %d): %s%s",
			ErrCorrupt, p, off, n+1, sc.reason, d.fixHint())
	}
	if off != size {
		torn, reason, err := damage(f, size, off, sc.reason, last)
		if err != nil {
			return res, fmt.Errorf("persist: read %s: %w", p, err)
		}
		if !torn {
			return res, fmt.Errorf("%w: %s at byte offset %d (record %d): %s (refusing to start; nothing was changed on disk)%s",
				ErrCorrupt, p, off, n+1, reason, d.fixHint())
		}
		d.log.Warn("persist: truncating torn record at the end of the AOF",
			"file", p, "offset", off, "bytes", size-off, "reason", reason)
		if err := f.Truncate(off); err != nil {
			return res, fmt.Errorf("persist: truncate torn tail of %s: %w", p, err)
		}
		if err := d.fsync(f); err != nil {
			return res, fmt.Errorf("persist: truncate torn tail of %s: %w", p, err)
		}
		res.size = off
		return res, nil
	}
	res.size = size
	switch {
	case sc.eog != nil && last && nextPending:
		// The switch to the next generation stopped after this record was
		// written and before the next file got its name: this is still
		// the current generation. Cut the record off (durably, before the
		// temporary file that proves the switch is removed).
		d.log.Warn("persist: the switch to the next AOF generation was interrupted; removing the end-of-generation record",
			"file", p, "offset", sc.eogAt, "next", aofFileName(gen+1))
		if err := f.Truncate(sc.eogAt); err != nil {
			return res, fmt.Errorf("persist: repair %s: %w", p, err)
		}
		if err := d.fsync(f); err != nil {
			return res, fmt.Errorf("persist: repair %s: %w", p, err)
		}
		res.size = sc.eogAt
	case sc.eog != nil && last:
		return res, fmt.Errorf("%w: %s ends with a record saying the log continues in %s, but %s is missing "+
			"(refusing to start without the writes it held)%s",
			ErrMissingGeneration, p, aofFileName(gen+1), d.path(aofFileName(gen+1)), d.lossHint(aofFileName(gen+1)))
	case sc.eog == nil && !last && res.version >= AOFFormatVersion:
		return res, fmt.Errorf("%w: %s ends at byte offset %d after %d records without the end-of-generation record "+
			"that every generation followed by another one has (%s follows it): the end of the file is missing, "+
			"so are the writes it held (refusing to start; nothing was changed on disk)%s",
			ErrCorrupt, p, size, n, aofFileName(gen+1), d.lossHint(aofFileName(gen)))
	}
	return res, nil
}

// lossHint is appended to errors that refuse the start because AOF
// records that must exist are missing (name is the file they belong in).
func (d *DB) lossHint(name string) string {
	return fmt.Sprintf("; restore %s from a backup, or run `probly check-aof --dir %s` to see what is missing, "+
		"then `probly check-aof --fix --dir %s` to start without the missing records and the generations after them "+
		"(every file it changes or sets aside is kept as *.bak)", d.path(name), d.dir, d.dir)
}

// fixHint is appended to errors that refuse the start because of a
// damaged AOF.
func (d *DB) fixHint() string {
	return fmt.Sprintf("; run `probly check-aof --dir %s` to inspect the damage, then `probly check-aof --fix --dir %s` "+
		"to truncate the log to the last good record (a backup of every changed file is kept as *.bak)", d.dir, d.dir)
}

// scanResult is what scanAOF found in one AOF file.
type scanResult struct {
	good       int64  // offset just after the last good record
	records    uint64 // good command records (an end-of-generation record is not counted)
	reason     string // why the scan stopped before the end ("" if it did not)
	badPayload bool   // the record at good passed its checksum but does not decode
	cbErr      error  // the callback's error, which stopped the scan
	// eog is the end-of-generation record that ends the file (version 2),
	// at byte offset eogAt; nil if there is none.
	eog   *endOfGen
	eogAt int64
	// txOpen is set when the scan ended inside a transaction unit (tx.go)
	// whose MULTI record is at byte offset txAt, after txRecords records.
	txOpen    bool
	txAt      int64
	txRecords uint64
}

// heldRecord is a record of a transaction unit held until its EXEC.
type heldRecord struct {
	off  int64
	args [][]byte
}

// scanAOF reads the records of AOF generation gen, a file of size bytes
// whose header has format version, starting just after the header,
// calling fn (if not nil) for every good command record with its offset;
// the arguments share a fresh buffer fn may retain. The records of a
// transaction unit (MULTI … EXEC, tx.go) are held until its EXEC record
// and then passed to fn; a unit closed by DISCARD, or still open where the
// scan ends, is not (scanResult.txOpen says where it began); a MULTI inside
// a unit, or an EXEC or DISCARD outside one, is damage with a valid
// checksum (badPayload). It stops at the end of
// the file, at the first damaged record or at fn's first error. In version
// 2 a control record (argc 0) must be a valid end-of-generation record for
// generation gen+1 that matches what precedes it and ends the file. The
// returned error is an I/O error only.
func scanAOF(f *os.File, size int64, gen uint64, version uint16, fn func(off int64, args [][]byte) error) (scanResult, error) {
	var r scanResult
	br := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 1<<20)
	if _, err := br.Discard(aofHeaderSize); err != nil {
		return r, err
	}
	off := int64(aofHeaderSize)
	var hdr [frameHeaderSize]byte
	var held []heldRecord
	for off < size {
		r.good = off
		rem := size - off
		if rem < frameHeaderSize {
			r.reason = fmt.Sprintf("record header cut short (%d of %d bytes)", rem, frameHeaderSize)
			return r, nil
		}
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return r, err
		}
		plen := int64(binary.LittleEndian.Uint32(hdr[:4]))
		sum := binary.LittleEndian.Uint32(hdr[4:])
		if plen == 0 || plen > MaxRecordSize {
			r.reason = fmt.Sprintf("invalid record length %d", plen)
			return r, nil
		}
		if plen > rem-frameHeaderSize {
			r.reason = fmt.Sprintf("record of %d bytes extends past the end of the file (%d bytes left)", plen, rem-frameHeaderSize)
			return r, nil
		}
		payload := make([]byte, plen) // bounded by the bytes in the file
		if _, err := io.ReadFull(br, payload); err != nil {
			return r, err
		}
		if got := crc32c(payload); got != sum {
			r.reason = fmt.Sprintf("record checksum mismatch (stored %08x, computed %08x)", sum, got)
			return r, nil
		}
		if version >= AOFFormatVersion && isControl(payload) {
			e, err := decodeEndOfGen(payload)
			switch {
			case err != nil:
				r.reason = err.Error()
			case e.next != gen+1:
				r.reason = fmt.Sprintf("end-of-generation record names generation %d as the next one (want %d)", e.next, gen+1)
			case e.offset != off || e.records != r.records:
				r.reason = fmt.Sprintf("end-of-generation record says the generation held %d records in %d bytes, "+
					"but %d records in %d bytes precede it (records are missing or were added)", e.records, e.offset, r.records, off)
			case off+frameHeaderSize+plen != size:
				r.reason = fmt.Sprintf("%d bytes after the end-of-generation record", size-off-frameHeaderSize-plen)
			}
			if r.reason != "" {
				r.badPayload = true
				return r, nil
			}
			r.eog, r.eogAt = &e, off
			off += frameHeaderSize + plen
			continue
		}
		args, err := decodeArgs(payload)
		if err != nil {
			r.reason, r.badPayload = err.Error(), true
			return r, nil
		}
		word := txWord(args)
		switch {
		case word == "MULTI" && r.txOpen:
			r.reason, r.badPayload = fmt.Sprintf("MULTI record inside the transaction begun at byte offset %d", r.txAt), true
			return r, nil
		case word == "MULTI":
			r.txOpen, r.txAt, r.txRecords, held = true, off, r.records, held[:0]
		case word != "" && !r.txOpen:
			r.reason, r.badPayload = word+" record outside a transaction", true
			return r, nil
		case word != "":
			if word == "EXEC" && fn != nil {
				for _, h := range held {
					if err := fn(h.off, h.args); err != nil {
						r.cbErr = err
						return r, nil
					}
				}
			}
			r.txOpen, held = false, nil
		case r.txOpen:
			if fn != nil {
				held = append(held, heldRecord{off, args})
			}
		case fn != nil:
			if err := fn(off, args); err != nil {
				r.cbErr = err
				return r, nil
			}
		}
		r.records++
		off += frameHeaderSize + plen
	}
	r.good = off
	return r, nil
}

// damage classifies the damaged record at off (found by scanAOF, which
// gave reason): torn is true when it is a torn write at the end of the
// last generation, which recovery cuts off. The returned reason says what
// is wrong and where, for messages.
func damage(f *os.File, size, off int64, reason string, last bool) (torn bool, _ string, err error) {
	torn, why, err := classifyTail(f, size, off)
	if err != nil {
		return false, "", err
	}
	if why != "" {
		reason = why
	}
	if last && torn {
		return true, reason, nil
	}
	where := "followed by more data"
	if !last {
		where = "in a file that is not the last AOF generation"
	}
	return false, reason + ", " + where, nil
}

// classifyTail decides whether the damaged record at off is a torn write
// at the end of the file (safe to cut off) or corruption with data behind
// it. A torn write leaves a prefix of the last frame, possibly followed by
// zero bytes (file size extended before the data reached the disk):
//
//   - fewer than 8 bytes left, or only zero bytes from off: torn;
//   - a valid length whose frame reaches past the end of the file, or ends
//     exactly at it, or is followed only by zeros: torn, unless the
//     payload's own structure ends before the stated length and a valid
//     record starts right there (then the length field was damaged and
//     more records follow);
//   - anything else: corrupt.
//
// why, if not empty, replaces the caller's reason.
func classifyTail(f *os.File, size, off int64) (torn bool, why string, err error) {
	rem := size - off
	if rem < frameHeaderSize {
		return true, "", nil
	}
	zero, err := allZero(f, off, size)
	if err != nil || zero {
		return zero, "zero-filled tail", err
	}
	var hdr [frameHeaderSize]byte
	if _, err := f.ReadAt(hdr[:], off); err != nil {
		return false, "", err
	}
	plen := int64(binary.LittleEndian.Uint32(hdr[:4]))
	if plen == 0 || plen > MaxRecordSize {
		return false, "", nil
	}
	if end := off + frameHeaderSize + plen; end <= size {
		zero, err := allZero(f, end, size)
		if err != nil || !zero {
			return false, "", err
		}
	}
	avail := min(plen, rem-frameHeaderSize)
	br := bufio.NewReaderSize(io.NewSectionReader(f, off+frameHeaderSize, avail), 64<<10)
	if used, complete := walkPayload(br, avail); complete && used < plen {
		ok, err := validFrameAt(f, size, off+frameHeaderSize+used)
		if err != nil {
			return false, "", err
		}
		if ok {
			return false, fmt.Sprintf("record length field says %d bytes but the record's contents end after %d, where another valid record starts", plen, used), nil
		}
	}
	return true, "", nil
}

// validFrameAt reports whether a complete record with a matching checksum
// starts at off.
func validFrameAt(f *os.File, size, off int64) (bool, error) {
	if size-off < frameHeaderSize {
		return false, nil
	}
	var hdr [frameHeaderSize]byte
	if _, err := f.ReadAt(hdr[:], off); err != nil {
		return false, err
	}
	plen := int64(binary.LittleEndian.Uint32(hdr[:4]))
	if plen == 0 || plen > MaxRecordSize || plen > size-off-frameHeaderSize {
		return false, nil
	}
	payload := make([]byte, plen)
	if _, err := f.ReadAt(payload, off+frameHeaderSize); err != nil {
		return false, err
	}
	return crc32c(payload) == binary.LittleEndian.Uint32(hdr[4:]), nil
}

// allZero reports whether bytes [from, to) of f are all zero.
func allZero(f *os.File, from, to int64) (bool, error) {
	buf := make([]byte, 64<<10)
	for from < to {
		n := int64(len(buf))
		if to-from < n {
			n = to - from
		}
		if _, err := f.ReadAt(buf[:n], from); err != nil {
			return false, err
		}
		for _, b := range buf[:n] {
			if b != 0 {
				return false, nil
			}
		}
		from += n
	}
	return true, nil
}
