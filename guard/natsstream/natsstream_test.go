package natsstream_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/probly/probly/guard"
	"github.com/probly/probly/guard/natsstream"
)

const (
	subjCreated = "users.created"
	subjDeleted = "users.deleted"
	streamName  = "USERS"
)

// startJetStream starts an embedded server in a temporary directory and
// returns a JetStream context and the users change stream.
func startJetStream(t *testing.T) (jetstream.JetStream, *natsstream.Stream) {
	t.Helper()
	e, err := natsstream.StartEmbedded(natsstream.EmbeddedOptions{Dir: t.TempDir(), Listen: "off"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	nc, js, err := e.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx := context.Background()
	if err := natsstream.EnsureStream(ctx, js, streamName, []string{subjCreated, subjDeleted, "users.other"}); err != nil {
		t.Fatal(err)
	}
	s, err := natsstream.New(js, streamName, map[string]guard.Op{subjCreated: guard.OpAdd, subjDeleted: guard.OpDelete})
	if err != nil {
		t.Fatal(err)
	}
	return js, s
}

// TestSubscribeSkipsOtherSubjects: positions are stream sequences; other
// subjects leave gaps; Pending counts the changes after each one.
func TestSubscribeSkipsOtherSubjects(t *testing.T) {
	js, s := startJetStream(t)
	ctx := context.Background()
	for i := range 6 {
		subj := subjCreated
		switch i % 3 {
		case 1:
			subj = "users.other"
		case 2:
			subj = subjDeleted
		}
		if _, err := js.Publish(ctx, subj, []byte(fmt.Sprint("k", i))); err != nil {
			t.Fatal(err)
		}
	}
	if h, err := s.Head(ctx); err != nil || h != 6 {
		t.Fatalf("head %d %v", h, err)
	}
	sub, pending, err := s.Subscribe(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if pending != 3 { // 3 (delete), 4 (add), 6 (delete)
		t.Fatalf("pending %d", pending)
	}
	want := []guard.Change{{Pos: 3, Op: guard.OpDelete, Key: []byte("k2"), Pending: 2},
		{Pos: 4, Op: guard.OpAdd, Key: []byte("k3"), Pending: 1}, {Pos: 6, Op: guard.OpDelete, Key: []byte("k5"), Pending: 0}}
	for _, w := range want {
		c, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Pos != w.Pos || c.Op != w.Op || string(c.Key) != string(w.Key) || c.Pending != w.Pending {
			t.Fatalf("got %+v want %+v", c, w)
		}
	}
	if _, err := s.Publish(ctx, "users.other", nil); err == nil {
		t.Fatal("Publish on a subject that is not a change subject")
	}
	if _, err := natsstream.New(js, streamName, map[string]guard.Op{"users.*": guard.OpAdd}); err == nil {
		t.Fatal("wildcard subject accepted")
	}
}

// usersDB is a system of record: rows in a map, each commit published to
// JetStream afterwards. exact makes a commit and its publish one critical
// section, so a snapshot (under the same lock) is exact, as a cuckoo guard
// needs; otherwise snapshots are fuzzy (head, then scan).
type usersDB struct {
	s     *natsstream.Stream
	exact bool
	mu    sync.RWMutex
	rows  map[string]bool
}

func (d *usersDB) commit(ctx context.Context, op guard.Op, key string) (uint64, error) {
	subj := subjCreated
	if op == guard.OpDelete {
		subj = subjDeleted
	}
	d.mu.Lock()
	if op == guard.OpAdd {
		d.rows[key] = true
	} else {
		delete(d.rows, key)
	}
	if !d.exact {
		d.mu.Unlock()
		return d.s.Publish(ctx, subj, []byte(key)) // after the commit
	}
	defer d.mu.Unlock()
	return d.s.Publish(ctx, subj, []byte(key))
}

func (d *usersDB) Scan(ctx context.Context, fn func([]byte) error) (uint64, error) {
	if d.exact {
		d.mu.RLock()
	}
	pos, err := d.s.Head(ctx)
	if err != nil {
		if d.exact {
			d.mu.RUnlock()
		}
		return 0, err
	}
	if !d.exact {
		d.mu.RLock()
	}
	keys := make([]string, 0, len(d.rows))
	for k := range d.rows {
		keys = append(keys, k)
	}
	d.mu.RUnlock()
	for _, k := range keys {
		if err := fn([]byte(k)); err != nil {
			return 0, err
		}
	}
	return pos, nil
}

func (d *usersDB) load(_ context.Context, key []byte) (struct{}, bool, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return struct{}{}, d.rows[string(key)], nil
}

// TestNoFalseNegativesJetStream is the acceptance property test: writers
// insert into the database and publish to JetStream (embedded) while the
// guard rebuilds every few milliseconds, until at least 5 rebuilds
// completed. A reader reads X = Applied(), then looks up a key: every key
// committed at or before X must be found (Get) and reported maybe (Test);
// never a definite absent. Readers also ask for keys about to be written,
// so negative-cache entries race with commits.
func TestNoFalseNegativesJetStream(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nf    guard.NewFilterFunc
		exact bool
	}{
		{"bloom-fuzzy-snapshot", guard.NewBloom, false},
		{"cuckoo-exact-snapshot", guard.NewCuckoo, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := startJetStream(t)
			db := &usersDB{s: s, exact: tc.exact, rows: map[string]bool{}}
			ctx := context.Background()
			var committed sync.Map // permanent key → position
			var n atomic.Int64
			for range 500 {
				i := n.Add(1) - 1
				key := fmt.Sprintf("user-%d", i)
				pos, err := db.commit(ctx, guard.OpAdd, key)
				if err != nil {
					t.Fatal(err)
				}
				committed.Store(key, pos)
			}
			g, err := guard.New(guard.Options[struct{}]{
				Loader: db.load, Snapshot: db, Stream: s, NewFilter: tc.nf, Capacity: 256,
				Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
				Rebuild: guard.RebuildPolicy{CheckInterval: 5 * time.Millisecond, MinInterval: 5 * time.Millisecond},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()

			// Run for at least minRun, then until minRebuilds versions were
			// published after the first (or fail at the deadline): a loaded
			// machine makes the test run longer, not fail.
			const minRun, minRebuilds, deadline = time.Second, 5, 2 * time.Minute
			run, cancel := context.WithCancel(ctx)
			defer cancel()
			var met atomic.Bool
			started := time.Now()
			var wg sync.WaitGroup
			wg.Go(func() {
				for run.Err() == nil {
					time.Sleep(10 * time.Millisecond)
					if time.Since(started) >= minRun && g.Stats().Rebuilds >= minRebuilds {
						met.Store(true)
						cancel()
					} else if time.Since(started) > deadline {
						cancel()
					}
				}
			})
			var checked, violations atomic.Int64
			for w := range 2 {
				wg.Go(func() {
					for i := 0; run.Err() == nil; i++ {
						key := fmt.Sprintf("user-%d", n.Add(1)-1)
						pos, err := db.commit(ctx, guard.OpAdd, key)
						if err != nil {
							t.Error(err)
							return
						}
						committed.Store(key, pos)
						if i%4 == 0 {
							tmp := fmt.Sprintf("tmp-%d-%d", w, i)
							db.commit(ctx, guard.OpAdd, tmp)
							db.commit(ctx, guard.OpDelete, tmp)
						}
					}
				})
			}
			wg.Go(func() {
				for run.Err() == nil {
					g.Rebuild()
					time.Sleep(5 * time.Millisecond)
				}
			})
			for r := range 2 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(r), 3))
					for run.Err() == nil {
						key := fmt.Sprintf("user-%d", rng.Int64N(n.Load()+50))
						x := g.Applied()
						_, found, err := g.Get(ctx, []byte(key))
						if err != nil {
							t.Error(err)
							return
						}
						maybe := g.Test([]byte(key))
						if p, ok := committed.Load(key); ok && p.(uint64) <= x {
							checked.Add(1)
							if !found || !maybe {
								violations.Add(1)
								t.Errorf("%s committed at %d, guard applied %d: found=%v maybe=%v", key, p, x, found, maybe)
							}
						}
					}
				})
			}
			wg.Wait()
			if violations.Load() > 0 {
				t.Fatalf("%d false negatives", violations.Load())
			}
			head, err := s.Head(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
			defer wcancel()
			if err := g.WaitApplied(wctx, head); err != nil {
				t.Fatalf("not caught up to %d (applied %d): %v", head, g.Applied(), err)
			}
			total := 0
			committed.Range(func(k, _ any) bool {
				total++
				if _, found, _ := g.Get(ctx, []byte(k.(string))); !found {
					t.Errorf("%s not found after catching up", k)
				}
				return true
			})
			st := g.Stats()
			t.Logf("ran %v: %d keys committed, stream head %d, %d checked lookups, %d rebuilds (last took %v), lag %d, non-member FPR %.4f",
				time.Since(started).Round(time.Millisecond), total, head, checked.Load(), st.Rebuilds, st.LastRebuild, st.Lag, st.NonMemberFPR)
			if !met.Load() || st.Rebuilds < minRebuilds || checked.Load() == 0 {
				t.Fatalf("%d rebuilds (want %d within %v), %d checked lookups", st.Rebuilds, minRebuilds, deadline, checked.Load())
			}
		})
	}
}
