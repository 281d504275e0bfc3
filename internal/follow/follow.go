// Package follow is `probly serve --follow`: it keeps BF, CF and HLL keys
// in step with a NATS JetStream change stream, by applying each change as a
// canonical command through the server's command table (so it is logged to
// the AOF like any client write and survives restarts).
//
// # Durability and resuming
//
// The position (the stream sequence of the last applied message) lives in
// a string key of the key space (Config.PositionKey), written through the
// command table too, so the AOF and snapshots hold it together with the
// filters, in one order. Because the AOF is append-only and recovery
// restores a prefix of it, the records are ordered so that every possible
// prefix is safe:
//
//   - an add is logged before the position record that covers it: a crash
//     in between re-applies the add (harmless for a Bloom filter and an
//     HLL; an extra copy, a false positive only, for a cuckoo filter);
//   - a cuckoo delete is logged after a position record that covers it: a
//     crash in between skips the delete (the item stays, a false
//     positive), and a delete is never applied twice (which could remove
//     another item).
//
// A delete message must follow the add of the same item (as the change
// stream of a database does): deleting an item that was never added can
// remove another item's fingerprint from a cuckoo filter.
//
// Clients cannot write the followed keys or the position key (Owns, the
// server's write guard), and the follower checks before every batch that
// they are all there: followed data found incomplete is deleted and
// rebuilt from a snapshot (snapshot.go) or the start of the stream, never
// resumed with a hole.
//
// The follower reads the stream through a natsstream.Reader: an
// ephemeral consumer without acknowledgements, created to deliver from the
// applied position + 1, whose every message is checked for consumer- and
// stream-sequence continuity; on any break (a missed message, a consumer
// deleted or reset with its node, a lost connection, missed heartbeats)
// it is recreated after the last message taken. The local position is the
// only truth: nothing on the NATS side has to remember it, so no message
// is skipped or applied twice, whatever the crash, and any replica (or a
// copy of its data directory) can follow from any node of the cluster.
// Messages are applied as they arrive; a burst is applied in batches of at
// most Config.Batch.
//
// # Reads while catching up
//
// The followed keys' negatives are trusted (CaughtUp) only while the
// follower has caught up with the stream once since start-up, is not
// halted, has heard from the stream within Config.MaxStale, and (with
// Config.MaxLag) lags by at most MaxLag messages; otherwise BF.EXISTS,
// BF.MEXISTS, CF.EXISTS and CF.MEXISTS on the followed keys answer 1
// (maybe): a filter that is loading or may be missing changes never says
// "definitely absent". The lag is asked of the server (the consumer's
// pending count, the stream's last sequence) every pollInterval, never
// derived from what the follower last received. INFO's Follow section,
// /readyz (with the reason when not ready) and the metrics show it.
//
// Writes of the follower bypass maxmemory (as a Redis replica applies its
// master's writes); the per-filter budgets apply.
//
// # Logs
//
// Nothing of a key's content is logged, as in the rest of the server: log
// lines and errors name a followed key by its index in Config.Keys
// ("keys[1]"; INFO follow_key_1 shows its name), never by name, and never
// carry an item or the position key's value. Failures of the connection
// to an external NATS server are recorded in INFO follow_last_error and
// logged (see connHandlers).
package follow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/probly/probly/guard"
	"github.com/probly/probly/guard/natsstream"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/redisbloom"
	"github.com/probly/probly/internal/rediscuckoo"
	"github.com/probly/probly/internal/strval"
)

// Deps is what the follower needs from the server.
type Deps struct {
	Table  *command.Table
	Config *config.Registry
	Store  *keyspace.Store
	Server command.Server
	// Wait blocks until every AOF record up to seq is as durable as the
	// appendfsync policy promises (persist.DB.Wait).
	Wait   func(seq uint64) error
	Logger *slog.Logger
}

// States of the follower (INFO follow_state).
const (
	StateStarting   = "starting"
	StateConnecting = "connecting"
	// StateBootstrapping: a fresh replica loads the newest snapshot.
	StateBootstrapping = "bootstrapping"
	StateCatchingUp    = "catching_up"
	StateFollowing     = "following"
	StateHalted        = "halted"
	StateStopped       = "stopped"
)

// pollInterval is how often the follower asks the server for the stream's
// state (lag, truncation, contact).
const pollInterval = 250 * time.Millisecond

// Follower applies a JetStream stream to BF, CF and HLL keys. Create it
// with New, then Start; Close stops it.
type Follower struct {
	cfg  *Config
	d    Deps
	log  *slog.Logger
	bind map[string]binding
	keys []*keyState

	embedded *natsstream.Embedded
	nc       *nats.Conn
	js       jetstream.JetStream
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once

	// Owned by the run goroutine.
	logged   uint64       // value last written to the position key
	unsynced uint64       // highest AOF sequence whose Wait failed (0: none)
	runner   *tableRunner // runs the follower's commands (exec)
	args     [][]byte     // scratch for batched commands

	// Shared with readers (INFO, /readyz, EXISTS, FOLLOW.WAIT).
	reader     atomic.Pointer[natsstream.Reader]
	state      atomic.Pointer[string]
	applied    atomic.Uint64
	inflight   atomic.Uint64 // messages taken from the reader, not yet applied
	lag        atomic.Uint64 // from the last successful poll
	streamLast atomic.Uint64
	streamHead atomic.Uint64 // the stream's first sequence
	contact    atomic.Int64  // unix nanos of the last contact with the stream
	caughtUp   atomic.Bool   // caught up since the last (re)start of consumption
	truncated  atomic.Pointer[string]
	lastErr    atomic.Pointer[string]
	replays    atomic.Uint64
	messages   atomic.Uint64
	wake       atomic.Pointer[chan struct{}] // closed when applied moves
	waitsEnd   chan struct{}                 // closed by EndWaits
	endOnce    sync.Once
	// server is the URL of the NATS server the connection is on (nil while
	// disconnected), kept by the connection handlers so that INFO and
	// /readyz never wait for the connection's lock (held while it
	// reconnects or flushes to a stalled server).
	server atomic.Pointer[string]
	// progress is when the applied position last moved or the lag was 0
	// (unix nanos): a follower that hears from the stream but does not
	// apply is as untrusted as one that hears nothing.
	progress atomic.Int64
	started  time.Time

	// Snapshot publishing (Config.Snapshot.Publish): the run goroutine
	// captures, one upload runs at a time in the background.
	nextPublish time.Time
	captured    uint64 // the position of the last capture
	uploading   atomic.Bool
	published   atomic.Uint64 // snapshots uploaded
	publishFail atomic.Uint64 // snapshot captures or uploads that failed
	publishedAt atomic.Int64  // UnixNano of the last upload, 0 if none
}

type keyState struct {
	name string // the key: used in commands, INFO and metric labels, never in logs
	// ref names the key in logs and errors without its content: "keys[i]",
	// its index in Config.Keys (INFO follow_key_<i> shows the name).
	ref            string
	typ            string
	adds, deletes  atomic.Uint64
	ignoredDeletes atomic.Uint64
}

// New validates the configuration against the server and returns a
// follower that has not started.
func New(cfg *Config, d Deps) (*Follower, error) {
	if d.Table == nil || d.Store == nil || d.Wait == nil {
		return nil, errors.New("follow: Deps.Table, Store and Wait are required")
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	f := &Follower{cfg: cfg, d: d, log: d.Logger.With("component", "follow"), bind: cfg.bindings(), done: make(chan struct{})}
	for _, k := range cfg.Keys {
		f.keys = append(f.keys, &keyState{name: k.Key, ref: keyRef(len(f.keys)), typ: k.Type})
	}
	for _, name := range []string{"bf.madd", "bf.add", "bf.reserve", "cf.add", "cf.del", "cf.reserve", "pfadd", "set", "del"} {
		if d.Table.Lookup([]byte(name)) == nil {
			return nil, fmt.Errorf("follow: the command table has no %s", name)
		}
	}
	f.runner = newTableRunner(d.Table, d.Store, d.Config, d.Server)
	f.setState(StateStarting)
	ch := make(chan struct{})
	f.wake.Store(&ch)
	f.waitsEnd = make(chan struct{})
	return f, nil
}

// keyRef names Config.Keys[i] in logs and errors. Nothing of a key's
// content (its name, an item) is logged: the server's rule.
func keyRef(i int) string { return "keys[" + strconv.Itoa(i) + "]" }

func (f *Follower) setState(s string) { f.state.Store(&s) }

// State returns the follower's state (State* constants).
func (f *Follower) State() string { return *f.state.Load() }

func (f *Follower) setErr(err error) {
	s := err.Error()
	f.lastErr.Store(&s)
}

// Start checks the key space (position key, key types), creates missing
// followed keys, starts the embedded NATS server or dials the configured
// one, and starts following in the background. An error means the server
// should not start. Call it after recovery, with the AOF attached to the
// store, and before serving.
//
// Followed data that is incomplete (a followed key missing while the
// position key says changes were applied, or followed keys without a
// position key, as after a partial copy or a manual DEL while stopped) is
// rebuilt: the follower deletes the followed keys and the position and
// follows from the start of the stream, so no change is missing and none
// is applied twice.
func (f *Follower) Start(ctx context.Context) error {
	pos, err := f.readPosition()
	if err != nil {
		return err
	}
	for i := range f.cfg.Keys {
		if err := f.checkType(i); err != nil {
			return err
		}
	}
	if reason := f.incomplete(pos); reason != "" {
		f.log.Warn("follow: followed data is incomplete; rebuilding it from the stream", "reason", reason)
		if err := f.reset(); err != nil {
			return err
		}
		pos = 0
	}
	f.logged = pos
	f.applied.Store(pos)
	f.started = time.Now()
	f.setState(StateConnecting)
	if f.cfg.URL == "" {
		e, err := natsstream.StartEmbedded(natsstream.EmbeddedOptions{
			Dir: f.cfg.Embedded.Dir, Listen: f.cfg.Embedded.Listen, SyncAlways: f.cfg.Embedded.SyncAlways,
		})
		if err != nil {
			return fmt.Errorf("follow: %w", err)
		}
		f.embedded = e
		if f.nc, f.js, err = e.Connect(); err != nil {
			e.Close()
			return fmt.Errorf("follow: %w", err)
		}
		embedded := "embedded"
		f.server.Store(&embedded)
		f.log.Info("embedded NATS JetStream started", "url", e.ClientURL(), "dir", f.cfg.Embedded.Dir)
	} else {
		opts := append(f.connHandlers(), nats.RetryOnFailedConnect(true),
			// A dead node is left quickly: reconnect to another one of the
			// cluster at once, detect a stalled one by pings.
			nats.ReconnectWait(250*time.Millisecond), nats.ReconnectJitter(100*time.Millisecond, time.Second),
			nats.PingInterval(time.Second), nats.MaxPingsOutstanding(2), nats.Timeout(2*time.Second))
		if f.cfg.Creds != "" {
			opts = append(opts, nats.UserCredentials(f.cfg.Creds))
		}
		if f.nc, f.js, err = natsstream.Connect(f.cfg.URL, opts...); err != nil {
			return fmt.Errorf("follow: %w", err)
		}
	}
	rctx, cancel := context.WithCancel(ctx)
	f.cancel = cancel
	fresh := pos == 0
	for _, k := range f.cfg.Keys {
		if ok, _ := f.exists(k.Key); ok {
			fresh = false // keys an operator created: keep them, no snapshot
		}
	}
	go f.run(rctx, fresh)
	go f.poll(rctx)
	return nil
}

// connHandlers make the connection to an external NATS visible: with
// RetryOnFailedConnect the client keeps retrying in the background, so
// without them an unreachable server would leave the follower
// "connecting" with no error and no log. A failed connection attempt, a
// disconnection and an asynchronous error are recorded (INFO
// follow_last_error, every time) and logged at Warn (the first after start
// or after a connection, then at most once a minute while the client keeps
// retrying); connecting and reconnecting are logged at Info with the
// server's URL without user information (ConnectedUrlRedacted). Nothing of
// a message is logged. The client runs the handlers on one goroutine.
func (f *Follower) connHandlers() []nats.Option {
	var mu sync.Mutex
	var lastAt time.Time // last Warn; zero: none since start or a connection
	fail := func(what string, err error) {
		if err == nil {
			return
		}
		err = fmt.Errorf("follow: NATS %s: %w", what, err)
		f.setErr(err)
		mu.Lock()
		logIt := lastAt.IsZero() || time.Since(lastAt) >= time.Minute
		if logIt {
			lastAt = time.Now()
		}
		mu.Unlock()
		if logIt {
			f.log.Warn("follow: NATS connection problem; retrying", "err", err)
		}
	}
	connected := func(what string) nats.ConnHandler {
		return func(nc *nats.Conn) {
			mu.Lock()
			lastAt = time.Time{}
			mu.Unlock()
			u := nc.ConnectedUrlRedacted()
			f.server.Store(&u)
			f.log.Info("follow: NATS "+what, "server", u)
		}
	}
	return []nats.Option{
		nats.ConnectHandler(connected("connected")),
		nats.ReconnectHandler(connected("reconnected")),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) { fail("connection attempt failed", err) }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			f.server.Store(nil)
			fail("disconnected", err)
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { fail("error", err) }),
	}
}

// Close stops following (the batch being applied finishes first), wakes
// every FOLLOW.WAIT, closes the connection and the embedded server. Call
// it before closing the AOF.
func (f *Follower) Close() error {
	f.stopOnce.Do(func() {
		if f.cancel != nil {
			f.cancel()
			<-f.done
		}
		if f.nc != nil {
			f.nc.Close()
		}
		if f.embedded != nil {
			f.embedded.Close()
		}
		f.setState(StateStopped)
		f.caughtUp.Store(false)
		f.notify()
	})
	return nil
}

// EmbeddedURL is the client URL of the embedded NATS server ("" without).
func (f *Follower) EmbeddedURL() string {
	if f.embedded == nil {
		return ""
	}
	return f.embedded.ClientURL()
}

// readPosition reads the position key: 0 if it is missing.
func (f *Follower) readPosition() (uint64, error) {
	pos, _, err := readPositionKey(f.d.Store, f.cfg.PositionKey)
	return pos, err
}

// typeName is the TYPE a followed key of kind typ has.
func typeName(typ string) string {
	switch typ {
	case "cf":
		return "MBbloomCF"
	case "pf":
		return "string"
	}
	return "MBbloom--"
}

// exists reports whether key exists and its type name.
func (f *Follower) exists(key string) (bool, string) {
	exists, typ := false, ""
	f.d.Store.View([]byte(key), func(v keyspace.Value) {
		if v != nil {
			exists, typ = true, v.TypeName()
		}
	})
	return exists, typ
}

// checkType refuses a followed key that holds another type.
func (f *Follower) checkType(i int) error {
	k := f.cfg.Keys[i]
	if ok, typ := f.exists(k.Key); ok && typ != typeName(k.Type) {
		return fmt.Errorf("follow: %s holds a %s, not a %s key", f.keys[i].ref, typ, k.Type)
	}
	return nil
}

// incomplete says why the followed data cannot be resumed from pos, or "".
// Every followed key exists once the follower has started (prepareKey), so
// a missing one was removed behind its back; a followed key that holds
// items without a position (a partial copy of a data directory) would get
// its changes a second time. Empty keys without a position are keys an
// operator created with chosen parameters: they are kept.
func (f *Follower) incomplete(pos uint64) string {
	for _, k := range f.cfg.Keys {
		ok, _ := f.exists(k.Key)
		switch {
		case pos > 0 && !ok:
			return "a followed key is missing although the position key says changes were applied"
		case pos == 0 && ok && !f.empty(k.Key):
			return "a followed key holds items but there is no position key"
		}
	}
	return ""
}

// empty reports whether the followed key holds no item.
func (f *Follower) empty(key string) bool {
	empty, str := false, false
	f.d.Store.View([]byte(key), func(v keyspace.Value) {
		switch x := v.(type) {
		case *redisbloom.Chain:
			empty = x.Card() == 0
		case *rediscuckoo.Filter:
			empty = x.Items() == 0
		case *strval.String:
			str = true
		}
	})
	if str { // an HLL: PFCOUNT (it may update the cached cardinality)
		if reply, _, err := f.runner.do([]byte("PFCOUNT"), []byte(key)); err == nil {
			empty = bytes.Equal(reply, []byte(":0\r\n"))
		}
	}
	return empty
}

// reset deletes every followed key and the position key (logged).
func (f *Follower) reset() error {
	args := [][]byte{[]byte("DEL"), []byte(f.cfg.PositionKey)}
	for _, k := range f.cfg.Keys {
		args = append(args, []byte(k.Key))
	}
	seq, err := f.exec(args...)
	if err == nil {
		err = f.d.Wait(seq)
	}
	if err != nil {
		return fmt.Errorf("follow: resetting the followed keys: %w", err)
	}
	f.logged = 0
	f.applied.Store(0)
	return nil
}

// prepareKey creates a followed key that does not exist: with its
// configured parameters, or the server's bf-*/cf-* defaults (an HLL key
// is created empty), so that from now on a missing key means lost data.
func (f *Follower) prepareKey(k KeyConfig, ks *keyState) error {
	if ok, _ := f.exists(k.Key); ok {
		return nil
	}
	setting := func(name, def string) []byte {
		if f.d.Config == nil {
			return []byte(def)
		}
		if v, ok := f.d.Config.Get(name); ok {
			return []byte(v)
		}
		return []byte(def)
	}
	var args [][]byte
	switch {
	case k.Type == "pf":
		args = [][]byte{[]byte("PFADD"), []byte(k.Key)}
	case k.Type == "bf" && k.Capacity != 0:
		args = [][]byte{[]byte("BF.RESERVE"), []byte(k.Key), []byte(strconv.FormatFloat(k.ErrorRate, 'g', -1, 64)), []byte(strconv.FormatUint(k.Capacity, 10))}
	case k.Type == "bf":
		args = [][]byte{[]byte("BF.RESERVE"), []byte(k.Key), setting("bf-error-rate", "0.01"), setting("bf-initial-size", "100")}
	case k.Capacity != 0:
		args = [][]byte{[]byte("CF.RESERVE"), []byte(k.Key), []byte(strconv.FormatUint(k.Capacity, 10))}
	default:
		args = [][]byte{[]byte("CF.RESERVE"), []byte(k.Key), setting("cf-initial-size", "1024")}
	}
	seq, err := f.exec(args...)
	if err == nil {
		err = f.d.Wait(seq)
	}
	if err != nil {
		return fmt.Errorf("follow: creating %s: %w", ks.ref, err)
	}
	return nil
}

// exec runs one command through the table as the follower's connection and
// returns the AOF sequence it wrote; an error reply (at any depth) is an
// error.
func (f *Follower) exec(args ...[]byte) (uint64, error) {
	_, seq, err := f.runner.do(args...)
	return seq, err
}

// applyError is a failure to apply or persist a change: the follower halts
// and retries the same message.
type applyError struct {
	err error
}

func (e applyError) Error() string { return e.err.Error() }
func (e applyError) Unwrap() error { return e.err }

// errReplay ends a reader: the followed data was rebuilt and the stream
// is read again from the start.
var errReplay = errors.New("follow: replaying the stream from the start")

// run is the follower's goroutine: read the stream from the applied
// position, apply, repeat; on errors back off and read again from the
// applied position, never skipping.
func (f *Follower) run(ctx context.Context, fresh bool) {
	defer close(f.done)
	backoff := time.Duration(0)
	sleep := func() bool {
		backoff = min(max(2*backoff, 100*time.Millisecond), 10*time.Second)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
			return true
		}
	}
	if fresh {
		f.start(ctx, sleep)
	}
	for i, k := range f.cfg.Keys {
		for {
			err := f.prepareKey(k, f.keys[i])
			if err == nil || ctx.Err() != nil {
				break
			}
			f.setErr(err)
			f.setState(StateHalted)
			f.log.Error("follow: creating a followed key failed; retrying", "key", f.keys[i].ref, "err", err)
			if !sleep() {
				return
			}
		}
	}
	backoff = 0
	for ctx.Err() == nil {
		if *f.cfg.CreateStream {
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := natsstream.EnsureStream(sctx, f.js, f.cfg.Stream, f.cfg.subjects())
			cancel()
			if err != nil {
				f.setErr(err)
				f.log.Warn("follow: creating the stream failed; retrying", "err", err)
				if !sleep() {
					return
				}
				continue
			}
		}
		r := natsstream.NewReader(f.js, f.cfg.Stream, f.cfg.subjects(), f.applied.Load(),
			natsstream.ReaderOptions{Buffer: max(1024, 4*f.cfg.Batch)})
		f.reader.Store(r)
		if f.caughtUp.Load() {
			f.setState(StateFollowing)
		} else {
			f.setState(StateCatchingUp)
		}
		err := f.consume(ctx, r)
		r.Close()
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errReplay) {
			backoff = 0
			continue
		}
		f.setErr(err)
		if errors.Is(err, natsstream.ErrTruncated) {
			s := err.Error()
			f.truncated.Store(&s)
			f.setState(StateHalted)
			f.log.Error("follow: the stream no longer holds the changes after the applied position; "+
				"the keys answer maybe (load a snapshot or rebuild)", "applied", f.applied.Load(), "err", err)
			backoff = 5 * time.Second
		} else {
			f.log.Warn("follow: reading stopped; reading again from the applied position", "err", err)
		}
		if !sleep() {
			return
		}
	}
}

// bootstrapAttempts is how many times a fresh replica tries to load the
// newest snapshot, after failures that are not transient, before it
// follows the stream from its start.
const bootstrapAttempts = 5

// start loads the newest snapshot into a fresh replica (no position, no
// followed items). Transient NATS failures (timeouts, no responders, a
// connection that is down) are retried with backoff for as long as they
// last, as the rest of the follower does; a snapshot that is refused
// (corrupt, for another stream or a missing one, not covering a
// truncation) or that fails otherwise bootstrapAttempts times leaves the
// keys empty, and the follower reads the stream from its start (a
// truncated stream then halts it, the keys answering maybe, with the
// reason).
func (f *Follower) start(ctx context.Context, sleep func() bool) {
	f.setState(StateBootstrapping)
	failures := 0
	for try := 1; ; try++ {
		loaded, p, err := f.bootstrap(ctx, &f.cfg.Snapshot) // bounded by the snapshot's size
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			if loaded {
				f.logged = p
				f.applied.Store(p)
				f.log.Info("follow: started from a snapshot", "position", p)
			}
			return
		}
		f.setErr(err)
		// Nothing trusted was loaded: remove what may have been.
		if rerr := f.reset(); rerr != nil {
			f.log.Error("follow: clearing a failed snapshot load failed", "err", rerr)
		}
		if errors.Is(err, ErrSnapshotStream) || errors.Is(err, ErrSnapshotKeys) ||
			errors.Is(err, ErrSnapshotCorrupt) || errors.Is(err, ErrSnapshotChecksum) || errors.Is(err, ErrSnapshotTooLarge) {
			f.log.Warn("follow: the snapshot was refused; following the stream from its start", "err", err)
			return
		}
		tr := transient(err)
		if !tr {
			if failures++; failures == bootstrapAttempts {
				f.log.Warn("follow: starting from a snapshot failed; following the stream from its start", "err", err)
				return
			}
		}
		f.log.Warn("follow: fetching the snapshot failed; retrying", "try", try, "transient", tr, "err", err)
		if !sleep() {
			return
		}
	}
}

// transient reports whether err is a NATS failure that passes: a call
// that timed out (its own deadline: the caller checks its context), no
// responders (the JetStream API is not reachable yet), no response from
// the stream, a connection that is down or reconnecting.
func transient(err error) bool {
	for _, t := range []error{context.DeadlineExceeded, nats.ErrTimeout, nats.ErrNoResponders,
		jetstream.ErrNoStreamResponse, nats.ErrConnectionReconnecting, nats.ErrDisconnected} {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// consume applies what r delivers until ctx ends or r fails. A message
// is applied as soon as it arrives; what arrived meanwhile is applied with
// it, up to Config.Batch.
func (f *Follower) consume(ctx context.Context, r *natsstream.Reader) error {
	pending := make([]natsstream.Message, 0, f.cfg.Batch)
	haltBackoff := time.Duration(0)
	for ctx.Err() == nil {
		// Before every batch: a removed key must not be re-created by an
		// add (CF.ADD creates a missing key) with the earlier items gone.
		if err := f.verify(); err != nil {
			f.replayFromStart(err)
			return errReplay
		}
		if len(pending) == 0 {
			f.maybePublish(ctx)
			wctx, cancel := context.WithTimeout(ctx, time.Second)
			m, err := r.Next(wctx)
			cancel()
			if err != nil {
				if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
					continue
				}
				return err
			}
			pending = append(pending, m)
			for len(pending) < f.cfg.Batch {
				m, ok, err := r.TryNext()
				if !ok {
					if err != nil && len(pending) == 0 {
						return err
					}
					break
				}
				pending = append(pending, m)
			}
			f.inflight.Store(uint64(len(pending)))
		}
		n, err := f.applyBatch(pending)
		f.inflight.Store(uint64(len(pending) - n))
		if n > 0 {
			f.notify()
			if last := pending[n-1]; last.Pending == 0 && n == len(pending) && r.Buffered() == 0 {
				f.markCaughtUp()
			}
		}
		pending = pending[:copy(pending, pending[n:])]
		if err != nil {
			// Halted: keep the rest and retry them; the keys answer maybe.
			f.setErr(err)
			if f.State() != StateHalted {
				f.log.Error("follow: applying a change failed; halted, retrying", "err", err)
			}
			f.setState(StateHalted)
			haltBackoff = min(max(2*haltBackoff, 200*time.Millisecond), 10*time.Second)
			select {
			case <-ctx.Done():
			case <-time.After(haltBackoff):
			}
			continue
		}
		if haltBackoff != 0 {
			haltBackoff = 0
			f.log.Info("follow: applying again")
		}
		if f.caughtUp.Load() {
			f.setState(StateFollowing)
		} else {
			f.setState(StateCatchingUp)
		}
	}
	return ctx.Err()
}

// poll asks the server for the stream's state every pollInterval: the lag
// (what the server has not delivered plus what waits to be applied), the
// stream's first and last sequence, and contact (CaughtUp needs contact
// within MaxStale). A stream that no longer holds the messages after the
// reader's position (retention overtook it) halts the keys' trust.
func (f *Follower) poll(ctx context.Context) {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	var prev uint64
	f.progress.Store(time.Now().UnixNano())
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r := f.reader.Load()
		if r == nil {
			continue
		}
		if c := r.LastContact(); !c.IsZero() && c.UnixNano() > f.contact.Load() {
			f.contact.Store(c.UnixNano())
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		applied := f.applied.Load()
		st, err := r.Info(pctx, applied)
		cancel()
		if err != nil {
			continue
		}
		f.contact.Store(time.Now().UnixNano())
		f.streamLast.Store(st.LastSeq)
		f.streamHead.Store(st.FirstSeq)
		lag := st.Undelivered + f.inflight.Load()
		f.lag.Store(lag)
		if lag == 0 || applied != prev {
			f.progress.Store(time.Now().UnixNano())
		}
		prev = applied
		if st.Known && lag == 0 && f.truncated.Load() == nil {
			f.markCaughtUp()
			if f.State() == StateCatchingUp {
				f.setState(StateFollowing)
			}
		}
		if d := r.Delivered(); st.FirstSeq > d+1 && f.truncated.Load() == nil {
			s := fmt.Sprintf("the stream starts at %d, after the last message read (%d): retention removed changes not yet read", st.FirstSeq, d)
			f.truncated.Store(&s)
			f.log.Error("follow: "+s+"; the keys answer maybe (load a snapshot or rebuild)", "applied", applied)
		}
	}
}

func (f *Follower) markCaughtUp() {
	if !f.caughtUp.Swap(true) {
		f.log.Info("follow: caught up with the stream", "applied", f.applied.Load())
	}
}

// notify wakes the FOLLOW.WAIT callers.
func (f *Follower) notify() {
	ch := make(chan struct{})
	close(*f.wake.Swap(&ch))
}

// EndWaits makes every current and later WaitApplied return the applied
// position at once. The server calls it when shutdown begins, so that
// FOLLOW.WAIT clients get their reply before connections drain.
// Idempotent; safe for concurrent use.
func (f *Follower) EndWaits() { f.endOnce.Do(func() { close(f.waitsEnd) }) }

// WaitApplied blocks until the follower has applied every change up to
// stream position seq (the sequence a publish acknowledgement returns),
// ctx ends, EndWaits is called or the follower stops, and returns the
// applied position then:
// ≥ seq when reached. Reads of the followed keys after it returns ≥ seq
// reflect every change up to seq. Safe for concurrent use; costs one
// channel wait per applied batch.
func (f *Follower) WaitApplied(ctx context.Context, seq uint64) uint64 {
	for {
		ch := *f.wake.Load()
		a := f.applied.Load()
		if a >= seq || f.State() == StateStopped {
			return a
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return f.applied.Load()
		case <-f.waitsEnd:
			return f.applied.Load()
		}
	}
}

// verify checks that nobody removed what the follower wrote: the position
// key and the followed keys (clients cannot, since they are read-only, but
// a snapshot restored behind the follower's back can).
func (f *Follower) verify() error {
	pos, err := f.readPosition()
	if err != nil {
		return err
	}
	if pos != f.logged {
		return fmt.Errorf("follow: the position key holds %d, the follower wrote %d", pos, f.logged)
	}
	for _, ks := range f.keys {
		if ok, _ := f.exists(ks.name); !ok {
			return fmt.Errorf("follow: followed key %s was removed", ks.ref)
		}
	}
	return nil
}

// replayFromStart handles a key space that lost followed data: it deletes
// the followed keys and the position, re-creates the keys and follows from
// the start of the stream (so nothing is applied twice). Until it catches
// up again the keys answer maybe.
func (f *Follower) replayFromStart(reason error) {
	f.log.Warn("follow: replaying the stream from the start", "reason", reason)
	f.replays.Add(1)
	f.caughtUp.Store(false)
	if err := f.reset(); err != nil {
		f.log.Error("follow: resetting the followed keys failed", "err", err)
	}
	for i, k := range f.cfg.Keys {
		if err := f.prepareKey(k, f.keys[i]); err != nil {
			f.log.Error("follow: re-creating a key failed", "key", f.keys[i].ref, "err", err)
		}
	}
}

// batchCommand is the command that applies a run of adds to one key in
// one call, by key type.
var batchCommand = map[string][]byte{"bf": []byte("BF.MADD"), "pf": []byte("PFADD")}

// applyBatch applies msgs in order. It returns how many were processed
// (applied or skipped as already applied) and the error that stopped it.
// Every processed message is covered by the position key and written to
// the AOF (durable per appendfsync) when it returns.
func (f *Follower) applyBatch(msgs []natsstream.Message) (n int, err error) {
	maxSeq := f.unsynced // records of an earlier batch whose Wait failed
	note := func(seq uint64) { maxSeq = max(maxSeq, seq) }
	defer func() {
		// Cover what was applied with a position record, then wait.
		if applied := f.applied.Load(); applied > f.logged {
			seq, perr := f.writePosition(applied)
			note(seq)
			if perr != nil && err == nil {
				err = perr
			}
		}
		if werr := f.d.Wait(maxSeq); werr != nil {
			f.unsynced = maxSeq
			if err == nil {
				err = applyError{fmt.Errorf("follow: the AOF is not durable: %w", werr)}
			}
		} else {
			f.unsynced = 0
		}
	}()
	i := 0
	for i < len(msgs) {
		m := msgs[i]
		seq := m.Seq
		if seq <= f.applied.Load() { // cannot happen with a Reader; be safe
			i++
			continue
		}
		b, ok := f.bind[m.Subject]
		if !ok { // not ours (the consumer filters; be safe)
			f.applied.Store(seq)
			i++
			continue
		}
		ks := f.keys[b.key]
		switch {
		case b.op == guard.OpAdd && batchCommand[ks.typ] != nil:
			// Batch the run of adds to this key into one command.
			j := i + 1
			for j < len(msgs) && j-i < 1024 && f.bind[msgs[j].Subject] == b {
				j++
			}
			args := append(f.args[:0], batchCommand[ks.typ], []byte(ks.name))
			for _, mm := range msgs[i:j] {
				args = append(args, mm.Data)
			}
			f.args = args
			s, e := f.exec(args...)
			note(s)
			clear(f.args)
			if e == nil {
				f.applied.Store(msgs[j-1].Seq)
				ks.adds.Add(uint64(j - i))
				f.messages.Add(uint64(j - i))
				i = j
				continue
			}
			// Find the first item that fails, applying the ones before
			// (re-adding an item the batch added changes nothing).
			for ; i < j; i++ {
				s, e := f.exec(batchCommand[ks.typ], []byte(ks.name), msgs[i].Data)
				note(s)
				if e != nil {
					return i, applyError{fmt.Errorf("follow: adding to %s (message %d): %w", ks.ref, msgs[i].Seq, e)}
				}
				f.applied.Store(msgs[i].Seq)
				ks.adds.Add(1)
				f.messages.Add(1)
			}
			continue
		case b.op == guard.OpAdd:
			s, e := f.exec([]byte("CF.ADD"), []byte(ks.name), m.Data)
			note(s)
			if e != nil {
				return i, applyError{fmt.Errorf("follow: adding to %s (message %d): %w", ks.ref, seq, e)}
			}
			ks.adds.Add(1)
		case ks.typ != "cf":
			// A Bloom filter or an HLL cannot delete: the item stays (a
			// false positive; counted in the cardinality). Nothing to log.
			ks.ignoredDeletes.Add(1)
		default:
			// Position first, then the delete (see the package doc).
			s, e := f.writePosition(seq)
			note(s)
			if e != nil {
				return i, e
			}
			s, e = f.exec([]byte("CF.DEL"), []byte(ks.name), m.Data)
			note(s)
			if e != nil && !bytes.Contains([]byte(e.Error()), []byte("Not found")) {
				// The position already covers this delete: it is skipped
				// (the item stays, a false positive). Report it.
				f.log.Warn("follow: a delete failed and is skipped", "key", ks.ref, "message", seq, "err", e)
			}
			ks.deletes.Add(1)
		}
		f.applied.Store(seq)
		f.messages.Add(1)
		i++
	}
	return i, nil
}

// writePosition records pos in the position key.
func (f *Follower) writePosition(pos uint64) (uint64, error) {
	seq, err := f.exec([]byte("SET"), []byte(f.cfg.PositionKey), strconv.AppendUint(nil, pos, 10))
	if err != nil {
		return seq, applyError{fmt.Errorf("follow: writing the position: %w", err)}
	}
	f.logged = pos
	return seq, nil
}

// maybePublish captures a snapshot of the followed keys when one is due
// (Config.Snapshot.Publish, every Interval, after the first catch-up) and
// uploads it in the background. It runs between batches on the run
// goroutine, so the keys and the position are consistent; capturing costs
// one SCANDUMP pass over the keys (applying pauses meanwhile), the upload
// does not pause applying.
func (f *Follower) maybePublish(ctx context.Context) {
	sc := &f.cfg.Snapshot
	if !sc.Publish || !f.caughtUp.Load() || time.Now().Before(f.nextPublish) || f.uploading.Load() ||
		f.applied.Load() == f.captured {
		return
	}
	f.nextPublish = time.Now().Add(sc.Every())
	f.captured = f.applied.Load()
	upload, err := f.captureSnapshot(ctx, sc)
	if err != nil {
		f.log.Warn("follow: capturing a snapshot failed", "err", err)
		f.publishFail.Add(1)
		return
	}
	if upload == nil {
		return
	}
	f.uploading.Store(true)
	go func() {
		defer f.uploading.Store(false)
		if err := upload(ctx); err != nil {
			if ctx.Err() == nil {
				f.log.Warn("follow: uploading a snapshot failed", "err", err)
				f.publishFail.Add(1)
			}
			return
		}
		f.published.Add(1)
		f.publishedAt.Store(time.Now().UnixNano())
	}()
}
