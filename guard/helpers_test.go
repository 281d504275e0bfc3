package guard_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/probly/probly/guard"
)

// memDB is a system of record for tests: a set of rows plus the change
// stream of its commits (positions 1, 2, …). Insert and Delete commit and
// publish in one critical section, so Scan is an exact snapshot.
type memDB struct {
	mu      sync.Mutex
	rows    map[string]bool
	log     []guard.Change
	changed chan struct{} // closed and replaced on every commit

	// failNext makes that many Subscription.Next calls fail (stream
	// errors); fuzzy makes Scan read the position first and the rows
	// afterwards, without holding the lock in between.
	failNext int
	fuzzy    bool
	queries  int
	// scanGrowth commits that many adds right after Scan took its
	// position (writers during the build); failEvery makes every
	// failEvery-th delivery fail, and failGrowth commits that many adds
	// at each such failure (writers outrunning the follower).
	scanGrowth, failEvery, failGrowth int
	delivered, grown                  int
}

// growLocked commits n adds of new keys; the caller holds d.mu.
func (d *memDB) growLocked(n int) {
	for range n {
		d.grown++
		k := fmt.Sprintf("grow-%d", d.grown)
		d.rows[k] = true
		d.log = append(d.log, guard.Change{Pos: uint64(len(d.log) + 1), Op: guard.OpAdd, Key: []byte(k)})
	}
	close(d.changed)
	d.changed = make(chan struct{})
}

func newMemDB() *memDB {
	return &memDB{rows: map[string]bool{}, changed: make(chan struct{})}
}

func (d *memDB) commit(op guard.Op, key string) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if op == guard.OpAdd {
		d.rows[key] = true
	} else {
		delete(d.rows, key)
	}
	d.log = append(d.log, guard.Change{Pos: uint64(len(d.log) + 1), Op: op, Key: []byte(key)})
	close(d.changed)
	d.changed = make(chan struct{})
	return uint64(len(d.log))
}

func (d *memDB) Insert(key string) uint64 { return d.commit(guard.OpAdd, key) }
func (d *memDB) Delete(key string) uint64 { return d.commit(guard.OpDelete, key) }

func (d *memDB) Has(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.queries++
	return d.rows[key]
}

func (d *memDB) Queries() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queries
}

func (d *memDB) Head() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return uint64(len(d.log))
}

// Scan implements guard.Snapshot.
func (d *memDB) Scan(ctx context.Context, fn func([]byte) error) (uint64, error) {
	d.mu.Lock()
	pos := uint64(len(d.log))
	if d.fuzzy {
		d.mu.Unlock()
		d.mu.Lock()
	}
	keys := make([]string, 0, len(d.rows))
	for k := range d.rows {
		keys = append(keys, k)
	}
	d.growLocked(d.scanGrowth)
	d.mu.Unlock()
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := fn([]byte(k)); err != nil {
			return 0, err
		}
	}
	return pos, nil
}

// Loader implements guard.Loader over the rows.
func (d *memDB) Loader(_ context.Context, key []byte) (struct{}, bool, error) {
	return struct{}{}, d.Has(string(key)), nil
}

// Subscribe implements guard.Stream.
func (d *memDB) Subscribe(_ context.Context, after uint64) (guard.Subscription, uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var pending uint64
	if n := uint64(len(d.log)); n > after {
		pending = n - after
	}
	return &memSub{d: d, next: after, closed: make(chan struct{})}, pending, nil
}

var errInjected = errors.New("injected stream failure")

type memSub struct {
	d         *memDB
	next      uint64 // position of the last change delivered
	closed    chan struct{}
	closeOnce sync.Once
}

func (s *memSub) Next(ctx context.Context) (guard.Change, error) {
	for {
		s.d.mu.Lock()
		if s.d.failEvery > 0 {
			if s.d.delivered++; s.d.delivered%s.d.failEvery == 0 {
				s.d.growLocked(s.d.failGrowth)
				s.d.failNext++
			}
		}
		if s.d.failNext > 0 {
			s.d.failNext--
			s.d.mu.Unlock()
			return guard.Change{}, errInjected
		}
		if uint64(len(s.d.log)) > s.next {
			c := s.d.log[s.next]
			c.Pending = uint64(len(s.d.log)) - c.Pos
			s.next++
			s.d.mu.Unlock()
			return c, nil
		}
		ch := s.d.changed
		s.d.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return guard.Change{}, ctx.Err()
		case <-s.closed:
			return guard.Change{}, io.EOF
		}
	}
}

func (s *memSub) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return nil
}

func quietLogger() *slog.Logger {
	if os.Getenv("GUARD_DEBUG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
