package persist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzRecover feeds arbitrary bytes to recovery, as the only AOF file or as
// dump.pdb. Open must return an error or succeed, never panic; and when it
// succeeds (possibly after cutting a torn tail), opening again must replay
// the same records without any further repair.
func FuzzRecover(f *testing.F) {
	// Seeds: valid files and damaged variants.
	dir := f.TempDir()
	db, s := openStore(f, dir, FsyncNo)
	for i := range 5 {
		set(f, s, fmt.Sprintf("k%d", i), fmt.Sprintf("value-%d", i))
	}
	aof1 := readFile(f, aofPath(dir, 1))
	if err := db.Snapshot(s); err != nil {
		f.Fatal(err)
	}
	set(f, s, "tail", "t")
	del(f, s, "k1")
	db.Close()
	snap := readFile(f, filepath.Join(dir, snapshotName))
	aof2 := readFile(f, aofPath(dir, 2))
	for _, b := range [][]byte{aof1, aof2, snap} {
		f.Add(b, false)
		f.Add(b, true)
		f.Add(b[:len(b)-3], false)
		f.Add(b[:len(b)-3], true)
		f.Add(flip(b, len(b)/2), false)
		f.Add(flip(b, len(b)/2), true)
	}
	// A closed generation 1 (end-of-generation record), and one whose end
	// record disagrees with what precedes it.
	n := int64(len(aof1))
	f.Add(appendEndOfGen(slices.Clone(aof1), endOfGen{next: 2, records: 5, offset: n}), false)
	f.Add(appendEndOfGen(slices.Clone(aof1), endOfGen{next: 2, records: 4, offset: n}), false)
	f.Add(appendEndOfGen(slices.Clone(aof1[:aofHeaderSize]), endOfGen{next: 2, offset: aofHeaderSize}), false)
	f.Add([]byte{}, false)
	f.Add([]byte{}, true)
	// Transaction units (tx.go): complete, cut inside, malformed.
	txDir := f.TempDir()
	tdb, _ := open(f, txDir, FsyncNo)
	appendRec(f, tdb, "SET", "a", "1")
	tdb.BeginTx()
	appendRec(f, tdb, "SET", "b", "2")
	appendRec(f, tdb, "DEL", "a")
	if _, err := tdb.EndTx(); err != nil {
		f.Fatal(err)
	}
	appendRec(f, tdb, "MULTI")
	appendRec(f, tdb, "SET", "c", "3")
	tdb.Close()
	txAOF := readFile(f, aofPath(txDir, 1))
	f.Add(txAOF, false)
	f.Add(txAOF[:len(txAOF)-5], false)

	f.Fuzz(func(t *testing.T, data []byte, asSnapshot bool) {
		dir := t.TempDir()
		name := aofFileName(1)
		if asSnapshot {
			name = snapshotName
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		md := newModel()
		db, err := Open(Options{Dir: dir, Fsync: FsyncNo}, decodeTest, md.load, md.replay)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrMissingGeneration) &&
				!strings.Contains(err.Error(), "unknown record") {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		md2 := newModel()
		db, err = Open(Options{Dir: dir, Fsync: FsyncNo}, decodeTest, md2.load, md2.replay)
		if err != nil {
			t.Fatalf("second Open after a successful one: %v", err)
		}
		db.Close()
		if !equalRecords(md.records, md2.records) || md.loaded != md2.loaded {
			t.Fatalf("second Open replayed %d records (first %d)", len(md2.records), len(md.records))
		}
	})
}
