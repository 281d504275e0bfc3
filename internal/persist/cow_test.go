package persist

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/probly/probly/internal/keyspace"
)

// bufVal is mutated in place by APPEND, as Bloom and cuckoo filters are by
// their adds, so a snapshot that read a value while a writer changed it
// would be caught by -race and by the comparison after recovery.
type bufVal struct{ b []byte }

func (v *bufVal) TypeName() string               { return "buf" }
func (v *bufVal) MemoryUsage() uint64            { return uint64(len(v.b)) }
func (v *bufVal) Clone() keyspace.Value          { return &bufVal{b: slices.Clone(v.b)} }
func (v *bufVal) MarshalBinary() ([]byte, error) { return slices.Clone(v.b), nil }

func decodeBuf(typ string, data []byte) (keyspace.Value, error) {
	if typ != "buf" {
		return nil, fmt.Errorf("unknown type %q", typ)
	}
	return &bufVal{b: data}, nil
}

// bufStore applies records to a store: APPEND (not idempotent: replaying a
// record twice shows), SET, DEL and FLUSHALL.
type bufStore struct{ s *keyspace.Store }

func (b bufStore) load(key string, v keyspace.Value) error {
	b.s.Update([]byte(key), func(tx *keyspace.Txn) { tx.Set(v) })
	return nil
}

func (b bufStore) replay(args [][]byte) error {
	switch cmd := string(args[0]); {
	case cmd == "APPEND" && len(args) == 3:
		b.s.Update(args[1], func(tx *keyspace.Txn) { appendInPlace(tx, args[2]) })
	case cmd == "SET" && len(args) == 3:
		b.s.Update(args[1], func(tx *keyspace.Txn) { tx.Set(&bufVal{b: slices.Clone(args[2])}) })
	case cmd == "DEL" && len(args) == 2:
		b.s.Update(args[1], func(tx *keyspace.Txn) { tx.Delete() })
	case cmd == "FLUSHALL" && len(args) == 1:
		b.s.Flush(nil)
	default:
		return fmt.Errorf("unknown record %q", args)
	}
	return nil
}

func appendInPlace(tx *keyspace.Txn, chunk []byte) {
	if tx.Value == nil {
		tx.Set(&bufVal{b: slices.Clone(chunk)})
		return
	}
	v := tx.Value.(*bufVal)
	v.b = append(v.b, chunk...)
}

func openBuf(t testing.TB, dir string, opts Options) (*DB, *keyspace.Store) {
	t.Helper()
	s := keyspace.New(nil)
	bs := bufStore{s}
	opts.Dir = dir
	opts.BufferAppends = true // as the server
	db, err := Open(opts, decodeBuf, bs.load, bs.replay)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	s.SetLogger(db)
	return db, s
}

func bufContents(s *keyspace.Store) map[string]string {
	out := map[string]string{}
	for _, k := range s.Keys("*") {
		s.View([]byte(k), func(v keyspace.Value) { out[k] = string(v.(*bufVal).b) })
	}
	return out
}

// TestSnapshotDuringWrites takes snapshots while writers append in place,
// delete, set and flush; after recovery the store equals memory at close:
// nothing written after a cut is in its snapshot (it would be applied twice
// by the AOF replay: APPEND is not idempotent) and nothing is lost.
func TestSnapshotDuringWrites(t *testing.T) {
	dir := t.TempDir()
	db, s := openBuf(t, dir, Options{Fsync: FsyncNo})
	for i := range 300 {
		k := fmt.Sprintf("k%d", i)
		s.Update([]byte(k), func(tx *keyspace.Txn) {
			appendInPlace(tx, []byte("init"))
			tx.Log([]byte("APPEND"), []byte(k), []byte("init"))
		})
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for i := 0; !stop.Load(); i++ {
				k := []byte(fmt.Sprintf("k%d", r.IntN(400)))
				switch op := r.IntN(100); {
				case op < 85:
					chunk := []byte(fmt.Sprintf("<%d.%d>", g, i))
					s.Update(k, func(tx *keyspace.Txn) {
						appendInPlace(tx, chunk)
						tx.Log([]byte("APPEND"), k, chunk)
					})
				case op < 95:
					s.Update(k, func(tx *keyspace.Txn) {
						if tx.Value != nil {
							tx.Delete()
							tx.Log([]byte("DEL"), k)
						}
					})
				case op < 99:
					s.Update(k, func(tx *keyspace.Txn) {
						tx.Set(&bufVal{b: []byte("set")})
						tx.Log([]byte("SET"), k, []byte("set"))
					})
				default:
					if g == 0 && i%500 == 0 {
						s.FlushLog([]byte("FLUSHALL"))
					}
				}
			}
		}()
	}
	for range 8 {
		if err := db.Snapshot(s); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	want := bufContents(s)
	st := db.SnapshotStats()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, s = openBuf(t, dir, Options{Fsync: FsyncNo})
	defer db.Close()
	if got := bufContents(s); !maps.Equal(got, want) {
		n := 0
		for k, v := range want {
			if got[k] != v && n < 5 {
				t.Errorf("key %s: recovered %q, memory had %q", k, got[k], v)
				n++
			}
		}
		t.Fatalf("recovered %d keys, memory had %d", len(got), len(want))
	}
	if st.Succeeded != 8 || st.ByTrigger["manual"] != 8 || db.Rewrites() != 0 {
		t.Fatalf("stats %+v, rewrites after reopen %d", st, db.Rewrites())
	}
	t.Logf("%d keys; cut stall last %v, worst %v", len(want), st.LastStall, st.MaxStall)
}
