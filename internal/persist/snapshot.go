package persist

import (
	"bufio"
	"bytes"
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/probly/probly/internal/codec"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/sysmem"
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
	return d.SnapshotFor(store, TriggerManual)
}

// SnapshotFor is Snapshot, logged and counted (SnapshotStats.ByTrigger)
// under trig: TriggerShutdown for the final snapshot of a shutdown.
func (d *DB) SnapshotFor(store *keyspace.Store, trig Trigger) error {
	if err := d.beginSnapshot(store); err != nil {
		return err
	}
	defer d.endSnapshot()
	return d.snapshot(store, trig, false)
}

// ShutdownSnapshot is SnapshotFor(store, TriggerShutdown): the snapshot
// the SHUTDOWN command writes before the server stops.
func (d *DB) ShutdownSnapshot(store *keyspace.Store) error {
	return d.SnapshotFor(store, TriggerShutdown)
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
// the entries written so far (in the order written). It may block, to hold a dump
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
	d.log.Debug("persist: snapshot cut taken", "keys", frozen.Len(), "generation", cut.gen, "reused", cut.reused, "stall", stall)

	tmp, size, err := writeSnapshot(d.dir, cut.gen, frozen, begin)
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
	// The records dropped before the cut are covered by the snapshot:
	// forgotten before writes resume, so no waiter sees writes accepted
	// while a wait for them still fails.
	d.forgetDropped(cut.seq)
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
	seq        uint64 // the last sequence number handed out before the cut
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
			oldChanges: d.changes.Load(), writeErrs: d.writeErrs.Load(), seq: d.seq.Load()}, nil
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
	cut := rotation{gen: next.gen, oldBytes: d.aofSize.Load(), oldChanges: d.changes.Load(), writeErrs: d.writeErrs.Load(),
		seq: d.seq.Load()}
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

// Write implements io.Writer for write.
func (c *crcWriter) Write(b []byte) (int, error) {
	c.write(b)
	if c.err != nil {
		return 0, c.err
	}
	return len(b), nil
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

// recordSum counts the stored bytes of a record and sums their CRC-32C,
// passing them on to w if it is not nil.
type recordSum struct {
	n   uint64
	crc uint32
	w   io.Writer
}

func (r *recordSum) Write(b []byte) (int, error) {
	r.n += uint64(len(b))
	r.crc = crc32.Update(r.crc, castagnoli, b)
	if r.w != nil {
		return r.w.Write(b)
	}
	return len(b), nil
}

// bytesValue is an encoding already in memory.
type bytesValue []byte

func (b bytesValue) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(b)
	return int64(n), err
}

// valueSource returns what writes e's value encoding: the value itself if
// it streams its encoding (io.WriterTo, which must write exactly its
// MarshalBinary bytes), else (w nil) its encoding appended to scratch
// (encoding.BinaryAppender) or its MarshalBinary bytes.
func valueSource(e keyspace.Entry, scratch []byte) (data []byte, w io.WriterTo, err error) {
	if w, ok := e.Value.(io.WriterTo); ok {
		return nil, w, nil
	}
	if a, ok := e.Value.(encoding.BinaryAppender); ok {
		data, err = a.AppendBinary(scratch)
	} else if m, ok := e.Value.(encoding.BinaryMarshaler); ok {
		data, err = m.MarshalBinary()
	} else {
		return nil, nil, fmt.Errorf("%w: type %q (key %q) does not implement encoding.BinaryMarshaler", ErrNotMarshaler, e.Value.TypeName(), e.Key)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("persist: snapshot key %q (type %q): %w", e.Key, e.Value.TypeName(), err)
	}
	return data, nil, nil
}

// recordWriter writes snapshot entries (version 3 and 4 records) to cw,
// reusing its buffers from one entry to the next.
type recordWriter struct {
	cw        *crcWriter
	sw        sparseWriter
	pre       []byte       // the body's key, type and expire
	scratch   []byte       // a small value's encoding
	body      bytes.Buffer // a small value's stored body
	want, got recordSum
	rh        [snapRecHeader]byte
}

// write appends e's record. A write error of cw is left in cw.err.
func (rw *recordWriter) write(e keyspace.Entry) error {
	data, src, err := valueSource(e, rw.scratch[:0])
	if err != nil {
		return err
	}
	if data != nil && cap(data) <= inMemValue {
		rw.scratch = data[:0] // reuse what AppendBinary grew
	}
	typ := e.Value.TypeName()
	pre := binary.AppendUvarint(rw.pre[:0], uint64(len(e.Key)))
	pre = append(pre, e.Key...)
	pre = binary.AppendUvarint(pre, uint64(len(typ)))
	pre = append(pre, typ...)
	pre = binary.AppendUvarint(pre, uint64(max(e.Expire, 0)))
	rw.pre = pre
	// The record header carries the stored length and CRC-32C before the
	// value. A small encoding in memory is encoded into a buffer; any
	// other is encoded twice, first only to compute them (a frozen value
	// does not change, and a large one is streamed, never held encoded in
	// memory), then to the file, checked to give the same bytes.
	sw := &rw.sw
	rw.want = recordSum{n: uint64(len(pre)), crc: crc32c(pre)}
	inMem := src == nil && len(data) <= inMemValue
	if src == nil && !inMem {
		src = bytesValue(data)
	}
	if inMem {
		rw.body.Reset()
		sw.Reset(&rw.body)
		sw.Write(data)
		err = sw.Close()
		rw.want.Write(rw.body.Bytes())
	} else {
		err = encodeValue(sw, &rw.want, src)
	}
	if err != nil {
		return fmt.Errorf("persist: snapshot key %q (type %q): %w", e.Key, typ, err)
	}
	size := sw.size
	rh := rw.rh[:]
	binary.LittleEndian.PutUint64(rh, rw.want.n)
	binary.LittleEndian.PutUint64(rh[8:], size)
	binary.LittleEndian.PutUint32(rh[16:], rw.want.crc)
	rw.cw.write(rh)
	rw.cw.write(pre)
	if inMem {
		rw.cw.write(rw.body.Bytes())
		return nil
	}
	rw.got = recordSum{n: uint64(len(pre)), crc: crc32c(pre), w: rw.cw}
	if err := encodeValue(sw, &rw.got, src); err != nil {
		if rw.cw.err != nil {
			return nil // reported by the caller
		}
		return fmt.Errorf("persist: snapshot key %q (type %q): %w", e.Key, typ, err)
	}
	if rw.got.n != rw.want.n || rw.got.crc != rw.want.crc || sw.size != size {
		return fmt.Errorf("persist: internal error: snapshot key %q (type %q) encoded differently twice", e.Key, typ)
	}
	return nil
}

// encodeValue writes the version 3 body of src's encoding to w through sw.
func encodeValue(sw *sparseWriter, w io.Writer, src io.WriterTo) error {
	sw.Reset(w)
	if _, err := src.WriteTo(sw); err != nil {
		return err
	}
	return sw.Close()
}

// snapSource is what a snapshot is written from: a cut listed in parts
// (keyspace.Frozen). The writer lists one part at a time, encodes it and
// releases it, so that the values held for the cut (and the clones that
// writes make meanwhile) shrink as the dump goes, and no list of every key
// is built.
type snapSource interface {
	// Len is the number of entries the parts hold together.
	Len() int
	// Shards is the number of parts.
	Shards() int
	// AppendShard appends part i's entries to dst.
	AppendShard(dst []keyspace.Entry, i int) []keyspace.Entry
	// ReleaseShard tells the source that part i is written.
	ReleaseShard(i int)
}

// entryList is a snapSource of one part (tests and benchmarks).
type entryList []keyspace.Entry

func (l entryList) Len() int    { return len(l) }
func (l entryList) Shards() int { return 1 }
func (l entryList) AppendShard(dst []keyspace.Entry, _ int) []keyspace.Entry {
	return append(dst, l...)
}
func (l entryList) ReleaseShard(int) {}

// writeSnapshot writes src's entries to a temporary file in dir (in the
// order src lists them), fsyncs and closes it, and returns its path and
// size. It yields the processor after each part, so that on one core the
// commands being served meanwhile wait for one part's encoding at most.
func writeSnapshot(dir string, gen uint64, src snapSource, saved time.Time) (_ string, size int64, err error) {
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
	count := src.Len()
	cw := &crcWriter{w: bufio.NewWriterSize(f, 1<<20)}
	var hdr [snapHeaderSize]byte
	copy(hdr[:], snapMagic)
	binary.LittleEndian.PutUint16(hdr[8:], FormatVersion)
	binary.LittleEndian.PutUint16(hdr[10:], 0)
	binary.LittleEndian.PutUint64(hdr[12:], gen)
	binary.LittleEndian.PutUint64(hdr[20:], uint64(saved.UnixNano()))
	binary.LittleEndian.PutUint64(hdr[28:], uint64(count))
	binary.LittleEndian.PutUint32(hdr[36:], crc32c(hdr[:36]))
	cw.write(hdr[:])

	rw := &recordWriter{cw: cw}
	var part []keyspace.Entry
	written := 0
	for i := range src.Shards() {
		part = src.AppendShard(part[:0], i)
		for _, e := range part {
			if written == count {
				return "", 0, fmt.Errorf("persist: internal error: the cut listed more than its %d entries", count)
			}
			if err := rw.write(e); err != nil {
				return "", 0, err
			}
			if cw.err != nil {
				break // reported below
			}
			written++
			if testHookAfterEntry != nil {
				testHookAfterEntry(written)
			}
		}
		clear(part) // drop the references to the values before releasing them
		src.ReleaseShard(i)
		if cw.err != nil {
			break
		}
		runtime.Gosched()
	}
	if cw.err == nil && written != count {
		return "", 0, fmt.Errorf("persist: internal error: the cut listed %d of its %d entries", written, count)
	}
	var tr [snapTrailerSize]byte
	copy(tr[:], snapEndMagic)
	binary.LittleEndian.PutUint64(tr[8:], uint64(count))
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
	off    int64 // the record's byte offset in the file
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
	if version < snapVersion1 || version > FormatVersion {
		return h, nil, fmt.Errorf("%w: %s: snapshot format version %d (this build reads %d to %d)", ErrVersion, path, version, snapVersion1, FormatVersion)
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
	rhLen := int64(snapRecHeaderV2)
	if version >= 3 {
		rhLen = snapRecHeader
	}
	var prev string
	for i := uint64(0); i < h.count; i++ {
		if end-off < rhLen+2 {
			return h, nil, corrupt(off, "entry %d of %d: file ends early", i, h.count)
		}
		var rhb [snapRecHeader]byte
		rh := rhb[:rhLen]
		if _, err := io.ReadFull(br, rh); err != nil {
			return h, nil, fmt.Errorf("persist: read %s: %w", path, err)
		}
		n := binary.LittleEndian.Uint64(rh)
		if n < 2 || n > uint64(end-off-rhLen) {
			return h, nil, corrupt(off, "entry %d: length %d out of range (%d bytes left)", i, n, end-off-rhLen)
		}
		sum = crc32.Update(sum, castagnoli, rh)
		want := binary.LittleEndian.Uint32(rh[rhLen-4:])
		// The record's checksum is verified before anything in it is
		// decoded. A record up to inMemRecord bytes is read whole; a
		// larger one is read twice, once for its checksum and once to
		// decode it in pieces, so it is never held whole in memory.
		var src byteSrc
		var got uint32
		if n <= inMemRecord {
			rec := make([]byte, n) // bounded by the file
			if _, err := io.ReadFull(br, rec); err != nil {
				return h, nil, fmt.Errorf("persist: read %s: %w", path, err)
			}
			got = crc32c(rec)
			sum = crc32.Update(sum, castagnoli, rec)
			src = bytes.NewReader(rec)
		} else {
			if got, sum, err = sumRecord(br, n, sum); err != nil {
				return h, nil, fmt.Errorf("persist: read %s: %w", path, err)
			}
			src = bufio.NewReaderSize(io.NewSectionReader(f, off+rhLen, int64(n)), 1<<20)
		}
		if got != want {
			return h, nil, corrupt(off, "entry %d: checksum mismatch (stored %08x, computed %08x)", i, want, got)
		}
		var size uint64
		if version >= 3 {
			size = binary.LittleEndian.Uint64(rh[8:])
		}
		e, typ, err := readEntry(&recReader{r: src, left: n}, version, size, decode)
		var re *errRecord
		switch {
		case errors.As(err, &re):
			return h, nil, corrupt(off, "entry %d (key %q): %s", i, e.key, re.msg)
		case err != nil:
			return h, nil, fmt.Errorf("%w: %s at byte offset %d: key %q of type %q: %w", ErrCorrupt, path, off, e.key, typ, err)
		case e.value == nil:
			return h, nil, corrupt(off, "key %q: decoder returned no value for type %q", e.key, typ)
		case version < snapVersion4 && i > 0 && e.key <= prev:
			return h, nil, corrupt(off, "entry %d: key %q not after %q (keys must be unique and sorted)", i, e.key, prev)
		}
		prev = e.key
		e.off = off
		entries = append(entries, e)
		off += rhLen + int64(n)
	}
	if off != end {
		return h, nil, corrupt(off, "%d unexpected bytes after the last entry", end-off)
	}
	if version >= snapVersion4 {
		// Keys are in any order (the writer lists the store shard by
		// shard); sorted, a key that appears twice is next to itself.
		slices.SortFunc(entries, func(a, b snapEntry) int { return strings.Compare(a.key, b.key) })
		for i := 1; i < len(entries); i++ {
			if a, b := entries[i-1], entries[i]; a.key == b.key {
				return h, nil, corrupt(max(a.off, b.off), "key %q appears twice (also at byte offset %d)", a.key, min(a.off, b.off))
			}
		}
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

// Records up to inMemRecord stored bytes are read whole; values of up to
// inMemValue bytes, or of a type without a streaming decoder, are
// decoded from memory.
const (
	inMemRecord = 1 << 20
	inMemValue  = 1 << 20
)

// sumRecord reads the n bytes of a record from r and returns their
// CRC-32C and sum extended by them.
func sumRecord(r io.Reader, n uint64, sum uint32) (rec, file uint32, err error) {
	buf := make([]byte, 1<<20)
	for n > 0 {
		b := buf[:min(n, uint64(len(buf)))]
		if _, err := io.ReadFull(r, b); err != nil {
			return 0, 0, err
		}
		rec = crc32.Update(rec, castagnoli, b)
		sum = crc32.Update(sum, castagnoli, b)
		n -= uint64(len(b))
	}
	return rec, sum, nil
}

// readEntry decodes one checksummed record of a snapshot of format
// version from r: key, type, expire time (version ≥ 2) and the value,
// whose encoding is size bytes long in version 3 (stored as a sparse
// body) and the rest of the record before. A value larger than
// inMemValue whose type has a streaming decoder (codec.Decoder.Read) is
// decoded in place from the file; any other is read into memory and
// given to decode. Structural errors are *errRecord; decoder errors are
// returned as they are, with the type name.
func readEntry(r *recReader, version uint16, size uint64, decode Decoder) (e snapEntry, typ string, err error) {
	klen, err := r.uvarint("key length")
	if err != nil {
		return e, "", err
	}
	key, err := r.bytes(klen, "key")
	if err != nil {
		return e, "", err
	}
	e.key = string(key)
	tlen, err := r.uvarint("type length")
	if err != nil {
		return e, "", err
	}
	t, err := r.bytes(tlen, "type")
	if err != nil {
		return e, "", err
	}
	typ = string(t)
	if version >= 2 {
		exp, err := r.uvarint("expire time")
		if err != nil {
			return e, typ, err
		}
		if exp > math.MaxInt64 {
			return e, typ, recordErr("bad expire time %d", exp)
		}
		e.expire = int64(exp)
	}
	var body io.Reader = r
	var sr *sparseReader
	if version >= 3 {
		// Zero runs take a few bytes, so the file does not bound the
		// value's size: the memory the process may have does.
		if avail := sysmem.Available(); avail > 0 && size > avail {
			return e, typ, recordErr("value of %d bytes is larger than the memory available to the process (%d bytes)", size, avail)
		}
		sr = &sparseReader{r: r, left: size}
		body = sr
	} else {
		size = r.left
	}
	d, ok := codec.Lookup(typ)
	if ok && d.MaxSize > 0 && size > d.MaxSize {
		// Refused before anything is allocated for it (codec.Decoder.MaxSize).
		return e, typ, recordErr("value of %d bytes is larger than type %q allows (%d bytes)", size, typ, d.MaxSize)
	}
	if ok && d.Read != nil && size > inMemValue {
		e.value, err = d.Read(body, size, 0)
	} else {
		data := make([]byte, size) // bounded by the file, or by the memory available
		if sr != nil {
			sr.zeroed = true // data is fresh: its zero runs need no writing
		}
		if _, err := io.ReadFull(body, data); err != nil {
			var re *errRecord
			if errors.As(err, &re) {
				return e, typ, err
			}
			return e, typ, recordErr("value cut short: %v", err)
		}
		e.value, err = decode(typ, data)
	}
	var re *errRecord
	if errors.As(err, &re) {
		return e, typ, re // the body's structure, seen by the decoder
	}
	if err != nil {
		return e, typ, err
	}
	if sr != nil && (sr.left != 0 || sr.zeros != 0 || sr.lit != 0) {
		return e, typ, recordErr("the decoder read %d of the value's %d bytes", size-sr.left, size)
	}
	if r.left != 0 {
		return e, typ, recordErr("%d bytes after the value", r.left)
	}
	return e, typ, nil
}
