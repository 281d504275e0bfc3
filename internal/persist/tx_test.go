package persist

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// txLog writes: SET a 1; MULTI; SET b 2; APPEND a x; EXEC; an empty
// transaction (logs nothing); MULTI; SET c 3; EXEC.
func txLog(t *testing.T, dir string) {
	t.Helper()
	db, _ := open(t, dir, FsyncNo)
	appendRec(t, db, "SET", "a", "1")
	db.BeginTx()
	appendRec(t, db, "SET", "b", "2")
	appendRec(t, db, "APPEND", "a", "x")
	if seq, err := db.EndTx(); err != nil || seq == 0 {
		t.Fatalf("EndTx = %d, %v", seq, err)
	}
	db.BeginTx()
	if seq, err := db.EndTx(); err != nil || seq != 0 {
		t.Fatalf("EndTx of an empty transaction = %d, %v; want 0, nil", seq, err)
	}
	db.BeginTx()
	appendRec(t, db, "SET", "c", "3")
	if _, err := db.EndTx(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestTxUnitReplayed(t *testing.T) {
	dir := t.TempDir()
	txLog(t, dir)
	img := readFile(t, aofPath(dir, 1))
	if n := len(frameOffsets(t, img)); n != 8 {
		t.Fatalf("%d records in the file, want 8 (1 + MULTI 2 EXEC + MULTI 1 EXEC)", n)
	}
	db, md := open(t, dir, FsyncNo)
	defer db.Close()
	want := [][]string{{"SET", "a", "1"}, {"SET", "b", "2"}, {"APPEND", "a", "x"}, {"SET", "c", "3"}}
	if !equalRecords(md.records, want) {
		t.Fatalf("replayed %q, want %q", md.records, want)
	}
	if fc, err := CheckFile(aofPath(dir, 1)); err != nil || fc.Problem != "" {
		t.Fatalf("CheckFile: %+v, %v", fc, err)
	}
}

// Every cut of the file inside the second unit (from its MULTI record to
// just before the end of its EXEC record) recovers exactly the first unit,
// truncates the file at the second unit's MULTI, and check-aof calls it a
// torn tail.
func TestTxTornTail(t *testing.T) {
	src := t.TempDir()
	txLog(t, src)
	img := readFile(t, aofPath(src, 1))
	offs := frameOffsets(t, img)
	multi2 := offs[5]
	want := [][]string{{"SET", "a", "1"}, {"SET", "b", "2"}, {"APPEND", "a", "x"}}
	for cut := multi2 + 1; cut < len(img); cut++ {
		dir := t.TempDir()
		writeFile(t, aofPath(dir, 1), img[:cut])
		fc, err := CheckFile(aofPath(dir, 1))
		if err != nil || !fc.Torn || fc.Good != int64(multi2) || fc.Fatal() {
			t.Fatalf("cut at %d: CheckFile = %+v, %v; want a torn tail at %d", cut, fc, err, multi2)
		}
		if cut == len(img)-1 {
			// check-aof --fix cuts the same tail (on a copy).
			fixDir := t.TempDir()
			writeFile(t, aofPath(fixDir, 1), img[:cut])
			if _, _, err := FixFile(aofPath(fixDir, 1)); err != nil {
				t.Fatalf("FixFile: %v", err)
			}
			if st, _ := os.Stat(aofPath(fixDir, 1)); st.Size() != int64(multi2) {
				t.Fatalf("FixFile left %d bytes, want %d", st.Size(), multi2)
			}
		}
		db, md := open(t, dir, FsyncNo)
		if !equalRecords(md.records, want) {
			t.Fatalf("cut at %d: replayed %q, want %q", cut, md.records, want)
		}
		if st, _ := os.Stat(aofPath(dir, 1)); st.Size() != int64(multi2) {
			t.Fatalf("cut at %d: file is %d bytes after recovery, want %d", cut, st.Size(), multi2)
		}
		// The log goes on cleanly after the cut.
		appendRec(t, db, "SET", "new", "v")
		db.Close()
		db, md = open(t, dir, FsyncNo)
		if len(md.records) != 4 || md.m["new"] != "v" || md.m["c"] != "" {
			t.Fatalf("cut at %d: after append and reopen: %q", cut, md.records)
		}
		db.Close()
	}
}

// A unit whose record was refused ends with DISCARD: recovery drops it and
// applies what follows.
func TestTxBrokenUnitDropped(t *testing.T) {
	dir := t.TempDir()
	db, _ := open(t, dir, FsyncNo)
	db.BeginTx()
	appendRec(t, db, "SET", "x", "1")
	huge := make([][]byte, 2)
	huge[0], huge[1] = []byte("SET"), make([]byte, MaxRecordSize+1)
	if _, err := db.Append(huge); err == nil {
		t.Fatal("Append of an oversized record succeeded")
	}
	if _, err := db.EndTx(); !errors.Is(err, ErrTxBroken) {
		t.Fatalf("EndTx = %v, want ErrTxBroken", err)
	}
	appendRec(t, db, "SET", "y", "2")
	db.Close()
	db, md := open(t, dir, FsyncNo)
	defer db.Close()
	if want := [][]string{{"SET", "y", "2"}}; !equalRecords(md.records, want) {
		t.Fatalf("replayed %q, want %q", md.records, want)
	}
}

// Transaction records out of place (a MULTI inside a unit, an EXEC or a
// DISCARD outside one) are corruption, not a torn tail.
func TestTxMalformedUnitsRefused(t *testing.T) {
	for name, recs := range map[string][][]string{
		"nested MULTI":  {{"MULTI"}, {"SET", "a", "1"}, {"MULTI"}, {"EXEC"}},
		"EXEC alone":    {{"SET", "a", "1"}, {"EXEC"}, {"SET", "b", "2"}},
		"DISCARD alone": {{"DISCARD"}},
	} {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			db, _ := open(t, dir, FsyncNo)
			for _, r := range recs {
				appendRec(t, db, r...)
			}
			db.Close()
			md := newModel()
			db, err := Open(Options{Dir: dir, Fsync: FsyncNo}, decodeTest, md.load, md.replay)
			if !errors.Is(err, ErrCorrupt) {
				if db != nil {
					db.Close()
				}
				t.Fatalf("Open = %v, want ErrCorrupt", err)
			}
			if fc, _ := CheckFile(aofPath(dir, 1)); !fc.Fatal() {
				t.Fatalf("CheckFile = %+v, want a fatal problem", fc)
			}
		})
	}
}

// A snapshot cut while a unit is open is refused (the callers keep cuts
// out of transactions; this is the safety net).
func TestTxSnapshotCutRefusedInsideUnit(t *testing.T) {
	dir := t.TempDir()
	db, store := openStore(t, dir, FsyncNo)
	defer db.Close()
	set(t, store, "a", "1")
	db.BeginTx()
	set(t, store, "b", "2")
	if err := db.Snapshot(store); err == nil || !strings.Contains(err.Error(), "inside a transaction") {
		t.Fatalf("Snapshot inside a unit = %v", err)
	}
	if _, err := db.EndTx(); err != nil {
		t.Fatal(err)
	}
	if err := db.Snapshot(store); err != nil {
		t.Fatal(err)
	}
}
