package persist

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/testutil"
)

func TestFrameRoundTrip(t *testing.T) {
	cases := [][][]byte{
		{[]byte("PING")},
		{[]byte("SET"), []byte("k"), []byte("")},
		{[]byte(""), []byte(""), []byte("")},
		{[]byte("SET"), bytes.Repeat([]byte{0xff}, 300), bytes.Repeat([]byte("x"), 70000)},
	}
	for _, args := range cases {
		n, err := payloadSize(args)
		if err != nil {
			t.Fatal(err)
		}
		fr := appendFrame(nil, args, n)
		if len(fr) != frameHeaderSize+n {
			t.Fatalf("frame size %d, want %d", len(fr), frameHeaderSize+n)
		}
		got, err := decodeArgs(fr[frameHeaderSize:])
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, args, bytes.Equal) {
			t.Fatalf("round trip: got %q want %q", got, args)
		}
		if used, ok := walkPayload(bytesSource(fr[frameHeaderSize:]), int64(n)); !ok || used != int64(n) {
			t.Fatalf("walkPayload = %d, %v; want %d, true", used, ok, n)
		}
		if _, ok := walkPayload(bytesSource(fr[frameHeaderSize:len(fr)-1]), int64(n-1)); ok {
			t.Fatalf("walkPayload completed on a prefix")
		}
	}
	if _, err := payloadSize(nil); !errors.Is(err, ErrEmptyRecord) {
		t.Fatalf("empty record: %v", err)
	}
	for _, bad := range [][]byte{{}, {0}, {2, 1, 'a'}, {1, 5, 'a'}, {1, 1, 'a', 'b'}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}} {
		if _, err := decodeArgs(bad); err == nil {
			t.Errorf("decodeArgs(%x) accepted", bad)
		}
	}
}

func TestOptionsValidated(t *testing.T) {
	md := newModel()
	dir := t.TempDir()
	for _, o := range []Options{{Dir: dir, Fsync: "sometimes"}, {Dir: "", Fsync: "always"}} {
		if _, err := Open(o, decodeTest, md.load, md.replay); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("Open(%+v) = %v, want ErrInvalidOptions", o, err)
		}
	}
	if _, err := Open(Options{Dir: dir}, nil, md.load, md.replay); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("nil decoder: %v", err)
	}
	// A nested directory is created.
	nested := filepath.Join(dir, "a", "b")
	db, _ := open(t, nested, "")
	if got := files(t, nested); !slices.Equal(got, []string{"appendonly.1.aof"}) {
		t.Fatalf("files in a fresh dir: %v", got)
	}
	if _, err := Open(Options{Dir: nested}, decodeTest, md.load, md.replay); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open of an open dir: %v, want ErrLocked", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := db.Append([][]byte{[]byte("SET"), []byte("a"), []byte("b")}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	if err := db.Snapshot(nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Snapshot after Close: %v", err)
	}
}

func TestAppendCloseOpenReplaysInOrder(t *testing.T) {
	for _, fsync := range []string{FsyncAlways, FsyncEverySec, FsyncNo} {
		t.Run(fsync, func(t *testing.T) {
			dir := t.TempDir()
			db, _ := open(t, dir, fsync)
			var want [][]string
			for i := range 500 {
				var rec []string
				switch i % 5 {
				case 0, 1, 2:
					rec = []string{"SET", fmt.Sprintf("k%d", i%37), fmt.Sprintf("v%d", i)}
				case 3:
					rec = []string{"APPEND", fmt.Sprintf("k%d", i%37), "+"}
				case 4:
					rec = []string{"DEL", fmt.Sprintf("k%d", (i*7)%37)}
				}
				seq := appendRec(t, db, rec...)
				if seq != uint64(i+1) {
					t.Fatalf("seq %d, want %d", seq, i+1)
				}
				if i%50 == 49 { // each Wait is an fsync with "always"
					if err := db.Wait(seq); err != nil {
						t.Fatal(err)
					}
				}
				want = append(want, rec)
			}
			if db.Changes() != 500 {
				t.Fatalf("Changes = %d", db.Changes())
			}
			size := db.AOFSize()
			if st, _ := os.Stat(aofPath(dir, 1)); st.Size() != size {
				t.Fatalf("AOFSize %d, file %d", size, st.Size())
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db, md := open(t, dir, fsync)
			defer db.Close()
			if !equalRecords(md.records, want) {
				t.Fatalf("replayed %d records, not the %d appended in order", len(md.records), len(want))
			}
			if db.Changes() != 500 || db.AOFSize() != size {
				t.Fatalf("after reopen Changes=%d AOFSize=%d", db.Changes(), db.AOFSize())
			}
			// Appending after recovery continues the same file.
			appendRec(t, db, "SET", "after", "reopen")
			db.Close()
			db2, md2 := open(t, dir, fsync)
			defer db2.Close()
			if len(md2.records) != 501 || md2.m["after"] != "reopen" {
				t.Fatalf("second reopen: %d records", len(md2.records))
			}
		})
	}
}

func TestSnapshotThenTail(t *testing.T) {
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncEverySec)
	want := map[string]string{}
	for i := range 200 {
		k, v := fmt.Sprintf("user-%d", i), fmt.Sprintf("value-%d", i)
		set(t, s, k, v)
		want[k] = v
	}
	before := db.LastSave()
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	if !db.LastSaveOK() || !db.LastSave().After(before) || db.InProgress() {
		t.Fatalf("after Snapshot: ok=%v lastsave=%v inprogress=%v", db.LastSaveOK(), db.LastSave(), db.InProgress())
	}
	if got := files(t, dir); !slices.Equal(got, []string{"appendonly.2.aof", "dump.pdb"}) {
		t.Fatalf("files after snapshot: %v (old AOF not deleted?)", got)
	}
	if db.Changes() != 0 || db.AOFSize() != aofHeaderSize {
		t.Fatalf("after snapshot Changes=%d AOFSize=%d", db.Changes(), db.AOFSize())
	}
	// The tail: overwrite, delete, add.
	for i := range 50 {
		k := fmt.Sprintf("user-%d", i)
		if i%2 == 0 {
			del(t, s, k)
			delete(want, k)
		} else {
			set(t, s, k, "new")
			want[k] = "new"
		}
	}
	set(t, s, "tail-key", "tail")
	want["tail-key"] = "tail"
	if db.Changes() != 51 {
		t.Fatalf("Changes = %d, want 51", db.Changes())
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, s = openStore(t, dir, FsyncEverySec)
	if got := contents(s); !maps.Equal(got, want) {
		t.Fatalf("recovered %d keys, want %d", len(got), len(want))
	}
	// A second snapshot compacts again, and recovery from it alone works.
	if err := db.BGSnapshot(s); err != nil {
		t.Fatal(err)
	}
	if !testutil.Eventually(t, 30*time.Second, func() bool { return !db.InProgress() }) {
		t.Fatal("the background snapshot did not finish in 30 s")
	}
	if !db.LastSaveOK() {
		t.Fatal("BGSnapshot failed")
	}
	if got := files(t, dir); !slices.Equal(got, []string{"appendonly.3.aof", "dump.pdb"}) {
		t.Fatalf("files after second snapshot: %v", got)
	}
	db.Close()
	_, s = openStore(t, dir, FsyncEverySec)
	if got := contents(s); !maps.Equal(got, want) {
		t.Fatalf("recovered %d keys from the second snapshot, want %d", len(got), len(want))
	}
}

func TestCrashBetweenRotationAndRename(t *testing.T) {
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncNo) // crash() keeps the page cache, as kill -9 does
	want := map[string]string{}
	put := func(k, v string) {
		if err := db.Wait(set(t, s, k, v)); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	for i := range 20 {
		put(fmt.Sprintf("a%d", i), "1")
	}
	// One good snapshot first, so recovery must combine an old snapshot
	// with two AOF generations.
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		put(fmt.Sprintf("b%d", i), "2")
	}
	crashErr := errors.New("simulated crash before rename")
	testHookBeforeRename = func() error { return crashErr }
	err := db.Snapshot(s)
	testHookBeforeRename = nil
	if !errors.Is(err, crashErr) {
		t.Fatalf("Snapshot = %v", err)
	}
	if db.LastSaveOK() {
		t.Fatal("LastSaveOK after a failed snapshot")
	}
	// Rotation happened (generation 3 exists), the snapshot still says 2.
	if got := files(t, dir); !slices.Equal(got, []string{"appendonly.2.aof", "appendonly.3.aof", "dump.pdb"}) {
		t.Fatalf("files: %v", got)
	}
	for i := range 20 {
		put(fmt.Sprintf("c%d", i), "3")
	}
	if err := db.Wait(del(t, s, "a0")); err != nil { // acknowledged
		t.Fatal(err)
	}
	delete(want, "a0")
	crash(db)

	db, s = openStore(t, dir, FsyncNo)
	defer db.Close()
	if got := contents(s); !maps.Equal(got, want) {
		t.Fatalf("recovered %v\nwant %v", got, want)
	}
	if db.Changes() != 41 {
		t.Fatalf("Changes after recovery = %d, want 41 (20 + 21 records since the snapshot)", db.Changes())
	}
}

func TestSnapshotOfUnmarshalableValueKeepsAOF(t *testing.T) {
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncNo)
	set(t, s, "a", "1")
	s.Update([]byte("bad"), func(tx *keyspace.Txn) { tx.Set(opaque{}) })
	err := db.Snapshot(s)
	if !errors.Is(err, ErrNotMarshaler) || !strings.Contains(err.Error(), "opaque-type") {
		t.Fatalf("Snapshot = %v, want ErrNotMarshaler naming the type", err)
	}
	if db.LastSaveOK() {
		t.Fatal("LastSaveOK after failure")
	}
	if got := files(t, dir); !slices.Equal(got, []string{"appendonly.1.aof", "appendonly.2.aof"}) {
		t.Fatalf("files: %v", got)
	}
	set(t, s, "b", "2")
	db.Close()
	db, md := open(t, dir, FsyncNo)
	defer db.Close()
	if !maps.Equal(md.m, map[string]string{"a": "1", "b": "2"}) {
		t.Fatalf("recovered %v", md.m)
	}
}

func TestSnapshotInProgress(t *testing.T) {
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncEverySec)
	defer db.Close()
	set(t, s, "k", "v")
	entered, release := make(chan struct{}), make(chan struct{})
	testHookBeforeRename = func() error {
		close(entered)
		<-release
		return nil
	}
	defer func() { testHookBeforeRename = nil }()
	if err := db.BGSnapshot(s); err != nil {
		t.Fatal(err)
	}
	<-entered
	if !db.InProgress() {
		t.Fatal("InProgress false during BGSnapshot")
	}
	if err := db.Snapshot(s); !errors.Is(err, ErrSnapshotInProgress) {
		t.Fatalf("Snapshot during BGSnapshot = %v", err)
	}
	if err := db.BGSnapshot(s); !errors.Is(err, ErrSnapshotInProgress) {
		t.Fatalf("BGSnapshot during BGSnapshot = %v", err)
	}
	// Writes continue while the snapshot file is written.
	set(t, s, "during", "x")
	close(release)
	if !testutil.Eventually(t, 30*time.Second, func() bool { return !db.InProgress() }) {
		t.Fatal("the background snapshot did not finish in 30 s")
	}
	if !db.LastSaveOK() {
		t.Fatal("snapshot failed")
	}
}

// TestTornTail cuts the last record at every byte offset: Open must succeed,
// drop exactly that record, and accept appends afterwards.
func TestTornTail(t *testing.T) {
	src := t.TempDir()
	db, _ := open(t, src, FsyncNo)
	var want [][]string
	for i := range 10 {
		rec := []string{"SET", fmt.Sprintf("key-%d", i), strings.Repeat("v", i*3)}
		appendRec(t, db, rec...)
		want = append(want, rec)
	}
	db.Close()
	img := readFile(t, aofPath(src, 1))
	offs := frameOffsets(t, img)
	last := offs[len(offs)-1]

	for cut := last; cut < len(img); cut++ {
		dir := t.TempDir()
		writeFile(t, aofPath(dir, 1), img[:cut])
		db, md := open(t, dir, FsyncNo)
		if !equalRecords(md.records, want[:9]) {
			t.Fatalf("cut at %d: replayed %d records", cut, len(md.records))
		}
		if st, _ := os.Stat(aofPath(dir, 1)); st.Size() != int64(last) {
			t.Fatalf("cut at %d: file is %d bytes after recovery, want %d", cut, st.Size(), last)
		}
		appendRec(t, db, "SET", "new", "value")
		db.Close()
		db, md = open(t, dir, FsyncNo)
		if len(md.records) != 10 || md.m["new"] != "value" {
			t.Fatalf("cut at %d: after append and reopen: %v", cut, md.records)
		}
		db.Close()
	}
}

func TestTornTailVariants(t *testing.T) {
	src := t.TempDir()
	db, _ := open(t, src, FsyncNo)
	for i := range 5 {
		appendRec(t, db, "SET", fmt.Sprintf("k%d", i), "value")
	}
	db.Close()
	img := readFile(t, aofPath(src, 1))
	offs := frameOffsets(t, img)
	last := offs[len(offs)-1]
	zeros := make([]byte, 5000)

	cases := []struct {
		name  string
		file  []byte
		keep  int // records expected
		trunc int // file size after recovery
	}{
		{"zero-filled after the records", append(slices.Clone(img), zeros...), 5, len(img)},
		{"partial record then zeros", append(slices.Clone(img[:last+10]), zeros...), 4, last},
		{"last record with bad checksum at EOF", flip(img, len(img)-1), 4, last},
		{"last record bad checksum then zeros", append(flip(img, len(img)-1), zeros...), 4, last},
		{"header cut short", img[:10], 0, aofHeaderSize},
		{"empty file", nil, 0, aofHeaderSize},
		{"header never written (zeros)", make([]byte, 100), 0, aofHeaderSize},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, aofPath(dir, 1), c.file)
			db, md := open(t, dir, FsyncNo)
			defer db.Close()
			if len(md.records) != c.keep {
				t.Fatalf("replayed %d records, want %d", len(md.records), c.keep)
			}
			if st, _ := os.Stat(aofPath(dir, 1)); st.Size() != int64(c.trunc) {
				t.Fatalf("size after recovery %d, want %d", st.Size(), c.trunc)
			}
		})
	}
}

func flip(b []byte, i int) []byte {
	c := slices.Clone(b)
	c[i] ^= 0x5a
	return c
}

// TestMidFileCorruption damages every byte of the first of several records:
// Open must refuse with an error naming the file and offset, and leave the
// file untouched.
func TestMidFileCorruption(t *testing.T) {
	src := t.TempDir()
	db, _ := open(t, src, FsyncNo)
	for i := range 6 {
		appendRec(t, db, "SET", fmt.Sprintf("key-%d", i), "some value")
	}
	db.Close()
	img := readFile(t, aofPath(src, 1))
	offs := frameOffsets(t, img)
	for i := offs[0]; i < offs[1]; i++ {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			bad := slices.Clone(img)
			bad[i] ^= mask
			dir := t.TempDir()
			p := aofPath(dir, 1)
			writeFile(t, p, bad)
			md := newModel()
			_, err := Open(Options{Dir: dir}, decodeTest, md.load, md.replay)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("byte %d ^ %#x: Open = %v, want ErrCorrupt", i, mask, err)
			}
			if msg := err.Error(); !strings.Contains(msg, p) || !strings.Contains(msg, fmt.Sprintf("byte offset %d", offs[0])) {
				t.Fatalf("byte %d ^ %#x: error does not name the file and offset %d: %v", i, mask, offs[0], err)
			}
			if len(md.records) != 0 {
				t.Fatalf("replayed records before the damage: %d", len(md.records))
			}
			if !bytes.Equal(readFile(t, p), bad) {
				t.Fatalf("byte %d: the damaged file was modified", i)
			}
		}
	}
	// Damage in the middle record too.
	bad := flip(img, offs[3]+frameHeaderSize+2)
	dir := t.TempDir()
	writeFile(t, aofPath(dir, 1), bad)
	md := newModel()
	if _, err := Open(Options{Dir: dir}, decodeTest, md.load, md.replay); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("byte offset %d", offs[3])) {
		t.Fatalf("middle record: %v", err)
	}
	if len(md.records) != 3 {
		t.Fatalf("replayed %d records before the damage, want 3", len(md.records))
	}
}

func TestDamageInNonLastGeneration(t *testing.T) {
	src := t.TempDir()
	db, s := openStore(t, src, FsyncNo)
	set(t, s, "a", "1")
	testHookBeforeRename = func() error { return errors.New("no snapshot") }
	db.Snapshot(s) // rotates to generation 2, keeps generation 1
	testHookBeforeRename = nil
	set(t, s, "b", "2")
	db.Close()
	img1 := readFile(t, aofPath(src, 1))
	img2 := readFile(t, aofPath(src, 2))

	for name, gen1 := range map[string][]byte{
		"torn tail":     img1[:len(img1)-3],
		"bad checksum":  flip(img1, len(img1)-1),
		"header short":  img1[:7],
		"bad magic":     flip(img1, 0),
		"wrong version": versioned(img1, 9),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, aofPath(dir, 1), gen1)
			writeFile(t, aofPath(dir, 2), img2)
			md := newModel()
			_, err := Open(Options{Dir: dir}, decodeTest, md.load, md.replay)
			if err == nil || !strings.Contains(err.Error(), aofPath(dir, 1)) {
				t.Fatalf("Open = %v, want an error naming %s", err, aofPath(dir, 1))
			}
			if name == "wrong version" && !errors.Is(err, ErrVersion) {
				t.Fatalf("want ErrVersion: %v", err)
			}
		})
	}
}

func versioned(img []byte, v uint16) []byte {
	c := slices.Clone(img)
	c[8], c[9] = byte(v), byte(v>>8)
	sum := crc32c(c[:20])
	c[20], c[21], c[22], c[23] = byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24)
	return c
}

func TestMissingGeneration(t *testing.T) {
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncNo)
	set(t, s, "a", "1")
	testHookBeforeRename = func() error { return errors.New("no snapshot") }
	db.Snapshot(s)
	set(t, s, "b", "2") // else the next snapshot reuses generation 2
	db.Snapshot(s)
	testHookBeforeRename = nil
	db.Close()
	if got := files(t, dir); !slices.Equal(got, []string{"appendonly.1.aof", "appendonly.2.aof", "appendonly.3.aof"}) {
		t.Fatalf("files: %v", got)
	}
	os.Remove(aofPath(dir, 2))
	md := newModel()
	if _, err := Open(Options{Dir: dir}, decodeTest, md.load, md.replay); !errors.Is(err, ErrMissingGeneration) {
		t.Fatalf("gap: %v", err)
	}
	os.Remove(aofPath(dir, 1))
	if _, err := Open(Options{Dir: dir}, decodeTest, md.load, md.replay); !errors.Is(err, ErrMissingGeneration) {
		t.Fatalf("no snapshot and no generation 1: %v", err)
	}
}

func TestCorruptSnapshotRefused(t *testing.T) {
	src := t.TempDir()
	db, s := openStore(t, src, FsyncNo)
	for i := range 20 {
		set(t, s, fmt.Sprintf("k%02d", i), strings.Repeat("x", i))
	}
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	db.Close()
	img := readFile(t, filepath.Join(src, snapshotName))
	aof := readFile(t, aofPath(src, 2))
	for i := 0; i < len(img); i += 7 {
		dir := t.TempDir()
		p := filepath.Join(dir, snapshotName)
		writeFile(t, p, flip(img, i))
		writeFile(t, aofPath(dir, 2), aof)
		md := newModel()
		_, err := Open(Options{Dir: dir}, decodeTest, md.load, md.replay)
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Fatalf("byte %d flipped: Open = %v, want an error naming %s", i, err, p)
		}
		if md.loaded != 0 {
			t.Fatalf("byte %d flipped: %d keys loaded before the error", i, md.loaded)
		}
	}
	for _, cut := range []int{0, 10, 40, len(img) / 2, len(img) - 1} {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, snapshotName), img[:cut])
		md := newModel()
		if _, err := Open(Options{Dir: dir}, decodeTest, md.load, md.replay); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("snapshot cut at %d: %v", cut, err)
		}
	}
	// Extra bytes after the trailer are refused too.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, snapshotName), append(slices.Clone(img), 0))
	md := newModel()
	if _, err := Open(Options{Dir: dir}, decodeTest, md.load, md.replay); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("trailing byte: %v", err)
	}
	// The snapshot alone (AOF lost or copied elsewhere) is refused: the
	// writes after it may have been in the missing generation. check-aof
	// --fix creates it empty, and the snapshot alone then starts.
	dir = t.TempDir()
	writeFile(t, filepath.Join(dir, snapshotName), img)
	if _, err := Open(Options{Dir: dir}, decodeTest, md.load, md.replay); !errors.Is(err, ErrMissingGeneration) ||
		!strings.Contains(err.Error(), aofPath(dir, 2)) || !strings.Contains(err.Error(), "check-aof --fix") {
		t.Fatalf("snapshot-only start: %v", err)
	}
	actions, after, err := Fix(dir, decodeTest)
	if err != nil || len(actions) != 1 || !actions[0].Created || !after.OK() {
		t.Fatalf("Fix: %+v %v", actions, err)
	}
	db, md = open(t, dir, FsyncNo)
	if md.loaded != 20 || !slices.Equal(files(t, dir), []string{"appendonly.2.aof", "dump.pdb"}) {
		t.Fatalf("snapshot-only start after Fix: loaded %d, files %v", md.loaded, files(t, dir))
	}
	db.Close()
}

func TestLeftoverTempFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"snapshot.123.tmp", "appendonly.2.aof.tmp", "unrelated.tmp", "notes.txt"} {
		writeFile(t, filepath.Join(dir, n), []byte("junk"))
	}
	db, _ := open(t, dir, FsyncNo)
	db.Close()
	if got := files(t, dir); !slices.Equal(got, []string{"appendonly.1.aof", "notes.txt", "unrelated.tmp"}) {
		t.Fatalf("files: %v", got)
	}
}

// TestGroupCommit: many goroutines Append and Wait with "always"; every
// record survives, and fsyncs are shared.
func TestGroupCommit(t *testing.T) {
	dir := t.TempDir()
	db, _ := open(t, dir, FsyncAlways)
	const workers, per = 32, 100
	start := db.Fsyncs()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				seq, err := db.Append([][]byte{[]byte("SET"), fmt.Appendf(nil, "w%d-%d", w, i), []byte("v")})
				if err == nil {
					err = db.Wait(seq)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fsyncs := db.Fsyncs() - start
	t.Logf("%d records, %d fsyncs (%.1f records per fsync)", workers*per, fsyncs, float64(workers*per)/float64(fsyncs))
	if fsyncs >= workers*per {
		t.Fatalf("group commit did not batch: %d fsyncs for %d records", fsyncs, workers*per)
	}
	if fsyncs == 0 {
		t.Fatal("no fsync with always")
	}
	crash(db)
	db, md := open(t, dir, FsyncAlways)
	defer db.Close()
	if len(md.m) != workers*per {
		t.Fatalf("recovered %d keys, want %d", len(md.m), workers*per)
	}
	if err := db.Wait(1 << 40); !errors.Is(err, ErrInvalidSeq) {
		t.Fatalf("Wait(unassigned) = %v", err)
	}
}

func TestEverySecFsyncs(t *testing.T) {
	dir := t.TempDir()
	db, _ := open(t, dir, FsyncEverySec)
	defer db.Close()
	seq := appendRec(t, db, "SET", "a", "b")
	if err := db.Wait(seq); err != nil {
		t.Fatal(err)
	}
	start := db.Fsyncs()
	if !testutil.Eventually(t, 3*time.Second, func() bool { return db.Fsyncs() != start }) {
		t.Fatal("no background fsync within 3 s")
	}
}

// swapFile makes db write to f (with both of its locks held, as the
// writer expects) and returns the file it wrote to before.
func swapFile(db *DB, f *os.File) *os.File {
	db.wmu.Lock()
	defer db.wmu.Unlock()
	db.mu.Lock()
	defer db.mu.Unlock()
	old := db.f
	db.f = f
	return old
}

// TestAppendWriteErrorReturned: a failed append (ENOSPC) is returned,
// every later write is refused (WriteGate and Append) until a snapshot
// covers memory, and then writes resume; recovery sees the write that the
// failed command left in memory (from the snapshot) and every later one.
func TestAppendWriteErrorReturned(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncNo)
	set(t, s, "a", "1")
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	real := swapFile(db, full)
	// Like BF.ADD: memory changes, then the record fails; the write
	// error shows at Wait (Append only buffers the record).
	seq, err := s.Update([]byte("b"), func(tx *keyspace.Txn) {
		tx.Set(strVal("2"))
		tx.Log([]byte("SET"), []byte("b"), []byte("2"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Wait(seq); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Wait for a record written to a full disk = %v, want ENOSPC", err)
	}
	if err := db.Wait(seq); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("second Wait for the dropped record = %v, want ENOSPC", err)
	}
	swapFile(db, real)
	full.Close()
	if err := db.WriteGate(); !errors.Is(err, ErrOutOfSync) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("WriteGate after a failed append = %v", err)
	}
	ran := false
	if _, err := s.Update([]byte("c"), func(*keyspace.Txn) { ran = true }); !errors.Is(err, ErrOutOfSync) || ran {
		t.Fatalf("Update after a failed append: %v (ran %v)", err, ran)
	}
	if _, err := db.Append([][]byte{[]byte("DEL"), []byte("a")}); !errors.Is(err, ErrOutOfSync) {
		t.Fatalf("Append after a failed append = %v", err)
	}
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	if err := db.WriteGate(); err != nil {
		t.Fatalf("WriteGate after the snapshot = %v", err)
	}
	set(t, s, "c", "3")
	db.Close()
	db, s = openStore(t, dir, FsyncNo)
	defer db.Close()
	if got := contents(s); !maps.Equal(got, map[string]string{"a": "1", "b": "2", "c": "3"}) {
		t.Fatalf("recovered %v", got)
	}
}

// TestUnbufferedAppendWrites: without BufferAppends, Append returns once
// its record is in the file, and returns a write error itself.
func TestUnbufferedAppendWrites(t *testing.T) {
	dir := t.TempDir()
	db, _ := open(t, dir, FsyncNo)
	defer db.Close()
	before, _ := os.Stat(aofPath(dir, 1))
	appendRec(t, db, "SET", "a", "1")
	after, _ := os.Stat(aofPath(dir, 1))
	if after.Size() <= before.Size() {
		t.Fatalf("AOF %d bytes after Append, %d before", after.Size(), before.Size())
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	real := swapFile(db, full)
	_, err = db.Append([][]byte{[]byte("SET"), []byte("b"), []byte("2")})
	swapFile(db, real)
	full.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Append to a full disk = %v, want ENOSPC", err)
	}
	if _, err := db.Append([][]byte{[]byte("DEL"), []byte("a")}); !errors.Is(err, ErrOutOfSync) {
		t.Fatalf("Append after a failed one = %v", err)
	}
}

// TestBufferedAppendSharesWrites: with BufferAppends, records wait in
// memory until Wait, which writes every buffered record at once.
func TestBufferedAppendSharesWrites(t *testing.T) {
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncNo)
	defer db.Close()
	before, _ := os.Stat(aofPath(dir, 1))
	var last uint64
	for i := range 10 {
		last = set(t, s, fmt.Sprint("k", i), "v")
	}
	if st, _ := os.Stat(aofPath(dir, 1)); st.Size() != before.Size() {
		t.Fatalf("buffered records were written before Wait (%d bytes)", st.Size()-before.Size())
	}
	if err := db.Wait(last - 5); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(aofPath(dir, 1))
	if got := frameOffsets(t, readFile(t, aofPath(dir, 1))); len(got) != 10 {
		t.Fatalf("one Wait wrote %d records (%d bytes), want all 10", len(got), st.Size()-before.Size())
	}
	if err := db.Wait(last); err != nil {
		t.Fatal(err)
	}
}

func TestHostileSizesDoNotAllocate(t *testing.T) {
	hdr := encodeAOFHeader(1)
	snapHdr := func(count uint64) []byte {
		var h [snapHeaderSize]byte
		copy(h[:], snapMagic)
		h[8] = FormatVersion
		h[12] = 1
		for i := range 8 {
			h[28+i] = byte(count >> (8 * i))
		}
		sum := crc32c(h[:36])
		h[36], h[37], h[38], h[39] = byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24)
		return h[:]
	}
	bigRec := append(snapHdr(1), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0)
	bigRec = append(bigRec, make([]byte, 40)...)
	cases := map[string]struct {
		name string
		data []byte
	}{
		"aof max length":     {aofFileName(1), append(slices.Clone(hdr), 0, 0, 0, 0x40, 1, 2, 3, 4, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9)},
		"aof huge argc":      {aofFileName(1), append(slices.Clone(hdr), appendRawFrame([]byte{0xff, 0xff, 0xff, 0x7f})...)},
		"snapshot count":     {snapshotName, append(snapHdr(1<<60), make([]byte, 100)...)},
		"snapshot entry len": {snapshotName, bigRec},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, c.name), c.data)
			md := newModel()
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			db, err := Open(Options{Dir: dir}, decodeTest, md.load, md.replay)
			runtime.ReadMemStats(&ms1)
			if err == nil {
				db.Close()
				if c.name == snapshotName {
					t.Fatal("hostile snapshot accepted")
				}
			}
			if d := ms1.TotalAlloc - ms0.TotalAlloc; d > 16<<20 {
				t.Fatalf("Open allocated %d bytes for a %d-byte file", d, len(c.data))
			}
		})
	}
}

// appendRawFrame frames an arbitrary payload with a valid checksum.
func appendRawFrame(payload []byte) []byte {
	b := make([]byte, frameHeaderSize, frameHeaderSize+len(payload))
	n, sum := uint32(len(payload)), crc32c(payload)
	b[0], b[1], b[2], b[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	b[4], b[5], b[6], b[7] = byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24)
	return append(b, payload...)
}

func bytesSource(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
