package natsstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Errors of a Reader.
var (
	// ErrTruncated: the stream no longer holds every message after the
	// reader's position (retention or a purge removed some), so reading on
	// would skip changes. The Reader stops; the caller needs a snapshot
	// that covers the removed part.
	ErrTruncated = errors.New("natsstream: the stream no longer holds the messages after the position (retention or a purge removed them)")
	// ErrGap is recorded (Reader.LastError) when a consumer delivered a
	// message out of sequence; the Reader then recreates its consumer at
	// the position and goes on. It is never returned by Next.
	ErrGap = errors.New("natsstream: consumer sequence gap")
	// ErrClosed is returned by Next after Close.
	ErrClosed = errors.New("natsstream: reader closed")
)

// Message is one stream message as a Reader delivers it.
type Message struct {
	Seq     uint64 // stream sequence: the change's position
	Subject string
	Data    []byte
	// Pending is the number of messages of the reader's subjects after
	// this one in the stream when the server delivered it.
	Pending uint64
}

// ReaderOptions tune a Reader. The zero value is usable.
type ReaderOptions struct {
	// Heartbeat is the pull consumer's idle heartbeat: a consumer that
	// sends nothing for two heartbeats (a dead connection or server) is
	// recreated. Default 1 s.
	Heartbeat time.Duration
	// Buffer is how many delivered messages may wait for Next (and how
	// many the server may have in flight to the client). Default 1024.
	Buffer int
}

// Reader delivers every message of a stream's subjects after a position,
// in stream order, each exactly once. It is gap-free by construction: it
// reads through an ephemeral pull consumer (no acknowledgements) that
// starts at the position + 1, checks every message's consumer sequence
// (consecutive from 1 for each consumer) and stream sequence (increasing,
// after the position), and on any break (a missed message, a deleted or
// reset consumer, a lost connection, missed heartbeats) drops the consumer
// and creates a new one after the last message it delivered. At every
// (re)creation it checks that the stream still holds the messages after
// the position (ErrTruncated otherwise).
//
// Caveat: the server silently skips messages removed by retention while
// they wait ahead of a running consumer; keep retention longer than any
// lag (docs/OPERATIONS.md, "Replicas"). The check at each (re)creation and
// the caller's periodic Info see a truncation that overtakes the position.
//
// A Reader owns one goroutine and one consumer. Next is called from one
// goroutine at a time; Info, Resets, LastError and Close are safe for
// concurrent use.
type Reader struct {
	js       jetstream.JetStream
	stream   string
	subjects []string
	o        ReaderOptions
	ch       chan item
	cancel   context.CancelFunc
	done     chan struct{}

	mu   sync.Mutex
	cons jetstream.Consumer // current consumer (nil between consumers)
	cseq uint64             // consumer sequence of the last message handed to ch

	resets    atomic.Uint64
	delivered atomic.Uint64 // stream sequence of the last message handed to Next
	lastErr   atomic.Pointer[string]
	contact   atomic.Int64 // unix nanos of the last message or successful request
}

type item struct {
	m   Message
	err error
}

// NewReader starts reading stream's subjects (literal subjects; nil or
// empty: all of the stream's) after position after (0: from the start).
// It returns at once; consumers are created in the background, retried
// with back-off while the stream is unreachable. Call Close to stop.
func NewReader(js jetstream.JetStream, stream string, subjects []string, after uint64, o ReaderOptions) *Reader {
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Second
	}
	if o.Buffer <= 0 {
		o.Buffer = 1024
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Reader{js: js, stream: stream, subjects: slices.Sorted(slices.Values(subjects)), o: o,
		ch: make(chan item, o.Buffer), cancel: cancel, done: make(chan struct{})}
	r.delivered.Store(after)
	go r.run(ctx, after)
	return r
}

// Delivered is the stream sequence of the last message the Reader has
// taken from the server in order (returned by Next or waiting in its
// buffer); the position it was created at before the first.
func (r *Reader) Delivered() uint64 { return r.delivered.Load() }

// Connected reports whether the Reader has a consumer now.
func (r *Reader) Connected() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cons != nil
}

// Next returns the next message, blocking until one arrives, ctx ends, the
// Reader stops with ErrTruncated, or Close (ErrClosed).
func (r *Reader) Next(ctx context.Context) (Message, error) {
	select {
	case it, ok := <-r.ch:
		if !ok {
			return Message{}, ErrClosed
		}
		return it.m, it.err
	case <-ctx.Done():
		return Message{}, ctx.Err()
	}
}

// TryNext returns the next message if one is waiting.
func (r *Reader) TryNext() (Message, bool, error) {
	select {
	case it, ok := <-r.ch:
		if !ok {
			return Message{}, false, ErrClosed
		}
		return it.m, it.err == nil, it.err
	default:
		return Message{}, false, nil
	}
}

// Buffered is the number of delivered messages waiting for Next.
func (r *Reader) Buffered() int { return len(r.ch) }

// Resets counts the consumers dropped and recreated after a break.
func (r *Reader) Resets() uint64 { return r.resets.Load() }

// LastError describes the last break or failure ("" if none).
func (r *Reader) LastError() string {
	if s := r.lastErr.Load(); s != nil {
		return *s
	}
	return ""
}

// LastContact is when the Reader last heard from the server: a message, a
// new consumer or a successful Info (idle heartbeats are not counted);
// zero if never.
func (r *Reader) LastContact() time.Time {
	if n := r.contact.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

func (r *Reader) touch() { r.contact.Store(time.Now().UnixNano()) }

func (r *Reader) fail(err error) {
	s := err.Error()
	r.lastErr.Store(&s)
}

// State is what the server says about the stream and the Reader's
// consumer, for lag and health.
type State struct {
	FirstSeq, LastSeq uint64 // the stream's
	// Undelivered is the number of messages of the reader's subjects that
	// the server has not yet delivered to it plus those delivered but not
	// yet returned by Next. Known is false when there was no consumer to
	// ask (Undelivered then counts from LastSeq).
	Undelivered uint64
	Known       bool
}

// Info asks the server for the stream's state and the consumer's pending
// count: two JetStream API requests, bounded by ctx. after is the caller's
// position, used only when there is no consumer to ask (Undelivered is
// then LastSeq − after, at most the number of messages the stream holds). It counts as contact on success and is safe for
// concurrent use with Next.
func (r *Reader) Info(ctx context.Context, after uint64) (State, error) {
	st, err := r.js.Stream(ctx, r.stream)
	if err != nil {
		return State{}, fmt.Errorf("natsstream: stream %s: %w", r.stream, err)
	}
	s := st.CachedInfo().State
	out := State{FirstSeq: s.FirstSeq, LastSeq: s.LastSeq}
	r.mu.Lock()
	cons := r.cons
	r.mu.Unlock()
	if cons != nil {
		if ci, err := cons.Info(ctx); err == nil {
			r.mu.Lock()
			same := r.cons == cons
			cseq := r.cseq
			r.mu.Unlock()
			if same && ci.Delivered.Consumer >= cseq {
				out.Undelivered = ci.NumPending + (ci.Delivered.Consumer - cseq) + uint64(len(r.ch))
				out.Known = true
			}
		}
	}
	if !out.Known && s.LastSeq > after {
		// Count only messages the stream holds: after a purge or with
		// retention, LastSeq − after exceeds them.
		out.Undelivered = min(s.LastSeq-after, s.Msgs)
	}
	r.touch()
	return out, nil
}

// Close stops the Reader and deletes its consumer.
func (r *Reader) Close() {
	r.cancel()
	<-r.done
}

// createTimeout bounds looking up the stream and creating a consumer: a
// healthy cluster answers in milliseconds; a request that went to a peer
// that just died is abandoned and retried at once (quickRetries).
const createTimeout = 1500 * time.Millisecond

// quickRetries is how many consecutive broken consumers are retried
// without backoff before the backoff (50 ms doubling to 2 s) starts.
const quickRetries = 3

func (r *Reader) run(ctx context.Context, after uint64) {
	defer close(r.done)
	defer close(r.ch)
	backoff, fails := time.Duration(0), 0
	for ctx.Err() == nil {
		next, err := r.consume(ctx, after)
		if next > after {
			backoff, fails = 0, 0
		}
		after = next
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, ErrTruncated) {
			r.fail(err)
			select {
			case r.ch <- item{err: err}:
			case <-ctx.Done():
			}
			return
		}
		r.fail(err)
		r.resets.Add(1)
		// The first retries after a break are immediate: after a node
		// dies the client has usually reconnected to another one, and a
		// consumer placed on the dead peer only needs a second try.
		if fails++; fails > quickRetries {
			backoff = min(max(2*backoff, 50*time.Millisecond), 2*time.Second)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
}

// consume runs one consumer from after+1 until it breaks; it returns the
// stream sequence of the last message it handed out.
func (r *Reader) consume(ctx context.Context, after uint64) (uint64, error) {
	cctx, cancel := context.WithTimeout(ctx, createTimeout)
	st, err := r.js.Stream(cctx, r.stream)
	if err != nil {
		cancel()
		return after, fmt.Errorf("natsstream: stream %s: %w", r.stream, err)
	}
	if first := st.CachedInfo().State.FirstSeq; first > after+1 {
		cancel()
		return after, fmt.Errorf("%w: position %d, the stream %s starts at %d", ErrTruncated, after, r.stream, first)
	}
	cc := jetstream.ConsumerConfig{
		Description:       "probly gap-free reader",
		FilterSubjects:    r.subjects,
		AckPolicy:         jetstream.AckNonePolicy,
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		InactiveThreshold: 30 * time.Second,
		MemoryStorage:     true,
		Replicas:          1,
	}
	if after > 0 {
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, after+1
	}
	cons, err := st.CreateConsumer(cctx, cc)
	cancel()
	if err != nil {
		return after, fmt.Errorf("natsstream: creating a consumer on %s: %w", r.stream, err)
	}
	name := cons.CachedInfo().Name
	defer func() {
		r.mu.Lock()
		r.cons = nil
		r.mu.Unlock()
		dctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = st.DeleteConsumer(dctx, name)
		cancel()
	}()
	it, err := cons.Messages(jetstream.PullMaxMessages(r.o.Buffer), jetstream.PullHeartbeat(r.o.Heartbeat))
	if err != nil {
		return after, fmt.Errorf("natsstream: consuming %s: %w", r.stream, err)
	}
	defer it.Stop()
	r.mu.Lock()
	r.cons, r.cseq = cons, 0
	r.mu.Unlock()
	r.touch()
	var cseq uint64
	for {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return after, fmt.Errorf("natsstream: reading %s: %w", r.stream, err)
		}
		meta, err := msg.Metadata()
		if err != nil {
			return after, fmt.Errorf("natsstream: message metadata: %w", err)
		}
		r.touch()
		switch {
		case meta.Sequence.Consumer <= cseq || meta.Sequence.Stream <= after:
			continue // a redelivery of something already handed out
		case meta.Sequence.Consumer != cseq+1:
			return after, fmt.Errorf("%w: consumer sequence %d after %d (stream sequence %d after %d)",
				ErrGap, meta.Sequence.Consumer, cseq, meta.Sequence.Stream, after)
		}
		m := Message{Seq: meta.Sequence.Stream, Subject: msg.Subject(), Data: msg.Data(), Pending: meta.NumPending}
		select {
		case r.ch <- item{m: m}:
		case <-ctx.Done():
			return after, ctx.Err()
		}
		cseq, after = meta.Sequence.Consumer, m.Seq
		r.delivered.Store(after)
		r.mu.Lock()
		r.cseq = cseq
		r.mu.Unlock()
	}
}
