package persist

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// refused opens dir and requires the start to fail with sentinel, with a
// message naming every string in names; nothing may be loaded or replayed
// and no file may change.
func refused(t *testing.T, dir string, sentinel error, names ...string) error {
	t.Helper()
	before := map[string]string{}
	for _, f := range files(t, dir) {
		before[f] = string(readFile(t, filepath.Join(dir, f)))
	}
	md := newModel()
	db, err := Open(Options{Dir: dir, Fsync: FsyncNo}, decodeTest, md.load, md.replay)
	if err == nil {
		db.Close()
		t.Fatalf("Open succeeded (%d keys); want %v", len(md.m), sentinel)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("Open: %v; want %v", err, sentinel)
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Fatalf("Open: %v; does not name %q", err, n)
		}
	}
	after := map[string]string{}
	for _, f := range files(t, dir) {
		after[f] = string(readFile(t, filepath.Join(dir, f)))
	}
	if !maps.Equal(before, after) {
		t.Fatalf("a refused start changed the files: %v -> %v", slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
	}
	return err
}

// snapshotThen200 writes 50 keys, snapshots (dump.pdb, generation 2) and
// writes 200 keys after the snapshot, each acknowledged with fsync always.
func snapshotThen200(t *testing.T) (dir string, all map[string]string) {
	dir = t.TempDir()
	db, s := openStore(t, dir, FsyncAlways)
	all = map[string]string{}
	for i := range 50 {
		k := fmt.Sprintf("before-%d", i)
		if err := db.Wait(set(t, s, k, "v")); err != nil {
			t.Fatal(err)
		}
		all[k] = "v"
	}
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		k := fmt.Sprintf("after-%d", i)
		if err := db.Wait(set(t, s, k, "v")); err != nil {
			t.Fatal(err)
		}
		all[k] = "v"
	}
	crash(db)
	return dir, all
}

// TestDeletedGenerationAfterSnapshotRefused is the reproduction of issue
// 13 item 6: deleting the AOF generation that follows dump.pdb used to
// start the server from the snapshot alone, losing the 200 keys written
// after it. Now the start is refused, naming the missing file and the
// remedy; check-aof reports it; check-aof --fix creates it empty, and then
// the snapshot alone starts (the loss is the operator's choice).
func TestDeletedGenerationAfterSnapshotRefused(t *testing.T) {
	dir, all := snapshotThen200(t)
	db, md := open(t, dir, FsyncNo) // intact: everything
	db.Close()
	if !maps.Equal(md.m, all) {
		t.Fatalf("intact directory recovered %d keys, want %d", len(md.m), len(all))
	}
	if err := os.Remove(aofPath(dir, 2)); err != nil {
		t.Fatal(err)
	}
	err := refused(t, dir, ErrMissingGeneration, aofPath(dir, 2), "dump.pdb", "restore", "check-aof --fix --dir "+dir)
	t.Logf("refused: %v", err)
	r, cerr := CheckDir(dir, decodeTest)
	if cerr != nil || r.OK() || r.Gap != 2 || len(r.Files) != 0 {
		t.Fatalf("check: %+v %v", r, cerr)
	}
	actions, after, ferr := Fix(dir, decodeTest)
	if ferr != nil || len(actions) != 1 || !actions[0].Created || actions[0].Path != aofPath(dir, 2) || !after.OK() {
		t.Fatalf("fix: %+v %v", actions, ferr)
	}
	db, md = open(t, dir, FsyncNo)
	db.Close()
	if len(md.m) != 50 {
		t.Fatalf("after check-aof --fix: %d keys, want the snapshot's 50", len(md.m))
	}
}

// failedSwitches leaves generations 1 (SET a, SET b), 2 (SET c) and 3
// (SET d) by snapshots that fail after switching generation.
func failedSwitches(t *testing.T) string {
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncAlways)
	testHookBeforeRename = func() error { return errors.New("injected: no snapshot") }
	defer func() { testHookBeforeRename = nil }()
	db.Wait(set(t, s, "a", "1"))
	db.Wait(set(t, s, "b", "2"))
	db.Snapshot(s)
	db.Wait(set(t, s, "c", "3"))
	db.Snapshot(s)
	db.Wait(set(t, s, "d", "4"))
	db.Close()
	if got := files(t, dir); !slices.Equal(got, []string{"appendonly.1.aof", "appendonly.2.aof", "appendonly.3.aof"}) {
		t.Fatalf("files %v", got)
	}
	return dir
}

// TestDeletedLastGenerationRefused: the last generation removed. The one
// before it ends with a record naming it, so the start is refused; --fix
// cuts that record off and the rest starts.
func TestDeletedLastGenerationRefused(t *testing.T) {
	dir := failedSwitches(t)
	os.Remove(aofPath(dir, 3))
	refused(t, dir, ErrMissingGeneration, aofPath(dir, 3), "check-aof --fix")
	r, _ := CheckDir(dir, decodeTest)
	if r.OK() || r.Gap != 3 || len(r.Files) != 2 || !r.Files[1].Ended {
		t.Fatalf("check: %+v", r)
	}
	actions, after, err := Fix(dir, decodeTest)
	if err != nil || len(actions) != 1 || !actions[0].Truncated || actions[0].Path != aofPath(dir, 2) || !after.OK() {
		t.Fatalf("fix: %+v %v", actions, err)
	}
	db, md := open(t, dir, FsyncNo)
	db.Close()
	if !maps.Equal(md.m, map[string]string{"a": "1", "b": "2", "c": "3"}) {
		t.Fatal(md.m)
	}
}

// TestTruncatedGenerationRefused: a generation that another follows cut
// short, at a record boundary (no torn record to see) or to exactly its
// 24-byte header, is refused, naming it; so is a record removed from its
// middle. --fix keeps what is left and sets the later generations aside.
func TestTruncatedGenerationRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(img []byte, offs []int) []byte
		left map[string]string // what starts after check-aof --fix
	}{
		{"last record and end record cut", func(img []byte, offs []int) []byte { return img[:offs[1]] },
			map[string]string{"a": "1"}},
		{"end record cut", func(img []byte, offs []int) []byte { return img[:offs[2]] },
			map[string]string{"a": "1", "b": "2"}},
		{"header only", func(img []byte, offs []int) []byte { return img[:aofHeaderSize] },
			map[string]string{}},
		{"middle record removed", func(img []byte, offs []int) []byte {
			return append(slices.Clone(img[:offs[0]]), img[offs[1]:]...)
		}, map[string]string{"b": "2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := failedSwitches(t)
			img := readFile(t, aofPath(dir, 1))
			offs := frameOffsets(t, img) // SET a, SET b, end of generation
			if len(offs) != 3 {
				t.Fatalf("generation 1 has %d records", len(offs))
			}
			writeFile(t, aofPath(dir, 1), c.edit(img, offs))
			err := refused(t, dir, ErrCorrupt, aofPath(dir, 1), "check-aof --fix")
			t.Logf("refused: %v", err)
			r, _ := CheckDir(dir, decodeTest)
			if r.OK() || !r.Files[0].Fatal() {
				t.Fatalf("check: %+v", r.Files)
			}
			if _, after, err := Fix(dir, decodeTest); err != nil || !after.OK() {
				t.Fatalf("fix: %v", err)
			}
			db, md := open(t, dir, FsyncNo)
			db.Close()
			if !maps.Equal(md.m, c.left) {
				t.Fatalf("after fix: %v, want %v", md.m, c.left)
			}
		})
	}
}

// TestHeaderOnlyAOF: a generation that is exactly its 24-byte header is
// accepted when nothing says more should be there, and refused otherwise.
func TestHeaderOnlyAOF(t *testing.T) {
	t.Run("fresh directory", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, aofPath(dir, 1), encodeAOFHeader(1))
		db, md := open(t, dir, FsyncNo)
		db.Close()
		if len(md.m) != 0 {
			t.Fatal(md.m)
		}
	})
	t.Run("snapshot and no write after it", func(t *testing.T) {
		dir := t.TempDir()
		db, s := openStore(t, dir, FsyncAlways)
		db.Wait(set(t, s, "k", "v"))
		if err := db.Snapshot(s); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if st, _ := os.Stat(aofPath(dir, 2)); st == nil || st.Size() != aofHeaderSize {
			t.Fatalf("generation 2: %v", st)
		}
		db, md := open(t, dir, FsyncNo)
		db.Close()
		if !maps.Equal(md.m, map[string]string{"k": "v"}) {
			t.Fatal(md.m)
		}
	})
	t.Run("snapshot generation followed by another", func(t *testing.T) {
		// dump.pdb says replay starts at 2; 3 exists, so 2 must end with
		// its end record: a header-only 2 lost that (and its records).
		dir := t.TempDir()
		db, s := openStore(t, dir, FsyncAlways)
		db.Wait(set(t, s, "k", "v"))
		if err := db.Snapshot(s); err != nil {
			t.Fatal(err)
		}
		db.Wait(set(t, s, "k2", "v"))
		testHookBeforeRename = func() error { return errors.New("injected") }
		db.Snapshot(s)
		testHookBeforeRename = nil
		db.Wait(set(t, s, "k3", "v"))
		db.Close()
		writeFile(t, aofPath(dir, 2), encodeAOFHeader(2))
		refused(t, dir, ErrCorrupt, aofPath(dir, 2), aofFileName(3))
	})
	t.Run("version 1 followed by another", func(t *testing.T) {
		// Written by the version 1 code after failed snapshots (see
		// testdata/legacy-v1/failed-retries): nothing says more was there.
		dir := t.TempDir()
		writeFile(t, aofPath(dir, 1), encodeAOFHeaderVersion(1, aofVersion1))
		writeFile(t, aofPath(dir, 2), encodeAOFHeaderVersion(2, aofVersion1))
		db, _ := open(t, dir, FsyncNo)
		db.Close()
	})
	t.Run("version 2 followed by another", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, aofPath(dir, 1), encodeAOFHeader(1))
		writeFile(t, aofPath(dir, 2), encodeAOFHeader(2))
		refused(t, dir, ErrCorrupt, aofPath(dir, 1), "end-of-generation")
	})
}

// TestInterruptedSwitch: a crash after the end-of-generation record was
// written and before the next generation got its name leaves the record
// and appendonly.<next>.aof.tmp; the start cuts the record off and goes on
// in that generation. Without the temporary file the next generation was
// deleted, and the start is refused.
func TestInterruptedSwitch(t *testing.T) {
	mk := func(t *testing.T) (string, []byte) {
		dir := t.TempDir()
		db, s := openStore(t, dir, FsyncAlways)
		db.Wait(set(t, s, "a", "1"))
		db.Wait(set(t, s, "b", "2"))
		db.Close()
		img := readFile(t, aofPath(dir, 1))
		closed := appendEndOfGen(slices.Clone(img), endOfGen{next: 2, records: 2, offset: int64(len(img))})
		writeFile(t, aofPath(dir, 1), closed)
		return dir, img
	}
	t.Run("temporary file present", func(t *testing.T) {
		dir, img := mk(t)
		writeFile(t, aofPath(dir, 2)+tmpSuffix, encodeAOFHeader(2))
		if r, _ := CheckDir(dir, decodeTest); !r.OK() || !r.Files[0].Torn {
			t.Fatalf("check: %+v", r.Files)
		}
		db, s := openStore(t, dir, FsyncAlways)
		if got := contents(s); !maps.Equal(got, map[string]string{"a": "1", "b": "2"}) {
			t.Fatal(got)
		}
		if got := string(readFile(t, aofPath(dir, 1))); got != string(img) {
			t.Fatal("the end-of-generation record was not cut off")
		}
		db.Wait(set(t, s, "c", "3"))
		db.Close()
		if got := files(t, dir); !slices.Equal(got, []string{"appendonly.1.aof"}) {
			t.Fatalf("files %v", got)
		}
		db, md := open(t, dir, FsyncNo)
		db.Close()
		if !maps.Equal(md.m, map[string]string{"a": "1", "b": "2", "c": "3"}) {
			t.Fatal(md.m)
		}
	})
	t.Run("next generation deleted", func(t *testing.T) {
		dir, _ := mk(t)
		refused(t, dir, ErrMissingGeneration, aofPath(dir, 2))
	})
	t.Run("end record torn", func(t *testing.T) {
		// Cut in the middle of the end record: a torn tail, cut off.
		dir, img := mk(t)
		closed := readFile(t, aofPath(dir, 1))
		writeFile(t, aofPath(dir, 1), closed[:len(img)+eogFrameSize/2])
		db, md := open(t, dir, FsyncNo)
		db.Close()
		if len(md.m) != 2 || string(readFile(t, aofPath(dir, 1))) != string(img) {
			t.Fatalf("%v", md.m)
		}
	})
	t.Run("bytes after the end record", func(t *testing.T) {
		dir, _ := mk(t)
		writeFile(t, aofPath(dir, 2), encodeAOFHeader(2))
		b := readFile(t, aofPath(dir, 1))
		n, _ := payloadSize([][]byte{[]byte("SET"), []byte("x"), []byte("y")})
		writeFile(t, aofPath(dir, 1), appendFrame(b, [][]byte{[]byte("SET"), []byte("x"), []byte("y")}, n))
		refused(t, dir, ErrCorrupt, aofPath(dir, 1), "after the end-of-generation record")
	})
	t.Run("wrong next generation", func(t *testing.T) {
		dir, img := mk(t)
		writeFile(t, aofPath(dir, 1), appendEndOfGen(slices.Clone(img), endOfGen{next: 7, records: 2, offset: int64(len(img))}))
		writeFile(t, aofPath(dir, 2), encodeAOFHeader(2))
		refused(t, dir, ErrCorrupt, aofPath(dir, 1), "generation 7")
	})
}

// TestFailedSwitchRemovesEndRecord: when the switch to the next generation
// fails after the end-of-generation record was written (here the rename
// fails: a directory has the next generation's name), the record is cut
// off again, writes go on in the same generation, and a restart replays
// them all.
func TestFailedSwitchRemovesEndRecord(t *testing.T) {
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncAlways)
	db.Wait(set(t, s, "a", "1"))
	if err := os.Mkdir(aofPath(dir, 2), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(aofPath(dir, 2), "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	size := len(readFile(t, aofPath(dir, 1)))
	if err := db.Snapshot(s); err == nil || !strings.Contains(err.Error(), "rename") {
		t.Fatalf("snapshot: %v", err)
	}
	if got := len(readFile(t, aofPath(dir, 1))); got != size {
		t.Fatalf("generation 1 is %d bytes after the failed switch, was %d", got, size)
	}
	if err := db.Wait(set(t, s, "b", "2")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	os.RemoveAll(aofPath(dir, 2))
	db, md := open(t, dir, FsyncNo)
	db.Close()
	if !maps.Equal(md.m, map[string]string{"a": "1", "b": "2"}) {
		t.Fatal(md.m)
	}
	if got := files(t, dir); !slices.Equal(got, []string{"appendonly.1.aof"}) {
		t.Fatalf("files %v", got)
	}
}
