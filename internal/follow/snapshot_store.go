package follow

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// SnapshotConfig is the "snapshot" object of the --follow configuration:
// publishing follower snapshots to a JetStream object store, and
// bootstrapping an empty replica from the newest one. Example:
//
//	"snapshot": {"bucket": "probly-snapshots", "interval": "60s", "publish": true}
//
// A replica bootstraps when it starts with no position key and none of the
// followed keys (a new or wiped data directory): it loads the newest
// snapshot of the stream, then follows from the snapshot's position + 1,
// instead of replaying the stream from its start (which retention may have
// truncated). Publishing can be on for one replica or for each: every
// replica publishes under the same object name, and a replica does not
// replace a snapshot that is at least as new as its own position.
type SnapshotConfig struct {
	// Bucket is the object store bucket; default "probly-snapshots".
	// Letters, digits, '-' and '_' only. The object is named
	// "probly/follow/<stream>".
	Bucket string `json:"bucket"`
	// Interval between two snapshots of a publishing replica, a Go
	// duration ("60s", "5m"); default 60s, at least 1s. A snapshot is
	// taken only if the position moved since the published one.
	Interval string `json:"interval"`
	// Publish makes this replica publish snapshots; default false.
	Publish bool `json:"publish"`
	// Bootstrap makes an empty replica load the newest snapshot at
	// start-up; default true. Without a snapshot in the bucket it replays
	// the stream as before.
	Bootstrap *bool `json:"bootstrap"`
	// Replicas of the bucket when the publisher creates it (it is created
	// if missing, file storage); 1 … 5, default 1. `probly follow init`
	// creates it with the stream's replicas.
	Replicas int `json:"replicas"`
	// MaxBytes bounds the snapshot a replica publishes or loads, in bytes;
	// default 1 TiB (a sanity bound: publishing and loading stream the
	// object, so their memory does not grow with it). A larger snapshot
	// is not uploaded, a larger object is refused before it is read, both
	// with ErrSnapshotTooLarge naming snapshot.max_bytes.
	MaxBytes int64 `json:"max_bytes"`

	interval time.Duration // parsed Interval
	// spoolDir holds the publisher's temporary copy of a snapshot while
	// it uploads (the data directory; "" = os.TempDir()).
	spoolDir string
}

// Snapshot defaults.
const (
	DefaultSnapshotBucket   = "probly-snapshots"
	DefaultSnapshotInterval = 60 * time.Second
	DefaultSnapshotMaxBytes = 1 << 40
	// snapshotIOTimeout bounds a bootstrap until the object's size is
	// known; from then on it is bounded by uploadTimeout(size) plus this.
	snapshotIOTimeout = 30 * time.Second
	// snapshotMinRate is the slowest upload throughput accepted (bytes/s)
	// and snapshotBaseTimeout the fixed part of an upload's bound.
	snapshotMinRate     = 4 << 20
	snapshotBaseTimeout = 10 * time.Second
)

// uploadTimeout bounds publishing a snapshot of n bytes: a few seconds
// plus n at snapshotMinRate, so that a stalled or dead NATS node costs
// seconds for a small snapshot, not minutes; the next snapshot cycle
// retries.
func uploadTimeout(n int64) time.Duration {
	return snapshotBaseTimeout + time.Duration(n/snapshotMinRate)*time.Second +
		time.Duration(n%snapshotMinRate)*time.Second/snapshotMinRate
}

// normalize applies the defaults and validates c. Errors name the field
// (`"snapshot.interval" …`).
func (c *SnapshotConfig) normalize() error {
	if c.Bucket == "" {
		c.Bucket = DefaultSnapshotBucket
	}
	if err := checkBucketName(c.Bucket); err != nil {
		return fmt.Errorf(`"snapshot.bucket": %w`, err)
	}
	if c.Interval == "" {
		c.interval = DefaultSnapshotInterval
	} else {
		d, err := time.ParseDuration(c.Interval)
		if err != nil || d < time.Second {
			return fmt.Errorf(`"snapshot.interval" must be a duration of at least 1s ("60s", "5m"), not %q`, c.Interval)
		}
		c.interval = d
	}
	if c.Bootstrap == nil {
		v := true
		c.Bootstrap = &v
	}
	switch {
	case c.Replicas == 0:
		c.Replicas = 1
	case c.Replicas < 1 || c.Replicas > 5:
		return fmt.Errorf(`"snapshot.replicas" must be in [1, 5], not %d`, c.Replicas)
	}
	switch {
	case c.MaxBytes == 0:
		c.MaxBytes = DefaultSnapshotMaxBytes
	case c.MaxBytes < 64:
		return fmt.Errorf(`"snapshot.max_bytes" must be at least 64, not %d`, c.MaxBytes)
	}
	return nil
}

// Every returns the interval between publications (after normalize).
func (c *SnapshotConfig) Every() time.Duration {
	if c.interval == 0 {
		return DefaultSnapshotInterval
	}
	return c.interval
}

// checkBucketName applies JetStream's rule for bucket names.
func checkBucketName(b string) error {
	if b == "" || len(b) > 255 {
		return fmt.Errorf("bucket name of %d bytes", len(b))
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("bucket name %q may contain only letters, digits, '-' and '_'", b)
		}
	}
	return nil
}

// snapshotObjectName is the object holding stream's snapshot.
func snapshotObjectName(stream string) string { return "probly/follow/" + stream }

// metaPosition is the object metadata field holding the snapshot's
// position (so a publisher can compare without downloading).
const metaPosition = "probly-position"

// ensureBucket returns the object store bucket, creating it (file
// storage, replicas, no size limit: MaxBytes 0, the bucket holds one
// object per stream) if it is missing.
func ensureBucket(ctx context.Context, js jetstream.JetStream, bucket string, replicas int) (jetstream.ObjectStore, error) {
	obs, err := js.ObjectStore(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		obs, err = js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      bucket,
			Description: "probly follower snapshots",
			Storage:     jetstream.FileStorage,
			Replicas:    replicas,
		})
		if errors.Is(err, jetstream.ErrBucketExists) { // created meanwhile
			obs, err = js.ObjectStore(ctx, bucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("follow: snapshot: bucket %s: %w", bucket, err)
	}
	return obs, nil
}

// putSnapshot stores the size-byte snapshot r delivers (an encoded
// follower snapshot of stream at position pos) as the newest object for
// stream in bucket, creating the bucket if it is missing (file storage,
// replicas). The object store replaces the previous object of that name
// and records the bytes' SHA-256 digest; the position goes in the
// object's metadata. A JetStream storage limit (the bucket's max_bytes,
// the account's or the server's) refuses the upload with an error naming
// it. Cost: one upload of the bytes in 128 KiB chunks, streamed from r.
func putSnapshot(ctx context.Context, js jetstream.JetStream, bucket string, replicas int, stream string, pos uint64, size int64, r io.Reader) (*jetstream.ObjectInfo, error) {
	obs, err := ensureBucket(ctx, js, bucket, replicas)
	if err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, "OBJ_"+bucket)
	if err != nil {
		return nil, fmt.Errorf("follow: snapshot: bucket %s: %w", bucket, err)
	}
	info, err := obs.Put(ctx, jetstream.ObjectMeta{
		Name:        snapshotObjectName(stream),
		Description: "probly follower snapshot (docs/FORMATS.md, Follower snapshot)",
		Metadata:    map[string]string{metaPosition: strconv.FormatUint(pos, 10)},
		Opts:        &jetstream.ObjectMetaOptions{ChunkSize: uploadChunk},
	}, &pacedReader{ctx: ctx, r: r, st: st, base: st.CachedInfo().State.LastSeq})
	if err != nil {
		return nil, fmt.Errorf("follow: snapshot: storing %d bytes in bucket %s%s: %w", size, bucket, storageLimit(ctx, js, bucket, err), err)
	}
	return info, nil
}

// Upload pacing. ObjectStore.Put publishes every chunk asynchronously
// and fails ("stalled with too many outstanding async published
// messages") when 4000 chunks (500 MiB) are unacknowledged for 200 ms,
// which a snapshot of more than 500 MiB reaches whenever the server
// stores more slowly than the client sends. pacedReader keeps at most
// uploadWindow chunks in flight.
const (
	uploadChunk  = 128 << 10 // bytes per chunk (the object store's default)
	uploadWindow = 1024      // chunks in flight at most (128 MiB)
	uploadCheck  = 256       // chunks between two looks at the stream
)

// pacedReader reads r for ObjectStore.Put: every uploadCheck chunks it
// waits until the bucket's stream st holds all but uploadWindow of the
// chunks read so far (its last sequence beyond base, the last sequence
// before the upload; another writer's messages only end a wait sooner).
type pacedReader struct {
	ctx  context.Context
	r    io.Reader
	st   jetstream.Stream
	base uint64
	n    int64 // bytes read
	next int64 // chunk count at the next look
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if chunks := p.n / uploadChunk; chunks >= p.next {
		for {
			info, err := p.st.Info(p.ctx)
			if err != nil {
				return 0, fmt.Errorf("follow: snapshot: pacing the upload: %w", err)
			}
			if stored := int64(info.State.LastSeq - min(info.State.LastSeq, p.base)); stored+uploadWindow >= chunks {
				break
			}
			select {
			case <-p.ctx.Done():
				return 0, p.ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
		p.next = chunks + uploadCheck
	}
	n, err := p.r.Read(b)
	p.n += int64(n)
	return n, err
}

// storageLimit explains a JetStream storage refusal (maximum bytes
// exceeded, insufficient storage): the bucket's max_bytes, and that the
// account's and the server's limits apply too; "" for other errors.
func storageLimit(ctx context.Context, js jetstream.JetStream, bucket string, err error) string {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || (apiErr.ErrorCode != 10077 && apiErr.ErrorCode != 10047 && apiErr.ErrorCode != 10023) {
		return ""
	}
	limit := "unknown"
	if st, err := js.Stream(ctx, "OBJ_"+bucket); err == nil {
		limit = strconv.FormatInt(st.CachedInfo().Config.MaxBytes, 10)
	}
	return fmt.Sprintf(" (a JetStream storage limit was hit: the bucket's max_bytes is %s, -1 for none; the account's and the server's storage limits apply too)", limit)
}

// publishedPosition returns the position recorded with stream's newest
// object in bucket: ErrNoSnapshot if there is none, 0 if its metadata has
// no valid position.
func publishedPosition(ctx context.Context, js jetstream.JetStream, bucket, stream string) (uint64, error) {
	obs, err := js.ObjectStore(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return 0, ErrNoSnapshot
	}
	if err != nil {
		return 0, fmt.Errorf("follow: snapshot: bucket %s: %w", bucket, err)
	}
	info, err := obs.GetInfo(ctx, snapshotObjectName(stream))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return 0, ErrNoSnapshot
	}
	if err != nil {
		return 0, fmt.Errorf("follow: snapshot: bucket %s: %w", bucket, err)
	}
	p, _ := strconv.ParseUint(info.Metadata[metaPosition], 10, 64)
	return p, nil
}

// getSnapshot opens stream's newest snapshot in bucket for reading and
// returns the reader and the object's size. It returns ErrNoSnapshot if
// the bucket or the object does not exist, ErrSnapshotTooLarge (before
// reading) if the object is larger than maxBytes. The reader checks, at
// the end, the object's SHA-256 digest (ErrSnapshotChecksum) and its size
// (ErrSnapshotTruncated); the bytes are not decoded (snapReader does).
// Close it when done. Cost: one download, streamed.
func getSnapshot(ctx context.Context, js jetstream.JetStream, bucket, stream string, maxBytes int64) (io.ReadCloser, int64, error) {
	obs, err := js.ObjectStore(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, 0, fmt.Errorf("%w: no bucket %s", ErrNoSnapshot, bucket)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("follow: snapshot: bucket %s: %w", bucket, err)
	}
	name := snapshotObjectName(stream)
	meta, err := obs.GetInfo(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, 0, fmt.Errorf("%w: bucket %s holds no snapshot of stream %s", ErrNoSnapshot, bucket, stream)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("follow: snapshot: reading from bucket %s: %w", bucket, err)
	}
	if meta.Size > uint64(maxBytes) {
		return nil, 0, fmt.Errorf("%w: the object has %d bytes, snapshot.max_bytes is %d", ErrSnapshotTooLarge, meta.Size, maxBytes)
	}
	// The object store bounds a download whose context has no deadline by
	// the client's default timeout (5 s) for the whole object, which a
	// large snapshot or a loaded machine exceeds: give it the bound of a
	// transfer at the slowest rate accepted instead (as uploads have).
	gctx, cancel := context.WithTimeout(ctx, snapshotIOTimeout+uploadTimeout(int64(min(meta.Size, math.MaxInt64))))
	res, err := obs.Get(gctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		cancel()
		return nil, 0, fmt.Errorf("%w: bucket %s holds no snapshot of stream %s", ErrNoSnapshot, bucket, stream)
	}
	if err != nil {
		cancel()
		return nil, 0, fmt.Errorf("follow: snapshot: reading from bucket %s: %w", bucket, err)
	}
	fail := func(err error) (io.ReadCloser, int64, error) {
		res.Close()
		cancel()
		return nil, 0, err
	}
	info, err := res.Info()
	if err != nil {
		return fail(fmt.Errorf("follow: snapshot: reading from bucket %s: %w", bucket, err))
	}
	if info.Size > uint64(maxBytes) { // replaced since GetInfo
		return fail(fmt.Errorf("%w: the object has %d bytes, snapshot.max_bytes is %d", ErrSnapshotTooLarge, info.Size, maxBytes))
	}
	want, err := jetstream.DecodeObjectDigest(info.Digest)
	if err != nil || len(want) != sha256.Size {
		return fail(fmt.Errorf("%w: the object has no valid SHA-256 digest", ErrSnapshotChecksum))
	}
	return &digestReader{res: res, cancel: cancel, h: sha256.New(), want: want, size: int64(info.Size), bucket: bucket}, int64(info.Size), nil
}

// digestReader reads an object and, at its end, checks its size and
// SHA-256 digest (the object store's reader checks the digest too; this
// one does not depend on it).
type digestReader struct {
	res    jetstream.ObjectResult
	cancel context.CancelFunc // the download's bound
	h      hash.Hash
	want   []byte
	size   int64
	n      int64
	bucket string
}

func (d *digestReader) Read(p []byte) (int, error) {
	n, err := d.res.Read(p)
	d.h.Write(p[:n])
	d.n += int64(n)
	switch {
	case errors.Is(err, jetstream.ErrDigestMismatch):
		return n, fmt.Errorf("%w: the object's SHA-256 digest does not match its bytes", ErrSnapshotChecksum)
	case d.n > d.size:
		return n, fmt.Errorf("%w: more than the object's %d bytes arrived", ErrSnapshotCorrupt, d.size)
	case errors.Is(err, io.EOF) && d.n < d.size:
		return n, fmt.Errorf("%w: %d of the object's %d bytes arrived", ErrSnapshotTruncated, d.n, d.size)
	case errors.Is(err, io.EOF) && !bytes.Equal(d.h.Sum(nil), d.want):
		return n, fmt.Errorf("%w: the object's SHA-256 digest does not match its bytes", ErrSnapshotChecksum)
	case err != nil && !errors.Is(err, io.EOF):
		return n, fmt.Errorf("follow: snapshot: reading from bucket %s: %w", d.bucket, err)
	}
	return n, err
}

func (d *digestReader) Close() error {
	err := d.res.Close()
	d.cancel()
	return err
}

// snapKeys lists the followed keys for capture and restore.
func (f *Follower) snapKeys() []keyInfo {
	out := make([]keyInfo, len(f.keys))
	for i, k := range f.keys {
		out[i] = keyInfo{name: k.name, typ: k.typ}
	}
	return out
}

// publishSnapshot captures the followed keys at the position in the
// position key and stores the snapshot in sc.Bucket (created if missing).
// Call it from the follower goroutine between batches, so the keys and the
// position are consistent (clients cannot write followed keys); it blocks
// that goroutine while it captures and uploads. It does nothing if no
// position was written yet, or if the bucket already holds a snapshot at
// the same or a later position (another replica's, or this one's) that
// still fits the stream (not beyond its last sequence, as after the
// stream was recreated). Errors: readPositionKey's, capture's,
// ErrSnapshotTooLarge (over sc.MaxBytes), NATS errors; nothing changes
// locally either way, so the caller logs and retries at the next interval.
// Cost: one SCANDUMP per chunk of every followed key, written to a
// temporary file (memory: one chunk), one upload streamed from it.
func (f *Follower) publishSnapshot(ctx context.Context, sc *SnapshotConfig) error {
	upload, err := f.captureSnapshot(ctx, sc)
	if err != nil || upload == nil {
		return err
	}
	return upload(ctx)
}

// captureSnapshot is publishSnapshot's first half, run on the follower's
// goroutine (the keys and the position do not move meanwhile). It touches
// only the local key space and a temporary file (no NATS request, so a
// slow or lost NATS reply cannot stop the follower from applying): it
// writes the snapshot record by record to an unlinked temporary file in
// sc.spoolDir (the data directory; disk: the snapshot's size, memory: one
// chunk) and returns the upload to run next, on any goroutine, which
// streams the file into the object store and closes it; nil when there
// is no position yet.
func (f *Follower) captureSnapshot(ctx context.Context, sc *SnapshotConfig) (func(context.Context) error, error) {
	if f.js == nil {
		return nil, errors.New("follow: snapshot: not connected to NATS")
	}
	pos, ok, err := readPositionKey(f.d.Store, f.cfg.PositionKey)
	if err != nil || !ok || pos == 0 {
		return nil, err
	}
	spool, err := os.CreateTemp(sc.spoolDir, "probly-follow-snapshot-*")
	if err != nil {
		return nil, fmt.Errorf("follow: snapshot: creating the temporary file: %w", err)
	}
	// Unlinked at once: the space is freed when the upload closes it,
	// also after a crash (where the system allows removing an open file).
	_ = os.Remove(spool.Name())
	r := newTableRunner(f.d.Table, f.d.Store, f.d.Config, f.d.Server)
	size, err := captureTo(r.run, &limitWriter{w: spool, max: sc.MaxBytes}, f.cfg.Stream, f.snapKeys(), pos)
	if err != nil {
		spool.Close()
		return nil, err
	}
	// The upload: skipped if the bucket already holds a snapshot at the
	// same or a later position that still fits the stream.
	return func(ctx context.Context) error {
		defer spool.Close()
		ctx, cancel := context.WithTimeout(ctx, uploadTimeout(size))
		defer cancel()
		if newest, err := publishedPosition(ctx, f.js, sc.Bucket, f.cfg.Stream); err == nil && newest >= pos {
			st, err := f.js.Stream(ctx, f.cfg.Stream)
			if err != nil {
				return fmt.Errorf("follow: snapshot: stream %s: %w", f.cfg.Stream, err)
			}
			if newest <= st.CachedInfo().State.LastSeq {
				return nil
			}
		}
		_, err := putSnapshot(ctx, f.js, sc.Bucket, sc.Replicas, f.cfg.Stream, pos, size, io.NewSectionReader(spool, 0, size))
		return err
	}, nil
}

// limitWriter writes to w and fails with ErrSnapshotTooLarge once more
// than max bytes were written (snapshot.max_bytes).
type limitWriter struct {
	w   io.Writer
	n   int64
	max int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n += int64(len(p)); l.n > l.max {
		return 0, fmt.Errorf("%w: the snapshot exceeds snapshot.max_bytes (%d bytes)", ErrSnapshotTooLarge, l.max)
	}
	return l.w.Write(p)
}

// errBootstrapTimeout: a bootstrap took longer than its bound; it wraps
// context.DeadlineExceeded, so the caller retries it as transient.
var errBootstrapTimeout = fmt.Errorf("follow: snapshot: loading took longer than 30 s plus 1 s per 4 MiB: %w", context.DeadlineExceeded)

// bootstrap loads the newest snapshot of the stream from sc.Bucket into an
// empty replica and returns its position: the follower then delivers from
// pos + 1 (set f.logged and f.applied to pos). Call it from Start after
// connecting (f.js set) and before prepareKey (which then finds the
// loaded keys and marks them written), only when the position key is
// missing and no followed key exists; restore refuses otherwise.
//
// It returns (false, 0, nil) when sc.Bootstrap is off or the bucket holds
// no snapshot of the stream: replay the stream as before. Any error means
// nothing was loaded (restore removes what it began to load), except that
// an error from Deps.Wait (the AOF is not durable) leaves the loaded keys
// in memory: Start should then fail, as for any AOF failure. Refusals
// before anything is loaded: getSnapshot's (ErrSnapshotTooLarge,
// ErrSnapshotChecksum, …), the header's (newSnapReader), ErrSnapshotStream (another
// stream; a missing stream; a position beyond the stream's last sequence,
// as when the stream was recreated; or before its first, when retention
// removed messages after the snapshot), ErrSnapshotKeys. NATS errors that
// pass (transient reports which) are returned wrapped, for the caller to
// retry. The caller may log the error and
// fall back to replaying the stream. A snapshot damaged after its header
// (checksum, truncation, structure) is refused as it is read, and the
// keys loaded so far are deleted again (restoreFrom). The whole load is
// bounded by 30 s until the object's size is known, then by 30 s plus the
// transfer at 4 MiB/s (uploadTimeout); past it, errBootstrapTimeout
// (transient: retried). Cost: one download,
// streamed and decoded record by record (memory: one record; a version 2
// record is one chunk of at most 16 MiB), one command per chunk, one
// Wait.
func (f *Follower) bootstrap(ctx context.Context, sc *SnapshotConfig) (loaded bool, pos uint64, err error) {
	if sc.Bootstrap != nil && !*sc.Bootstrap {
		return false, 0, nil
	}
	if f.js == nil {
		return false, 0, errors.New("follow: snapshot: not connected to NATS")
	}
	// The bound: snapshotIOTimeout until the size is known, then the
	// transfer at the slowest rate accepted (as an upload) on top.
	ictx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(snapshotIOTimeout, func() { cancel(errBootstrapTimeout) })
	defer timer.Stop()
	defer func() {
		if err != nil && errors.Is(context.Cause(ictx), errBootstrapTimeout) {
			err = fmt.Errorf("%w (%w)", errBootstrapTimeout, err)
		}
	}()
	obj, size, err := getSnapshot(ictx, f.js, sc.Bucket, f.cfg.Stream, sc.MaxBytes)
	if errors.Is(err, ErrNoSnapshot) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	timer.Reset(snapshotIOTimeout + uploadTimeout(size))
	defer obj.Close()
	d, err := newSnapReader(obj, size)
	if err != nil {
		return false, 0, err
	}
	h := d.hdr
	st, err := f.js.Stream(ictx, f.cfg.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return false, 0, fmt.Errorf("%w: stream %s: %w", ErrSnapshotStream, f.cfg.Stream, err)
	}
	if err != nil {
		// A timeout, no responders, a reconnecting connection: the
		// caller retries (transient).
		return false, 0, fmt.Errorf("follow: snapshot: looking up stream %s: %w", f.cfg.Stream, err)
	}
	state := st.CachedInfo().State
	switch {
	case h.position > state.LastSeq:
		return false, 0, fmt.Errorf("%w: the snapshot is at position %d, the stream ends at %d (was it recreated?)",
			ErrSnapshotStream, h.position, state.LastSeq)
	case state.FirstSeq > h.position+1:
		return false, 0, fmt.Errorf("%w: the snapshot is at position %d, the stream starts at %d (retention removed messages after it)",
			ErrSnapshotStream, h.position, state.FirstSeq)
	}
	r := newTableRunner(f.d.Table, f.d.Store, f.d.Config, f.d.Server)
	pos, err = restoreFrom(r.run, d, f.cfg.Stream, f.snapKeys(), f.cfg.PositionKey)
	if err != nil {
		return false, 0, err
	}
	if err := f.d.Wait(r.maxSeq); err != nil {
		return false, 0, fmt.Errorf("follow: snapshot: the AOF is not durable: %w", err)
	}
	return true, pos, nil
}
