package persist

import (
	"bufio"
	"cmp"
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"time"

	"github.com/probly/probly/internal/keyspace"
)

// Snapshot writes a consistent snapshot of store (SAVE) and compacts the
// AOF. It blocks until the snapshot is durable or has failed; store's
// writers are stalled only while the cut is taken (see the package doc).
// It returns ErrSnapshotInProgress if another snapshot runs, ErrClosed
// after Close, and ErrNotMarshaler for a value that cannot be encoded. On
// failure the previous snapshot and every AOF generation stay in place.
// Its cut must not fall inside a transaction: the caller holds store's
// command gate (SAVE runs as a command) or knows that no transaction runs.
// BGSnapshot and the automatic snapshots take the gate shared for the cut
// themselves.
func (d *DB) Snapshot(store *keyspace.Store) error {
	if err := d.beginSnapshot(store); err != nil {
		return err
	}
	defer d.endSnapshot()
	return d.snapshot(store, TriggerManual, false)
}

// BGSnapshot starts Snapshot in a goroutine (BGSAVE) and returns at once.
// It returns ErrSnapshotInProgress if a snapshot runs. The outcome is
// reported by InProgress, LastSave and LastSaveOK, and errors are logged.
func (d *DB) BGSnapshot(store *keyspace.Store) error {
	return d.bgSnapshot(store, TriggerManual)
}

func (d *DB) bgSnapshot(store *keyspace.Store, trig Trigger) error {
	if err := d.beginSnapshot(store); err != nil {
		return err
	}
	go func() {
		defer d.endSnapshot()
		_ = d.snapshot(store, trig, true) // logged and recorded by snapshot
	}()
	return nil
}

func (d *DB) beginSnapshot(store *keyspace.Store) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing {
		return ErrClosed
	}
	if store == nil {
		return fmt.Errorf("%w: nil store", ErrInvalidOptions)
	}
	if !d.snapping.CompareAndSwap(false, true) {
		return ErrSnapshotInProgress
	}
	d.snapWG.Add(1)
	return nil
}

func (d *DB) endSnapshot() {
	d.snapping.Store(false)
	d.snapWG.Done()
}

// testHookBeforeRename, if set by a test, runs after the temporary snapshot
// is complete and before it is renamed to dump.pdb; an error aborts the
// snapshot as a crash there would.
var testHookBeforeRename func() error

// testHookAfterEntry, if set by a test, runs in the snapshot writer after
// each entry was encoded and handed to the file's writer; written counts
// the entries written so far (in key order). It may block, to hold a dump
// half written.
var testHookAfterEntry func(written int)

func (d *DB) snapshot(store *keyspace.Store, trig Trigger, gated bool) (err error) {
	begin := time.Now()
	d.lastTry.Store(begin.UnixNano())
	defer func() {
		if err != nil {
			d.lastSaveOK.Store(false)
			d.consecFail.Add(1)
			d.stats.failed.Add(1)
			d.log.Error("persist: snapshot failed", "trigger", trig.String(), "err", err,
				"consecutive_failures", d.consecFail.Load())
		}
	}()
	if err := d.preCut(); err != nil {
		return err
	}
	// A generation that holds no record yet (the one a failed snapshot
	// switched to, while writes are refused) is reused: the cut needs no
	// new file, so retries on a full disk do not pile up empty
	// generations. Otherwise the next generation is created before the
	// cut, so that the switch under the store's locks is short.
	var next *nextAOF
	defer func() { next.discard() }()
	if !d.currentEmpty() {
		if next, err = d.prepareNext(); err != nil {
			return err
		}
	}
	// The cut: every shard lock is held only while the AOF switches to
	// the next generation; values are not copied (copy-on-write), so the
	// stall does not grow with the data set.
	var cut rotation
	var frozen *keyspace.Frozen
	var stall time.Duration
	for {
		t0 := time.Now()
		frozen, err = cutAt(store, gated, func() error {
			var err error
			cut, err = d.rotate(next)
			return err
		})
		stall = time.Since(t0)
		if errors.Is(err, errNeedNext) && next == nil {
			// Records arrived in the empty generation before the cut.
			if next, err = d.prepareNext(); err != nil {
				return err
			}
			continue
		}
		break
	}
	if err != nil {
		return err
	}
	defer frozen.Release()
	entries := frozen.Entries()
	d.log.Debug("persist: snapshot cut taken", "keys", len(entries), "generation", cut.gen, "reused", cut.reused, "stall", stall)

	tmp, size, err := writeSnapshot(d.dir, cut.gen, entries, begin)
	entries = nil
	frozen.Release() // written: writers need not copy values any more
	if err != nil {
		return err
	}
	if testHookBeforeRename != nil {
		if err := testHookBeforeRename(); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	dst := d.path(snapshotName)
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("persist: rename snapshot to %s: %w", dst, err)
	}
	if err := syncDir(d.dir); err != nil {
		// dump.pdb may or may not survive a crash now; keep every AOF
		// (recovery works with either snapshot).
		return fmt.Errorf("persist: fsync data directory after writing %s: %w", dst, err)
	}
	// The snapshot is durable; generations before the cut are obsolete.
	ents, err := os.ReadDir(d.dir)
	if err != nil {
		d.log.Warn("persist: cannot list data directory to remove old AOFs", "err", err)
	}
	for _, e := range ents {
		if g, ok := parseAOFName(e.Name()); ok && g < cut.gen {
			if err := os.Remove(d.path(e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				d.log.Warn("persist: cannot remove old AOF", "file", d.path(e.Name()), "err", err)
			}
		}
	}
	d.aofSize.Add(-cut.oldBytes)
	d.changes.Add(^(cut.oldChanges - 1)) // subtract
	d.baseSize.Store(size)
	d.consecFail.Store(0)
	for { // the failed appends before the cut are in the snapshot now
		c := d.coveredErrs.Load()
		if cut.writeErrs <= c || d.coveredErrs.CompareAndSwap(c, cut.writeErrs) {
			break
		}
	}
	took := time.Since(begin)
	d.stats.record(trig, took, stall)
	d.lastSave.Store(time.Now().UnixNano())
	d.lastSaveOK.Store(true)
	d.log.Info("persist: snapshot saved", "file", dst, "trigger", trig.String(), "generation", cut.gen,
		"bytes", size, "duration", took, "stall", stall)
	return nil
}

// nextAOF is the next AOF generation, created as a temporary file before
// the cut so that the rotation under the store's locks is short.
type nextAOF struct {
	gen uint64
	tmp string
	f   *os.File
	// keep leaves the temporary file in place on discard: the previous
	// generation may still end with its end-of-generation record, and the
	// temporary file tells recovery that the switch was interrupted.
	keep bool
}

// discard closes and removes the temporary file unless the rotation
// consumed it. It accepts nil.
func (n *nextAOF) discard() {
	if n == nil || n.f == nil {
		return
	}
	n.f.Close()
	if !n.keep {
		os.Remove(n.tmp)
	}
	n.f = nil
}

// errNeedNext is returned by rotate when the current generation is not
// empty and no next generation was prepared.
var errNeedNext = errors.New("persist: internal: the cut needs a new generation")

// preCut checks that a snapshot can start and fsyncs the current AOF (so
// the fsync under the cut has little to do).
func (d *DB) preCut() error {
	d.mu.Lock()
	closed := d.f == nil
	d.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if err := d.failure(); err != nil {
		return err
	}
	return d.syncOnce()
}

// currentEmpty reports whether the current generation holds nothing but
// its header, with nothing buffered for it.
func (d *DB) currentEmpty() bool {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.off == aofHeaderSize && len(d.buf) == 0
}

// prepareNext creates the next generation as a temporary file with its
// header, fsynced, and fsyncs the directory: the temporary file is durable
// before the current generation gets the end-of-generation record that
// names it, so recovery can tell an interrupted switch (the temporary file
// exists) from a deleted generation.
func (d *DB) prepareNext() (*nextAOF, error) {
	d.mu.Lock()
	gen, closed := d.gen, d.f == nil
	d.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	n := &nextAOF{gen: gen + 1}
	n.tmp = d.path(aofFileName(n.gen) + tmpSuffix)
	f, err := os.OpenFile(n.tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("persist: create next AOF: %w", err)
	}
	n.f = f
	if _, err := f.Write(encodeAOFHeader(n.gen)); err != nil {
		n.discard()
		return nil, fmt.Errorf("persist: write %s: %w", n.tmp, err)
	}
	if err := f.Sync(); err != nil {
		n.discard()
		return nil, fmt.Errorf("persist: fsync %s: %w", n.tmp, err)
	}
	if err := syncDir(d.dir); err != nil {
		n.discard()
		return nil, fmt.Errorf("persist: fsync data directory after creating %s: %w", n.tmp, err)
	}
	return n, nil
}

// rotation describes a cut: the new generation and what the older
// generations held.
type rotation struct {
	gen        uint64
	reused     bool // the cut kept the current, empty generation
	oldBytes   int64
	oldChanges uint64
	writeErrs  uint64 // failed appends before the cut
}

// cutAt takes a snapshot's cut (store.FreezeCOW running fn). A background
// cut (gated) holds the store's command gate shared meanwhile, so that it
// never falls inside a transaction (EXEC holds the gate exclusively).
// Snapshot (SAVE) runs inside a command, which holds the gate already, and
// SAVE is refused inside MULTI.
func cutAt(store *keyspace.Store, gated bool, fn func() error) (*keyspace.Frozen, error) {
	if gated {
		store.Shared()
		defer store.SharedDone()
	}
	return store.FreezeCOW(fn)
}

// rotate runs inside store.Freeze: it writes the buffered records. If the
// current generation then holds no record, the cut keeps it (the
// snapshot's next generation is the current one). Otherwise it closes the
// current generation with an end-of-generation record (version 2 files),
// fsyncs it, makes next the current generation (errNeedNext if next is
// nil), and records what the snapshot will make obsolete. If it fails the
// current generation stays in use, as it was.
func (d *DB) rotate(next *nextAOF) (rotation, error) {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	// The records buffered before the cut belong to the old generation.
	if err := d.flushLocked(); err != nil {
		return rotation{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil {
		return rotation{}, ErrClosed
	}
	if err := d.failure(); err != nil {
		return rotation{}, err
	}
	if d.tx != txNone {
		// The callers keep cuts out of transactions (tx.go): a cut here
		// would split a unit across generations.
		return rotation{}, errors.New("persist: internal error: snapshot cut inside a transaction")
	}
	if d.off == aofHeaderSize {
		// Nothing after the header (its header was fsynced when it was
		// created): the snapshot covers every older generation and
		// replay starts with this one.
		return rotation{gen: d.gen, reused: true, oldBytes: d.aofSize.Load() - aofHeaderSize,
			oldChanges: d.changes.Load(), writeErrs: d.writeErrs.Load()}, nil
	}
	if next == nil {
		return rotation{}, errNeedNext
	}
	if next.gen != d.gen+1 {
		return rotation{}, fmt.Errorf("persist: internal error: next generation %d after %d", next.gen, d.gen)
	}
	d.fmu.Lock()
	defer d.fmu.Unlock()
	name := d.f.Name()
	closed := false // the end-of-generation record may be in the file
	if d.fileVer >= AOFFormatVersion {
		rec := appendEndOfGen(nil, endOfGen{next: next.gen, records: d.fileRec, offset: d.off})
		n, werr := d.f.Write(rec)
		if werr != nil {
			if n > 0 {
				d.unclose(next)
			}
			return rotation{}, fmt.Errorf("persist: end %s: %w", name, werr)
		}
		closed = true
	}
	err := d.fsync(d.f)
	if err != nil {
		err = fmt.Errorf("persist: fsync %s: %w", name, err)
		next.keep = closed // the record may be on disk: keep the proof of the switch
		d.setFailed(err)
		return rotation{}, d.failure()
	}
	final := d.path(aofFileName(next.gen))
	if err := os.Rename(next.tmp, final); err != nil {
		if closed {
			d.unclose(next)
		}
		return rotation{}, fmt.Errorf("persist: rename %s: %w", next.tmp, err)
	}
	if err := syncDir(d.dir); err != nil {
		// The new name might not survive a crash: records written to it
		// could vanish. Undo and keep the current generation.
		if rerr := os.Rename(final, next.tmp); rerr != nil {
			d.setFailed(fmt.Errorf("fsync data directory (%v), then undo rename of %s: %w", err, final, rerr))
		} else if closed {
			d.unclose(next)
		}
		return rotation{}, fmt.Errorf("persist: fsync data directory: %w", err)
	}
	if closed {
		d.off += eogFrameSize
		d.aofSize.Add(eogFrameSize)
	}
	old := d.f
	cut := rotation{gen: next.gen, oldBytes: d.aofSize.Load(), oldChanges: d.changes.Load(), writeErrs: d.writeErrs.Load()}
	d.f, d.gen, d.off = next.f, next.gen, aofHeaderSize
	d.fileVer, d.fileRec = AOFFormatVersion, 0
	next.f = nil
	d.fileGen.Store(next.gen)
	d.aofSize.Add(aofHeaderSize)
	if err := old.Close(); err != nil {
		d.log.Warn("persist: close old AOF", "file", old.Name(), "err", err)
	}
	d.advanceSynced(d.seq.Load())
	return cut, nil
}

// unclose cuts a (possibly partial) end-of-generation record off the
// current generation after a failed switch and makes that durable, so the
// generation takes records again. If that fails the log is failed (the
// record might stay), and next's temporary file is kept, so that recovery
// sees an interrupted switch. d.wmu and d.mu are held.
func (d *DB) unclose(next *nextAOF) {
	err := d.f.Truncate(d.off)
	if err == nil {
		err = d.fsync(d.f)
	}
	if err != nil {
		next.keep = true
		d.setFailed(fmt.Errorf("cut the end-of-generation record off %s after a failed switch: %w", d.f.Name(), err))
	}
}

// crcWriter writes through a bufio.Writer and keeps a running CRC-32C.
type crcWriter struct {
	w   *bufio.Writer
	crc uint32
	n   int64 // bytes written
	err error
}

func (c *crcWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	c.crc = crc32.Update(c.crc, castagnoli, b)
	var n int
	n, c.err = c.w.Write(b)
	c.n += int64(n)
}

// writeSnapshot writes entries (sorted by key) to a temporary file in dir,
// fsyncs and closes it, and returns its path and size.
func writeSnapshot(dir string, gen uint64, entries []keyspace.Entry, saved time.Time) (_ string, size int64, err error) {
	slices.SortFunc(entries, func(a, b keyspace.Entry) int { return cmp.Compare(a.Key, b.Key) })
	f, err := os.CreateTemp(dir, "snapshot.*"+tmpSuffix)
	if err != nil {
		return "", 0, fmt.Errorf("persist: create snapshot: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o644); err != nil { // CreateTemp uses 0600; match the AOF files
		return "", 0, fmt.Errorf("persist: create snapshot: %w", err)
	}
	cw := &crcWriter{w: bufio.NewWriterSize(f, 1<<20)}
	var hdr [snapHeaderSize]byte
	copy(hdr[:], snapMagic)
	binary.LittleEndian.PutUint16(hdr[8:], FormatVersion)
	binary.LittleEndian.PutUint16(hdr[10:], 0)
	binary.LittleEndian.PutUint64(hdr[12:], gen)
	binary.LittleEndian.PutUint64(hdr[20:], uint64(saved.UnixNano()))
	binary.LittleEndian.PutUint64(hdr[28:], uint64(len(entries)))
	binary.LittleEndian.PutUint32(hdr[36:], crc32c(hdr[:36]))
	cw.write(hdr[:])

	var pre []byte
	for i, e := range entries {
		m, ok := e.Value.(encoding.BinaryMarshaler)
		if !ok {
			return "", 0, fmt.Errorf("%w: type %q (key %q) does not implement encoding.BinaryMarshaler", ErrNotMarshaler, e.Value.TypeName(), e.Key)
		}
		data, err := m.MarshalBinary()
		if err != nil {
			return "", 0, fmt.Errorf("persist: snapshot key %q (type %q): %w", e.Key, e.Value.TypeName(), err)
		}
		typ := e.Value.TypeName()
		pre = binary.AppendUvarint(pre[:0], uint64(len(e.Key)))
		pre = append(pre, e.Key...)
		pre = binary.AppendUvarint(pre, uint64(len(typ)))
		pre = append(pre, typ...)
		pre = binary.AppendUvarint(pre, uint64(max(e.Expire, 0)))
		var rh [snapRecHeader]byte
		binary.LittleEndian.PutUint64(rh[:], uint64(len(pre)+len(data)))
		binary.LittleEndian.PutUint32(rh[8:], crc32.Update(crc32c(pre), castagnoli, data))
		cw.write(rh[:])
		cw.write(pre)
		cw.write(data)
		if testHookAfterEntry != nil {
			testHookAfterEntry(i + 1)
		}
	}
	var tr [snapTrailerSize]byte
	copy(tr[:], snapEndMagic)
	binary.LittleEndian.PutUint64(tr[8:], uint64(len(entries)))
	cw.write(tr[:16])
	binary.LittleEndian.PutUint32(tr[16:], cw.crc)
	cw.write(tr[16:])
	if cw.err == nil {
		cw.err = cw.w.Flush()
	}
	if cw.err != nil {
		return "", 0, fmt.Errorf("persist: write snapshot %s: %w", tmp, cw.err)
	}
	if err := f.Sync(); err != nil {
		return "", 0, fmt.Errorf("persist: fsync snapshot %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return "", 0, fmt.Errorf("persist: close snapshot %s: %w", tmp, err)
	}
	return tmp, cw.n, nil
}

type snapHeader struct {
	gen   uint64
	saved time.Time
	count uint64
}

type snapEntry struct {
	key    string
	value  keyspace.Value
	expire int64 // Unix ms, 0 = none (always 0 in a version 1 file)
}

// readSnapshot reads and fully verifies a snapshot, decoding every value.
// Nothing outside is changed; the caller loads the entries afterwards.
func readSnapshot(path string, decode Decoder) (snapHeader, []snapEntry, error) {
	var h snapHeader
	f, err := os.Open(path)
	if err != nil {
		return h, nil, fmt.Errorf("persist: open snapshot: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return h, nil, fmt.Errorf("persist: stat snapshot: %w", err)
	}
	size := st.Size()
	corrupt := func(off int64, format string, a ...any) error {
		return fmt.Errorf("%w: %s at byte offset %d: %s (refusing to start; restore dump.pdb from a backup taken after the same or a later snapshot; the AOF generations after it are kept and replay on top of it (moving dump.pdb away does not help once earlier AOF generations were compacted))",
			ErrCorrupt, path, off, fmt.Sprintf(format, a...))
	}
	if size < snapHeaderSize+snapTrailerSize {
		return h, nil, corrupt(0, "file of %d bytes is too short for a snapshot", size)
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 1<<20)
	var hdr [snapHeaderSize]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return h, nil, fmt.Errorf("persist: read %s: %w", path, err)
	}
	if string(hdr[:8]) != snapMagic {
		return h, nil, corrupt(0, "not a probly snapshot (bad magic)")
	}
	if got, want := binary.LittleEndian.Uint32(hdr[36:]), crc32c(hdr[:36]); got != want {
		return h, nil, corrupt(0, "header checksum mismatch (stored %08x, computed %08x)", got, want)
	}
	version := binary.LittleEndian.Uint16(hdr[8:])
	if version != FormatVersion && version != snapVersion1 {
		return h, nil, fmt.Errorf("%w: %s: snapshot format version %d (this build reads %d and %d)", ErrVersion, path, version, snapVersion1, FormatVersion)
	}
	if fl := binary.LittleEndian.Uint16(hdr[10:]); fl != 0 {
		return h, nil, fmt.Errorf("%w: %s: unknown snapshot flags %#04x", ErrVersion, path, fl)
	}
	h.gen = binary.LittleEndian.Uint64(hdr[12:])
	h.saved = time.Unix(0, int64(binary.LittleEndian.Uint64(hdr[20:])))
	h.count = binary.LittleEndian.Uint64(hdr[28:])
	if h.gen == 0 {
		return h, nil, corrupt(12, "AOF generation 0")
	}
	body := size - snapHeaderSize - snapTrailerSize
	if h.count > uint64(body)/snapMinRecord {
		return h, nil, corrupt(28, "entry count %d cannot fit in %d bytes", h.count, body)
	}
	sum := crc32c(hdr[:])
	entries := make([]snapEntry, 0, min(h.count, 1<<16))
	off := int64(snapHeaderSize)
	end := size - snapTrailerSize
	var prev string
	for i := uint64(0); i < h.count; i++ {
		if end-off < snapMinRecord {
			return h, nil, corrupt(off, "entry %d of %d: file ends early", i, h.count)
		}
		var rh [snapRecHeader]byte
		if _, err := io.ReadFull(br, rh[:]); err != nil {
			return h, nil, fmt.Errorf("persist: read %s: %w", path, err)
		}
		n := binary.LittleEndian.Uint64(rh[:])
		if n < 2 || n > uint64(end-off-snapRecHeader) {
			return h, nil, corrupt(off, "entry %d: length %d out of range (%d bytes left)", i, n, end-off-snapRecHeader)
		}
		rec := make([]byte, n) // bounded by the file
		if _, err := io.ReadFull(br, rec); err != nil {
			return h, nil, fmt.Errorf("persist: read %s: %w", path, err)
		}
		if got, want := binary.LittleEndian.Uint32(rh[8:]), crc32c(rec); got != want {
			return h, nil, corrupt(off, "entry %d: checksum mismatch (stored %08x, computed %08x)", i, got, want)
		}
		sum = crc32.Update(crc32.Update(sum, castagnoli, rh[:]), castagnoli, rec)
		klen, k1 := binary.Uvarint(rec)
		if k1 <= 0 || klen > uint64(len(rec)-k1) {
			return h, nil, corrupt(off, "entry %d: bad key length", i)
		}
		key := string(rec[k1 : k1+int(klen)])
		rest := rec[k1+int(klen):]
		tlen, k2 := binary.Uvarint(rest)
		if k2 <= 0 || tlen > uint64(len(rest)-k2) {
			return h, nil, corrupt(off, "entry %d (key %q): bad type length", i, key)
		}
		typ := string(rest[k2 : k2+int(tlen)])
		data := rest[k2+int(tlen):]
		var expire uint64
		if version >= 2 {
			var k3 int
			expire, k3 = binary.Uvarint(data)
			if k3 <= 0 || expire > math.MaxInt64 {
				return h, nil, corrupt(off, "entry %d (key %q): bad expire time", i, key)
			}
			data = data[k3:]
		}
		if i > 0 && key <= prev {
			return h, nil, corrupt(off, "entry %d: key %q not after %q (keys must be unique and sorted)", i, key, prev)
		}
		prev = key
		v, err := decode(typ, data)
		if err != nil {
			return h, nil, fmt.Errorf("%w: %s at byte offset %d: key %q of type %q: %w", ErrCorrupt, path, off, key, typ, err)
		}
		if v == nil {
			return h, nil, corrupt(off, "key %q: decoder returned no value for type %q", key, typ)
		}
		entries = append(entries, snapEntry{key: key, value: v, expire: int64(expire)})
		off += snapRecHeader + int64(n)
	}
	if off != end {
		return h, nil, corrupt(off, "%d unexpected bytes after the last entry", end-off)
	}
	var tr [snapTrailerSize]byte
	if _, err := io.ReadFull(br, tr[:]); err != nil {
		return h, nil, fmt.Errorf("persist: read %s: %w", path, err)
	}
	if string(tr[:8]) != snapEndMagic {
		return h, nil, corrupt(off, "bad trailer magic")
	}
	if c := binary.LittleEndian.Uint64(tr[8:]); c != h.count {
		return h, nil, corrupt(off+8, "trailer count %d differs from header count %d", c, h.count)
	}
	sum = crc32.Update(sum, castagnoli, tr[:16])
	if got := binary.LittleEndian.Uint32(tr[16:]); got != sum {
		return h, nil, corrupt(off+16, "file checksum mismatch (stored %08x, computed %08x)", got, sum)
	}
	return h, entries, nil
}
