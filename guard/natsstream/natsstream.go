// Package natsstream is the NATS JetStream change stream of package guard,
// and an embedded JetStream server for a single machine.
//
// Writers publish one message per committed change, after the commit: the
// subject says what happened (for example users.created and users.deleted)
// and the payload is the key. The message's stream sequence is the
// change's position. Stream implements guard.Stream with a Reader (an
// ephemeral consumer whose every message is checked for sequence
// continuity; on a break it is recreated after the last delivered
// message, so no change is skipped or delivered twice) and Head gives the
// position to pair with a snapshot (read the head, then scan the table).
//
// The embedded server (StartEmbedded) runs nats-server in-process with
// JetStream storing in a directory: the default for one machine, and what
// the tests use. Pointing at an external NATS cluster only changes the URL
// the nats.Conn dials.
//
// What it assumes: messages are published after their commit (so a message
// at sequence s describes a change the database already holds when s is in
// the stream), and the stream keeps messages at least as long as a
// subscriber may lag or a snapshot may take (the default limits-based
// retention without limits keeps them all).
package natsstream

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/probly/probly/guard"
)

// Stream is a guard.Stream over a JetStream stream. Subjects maps each
// subject carrying changes to its kind; other subjects of the stream are
// skipped (they only leave gaps in the positions).
type Stream struct {
	js       jetstream.JetStream
	name     string
	ops      map[string]guard.Op
	subjects []string
}

// New returns the change stream of JetStream stream name, with subjects
// mapping each change subject (exact, no wildcards) to guard.OpAdd or
// guard.OpDelete.
func New(js jetstream.JetStream, name string, subjects map[string]guard.Op) (*Stream, error) {
	if name == "" {
		return nil, errors.New("natsstream: stream name is required")
	}
	if len(subjects) == 0 {
		return nil, errors.New("natsstream: at least one subject is required")
	}
	for subj, op := range subjects {
		if err := checkSubject(subj); err != nil {
			return nil, err
		}
		if op != guard.OpAdd && op != guard.OpDelete {
			return nil, fmt.Errorf("natsstream: subject %q: unknown op %d", subj, op)
		}
	}
	return &Stream{js: js, name: name, ops: maps.Clone(subjects), subjects: slices.Sorted(maps.Keys(subjects))}, nil
}

// checkSubject accepts literal NATS subjects: non-empty tokens separated by
// dots, no wildcards or white space.
func checkSubject(s string) error {
	if s == "" {
		return errors.New("natsstream: empty subject")
	}
	tok := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			if tok == 0 {
				return fmt.Errorf("natsstream: subject %q has an empty token", s)
			}
			tok = 0
			continue
		case c == '*' || c == '>':
			return fmt.Errorf("natsstream: subject %q: wildcards are not allowed, list each subject", s)
		case c <= ' ' || c == 0x7f:
			return fmt.Errorf("natsstream: subject %q contains white space or a control character", s)
		}
		tok++
	}
	if tok == 0 {
		return fmt.Errorf("natsstream: subject %q has an empty token", s)
	}
	return nil
}

// Subjects returns the change subjects, sorted.
func (s *Stream) Subjects() []string { return slices.Clone(s.subjects) }

// EnsureStream creates JetStream stream name with file storage if it does
// not exist, or adds the missing subjects to it if it does. Retention is
// limits-based without limits: messages are kept until deleted.
func EnsureStream(ctx context.Context, js jetstream.JetStream, name string, subjects []string) error {
	st, err := js.Stream(ctx, name)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		_, err = js.CreateStream(ctx, jetstream.StreamConfig{
			Name:      name,
			Subjects:  slices.Clone(subjects),
			Storage:   jetstream.FileStorage,
			Retention: jetstream.LimitsPolicy,
		})
		if err != nil {
			return fmt.Errorf("natsstream: creating stream %s: %w", name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("natsstream: looking up stream %s: %w", name, err)
	}
	cfg := st.CachedInfo().Config
	missing := false
	for _, s := range subjects {
		if !slices.Contains(cfg.Subjects, s) {
			cfg.Subjects = append(cfg.Subjects, s)
			missing = true
		}
	}
	if missing {
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("natsstream: adding subjects to stream %s: %w", name, err)
		}
	}
	return nil
}

// Head returns the stream's last sequence: a snapshot scanned after Head
// returned reflects every change at or before it.
func (s *Stream) Head(ctx context.Context) (uint64, error) {
	st, err := s.js.Stream(ctx, s.name)
	if err != nil {
		return 0, fmt.Errorf("natsstream: stream %s: %w", s.name, err)
	}
	return st.CachedInfo().State.LastSeq, nil
}

// Publish publishes one change (call it after the commit) and returns its
// position, for guard.Guard.WaitApplied. subject must be one of the
// stream's change subjects.
func (s *Stream) Publish(ctx context.Context, subject string, key []byte) (uint64, error) {
	if _, ok := s.ops[subject]; !ok {
		return 0, fmt.Errorf("natsstream: %q is not a change subject of stream %s", subject, s.name)
	}
	ack, err := s.js.Publish(ctx, subject, key, jetstream.WithExpectStream(s.name))
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

// Subscribe implements guard.Stream with a gap-free Reader starting at
// after+1. pending is what the server reports once the Reader's consumer
// exists (it waits for that, up to 10 s or ctx).
func (s *Stream) Subscribe(ctx context.Context, after uint64) (guard.Subscription, uint64, error) {
	r := NewReader(s.js, s.name, s.subjects, after, ReaderOptions{})
	pending, err := r.waitPending(ctx, after, 10*time.Second)
	if err != nil {
		r.Close()
		return nil, 0, err
	}
	return &subscription{r: r, ops: s.ops}, pending, nil
}

// waitPending waits until the Reader has a consumer and returns the
// messages it has to deliver.
func (r *Reader) waitPending(ctx context.Context, after uint64, limit time.Duration) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		st, err := r.Info(ctx, after)
		if err == nil && st.Known {
			return st.Undelivered, nil
		}
		select {
		case <-r.done:
			return 0, fmt.Errorf("natsstream: %s", r.LastError())
		case <-ctx.Done():
			if e := r.LastError(); e != "" {
				return 0, fmt.Errorf("natsstream: subscribing to %s: %s", r.stream, e)
			}
			return 0, fmt.Errorf("natsstream: subscribing to %s: %w", r.stream, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

type subscription struct {
	r   *Reader
	ops map[string]guard.Op
}

func (s *subscription) Next(ctx context.Context) (guard.Change, error) {
	m, err := s.r.Next(ctx)
	if err != nil {
		return guard.Change{}, err
	}
	op, ok := s.ops[m.Subject]
	if !ok {
		return guard.Change{}, fmt.Errorf("natsstream: message %d on unexpected subject %q", m.Seq, m.Subject)
	}
	return guard.Change{Pos: m.Seq, Op: op, Key: m.Data, Pending: m.Pending}, nil
}

func (s *subscription) Close() error {
	s.r.Close()
	return nil
}

// Connect dials url (an external server or cluster: "nats://host:4222",
// comma-separated for several) with reconnects forever, and returns the
// connection and its JetStream context.
func Connect(url string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream, error) {
	opts = append([]nats.Option{nats.MaxReconnects(-1), nats.Name("probly")}, opts...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("natsstream: connecting to %s: %w", url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}
