package keyspace

import (
	"sync"
	"sync/atomic"
	"testing"
)

type wv struct{}

func (wv) TypeName() string    { return "string" }
func (wv) MemoryUsage() uint64 { return 1 }
func (wv) Clone() Value        { return wv{} }

func setKey(s *Store, k string) {
	s.Update([]byte(k), func(tx *Txn) { tx.Set(wv{}) })
}

// A watcher is flagged by a change of a watched key (set, delete, an
// in-place logged change), not by a change of another key or by a read;
// Unwatch clears the flag and the registry.
func TestWatchFlags(t *testing.T) {
	s := New(nil)
	var w Watcher
	s.Watch(&w, []byte("a"))
	s.Watch(&w, []byte("a"))
	if s.Watched() != 1 || w.Keys() != 1 {
		t.Fatalf("Watched = %d, Keys = %d after watching a twice", s.Watched(), w.Keys())
	}
	setKey(s, "b")
	s.View([]byte("a"), func(Value) {})
	if w.Dirty() {
		t.Fatal("dirty after a write of another key and a read")
	}
	setKey(s, "a")
	if !w.Dirty() {
		t.Fatal("not dirty after a write of the watched key")
	}
	s.Unwatch(&w)
	if w.Dirty() || s.Watched() != 0 || w.Watching() {
		t.Fatal("Unwatch left state behind")
	}
	s.Watch(&w, []byte("a"))
	s.Update([]byte("a"), func(tx *Txn) { _ = tx.Log([]byte("APPEND"), []byte("a"), []byte("x")) })
	if !w.Dirty() {
		t.Fatal("not dirty after a logged in-place change")
	}
	s.Unwatch(&w)
	s.Watch(&w, []byte("a"))
	s.Update([]byte("a"), func(tx *Txn) {}) // changes nothing
	if w.Dirty() {
		t.Fatal("dirty after an Update that changed nothing")
	}
	s.Update([]byte("a"), func(tx *Txn) { tx.Delete() })
	if !w.Dirty() {
		t.Fatal("not dirty after a delete")
	}
}

// Flush flags the watchers of existing keys only (Redis).
func TestWatchFlush(t *testing.T) {
	s := New(nil)
	setKey(s, "present")
	var wp, wm Watcher
	s.Watch(&wp, []byte("present"))
	s.Watch(&wm, []byte("missing"))
	s.Flush(nil)
	if !wp.Dirty() || wm.Dirty() {
		t.Fatalf("after Flush: present dirty %v (want true), missing dirty %v (want false)", wp.Dirty(), wm.Dirty())
	}
	setKey(s, "present")
	s.Unwatch(&wp)
	s.Watch(&wp, []byte("present"))
	if _, err := s.FlushLog([]byte("FLUSHALL")); err != nil {
		t.Fatal(err)
	}
	if !wp.Dirty() {
		t.Fatal("FlushLog did not flag the watcher of an existing key")
	}
}

// A watched key that expires after WATCH counts as changed at EXEC; one
// that had already expired when it was watched does not (Redis).
func TestWatchedExpired(t *testing.T) {
	s := New(nil)
	var now atomic.Int64
	now.Store(1_000_000)
	s.SetClock(now.Load)
	// Active expiry is not running, so expired keys stay until accessed.
	for key, at := range map[string]int64{"old": 999_000, "k": 1_005_000} {
		s.Update([]byte(key), func(tx *Txn) {
			tx.Set(wv{})
			tx.SetExpire(at)
		})
	}
	var w Watcher
	s.Watch(&w, []byte("old"))
	s.Watch(&w, []byte("k"))
	if s.WatchedExpired(&w) {
		t.Fatal("a key already expired at WATCH counts as changed")
	}
	now.Store(1_006_000)
	if !s.WatchedExpired(&w) {
		t.Fatal("a key that expired after WATCH does not count as changed")
	}
}

// Many watchers on one key, registered and unregistered concurrently with
// writes (-race), leave nothing behind.
func TestWatchConcurrent(t *testing.T) {
	s := New(nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var w Watcher
			for range 200 {
				s.Watch(&w, []byte("hot"))
				s.Watch(&w, []byte{byte('a' + i)})
				setKey(s, "hot")
				if !w.Dirty() {
					t.Error("write after Watch not seen")
					return
				}
				s.Unwatch(&w)
			}
		}()
	}
	wg.Wait()
	if n := s.Watched(); n != 0 {
		t.Fatalf("%d keys still watched", n)
	}
}
