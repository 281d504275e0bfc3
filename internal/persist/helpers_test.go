package persist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/probly/probly/internal/keyspace"
)

// strVal is a tiny test value: a byte string.
type strVal []byte

func (s strVal) TypeName() string               { return "string" }
func (s strVal) MemoryUsage() uint64            { return uint64(len(s)) }
func (s strVal) Clone() keyspace.Value          { return slices.Clone(s) }
func (s strVal) MarshalBinary() ([]byte, error) { return slices.Clone([]byte(s)), nil }

// opaque cannot be snapshotted: it does not implement BinaryMarshaler.
type opaque struct{}

func (opaque) TypeName() string      { return "opaque-type" }
func (opaque) MemoryUsage() uint64   { return 1 }
func (opaque) Clone() keyspace.Value { return opaque{} }

func decodeTest(typ string, data []byte) (keyspace.Value, error) {
	if typ != "string" {
		return nil, fmt.Errorf("unknown type %q", typ)
	}
	return strVal(data), nil
}

// model is what the tests recover into: a map plus the replayed records.
type model struct {
	m       map[string]string
	records [][]string
	loaded  int
}

func newModel() *model { return &model{m: map[string]string{}} }

func (md *model) load(key string, v keyspace.Value) error {
	s, ok := v.(strVal)
	if !ok {
		return fmt.Errorf("unexpected value %T", v)
	}
	md.m[key] = string(s)
	md.loaded++
	return nil
}

func (md *model) replay(args [][]byte) error {
	rec := make([]string, len(args))
	for i, a := range args {
		rec[i] = string(a)
	}
	md.records = append(md.records, rec)
	switch {
	case len(rec) == 3 && rec[0] == "SET":
		md.m[rec[1]] = rec[2]
	case len(rec) == 3 && rec[0] == "APPEND":
		md.m[rec[1]] += rec[2]
	case len(rec) == 2 && rec[0] == "DEL":
		delete(md.m, rec[1])
	case len(rec) == 3 && rec[0] == "PEXPIREAT": // recorded only
	default:
		return fmt.Errorf("unknown record %q", rec)
	}
	return nil
}

func open(t testing.TB, dir, fsync string) (*DB, *model) {
	t.Helper()
	md := newModel()
	db, err := Open(Options{Dir: dir, Fsync: fsync}, decodeTest, md.load, md.replay)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return db, md
}

// storeModel recovers into a keyspace.Store, as the server does.
type storeModel struct{ s *keyspace.Store }

func (sm storeModel) load(key string, v keyspace.Value) error {
	sm.s.Update([]byte(key), func(tx *keyspace.Txn) { tx.Set(v) })
	return nil
}

func (sm storeModel) replay(args [][]byte) error {
	switch {
	case len(args) == 3 && string(args[0]) == "SET":
		v := strVal(slices.Clone(args[2]))
		sm.s.Update(args[1], func(tx *keyspace.Txn) { tx.Set(v) })
	case len(args) == 2 && string(args[0]) == "DEL":
		sm.s.Update(args[1], func(tx *keyspace.Txn) { tx.Delete() })
	case len(args) == 3 && string(args[0]) == "PEXPIREAT":
		ms, err := strconv.ParseInt(string(args[2]), 10, 64)
		if err != nil {
			return err
		}
		sm.s.Update(args[1], func(tx *keyspace.Txn) { tx.SetExpire(ms) })
	default:
		return fmt.Errorf("unknown record %q", args)
	}
	return nil
}

// openStore opens dir and recovers into a fresh store that logs to the DB,
// with BufferAppends as the server (callers Wait before acknowledging).
func openStore(t testing.TB, dir, fsync string) (*DB, *keyspace.Store) {
	t.Helper()
	s := keyspace.New(nil)
	sm := storeModel{s}
	db, err := Open(Options{Dir: dir, Fsync: fsync, BufferAppends: true}, decodeTest, sm.load, sm.replay)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	s.SetLogger(db)
	return db, s
}

func set(t testing.TB, s *keyspace.Store, k, v string) uint64 {
	t.Helper()
	seq, err := s.Update([]byte(k), func(tx *keyspace.Txn) {
		tx.Set(strVal(v))
		if err := tx.Log([]byte("SET"), []byte(k), []byte(v)); err != nil {
			t.Errorf("Log: %v", err)
		}
	})
	if err != nil {
		t.Fatalf("set %s: %v", k, err)
	}
	return seq
}

func del(t testing.TB, s *keyspace.Store, k string) uint64 {
	t.Helper()
	seq, err := s.Update([]byte(k), func(tx *keyspace.Txn) {
		tx.Delete()
		if err := tx.Log([]byte("DEL"), []byte(k)); err != nil {
			t.Errorf("Log: %v", err)
		}
	})
	if err != nil {
		t.Fatalf("del %s: %v", k, err)
	}
	return seq
}

func contents(s *keyspace.Store) map[string]string {
	out := map[string]string{}
	for _, k := range s.Keys("*") {
		s.View([]byte(k), func(v keyspace.Value) { out[k] = string(v.(strVal)) })
	}
	return out
}

func appendRec(t testing.TB, db *DB, args ...string) uint64 {
	t.Helper()
	bs := make([][]byte, len(args))
	for i, a := range args {
		bs[i] = []byte(a)
	}
	seq, err := db.Append(bs)
	if err != nil {
		t.Fatalf("Append(%q): %v", args, err)
	}
	return seq
}

// crash abandons db as kill -9 would: no final fsync, descriptors closed.
// Everything written stays in the page cache, exactly as after a kill.
func crash(d *DB) {
	d.closeOnce.Do(func() {
		d.mu.Lock()
		d.closing = true
		d.mu.Unlock()
		d.snapWG.Wait()
		close(d.stop)
		d.bgWG.Wait()
		d.mu.Lock()
		d.fmu.Lock()
		if d.f != nil {
			d.f.Close()
			d.f = nil
		}
		d.fileGen.Store(0)
		d.fmu.Unlock()
		d.mu.Unlock()
		unlockDir(d.lock)
		d.closeErr = errors.New("crashed")
	})
}

func files(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.Name() != lockName {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

func readFile(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// frameOffsets returns the start offset of every record in an AOF image.
func frameOffsets(t testing.TB, b []byte) []int {
	t.Helper()
	var offs []int
	off := aofHeaderSize
	for off < len(b) {
		offs = append(offs, off)
		n := int(uint32(b[off]) | uint32(b[off+1])<<8 | uint32(b[off+2])<<16 | uint32(b[off+3])<<24)
		off += frameHeaderSize + n
	}
	if off != len(b) {
		t.Fatalf("frames do not tile the file")
	}
	return offs
}

func aofPath(dir string, gen uint64) string { return filepath.Join(dir, aofFileName(gen)) }

func equalRecords(a, b [][]string) bool {
	return slices.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}
