package persist

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/probly/probly/internal/keyspace"
)

// Errors returned by this package. They are wrapped with %w together with
// the file, offset or cause; test them with errors.Is.
var (
	// ErrInvalidOptions reports a bad Options value or a nil callback.
	ErrInvalidOptions = errors.New("persist: invalid options")
	// ErrCorrupt reports a damaged AOF or snapshot; the message names the
	// file and the byte offset. Open refuses to start.
	ErrCorrupt = errors.New("persist: corrupt file")
	// ErrVersion reports a file written by an incompatible format version.
	ErrVersion = errors.New("persist: unsupported format version")
	// ErrMissingGeneration reports an AOF generation that recovery needs
	// and cannot find: a gap (for example appendonly.1.aof deleted without
	// a snapshot that covers it), the generation dump.pdb says follows it,
	// or the one the last generation's end-of-generation record names. The
	// message names the file and the remedy (a backup, or check-aof --fix).
	ErrMissingGeneration = errors.New("persist: missing AOF generation")
	// ErrLocked reports that another process has the data directory open.
	ErrLocked = errors.New("persist: data directory is in use by another process")
	// ErrClosed is returned by methods called after Close.
	ErrClosed = errors.New("persist: closed")
	// ErrSnapshotInProgress is returned by Snapshot and BGSnapshot while
	// another snapshot runs.
	ErrSnapshotInProgress = errors.New("persist: snapshot already in progress")
	// ErrNotMarshaler reports a value that does not implement
	// encoding.BinaryMarshaler and so cannot be snapshotted.
	ErrNotMarshaler = errors.New("persist: value cannot be snapshotted")
	// ErrEmptyRecord is returned by Append for a record with no arguments.
	ErrEmptyRecord = errors.New("persist: empty record")
	// ErrRecordTooLarge is returned by Append for a record over
	// MaxRecordSize bytes or MaxArgs arguments.
	ErrRecordTooLarge = errors.New("persist: record too large")
	// ErrFailed is returned by Append, Wait and Snapshot after an I/O error
	// that left the AOF in an unknown state (a failed fsync, or a failed
	// write whose partial bytes could not be cut off). The DB accepts no
	// more writes; restart the process to recover from disk.
	ErrFailed = errors.New("persist: AOF disabled after an I/O error; restart to recover")
	// ErrInvalidSeq is returned by Wait for a sequence number that Append
	// never returned.
	ErrInvalidSeq = errors.New("persist: invalid sequence number")
	// ErrOutOfSync is returned by Append and WriteGate after an append
	// failed (for example ENOSPC): the command that failed may have changed
	// memory without a record, so the log no longer describes memory. Every
	// write is refused until a snapshot, which writes memory as it is,
	// succeeds; the automatic scheduler (StartAuto) retries one 5 s after
	// the failure, backing off to every 30 s.
	ErrOutOfSync = errors.New("persist: writes refused since an AOF write failed; they resume once a snapshot succeeds (retried 5 s after a failure, backing off to every 30 s; or run BGSAVE after freeing disk space)")
)

// Fsync policies accepted in Options.Fsync.
const (
	FsyncAlways   = "always"
	FsyncEverySec = "everysec"
	FsyncNo       = "no"
)

// Options configures Open.
type Options struct {
	// Dir is the data directory. It is created (0o755) if missing.
	Dir string
	// Fsync is "always", "everysec" or "no"; "" means "everysec" (the
	// default, as in Redis). Anything else is ErrInvalidOptions.
	Fsync string
	// Logger receives warnings (torn tail truncated, stale files removed)
	// and errors from background work. nil discards them.
	Logger *slog.Logger
	// OnFsync, if not nil, is called after every fsync of an AOF file
	// (group commit, the everysec loop, rotation, Close, repairs at Open)
	// with how long the fsync took, for a latency histogram. It runs on
	// the goroutine that fsynced, sometimes with internal locks held: it
	// must be fast and must not call back into the DB. SetOnFsync replaces
	// it later.
	OnFsync func(time.Duration)
	// BufferAppends makes Append only add the record to an in-memory
	// buffer, as Redis's AOF buffer: Wait (or Flush) writes it, with one
	// write(2) for every record buffered meanwhile, and reports a write
	// error. The caller must Wait before acknowledging a write (the server
	// does, once per batch of pipelined commands). Without it, Append
	// returns once its record is written (concurrent appenders still share
	// writes) and returns the write error itself.
	BufferAppends bool
}

// Decoder turns a snapshot record back into a value; typeName is
// keyspace.Value.TypeName(). data belongs to the decoder (it may retain it).
// A value of more than 1 MiB whose type registers a streaming decoder in
// internal/codec (Decoder.Read) is decoded by that one instead, in place
// from the file, so that the encoding is never held in memory whole.
type Decoder func(typeName string, data []byte) (keyspace.Value, error)

type fsyncPolicy uint8

const (
	policyEverySec fsyncPolicy = iota
	policyAlways
	policyNo
)

// DB is an open data directory: the current AOF generation plus snapshot
// state. It implements keyspace.Logger. Create it with Open.
type DB struct {
	dir      string
	log      *slog.Logger
	policy   fsyncPolicy
	buffered bool // Options.BufferAppends
	lock     *os.File

	// mu guards the record buffer and sequence assignment, the current
	// file handle and generation (for readers; they change only with wmu
	// held too), and closing.
	mu      sync.Mutex
	f       *os.File // current AOF, O_APPEND; nil after Close
	gen     uint64   // generation of f
	closing bool
	seq     atomic.Uint64 // last sequence number handed out (written under mu)
	buf     []byte        // framed records seq written+1 … seq, not yet written (under mu)

	// wmu serializes writes of the buffer to f (flush), rotation and Close.
	// Lock order: wmu, then mu, then fmu, then smu. Store shard locks come
	// before wmu (rotation runs under FreezeCOW).
	wmu     sync.Mutex
	off     int64         // bytes of f known to be well-formed (under wmu)
	fileVer uint16        // format version of f's header (under wmu)
	fileRec uint64        // command records in f (under wmu)
	spare   []byte        // the buffer being written, reused (under wmu)
	written atomic.Uint64 // every seq <= written was written to f, or dropped (stored under wmu)
	// dropped lists the sequence ranges whose write failed (under mu); Wait
	// fails for them. ndropped is its length, for a lock-free fast path.
	dropped  []droppedRange
	ndropped atomic.Int32

	// fmu protects the lifetime of a file handle being fsynced outside mu:
	// fsyncers hold it shared, rotation and Close hold it exclusively
	// before closing the handle. Lock order: mu, then fmu, then smu.
	fmu     sync.RWMutex
	fileGen atomic.Uint64 // generation of the open file, 0 when closed

	// smu guards group commit.
	smu   sync.Mutex
	scond *sync.Cond
	// synced: every seq <= synced is fsynced. Written under smu; atomic
	// so that Wait checks it without smu (every batch of the server
	// waits, most for records already fsynced).
	synced  atomic.Uint64
	syncing bool // a leader is fsyncing

	failed atomic.Pointer[error] // sticky I/O failure (ErrFailed)

	tx      txPhase // the transaction unit being appended (tx.go; under mu)
	txMulti bool    // its MULTI record was appended (under mu)

	fsyncs     atomic.Uint64 // fsync calls on AOF files
	fsyncNanos atomic.Uint64 // total time spent in them
	fsyncMax   atomic.Int64  // longest one, nanoseconds
	onFsync    atomic.Pointer[func(time.Duration)]

	// Append failures that may have left memory ahead of the log: writes
	// are refused while writeErrs > coveredErrs (ErrOutOfSync). A snapshot
	// covers the failures counted before its cut.
	writeErrs    atomic.Uint64
	coveredErrs  atomic.Uint64
	lastWriteErr atomic.Pointer[error]

	aofSize    atomic.Int64  // bytes of the AOF generations recovery would replay
	changes    atomic.Uint64 // records in those generations
	snapping   atomic.Bool
	lastSave   atomic.Int64 // unix nanoseconds
	lastSaveOK atomic.Bool
	lastTry    atomic.Int64  // unix nanoseconds of the last snapshot attempt
	consecFail atomic.Uint64 // snapshots failed since the last success
	baseSize   atomic.Int64  // bytes of dump.pdb as last written or found
	stats      snapStats
	auto       autoState

	snapWG    sync.WaitGroup // running snapshots
	stop      chan struct{}  // closes the everysec loop
	bgWG      sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// droppedRange is a range of sequence numbers whose records were never
// written (the write failed, or the log failed before they were written).
type droppedRange struct {
	lo, hi uint64
	err    error
}

// Buffer sizes: Append writes the buffer itself once it holds flushAt
// bytes (nobody may be waiting), and a buffer that grew beyond keepBuf is
// not kept for reuse.
const (
	flushAt = 1 << 20
	keepBuf = 1 << 20
)

// Open opens (creating if needed) the data directory and recovers: it loads
// dump.pdb if present, calling load for every key (only after the whole
// snapshot has been verified), then replays the AOF records written after
// the snapshot's cut, in order, calling replay(args) for each. args of one
// call share a freshly allocated buffer that replay may retain.
//
// A torn last record of the newest AOF is cut off with a warning. Any other
// damage returns ErrCorrupt naming the file and byte offset; an error from
// load or replay aborts Open and is returned wrapped. After an error the
// state built by load/replay is incomplete and must be discarded.
//
// The returned DB is ready for Append. Open holds an exclusive lock on the
// directory (ErrLocked if another process has it) until Close.
func Open(opts Options, decode Decoder, load func(key string, v keyspace.Value) error, replay func(args [][]byte) error) (*DB, error) {
	if opts.Dir == "" {
		return nil, fmt.Errorf("%w: Dir is empty", ErrInvalidOptions)
	}
	var policy fsyncPolicy
	switch opts.Fsync {
	case FsyncEverySec, "":
		policy = policyEverySec
	case FsyncAlways:
		policy = policyAlways
	case FsyncNo:
		policy = policyNo
	default:
		return nil, fmt.Errorf("%w: Fsync %q (want %q, %q or %q)", ErrInvalidOptions, opts.Fsync, FsyncAlways, FsyncEverySec, FsyncNo)
	}
	if decode == nil || load == nil || replay == nil {
		return nil, fmt.Errorf("%w: decode, load and replay must not be nil", ErrInvalidOptions)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("persist: create data directory: %w", err)
	}
	lock, err := lockDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	d := &DB{
		dir:      opts.Dir,
		log:      logger,
		policy:   policy,
		lock:     lock,
		buffered: opts.BufferAppends,
		stop:     make(chan struct{}),
	}
	d.scond = sync.NewCond(&d.smu)
	if opts.OnFsync != nil {
		d.onFsync.Store(&opts.OnFsync)
	}
	d.auto.init()
	if err := d.recover(decode, load, replay); err != nil {
		unlockDir(lock)
		return nil, err
	}
	d.lastSave.Store(time.Now().UnixNano())
	d.lastSaveOK.Store(true)
	d.bgWG.Add(1)
	go d.everySecLoop()
	return d, nil
}

// Append adds one record (a mutating command in canonical form) to the
// AOF and returns its sequence number, for Wait. With
// Options.BufferAppends the record goes to an in-memory buffer, as in
// Redis: Wait(seq) writes the buffer (one write(2) for every record
// buffered meanwhile, by any caller) before it returns, so a reply sent
// after Wait survives kill -9 in every fsync mode, and a failure to write
// is reported by Wait to every caller whose record was in the buffer.
// Without it, Append returns once the record is written (page cache, no
// fsync). It is safe for concurrent callers; records are ordered by the
// call order. It implements keyspace.Logger.
//
// An error means the record is not in the log, and the caller must not
// acknowledge the mutation: the server replies with an error. After
// ErrFailed every Append fails.
func (d *DB) Append(args [][]byte) (seq uint64, err error) { return d.append(args, false) }

// append is Append; end appends the record that closes a transaction unit
// (tx.go), and a failure inside a unit marks it broken.
func (d *DB) append(args [][]byte, end bool) (seq uint64, err error) {
	psize, err := payloadSize(args)
	if err != nil {
		d.breakTx(end)
		return 0, err
	}
	d.mu.Lock()
	if d.f == nil {
		d.breakTxLocked(end)
		d.mu.Unlock()
		return 0, ErrClosed
	}
	if err := d.failure(); err != nil {
		d.breakTxLocked(end)
		d.mu.Unlock()
		return 0, err
	}
	if err := d.outOfSync(); err != nil {
		d.breakTxLocked(end)
		// The caller may have changed memory before logging (it passed
		// WriteGate before the failure): that change is in no file either,
		// so a snapshot whose cut came before this call does not cover it.
		d.writeErrs.Add(1)
		d.mu.Unlock()
		return 0, err
	}
	d.openTxLocked(end)
	d.buf = appendFrame(d.buf, args, psize)
	big := len(d.buf) >= flushAt
	seq = d.seq.Add(1)
	d.changes.Add(1)
	d.mu.Unlock()
	if !d.buffered {
		if err := d.writeThrough(seq); err != nil {
			return 0, err
		}
	} else if big {
		// Bound the buffer when nobody waits (or one record is large). A
		// failure is reported by Wait.
		_ = d.flush()
	}
	return seq, nil
}

// writeThrough writes the buffer unless seq is written already, and
// returns the write error if seq's record was dropped.
func (d *DB) writeThrough(seq uint64) error {
	err := d.flushTo(seq)
	if d.ndropped.Load() > 0 {
		if derr := d.droppedErr(seq); derr != nil {
			return derr
		}
	}
	if err != nil && d.written.Load() >= seq {
		return nil // a later record's write failed; seq's is in the file
	}
	return err
}

// Wait blocks until every record with a sequence number <= seq is as
// durable as the fsync policy promises: written to the file (the page
// cache) with every policy, and fsynced with Fsync "always". The first
// waiter writes the whole buffer, so concurrent callers share one write
// (and, with "always", one fsync: group commit). For seq 0 it returns nil
// at once. It fails if the record could not be written (for example
// ENOSPC: the error wraps the cause) or, with "always", fsynced.
func (d *DB) Wait(seq uint64) error {
	if seq == 0 {
		return nil
	}
	if d.written.Load() < seq {
		if seq > d.seq.Load() {
			return fmt.Errorf("%w: %d (last is %d)", ErrInvalidSeq, seq, d.seq.Load())
		}
		if err := d.writeThrough(seq); err != nil {
			return err
		}
	} else if d.ndropped.Load() > 0 {
		if err := d.droppedErr(seq); err != nil {
			return err
		}
	}
	if d.policy != policyAlways || d.synced.Load() >= seq {
		return nil
	}
	d.smu.Lock()
	defer d.smu.Unlock()
	for d.synced.Load() < seq {
		if err := d.failure(); err != nil {
			return err
		}
		if d.syncing {
			d.scond.Wait()
			continue
		}
		d.syncing = true
		d.smu.Unlock()
		err := d.syncOnce()
		d.smu.Lock()
		d.syncing = false
		d.scond.Broadcast()
		if err != nil && d.synced.Load() < seq {
			return err
		}
	}
	return nil
}

// Flush writes every buffered record to the file (no fsync): what the
// key space's expiry cycle calls after deleting keys when no client waits.
// Clients wait with Wait.
func (d *DB) Flush() error {
	seq := d.seq.Load()
	if d.written.Load() >= seq {
		return nil
	}
	return d.writeThrough(seq)
}

// droppedErr returns the write error of the dropped range holding seq.
func (d *DB) droppedErr(seq uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.dropped {
		if r.lo <= seq && seq <= r.hi {
			return r.err
		}
	}
	return nil
}

// flushTo writes the buffer unless every record up to seq is written
// already (by a concurrent flush).
func (d *DB) flushTo(seq uint64) error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if d.written.Load() >= seq {
		return nil
	}
	return d.flushLocked()
}

// flush writes the buffer.
func (d *DB) flush() error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	return d.flushLocked()
}

// flushLocked writes the buffered records to f with one write(2); d.wmu
// is held. Appends continue into a second buffer meanwhile. If the write
// fails, the partial bytes are cut off again, the records buffered until
// now are dropped (their waiters get the error) and the log refuses
// writes until a snapshot (ErrOutOfSync), as Append did when it wrote
// itself.
func (d *DB) flushLocked() error {
	d.mu.Lock()
	if len(d.buf) == 0 {
		d.written.Store(d.seq.Load())
		d.mu.Unlock()
		return nil
	}
	f := d.f
	if f == nil {
		d.mu.Unlock()
		return ErrClosed // Close wrote the buffer; nothing is left
	}
	if err := d.failure(); err != nil {
		d.dropLocked(err)
		d.mu.Unlock()
		return err
	}
	buf := d.buf
	d.buf = d.spare[:0]
	hi := d.seq.Load()
	d.mu.Unlock()

	n, werr := f.Write(buf)
	if cap(buf) <= keepBuf {
		d.spare = buf[:0]
	} else {
		d.spare = nil
	}
	if werr == nil {
		d.off += int64(n)
		d.aofSize.Add(int64(n))
		d.fileRec += hi - d.written.Load()
		d.written.Store(hi)
		return nil
	}
	if n > 0 {
		// Cut the partial frames off so the file stays well-formed and
		// the next record does not follow garbage. With O_APPEND the next
		// write goes to the new end.
		if terr := f.Truncate(d.off); terr != nil {
			d.setFailed(fmt.Errorf("cut partial record off %s after write error (%v): %w", f.Name(), werr, terr))
		}
	}
	err := fmt.Errorf("persist: append to %s: %w", f.Name(), werr)
	d.log.Error("persist: AOF write failed; refusing writes until a snapshot succeeds", "err", err)
	d.mu.Lock()
	// The callers already changed memory (BF.ADD sets bits before
	// logging): refuse writes until a snapshot catches up. Set under mu,
	// so no record follows the dropped ones before that snapshot.
	d.lastWriteErr.Store(&err)
	d.writeErrs.Add(1)
	d.dropLocked(err)
	d.mu.Unlock()
	return err
}

// forgetDropped forgets the dropped ranges up to seq, once a durable
// snapshot whose cut came after them holds what their records changed in
// memory (or nothing, for a change made only after logging): Wait then
// reports those sequence numbers durable. Their own callers got the error
// when the write failed; a later Wait for them comes from a connection
// that waits for every record the log held (the server's LastSeq rule),
// and would otherwise fail forever, until a new record moved LastSeq
// past them.
func (d *DB) forgetDropped(seq uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	kept := d.dropped[:0]
	for _, r := range d.dropped {
		if r.hi > seq {
			kept = append(kept, r)
		}
	}
	clear(d.dropped[len(kept):])
	d.dropped = kept
	d.ndropped.Store(int32(len(kept)))
}

// dropLocked discards every record not yet written, up to the last
// sequence number handed out, and records the range for Wait. d.mu and
// d.wmu are held.
func (d *DB) dropLocked(err error) {
	lo, hi := d.written.Load()+1, d.seq.Load()
	if hi < lo {
		return
	}
	d.buf = d.buf[:0]
	d.dropped = append(d.dropped, droppedRange{lo: lo, hi: hi, err: err})
	d.ndropped.Store(int32(len(d.dropped)))
	d.changes.Add(^(hi - lo)) // subtract hi-lo+1: the records are in no file
	d.written.Store(hi)
}

// syncOnce writes the buffer, fsyncs the current AOF and marks every
// record written before the fsync started as synced.
func (d *DB) syncOnce() error {
	_ = d.flush() // a failure shows as a dropped range, which Wait reports
	d.wmu.Lock()
	d.mu.Lock()
	f, gen := d.f, d.gen
	target := d.written.Load()
	d.mu.Unlock()
	d.wmu.Unlock()
	if f == nil {
		return ErrClosed
	}
	d.fmu.RLock()
	if d.fileGen.Load() != gen {
		// Rotated or closed meanwhile; both fsync the old file first and
		// advance synced past target themselves.
		d.fmu.RUnlock()
		if gen != 0 && d.fileGen.Load() == 0 {
			return ErrClosed
		}
		return nil
	}
	err := d.fsync(f)
	d.fmu.RUnlock()
	if err != nil {
		err = fmt.Errorf("persist: fsync %s: %w", f.Name(), err)
		d.setFailed(err)
		return d.failure()
	}
	d.advanceSynced(target)
	return nil
}

func (d *DB) advanceSynced(target uint64) {
	d.smu.Lock()
	if target > d.synced.Load() {
		d.synced.Store(target)
	}
	d.scond.Broadcast()
	d.smu.Unlock()
}

func (d *DB) everySecLoop() {
	defer d.bgWG.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			if d.policy != policyEverySec {
				// Records of callers that never Wait reach the file
				// within a second.
				if d.written.Load() < d.seq.Load() {
					_ = d.flush()
				}
				continue
			}
			d.smu.Lock()
			dirty := d.seq.Load() > d.synced.Load()
			d.smu.Unlock()
			if dirty && d.failure() == nil {
				if err := d.syncOnce(); err != nil && !errors.Is(err, ErrClosed) {
					d.log.Error("persist: background fsync failed", "err", err)
				}
			}
		}
	}
}

// setFailed records the first unrecoverable I/O error.
func (d *DB) setFailed(err error) {
	if d.failed.CompareAndSwap(nil, &err) {
		d.log.Error("persist: AOF disabled after I/O error; restart to recover", "err", err)
	}
	d.smu.Lock()
	d.scond.Broadcast()
	d.smu.Unlock()
}

func (d *DB) failure() error {
	if p := d.failed.Load(); p != nil {
		return fmt.Errorf("%w: %w", ErrFailed, *p)
	}
	return nil
}

// outOfSync returns ErrOutOfSync (with the write error that caused it)
// while an append failure is not yet covered by a snapshot.
func (d *DB) outOfSync() error {
	if d.writeErrs.Load() <= d.coveredErrs.Load() {
		return nil
	}
	if p := d.lastWriteErr.Load(); p != nil {
		return fmt.Errorf("%w: %w", ErrOutOfSync, *p)
	}
	return ErrOutOfSync
}

// LastWriteOK reports whether the AOF accepts writes: false from a failed
// append (ENOSPC, another write error) until a snapshot covers it, and for
// good after a failed fsync ([ErrFailed]); true otherwise, also after Close.
// It is what INFO reports as aof_last_write_status (ok/err). Lock-free.
func (d *DB) LastWriteOK() bool { return d.failure() == nil && d.outOfSync() == nil }

// WriteGate reports whether writes are accepted: nil, or the error every
// write gets (ErrFailed after an fsync failure, ErrOutOfSync after a failed
// append until a snapshot succeeds, ErrClosed). It implements
// keyspace.WriteGater, so the store refuses a write before changing
// anything.
func (d *DB) WriteGate() error {
	if d.fileGen.Load() == 0 {
		return ErrClosed
	}
	if err := d.failure(); err != nil {
		return err
	}
	return d.outOfSync()
}

// fsync fsyncs an AOF file, counting and timing it.
func (d *DB) fsync(f *os.File) error {
	t0 := time.Now()
	err := f.Sync()
	el := time.Since(t0)
	d.fsyncs.Add(1)
	d.fsyncNanos.Add(uint64(el))
	for {
		m := d.fsyncMax.Load()
		if int64(el) <= m || d.fsyncMax.CompareAndSwap(m, int64(el)) {
			break
		}
	}
	if h := d.onFsync.Load(); h != nil {
		(*h)(el)
	}
	return err
}

// SetOnFsync replaces the fsync observer (see Options.OnFsync); nil
// removes it. Safe to call at any time. Fsyncs before it (Open fsyncs the
// AOF it recovers) are counted by Fsyncs but not seen by the new observer:
// pass Options.OnFsync for an observer that sees them all.
func (d *DB) SetOnFsync(f func(time.Duration)) {
	if f == nil {
		d.onFsync.Store(nil)
		return
	}
	d.onFsync.Store(&f)
}

// FsyncStats returns the number of fsyncs of AOF files, the total time
// spent in them and the longest one since Open.
func (d *DB) FsyncStats() (count uint64, total, longest time.Duration) {
	return d.fsyncs.Load(), time.Duration(d.fsyncNanos.Load()), time.Duration(d.fsyncMax.Load())
}

// Close waits for a running snapshot, then flushes, fsyncs and closes the
// AOF and releases the directory lock. It is idempotent: later calls return
// the first call's result. Append and Snapshot fail with ErrClosed after it.
func (d *DB) Close() error {
	d.closeOnce.Do(func() { d.closeErr = d.close() })
	return d.closeErr
}

func (d *DB) close() error {
	d.mu.Lock()
	d.closing = true
	d.mu.Unlock()
	d.snapWG.Wait()
	close(d.stop)
	d.bgWG.Wait()

	d.wmu.Lock()
	defer d.wmu.Unlock()
	werr := d.flushLocked()
	d.mu.Lock()
	d.fmu.Lock()
	var err error
	target := d.seq.Load()
	if werr != nil && !errors.Is(werr, ErrClosed) {
		err = werr
	}
	if d.f != nil {
		if e := d.fsync(d.f); e != nil && err == nil {
			err = fmt.Errorf("persist: fsync %s: %w", d.f.Name(), e)
		}
		if e := d.f.Close(); e != nil && err == nil {
			err = fmt.Errorf("persist: close %s: %w", d.f.Name(), e)
		}
		d.f = nil
		d.fileGen.Store(0)
	}
	d.fmu.Unlock()
	d.mu.Unlock()
	if err == nil {
		d.advanceSynced(target)
	} else {
		d.setFailed(err)
	}
	unlockDir(d.lock)
	return err
}

// InProgress reports whether a snapshot is running.
func (d *DB) InProgress() bool { return d.snapping.Load() }

// LastSave returns the time of the last successful snapshot, or the time
// Open returned if there was none since (as Redis's LASTSAVE).
func (d *DB) LastSave() time.Time { return time.Unix(0, d.lastSave.Load()) }

// LastSaveOK reports whether the last snapshot succeeded (true before the
// first one).
func (d *DB) LastSaveOK() bool { return d.lastSaveOK.Load() }

// AOFSize returns the bytes of the AOF generations that recovery would
// replay (every generation since the last snapshot's cut, headers included).
func (d *DB) AOFSize() int64 { return d.aofSize.Load() }

// LastSeq returns the sequence number of the last record appended (by
// Append or a transaction unit), 0 before the first: the highest Wait
// accepts. One atomic load.
func (d *DB) LastSeq() uint64 { return d.seq.Load() }

// Written returns the highest sequence number up to which no record is
// buffered: every record up to it was written to the file, or dropped
// after a write error that Wait reports for it. One atomic load.
func (d *DB) Written() uint64 { return d.written.Load() }

// Changes returns the number of records in the AOF since the last
// successful snapshot's cut, including those replayed by Open.
func (d *DB) Changes() uint64 { return d.changes.Load() }

// Fsyncs returns how many fsync calls were made on AOF files (for metrics
// and tests).
func (d *DB) Fsyncs() uint64 { return d.fsyncs.Load() }

// Generation returns the current AOF generation.
func (d *DB) Generation() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gen
}

// Dir returns the data directory.
func (d *DB) Dir() string { return d.dir }

// syncDir fsyncs a directory so that creates, renames and removes in it are
// durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (d *DB) path(name string) string { return filepath.Join(d.dir, name) }
