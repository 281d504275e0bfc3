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
	// ErrMissingGeneration reports a gap in the AOF generations that
	// recovery needs (for example appendonly.1.aof deleted without a
	// snapshot that covers it).
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
	// succeeds; the automatic scheduler (StartAuto) retries one every 5 s.
	ErrOutOfSync = errors.New("persist: writes refused since an AOF write failed; they resume once a snapshot succeeds (retried every 5 s, or run BGSAVE after freeing disk space)")
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
}

// Decoder turns a snapshot record back into a value; typeName is
// keyspace.Value.TypeName(). data belongs to the decoder (it may retain it).
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
	dir    string
	log    *slog.Logger
	policy fsyncPolicy
	lock   *os.File

	// mu guards the writer: the current file, its offset and generation,
	// sequence assignment, and closing.
	mu      sync.Mutex
	f       *os.File // current AOF, O_APPEND; nil after Close
	gen     uint64   // generation of f
	off     int64    // bytes of f known to be well-formed
	closing bool
	seq     atomic.Uint64 // last sequence number handed out (written under mu)

	// fmu protects the lifetime of a file handle being fsynced outside mu:
	// fsyncers hold it shared, rotation and Close hold it exclusively
	// before closing the handle. Lock order: mu, then fmu, then smu.
	fmu     sync.RWMutex
	fileGen atomic.Uint64 // generation of the open file, 0 when closed

	// smu guards group commit.
	smu     sync.Mutex
	scond   *sync.Cond
	synced  uint64 // every seq <= synced is fsynced
	syncing bool   // a leader is fsyncing

	failed atomic.Pointer[error] // sticky I/O failure (ErrFailed)

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
	lastTry    atomic.Int64 // unix nanoseconds of the last snapshot attempt
	baseSize   atomic.Int64 // bytes of dump.pdb as last written or found
	stats      snapStats
	auto       autoState

	snapWG    sync.WaitGroup // running snapshots
	stop      chan struct{}  // closes the everysec loop
	bgWG      sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	bufPool sync.Pool // *[]byte frame buffers
}

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
		dir:    opts.Dir,
		log:    logger,
		policy: policy,
		lock:   lock,
		stop:   make(chan struct{}),
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
	if policy == policyEverySec {
		d.bgWG.Add(1)
		go d.everySecLoop()
	}
	return d, nil
}

// Append writes one record (a mutating command in canonical form) to the
// AOF and returns its sequence number, for Wait. When Append returns nil,
// the record is in the operating system's page cache (no fsync). It is
// safe for concurrent callers; records are ordered by the call order.
// It implements keyspace.Logger.
//
// On error the record is not in the log (partial bytes are cut off again)
// and the caller must not acknowledge the mutation: the server replies
// with an error. After ErrFailed every Append fails.
func (d *DB) Append(args [][]byte) (seq uint64, err error) {
	psize, err := payloadSize(args)
	if err != nil {
		return 0, err
	}
	bp, _ := d.bufPool.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	buf := appendFrame((*bp)[:0], args, psize)
	defer func() {
		if cap(buf) <= 64<<10 { // don't keep huge buffers alive
			*bp = buf[:0]
			d.bufPool.Put(bp)
		}
	}()

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil {
		return 0, ErrClosed
	}
	if err := d.failure(); err != nil {
		return 0, err
	}
	if err := d.outOfSync(); err != nil {
		// The caller may have changed memory before logging (it passed
		// WriteGate before the failure): that change is in no file either,
		// so a snapshot whose cut came before this call does not cover it.
		d.writeErrs.Add(1)
		return 0, err
	}
	n, werr := d.f.Write(buf)
	if werr != nil {
		if n > 0 {
			// Cut the partial frame off so the file stays well-formed and
			// the next record does not follow garbage. With O_APPEND the
			// next write goes to the new end.
			if terr := d.f.Truncate(d.off); terr != nil {
				d.setFailed(fmt.Errorf("cut partial record off %s after write error (%v): %w", d.f.Name(), werr, terr))
			}
		}
		err := fmt.Errorf("persist: append to %s: %w", d.f.Name(), werr)
		// The caller may already have changed memory (BF.ADD sets bits
		// before logging): refuse writes until a snapshot catches up.
		d.lastWriteErr.Store(&err)
		d.writeErrs.Add(1)
		d.log.Error("persist: AOF write failed; refusing writes until a snapshot succeeds", "err", err)
		return 0, err
	}
	d.off += int64(n)
	d.aofSize.Add(int64(n))
	d.changes.Add(1)
	return d.seq.Add(1), nil
}

// Wait blocks until every record with a sequence number <= seq is fsynced,
// with Fsync "always". Concurrent waiters share fsyncs (group commit): at
// most one fsync runs at a time and it covers every record written before
// it started. With "everysec" and "no", and for seq 0, it returns nil at
// once.
func (d *DB) Wait(seq uint64) error {
	if d.policy != policyAlways || seq == 0 {
		return nil
	}
	if seq > d.seq.Load() {
		return fmt.Errorf("%w: %d (last is %d)", ErrInvalidSeq, seq, d.seq.Load())
	}
	d.smu.Lock()
	defer d.smu.Unlock()
	for d.synced < seq {
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
		if err != nil && d.synced < seq {
			return err
		}
	}
	return nil
}

// syncOnce fsyncs the current AOF and marks every record written before it
// started as synced.
func (d *DB) syncOnce() error {
	d.mu.Lock()
	f, gen := d.f, d.gen
	target := d.seq.Load()
	d.mu.Unlock()
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
	if target > d.synced {
		d.synced = target
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
			d.smu.Lock()
			dirty := d.seq.Load() > d.synced
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
// removes it. Safe to call at any time.
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

	d.mu.Lock()
	d.fmu.Lock()
	var err error
	target := d.seq.Load()
	if d.f != nil {
		if e := d.fsync(d.f); e != nil {
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
