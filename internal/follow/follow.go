// Package follow is `probly serve --follow`: it keeps BF and CF keys in
// step with a NATS JetStream change stream, by applying each change as a
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
//     in between re-applies the add (harmless for a Bloom filter; an extra
//     copy, a false positive only, for a cuckoo filter);
//   - a cuckoo delete is logged after a position record that covers it: a
//     crash in between skips the delete (the item stays, a false
//     positive), and a delete is never applied twice (which could remove
//     another item).
//
// A delete message must follow the add of the same item (as the change
// stream of a database does): deleting an item that was never added can
// remove another item's fingerprint from a cuckoo filter.
//
// The durable JetStream consumer (Config.Consumer, ack-all) is acked only
// after the batch's records are as durable as appendfsync promises
// (Persister Wait). At start-up the follower reads its position P and
// resumes the consumer if its state is exactly "everything up to P
// delivered and acked"; otherwise (a crash between apply and ack, an AOF
// tail lost with appendfsync everysec, a reset data directory) it
// recreates the consumer to deliver from P+1. The local position is the
// truth, so no message is skipped or applied twice, whatever the crash.
//
// # Reads while catching up
//
// Until the follower has caught up with the stream once after start-up,
// while it is halted by an error, and (with Config.MaxLag) while it lags by
// more than MaxLag messages, BF.EXISTS, BF.MEXISTS, CF.EXISTS and
// CF.MEXISTS on the followed keys answer 1 (maybe): a filter that is still
// loading never says "definitely absent". INFO's Follow section and /readyz
// show the state, the applied position and the lag.
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
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/tidwall/redcon"

	"github.com/probly/probly/guard"
	"github.com/probly/probly/guard/natsstream"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/resp"
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
	StateCatchingUp = "catching_up"
	StateFollowing  = "following"
	StateHalted     = "halted"
	StateStopped    = "stopped"
)

// Follower applies a JetStream stream to BF/CF keys. Create it with New,
// then Start; Close stops it.
type Follower struct {
	cfg  *Config
	d    Deps
	log  *slog.Logger
	bind map[string]binding
	keys []*keyState
	isBF []bool

	embedded *natsstream.Embedded
	nc       *nats.Conn
	js       jetstream.JetStream
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once

	// Owned by the run goroutine.
	logged   uint64 // value last written to the position key
	unsynced uint64 // highest AOF sequence whose Wait failed (0: none)
	out      bytes.Buffer
	w        *redcon.Writer
	conn     command.Conn

	// Shared with readers (INFO, /readyz, EXISTS).
	state      atomic.Pointer[string]
	applied    atomic.Uint64
	pending    atomic.Uint64
	streamLast atomic.Uint64
	caughtUp   atomic.Bool // caught up since the last (re)start of consumption
	lastErr    atomic.Pointer[string]
	replays    atomic.Uint64
	messages   atomic.Uint64
}

type keyState struct {
	name string // the key: used in commands, INFO and metric labels, never in logs
	// ref names the key in logs and errors without its content: "keys[i]",
	// its index in Config.Keys (INFO follow_key_<i> shows the name).
	ref            string
	typ            string
	adds, deletes  atomic.Uint64
	ignoredDeletes atomic.Uint64
	written        atomic.Bool
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
		f.isBF = append(f.isBF, k.Type == "bf")
	}
	for _, name := range []string{"bf.madd", "bf.add", "bf.reserve", "cf.add", "cf.del", "cf.reserve", "set"} {
		if d.Table.Lookup([]byte(name)) == nil {
			return nil, fmt.Errorf("follow: the command table has no %s", name)
		}
	}
	f.w = redcon.NewWriter(&f.out)
	f.conn = command.Conn{ID: -1, Proto: 2, Authed: true, Name: "follow"}
	f.setState(StateStarting)
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

// Start checks the key space (position key, key types), creates the keys
// that have explicit parameters, starts the embedded NATS server or dials
// the configured one, and starts following in the background. An error
// means the server should not start. Call it after recovery, with the AOF
// attached to the store, and before serving.
func (f *Follower) Start(ctx context.Context) error {
	pos, err := f.readPosition()
	if err != nil {
		return err
	}
	f.logged = pos
	f.applied.Store(pos)
	for i, k := range f.cfg.Keys {
		if err := f.prepareKey(k, f.keys[i]); err != nil {
			return err
		}
	}
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
		f.log.Info("embedded NATS JetStream started", "url", e.ClientURL(), "dir", f.cfg.Embedded.Dir)
	} else {
		opts := append(f.connHandlers(), nats.RetryOnFailedConnect(true))
		if f.cfg.Creds != "" {
			opts = append(opts, nats.UserCredentials(f.cfg.Creds))
		}
		if f.nc, f.js, err = natsstream.Connect(f.cfg.URL, opts...); err != nil {
			return fmt.Errorf("follow: %w", err)
		}
	}
	rctx, cancel := context.WithCancel(ctx)
	f.cancel = cancel
	go f.run(rctx)
	return nil
}

// connHandlers make the connection to an external NATS visible: with
// RetryOnFailedConnect the client keeps retrying in the background, so
// without them an unreachable server would leave the follower
// "connecting" with no error and no log. A failed connection attempt, a
// disconnection and an asynchronous error are recorded (INFO
// follow_last_error, every time) and logged at Warn (the first after start
// or after a connection, then at most once a minute while the client keeps
// retrying, every 2 s); connecting and reconnecting are logged at Info
// with the server's URL without user information (ConnectedUrlRedacted).
// Nothing of a message is logged. The client runs the handlers on one
// goroutine.
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
			f.log.Info("follow: NATS "+what, "server", nc.ConnectedUrlRedacted())
		}
	}
	return []nats.Option{
		nats.ConnectHandler(connected("connected")),
		nats.ReconnectHandler(connected("reconnected")),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) { fail("connection attempt failed", err) }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { fail("disconnected", err) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { fail("error", err) }),
	}
}

// Close stops following (the batch being applied finishes first), closes
// the connection and the embedded server. Call it before closing the AOF.
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
	var pos uint64
	var err error
	f.d.Store.View([]byte(f.cfg.PositionKey), func(v keyspace.Value) {
		switch s := v.(type) {
		case nil:
		case *strval.String:
			if pos, err = strconv.ParseUint(string(s.B), 10, 64); err != nil {
				err = errors.New("follow: the position key (position_key) holds a value that is not a stream sequence")
			}
		default:
			err = fmt.Errorf("follow: the position key (position_key) holds a %s, not a string", v.TypeName())
		}
	})
	return pos, err
}

// prepareKey checks a followed key's type and creates it if it has
// explicit parameters and does not exist.
func (f *Follower) prepareKey(k KeyConfig, ks *keyState) error {
	want := "MBbloom--"
	if k.Type == "cf" {
		want = "MBbloomCF"
	}
	exists, typ := false, ""
	f.d.Store.View([]byte(k.Key), func(v keyspace.Value) {
		if v != nil {
			exists, typ = true, v.TypeName()
		}
	})
	if exists {
		if typ != want {
			return fmt.Errorf("follow: %s holds a %s, not a %s filter", ks.ref, typ, k.Type)
		}
		ks.written.Store(true)
		return nil
	}
	if k.Capacity == 0 {
		return nil
	}
	var args [][]byte
	if k.Type == "bf" {
		args = [][]byte{[]byte("BF.RESERVE"), []byte(k.Key), []byte(strconv.FormatFloat(k.ErrorRate, 'g', -1, 64)), []byte(strconv.FormatUint(k.Capacity, 10))}
	} else {
		args = [][]byte{[]byte("CF.RESERVE"), []byte(k.Key), []byte(strconv.FormatUint(k.Capacity, 10))}
	}
	seq, err := f.exec(args...)
	if err == nil {
		err = f.d.Wait(seq)
	}
	if err != nil {
		return fmt.Errorf("follow: creating %s: %w", ks.ref, err)
	}
	ks.written.Store(true)
	return nil
}

// exec runs one command through the table as the follower's connection and
// returns the AOF sequence it wrote; an error reply (at any depth) is an
// error.
func (f *Follower) exec(args ...[]byte) (uint64, error) {
	spec := f.d.Table.Lookup(args[0])
	if spec == nil || spec.Handler == nil || !command.CheckArity(spec.Arity, len(args)) {
		return 0, fmt.Errorf("follow: cannot run %s", args[0])
	}
	f.out.Reset()
	f.w.SetBuffer(nil)
	c := &command.Ctx{Args: args, R: resp.New(f.w, 2), Store: f.d.Store, Config: f.d.Config, Conn: &f.conn, Server: f.d.Server}
	spec.Handler(c)
	if err := f.w.Flush(); err != nil {
		return c.Seq, err
	}
	if msg, ok := replyError(f.out.Bytes()); ok {
		return c.Seq, fmt.Errorf("%s: %s", spec.Name, msg)
	}
	return c.Seq, nil
}

// applyError is a failure to apply or persist a change: the follower halts
// and retries the same message.
type applyError struct {
	err error
}

func (e applyError) Error() string { return e.err.Error() }
func (e applyError) Unwrap() error { return e.err }

// run is the follower's goroutine: set up the consumer, then fetch, apply,
// make durable, ack; on errors back off and retry without skipping.
func (f *Follower) run(ctx context.Context) {
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
	for ctx.Err() == nil {
		f.setState(StateConnecting)
		cons, err := f.setup(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			f.setErr(err)
			if errors.Is(err, errGap) {
				f.setState(StateHalted)
			}
			f.log.Warn("follow: setting up the consumer failed; retrying", "err", err)
			if !sleep() {
				return
			}
			continue
		}
		backoff = 0
		if f.caughtUp.Load() {
			f.setState(StateFollowing)
		} else {
			f.setState(StateCatchingUp)
		}
		err = f.consume(ctx, cons)
		if ctx.Err() != nil {
			return
		}
		f.setErr(err)
		f.log.Warn("follow: consuming stopped; setting up again", "err", err)
		if !sleep() {
			return
		}
	}
}

var errGap = errors.New("follow: the stream no longer holds the messages after the applied position")

// setup makes sure the stream exists, checks for a retention gap and
// returns the durable consumer, resumed or recreated to deliver from the
// applied position + 1.
func (f *Follower) setup(ctx context.Context) (jetstream.Consumer, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if *f.cfg.CreateStream {
		if err := natsstream.EnsureStream(ctx, f.js, f.cfg.Stream, f.cfg.subjects()); err != nil {
			return nil, err
		}
	}
	st, err := f.js.Stream(ctx, f.cfg.Stream)
	if err != nil {
		return nil, fmt.Errorf("follow: stream %s: %w", f.cfg.Stream, err)
	}
	state := st.CachedInfo().State
	f.streamLast.Store(state.LastSeq)
	p := f.applied.Load()
	if state.FirstSeq > p+1 && state.Msgs > 0 && !f.cfg.AllowGap {
		return nil, fmt.Errorf("%w: applied %d, the stream starts at %d (retention removed messages); "+
			"rebuild the keys (delete them and the position key) or set \"allow_gap\"", errGap, p, state.FirstSeq)
	}
	filters := slices.Sorted(slices.Values(f.cfg.subjects()))
	cons, err := st.Consumer(ctx, f.cfg.Consumer)
	switch {
	case err == nil:
		info := cons.CachedInfo()
		have := slices.Sorted(slices.Values(info.Config.FilterSubjects))
		if info.Config.FilterSubject != "" {
			have = append(have, info.Config.FilterSubject)
		}
		if slices.Equal(have, filters) && info.Config.AckPolicy == jetstream.AckAllPolicy &&
			info.Delivered.Stream == p && info.AckFloor.Stream == p && info.NumAckPending == 0 {
			return cons, nil
		}
		f.log.Info("follow: recreating the durable consumer at the applied position", "consumer", f.cfg.Consumer,
			"applied", p, "delivered", info.Delivered.Stream, "ack_floor", info.AckFloor.Stream)
		if err := st.DeleteConsumer(ctx, f.cfg.Consumer); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil, fmt.Errorf("follow: deleting consumer %s: %w", f.cfg.Consumer, err)
		}
	case !errors.Is(err, jetstream.ErrConsumerNotFound):
		return nil, fmt.Errorf("follow: consumer %s: %w", f.cfg.Consumer, err)
	}
	cc := jetstream.ConsumerConfig{
		Durable:        f.cfg.Consumer,
		Description:    "probly serve --follow",
		FilterSubjects: filters,
		AckPolicy:      jetstream.AckAllPolicy,
		AckWait:        time.Minute,
		MaxAckPending:  4 * f.cfg.Batch,
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	}
	if p > 0 {
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, p+1
	}
	cons, err = st.CreateConsumer(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("follow: creating consumer %s: %w", f.cfg.Consumer, err)
	}
	return cons, nil
}

// consume fetches and applies until ctx ends or the consumer fails.
func (f *Follower) consume(ctx context.Context, cons jetstream.Consumer) error {
	var pending []jetstream.Msg
	haltBackoff := time.Duration(0)
	for ctx.Err() == nil {
		if err := f.verify(); err != nil {
			f.replayFromStart(err)
			return err
		}
		if len(pending) == 0 {
			batch, err := cons.Fetch(f.cfg.Batch, jetstream.FetchMaxWait(time.Second))
			if err != nil {
				return fmt.Errorf("follow: fetch: %w", err)
			}
			for m := range batch.Messages() {
				pending = append(pending, m)
			}
			if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
				if len(pending) == 0 {
					return fmt.Errorf("follow: fetch: %w", err)
				}
			}
			if len(pending) == 0 {
				f.idle(ctx, cons)
				continue
			}
		}
		n, last, err := f.applyBatch(pending)
		if n > 0 {
			if aerr := last.DoubleAck(ctx); aerr != nil && ctx.Err() == nil {
				f.log.Warn("follow: ack failed (the consumer is recreated at the applied position)", "err", aerr)
				pending = nil
				return fmt.Errorf("follow: ack: %w", aerr)
			}
			if meta, merr := last.Metadata(); merr == nil {
				f.pending.Store(meta.NumPending + uint64(len(pending)-n))
				f.streamLast.Store(max(f.streamLast.Load(), meta.Sequence.Stream+meta.NumPending))
				if meta.NumPending == 0 && n == len(pending) {
					f.markCaughtUp()
				}
			}
		}
		pending = pending[n:]
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

// idle refreshes the lag when a fetch returned nothing.
func (f *Follower) idle(ctx context.Context, cons jetstream.Consumer) {
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := cons.Info(ictx)
	if err != nil {
		return
	}
	f.pending.Store(info.NumPending)
	f.streamLast.Store(max(f.streamLast.Load(), info.Delivered.Stream+info.NumPending))
	if info.NumPending == 0 && info.NumAckPending == 0 {
		f.markCaughtUp()
		f.setState(StateFollowing)
	}
}

func (f *Follower) markCaughtUp() {
	if !f.caughtUp.Swap(true) {
		f.log.Info("follow: caught up with the stream", "applied", f.applied.Load())
	}
}

// verify checks that nobody removed what the follower wrote: the position
// key (FLUSHALL, DEL) and the followed keys it created.
func (f *Follower) verify() error {
	pos, err := f.readPosition()
	if err != nil {
		return err
	}
	if pos != f.logged {
		return fmt.Errorf("follow: the position key holds %d, the follower wrote %d (FLUSHALL or a manual change)", pos, f.logged)
	}
	for _, ks := range f.keys {
		if !ks.written.Load() {
			continue
		}
		missing := true
		f.d.Store.View([]byte(ks.name), func(v keyspace.Value) { missing = v == nil })
		if missing {
			return fmt.Errorf("follow: followed key %s was removed", ks.ref)
		}
	}
	return nil
}

// replayFromStart handles a key space that lost followed data: it starts
// over from the beginning of the stream (adds are re-applied; a cuckoo key
// that kept its items gets second copies, false positives only). Until it
// catches up again the keys answer maybe.
func (f *Follower) replayFromStart(reason error) {
	f.log.Warn("follow: replaying the stream from the start", "reason", reason)
	f.replays.Add(1)
	f.caughtUp.Store(false)
	f.applied.Store(0)
	for _, ks := range f.keys {
		ks.written.Store(false)
	}
	f.logged = 0
	if p, err := f.readPosition(); err != nil || p != 0 {
		if _, err := f.exec([]byte("DEL"), []byte(f.cfg.PositionKey)); err != nil {
			f.log.Error("follow: resetting the position key failed", "err", err)
		}
	}
	for i, k := range f.cfg.Keys {
		if err := f.prepareKey(k, f.keys[i]); err != nil {
			f.log.Error("follow: re-creating a key failed", "key", f.keys[i].ref, "err", err)
		}
	}
}

// applyBatch applies msgs in order. It returns how many were processed
// (applied or skipped as already applied), the last of them, and the error
// that stopped it. Every processed message is durable (per appendfsync)
// and covered by the position key when it returns.
func (f *Follower) applyBatch(msgs []jetstream.Msg) (n int, last jetstream.Msg, err error) {
	maxSeq := f.unsynced // records of an earlier batch whose Wait failed
	note := func(seq uint64) { maxSeq = max(maxSeq, seq) }
	defer func() {
		// Cover what was applied with a position record, then wait.
		if applied := f.applied.Load(); applied > f.logged {
			seq, perr := f.writePosition(applied)
			note(seq)
			if perr != nil && err == nil {
				err, n = perr, 0
			}
		}
		if werr := f.d.Wait(maxSeq); werr != nil {
			f.unsynced = maxSeq
			err, n = applyError{fmt.Errorf("follow: the AOF is not durable: %w", werr)}, 0
		} else {
			f.unsynced = 0
		}
		if n > 0 {
			last = msgs[n-1]
		}
	}()
	i := 0
	for i < len(msgs) {
		m := msgs[i]
		meta, merr := m.Metadata()
		if merr != nil {
			return i, nil, fmt.Errorf("follow: message metadata: %w", merr)
		}
		seq := meta.Sequence.Stream
		if seq <= f.applied.Load() { // redelivered
			i++
			continue
		}
		b, ok := f.bind[m.Subject()]
		if !ok { // not ours (the consumer filters; be safe)
			f.applied.Store(seq)
			i++
			continue
		}
		ks := f.keys[b.key]
		switch {
		case b.op == guard.OpAdd && f.isBF[b.key]:
			// Batch the run of adds to this key into one BF.MADD.
			j := i + 1
			items := [][]byte{m.Data()}
			for j < len(msgs) && len(items) < 1024 {
				nb, ok := f.bind[msgs[j].Subject()]
				mm, e := msgs[j].Metadata()
				if !ok || nb != b || e != nil || mm.Sequence.Stream <= f.applied.Load() {
					break
				}
				items = append(items, msgs[j].Data())
				j++
			}
			args := append([][]byte{[]byte("BF.MADD"), []byte(ks.name)}, items...)
			s, e := f.exec(args...)
			note(s)
			if e == nil {
				f.applied.Store(seqOf(msgs[j-1]))
				ks.adds.Add(uint64(j - i))
				ks.written.Store(true)
				f.messages.Add(uint64(j - i))
				i = j
				continue
			}
			// Find the first item that fails, applying the ones before
			// (re-adding an item BF.MADD added changes nothing).
			for ; i < j; i++ {
				s, e := f.exec([]byte("BF.ADD"), []byte(ks.name), msgs[i].Data())
				note(s)
				if e != nil {
					return i, nil, applyError{fmt.Errorf("follow: adding to %s (message %d): %w", ks.ref, seqOf(msgs[i]), e)}
				}
				f.applied.Store(seqOf(msgs[i]))
				ks.adds.Add(1)
				ks.written.Store(true)
				f.messages.Add(1)
			}
			continue
		case b.op == guard.OpAdd:
			s, e := f.exec([]byte("CF.ADD"), []byte(ks.name), m.Data())
			note(s)
			if e != nil {
				return i, nil, applyError{fmt.Errorf("follow: adding to %s (message %d): %w", ks.ref, seq, e)}
			}
			ks.adds.Add(1)
			ks.written.Store(true)
		case f.isBF[b.key]:
			// A Bloom filter cannot delete: the item stays (a false
			// positive). Nothing to log.
			ks.ignoredDeletes.Add(1)
		default:
			// Position first, then the delete (see the package doc).
			s, e := f.writePosition(seq)
			note(s)
			if e != nil {
				return i, nil, e
			}
			s, e = f.exec([]byte("CF.DEL"), []byte(ks.name), m.Data())
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
	return i, nil, nil
}

func seqOf(m jetstream.Msg) uint64 {
	meta, err := m.Metadata()
	if err != nil {
		return 0
	}
	return meta.Sequence.Stream
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

// replyError returns the first error in a RESP2 reply, at any depth.
func replyError(b []byte) (string, bool) {
	pending := 1
	for pending > 0 {
		i := bytes.Index(b, []byte("\r\n"))
		if len(b) == 0 || i < 1 {
			return "malformed reply", true
		}
		kind, line := b[0], b[1:i]
		b = b[i+2:]
		pending--
		switch kind {
		case '-':
			return string(line), true
		case '$':
			n, err := strconv.Atoi(string(line))
			if err != nil || n < -1 || (n >= 0 && len(b) < n+2) {
				return "malformed reply", true
			}
			if n >= 0 {
				b = b[n+2:]
			}
		case '*':
			n, err := strconv.Atoi(string(line))
			if err != nil || n < -1 {
				return "malformed reply", true
			}
			pending += max(n, 0)
		}
	}
	return "", false
}
