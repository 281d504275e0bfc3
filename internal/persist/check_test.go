package persist

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeRecords creates dir with one AOF generation of n SET records and
// returns the file's image.
func writeRecords(t *testing.T, dir string, n int) []byte {
	t.Helper()
	db, _ := open(t, dir, FsyncNo)
	for i := range n {
		appendRec(t, db, "SET", fmt.Sprintf("key-%d", i), "value")
	}
	db.Close()
	return readFile(t, aofPath(dir, 1))
}

func TestCheckCleanDir(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, 5)
	r, err := CheckDir(dir, decodeTest)
	if err != nil || !r.OK() || len(r.Files) != 1 || r.Files[0].Records != 5 || r.Files[0].Problem != "" {
		t.Fatalf("%+v %v", r, err)
	}
	actions, after, err := Fix(dir, decodeTest)
	if err != nil || len(actions) != 0 || !after.OK() {
		t.Fatalf("Fix on a clean dir: %v %v", actions, err)
	}
}

// TestCheckMidFileCorruption: the start is refused with a message naming
// the file, the offset and check-aof; check-aof reports file, offset,
// record number and reason; --fix keeps a backup, truncates to the last
// good record, and the server starts with the records before the damage.
func TestCheckMidFileCorruption(t *testing.T) {
	dir := t.TempDir()
	img := writeRecords(t, dir, 6)
	offs := frameOffsets(t, img)
	bad := flip(img, offs[3]+frameHeaderSize+2)
	p := aofPath(dir, 1)
	writeFile(t, p, bad)

	md := newModel()
	_, err := Open(Options{Dir: dir}, decodeTest, md.load, md.replay)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatal(err)
	}
	for _, want := range []string{p, fmt.Sprintf("byte offset %d", offs[3]), "record 4", "probly check-aof --fix --dir " + dir, ".bak"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("start-up error does not contain %q: %v", want, err)
		}
	}

	r, err := CheckDir(dir, decodeTest)
	if err != nil {
		t.Fatal(err)
	}
	f := r.Files[0]
	if r.OK() || !f.Fatal() || f.Offset != int64(offs[3]) || f.Record != 4 || f.Records != 3 || f.Good != int64(offs[3]) ||
		!strings.Contains(f.Problem, "checksum mismatch") || !strings.Contains(f.Problem, "followed by more data") {
		t.Fatalf("check: %+v", f)
	}
	if d := f.Describe(); !strings.Contains(d, "CORRUPT at byte offset") || !strings.Contains(d, "(record 4)") {
		t.Fatal(d)
	}
	if !bytes.Equal(readFile(t, p), bad) {
		t.Fatal("CheckDir changed the file")
	}

	actions, after, err := Fix(dir, decodeTest)
	if err != nil || len(actions) != 1 || !after.OK() {
		t.Fatalf("Fix: %+v %+v %v", actions, after, err)
	}
	a := actions[0]
	if !a.Truncated || a.Path != p || a.Backup != p+".bak" || a.Size != int64(offs[3]) || a.Dropped != int64(len(bad)-offs[3]) {
		t.Fatalf("action %+v", a)
	}
	if !bytes.Equal(readFile(t, p+".bak"), bad) || !bytes.Equal(readFile(t, p), bad[:offs[3]]) {
		t.Fatal("backup or truncation wrong")
	}
	db, md := open(t, dir, FsyncNo)
	defer db.Close()
	if len(md.records) != 3 {
		t.Fatalf("replayed %d records after the fix, want 3", len(md.records))
	}
}

func TestCheckTornTail(t *testing.T) {
	dir := t.TempDir()
	img := writeRecords(t, dir, 4)
	p := aofPath(dir, 1)
	writeFile(t, p, img[:len(img)-3])
	r, err := CheckDir(dir, decodeTest)
	if err != nil || !r.OK() || !r.Files[0].Torn || r.Files[0].Records != 3 {
		t.Fatalf("%+v %v", r.Files, err)
	}
	if d := r.Files[0].Describe(); !strings.Contains(d, "torn tail") {
		t.Fatal(d)
	}
	actions, after, err := Fix(dir, decodeTest)
	if err != nil || len(actions) != 1 || !after.OK() || after.Files[0].Problem != "" {
		t.Fatalf("%+v %v", actions, err)
	}
}

// TestCheckOlderGeneration: damage in a generation that is not the last
// cuts the log there; the later generations are set aside.
func TestCheckOlderGeneration(t *testing.T) {
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncNo)
	set(t, s, "a", "1")
	set(t, s, "b", "2")
	testHookBeforeRename = func() error { return errors.New("no snapshot") }
	db.Snapshot(s) // rotates to generation 2, keeps generation 1
	set(t, s, "c", "3")
	db.Snapshot(s) // and 3
	testHookBeforeRename = nil
	set(t, s, "d", "4")
	db.Close()
	img1 := readFile(t, aofPath(dir, 1))
	offs := frameOffsets(t, img1)                        // SET a, SET b, end of generation
	writeFile(t, aofPath(dir, 1), flip(img1, offs[2]-1)) // last command record of gen 1

	r, _ := CheckDir(dir, decodeTest)
	if r.OK() || !r.Files[0].Fatal() || !strings.Contains(r.Files[0].Problem, "not the last") {
		t.Fatalf("%+v", r.Files)
	}
	actions, after, err := Fix(dir, decodeTest)
	if err != nil || len(actions) != 3 || !after.OK() {
		t.Fatalf("%+v %v", actions, err)
	}
	if !actions[0].Truncated || actions[0].Size != int64(offs[1]) || actions[1].Truncated || actions[2].Truncated {
		t.Fatalf("%+v", actions)
	}
	if got := files(t, dir); !slices.Equal(got, []string{"appendonly.1.aof", "appendonly.1.aof.bak", "appendonly.2.aof.bak", "appendonly.3.aof.bak"}) {
		t.Fatal(got)
	}
	db, md := open(t, dir, FsyncNo)
	defer db.Close()
	if !maps.Equal(md.m, map[string]string{"a": "1"}) {
		t.Fatal(md.m)
	}
}

func TestCheckMissingGenerationAndBadHeader(t *testing.T) {
	mk := func(t *testing.T) string {
		dir := t.TempDir()
		db, s := openStore(t, dir, FsyncNo)
		testHookBeforeRename = func() error { return errors.New("no snapshot") }
		for i := range 3 {
			set(t, s, fmt.Sprint(i), "v")
			db.Snapshot(s)
		}
		testHookBeforeRename = nil
		db.Close()
		return dir // generations 1..4, one record in each of 1..3
	}
	t.Run("gap", func(t *testing.T) {
		dir := mk(t)
		os.Remove(aofPath(dir, 2))
		r, _ := CheckDir(dir, decodeTest)
		if r.OK() || r.Gap != 2 || len(r.Files) != 1 {
			t.Fatalf("%+v", r)
		}
		actions, after, err := Fix(dir, decodeTest)
		// 3 and 4 set aside, and 1's end-of-generation record (naming
		// the missing 2) cut off.
		if err != nil || len(actions) != 3 || !after.OK() || !strings.Contains(actions[0].Why, "appendonly.2.aof") ||
			!actions[2].Truncated || actions[2].Path != aofPath(dir, 1) || !strings.Contains(actions[2].Why, "appendonly.2.aof") {
			t.Fatalf("%+v %v", actions, err)
		}
		db, md := open(t, dir, FsyncNo)
		defer db.Close()
		if !maps.Equal(md.m, map[string]string{"0": "v"}) {
			t.Fatal(md.m)
		}
	})
	t.Run("header", func(t *testing.T) {
		dir := mk(t)
		writeFile(t, aofPath(dir, 3), flip(readFile(t, aofPath(dir, 3)), 2))
		md := newModel()
		if _, err := Open(Options{Dir: dir}, decodeTest, md.load, md.replay); err == nil || !strings.Contains(err.Error(), "check-aof --fix") {
			t.Fatalf("Open: %v", err)
		}
		actions, after, err := Fix(dir, decodeTest)
		if err != nil || len(actions) != 3 || !after.OK() || !strings.Contains(actions[0].Why, "damaged header") ||
			!actions[2].Truncated || actions[2].Path != aofPath(dir, 2) {
			t.Fatalf("%+v %v", actions, err)
		}
		db, md := open(t, dir, FsyncNo)
		defer db.Close()
		if !maps.Equal(md.m, map[string]string{"0": "v", "1": "v"}) {
			t.Fatal(md.m)
		}
	})
	t.Run("version", func(t *testing.T) {
		dir := mk(t)
		writeFile(t, aofPath(dir, 2), versioned(readFile(t, aofPath(dir, 2)), 9))
		if _, _, err := Fix(dir, decodeTest); !errors.Is(err, ErrUnfixable) {
			t.Fatal(err)
		}
	})
}

func TestCheckSnapshotAndLock(t *testing.T) {
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncNo)
	set(t, s, "a", "1")
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Fix(dir, decodeTest); !errors.Is(err, ErrLocked) {
		t.Fatalf("Fix while the server runs: %v", err)
	}
	db.Close()
	r, err := CheckDir(dir, decodeTest)
	if err != nil || !r.OK() || r.SnapshotKeys != 1 || r.SnapshotGen != 2 {
		t.Fatalf("%+v %v", r, err)
	}
	snap := filepath.Join(dir, snapshotName)
	writeFile(t, snap, flip(readFile(t, snap), 50))
	r, _ = CheckDir(dir, decodeTest)
	if r.OK() || r.SnapshotErr == nil {
		t.Fatalf("%+v", r)
	}
	if _, _, err := Fix(dir, decodeTest); !errors.Is(err, ErrUnfixable) {
		t.Fatal(err)
	}
}

func TestCheckFileAndFixFile(t *testing.T) {
	dir := t.TempDir()
	img := writeRecords(t, dir, 5)
	offs := frameOffsets(t, img)
	p := filepath.Join(t.TempDir(), "copy.aof")
	writeFile(t, p, flip(img, offs[2]+9))
	fc, err := CheckFile(p)
	if err != nil || fc.Gen != 1 || !fc.Fatal() || fc.Record != 3 {
		t.Fatalf("%+v %v", fc, err)
	}
	a, after, err := FixFile(p)
	if err != nil || a == nil || after.Problem != "" || after.Records != 2 || a.Backup != p+".bak" {
		t.Fatalf("%+v %+v %v", a, after, err)
	}
	// A second backup does not overwrite the first.
	writeFile(t, p, flip(readFile(t, p), aofHeaderSize+1))
	if a, _, err = FixFile(p); err != nil || a.Backup != p+".bak.2" {
		t.Fatalf("%+v %v", a, err)
	}
	writeFile(t, p, flip(img, 3))
	if _, _, err := FixFile(p); !errors.Is(err, ErrUnfixable) {
		t.Fatal(err)
	}
}
