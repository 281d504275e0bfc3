package persist

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/probly/probly/internal/keyspace"
)

// mountTmpfs mounts a tmpfs of size bytes on a fresh directory and
// unmounts it at the end of the test. It skips the test where that is not
// possible (not Linux, not root, no mount permission in a container).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("tmpfs full-disk test needs Linux")
	}
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a %d-byte tmpfs to fill up (%v): run as root (or with CAP_SYS_ADMIN) to test ENOSPC", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

func resizeTmpfs(t *testing.T, dir string, size int) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", fmt.Sprintf("remount,size=%d", size), dir).CombinedOutput(); err != nil {
		if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT, fmt.Sprintf("size=%d", size)); err != nil {
			t.Fatalf("remount %s: %v %s", dir, err, out)
		}
	}
}

// TestDiskFull fills a small tmpfs: the failing write returns ENOSPC and
// every later write is refused; a snapshot that fails for lack of space
// keeps the old dump.pdb and AOF; a restart on the full disk recovers every
// acknowledged write from valid files; once space is freed, a snapshot
// resumes writes, and nothing acknowledged is ever lost.
func TestDiskFull(t *testing.T) {
	dir := mountTmpfs(t, 256<<10)
	db, s := openBuf(t, dir, Options{Fsync: FsyncAlways})
	acked := map[string]string{}
	chunk := bytes.Repeat([]byte("x"), 1000)
	write := func(k string) error {
		seq, err := s.Update([]byte(k), func(tx *keyspace.Txn) {
			appendInPlace(tx, chunk) // memory first, like BF.ADD
			tx.Log([]byte("APPEND"), []byte(k), chunk)
		})
		if err == nil {
			err = db.Wait(seq)
		}
		if err == nil {
			acked[k] += string(chunk)
		}
		return err
	}
	for i := range 20 {
		if err := write(fmt.Sprintf("early-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	oldSnap := readFile(t, filepath.Join(dir, snapshotName))

	var werr error
	for i := 0; werr == nil; i++ {
		if i > 10000 {
			t.Fatal("the disk never filled up")
		}
		werr = write(fmt.Sprintf("k%d", i%50)) // 50 keys, growing
	}
	if !errors.Is(werr, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %v, want ENOSPC", werr)
	}
	if err := write("after"); !errors.Is(err, ErrOutOfSync) || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("write after ENOSPC: %v", err)
	}
	aofBefore := readFile(t, aofPath(dir, 2))
	if err := db.Snapshot(s); err == nil {
		t.Fatal("snapshot on a full disk succeeded")
	} else {
		t.Logf("snapshot on the full disk: %v", err)
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, snapshotName)), oldSnap) || !bytes.Equal(readFile(t, aofPath(dir, 2)), aofBefore) {
		t.Fatal("a failed snapshot changed dump.pdb or the AOF")
	}
	if got := files(t, dir); strings.Contains(strings.Join(got, " "), tmpSuffix) {
		t.Fatalf("temporary files left: %v", got)
	}
	if db.LastSaveOK() {
		t.Fatal("LastSaveOK after a failed snapshot")
	}
	db.Close()

	// Restart on the still full disk: valid files, every acknowledged write.
	if r, err := CheckDir(dir, decodeBuf); err != nil || !r.OK() || r.Files[0].Torn {
		t.Fatalf("files after ENOSPC: %+v %v", r, err)
	}
	verify := func(s *keyspace.Store) {
		t.Helper()
		got := bufContents(s)
		for k, v := range acked {
			if !strings.HasPrefix(got[k], v) || len(got[k]) > len(v)+len(chunk) {
				t.Fatalf("key %s: recovered %d bytes, %d acknowledged", k, len(got[k]), len(v))
			}
		}
	}
	db, s = openBuf(t, dir, Options{Fsync: FsyncAlways})
	verify(s)

	// Free space: writes fail until... nothing: a fresh process is in sync.
	resizeTmpfs(t, dir, 4<<20)
	for i := range 50 {
		if err := write(fmt.Sprintf("late-%d", i)); err != nil {
			t.Fatalf("write after space was freed: %v", err)
		}
	}
	// A snapshot that runs out of space while writing dump.pdb (after the
	// AOF switched generation) keeps the previous dump.pdb and every AOF.
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	used := int((st.Blocks - st.Bfree) * uint64(st.Bsize))
	resizeTmpfs(t, dir, used+16<<10)
	oldSnap = readFile(t, filepath.Join(dir, snapshotName))
	before := files(t, dir)
	if err := db.Snapshot(s); err == nil || !strings.Contains(err.Error(), "snapshot") || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("snapshot without room for dump.pdb: %v", err)
	} else {
		t.Logf("snapshot without room for dump.pdb: %v", err)
	}
	after := files(t, dir)
	if !bytes.Equal(readFile(t, filepath.Join(dir, snapshotName)), oldSnap) || len(after) != len(before)+1 ||
		strings.Contains(strings.Join(after, " "), tmpSuffix) {
		t.Fatalf("files before %v, after the failed snapshot %v", before, after)
	}
	for i := range 3 { // the AOF still takes writes (it only rotated)
		if err := write(fmt.Sprintf("post-%d", i)); err != nil {
			t.Fatal(err)
		}
	}

	// Fill again, then free space and let a snapshot resume writes.
	resizeTmpfs(t, dir, 1<<20)
	werr = nil
	for i := 0; werr == nil; i++ {
		werr = write(fmt.Sprintf("k%d", i%50))
	}
	if !errors.Is(werr, syscall.ENOSPC) {
		t.Fatal(werr)
	}
	resizeTmpfs(t, dir, 8<<20)
	if err := write("x"); !errors.Is(err, ErrOutOfSync) {
		t.Fatalf("write before the snapshot: %v", err)
	}
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	if err := write("resumed"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, s = openBuf(t, dir, Options{Fsync: FsyncAlways})
	defer db.Close()
	verify(s)
	t.Logf("%d keys acknowledged, all recovered", len(acked))
}

// TestWaitForDroppedAfterSnapshot: a record dropped by a failed write makes
// Wait fail for its sequence number, for any caller, until a snapshot
// whose cut came after it is durable; then Wait reports it durable (the
// snapshot holds what it changed in memory), so a server that waits for
// every record the log holds (LastSeq) does not fail its batches until
// the next record. Later failures are still reported.
func TestWaitForDroppedAfterSnapshot(t *testing.T) {
	dir := mountTmpfs(t, 256<<10)
	db, s := openBuf(t, dir, Options{Fsync: FsyncEverySec})
	defer db.Close()
	chunk := bytes.Repeat([]byte("x"), 1000)
	var seq uint64
	var werr error
	for i := 0; werr == nil; i++ {
		if i > 10000 {
			t.Fatal("the disk never filled up")
		}
		k := fmt.Sprintf("k%d", i%50)
		seq, werr = s.Update([]byte(k), func(tx *keyspace.Txn) {
			appendInPlace(tx, chunk)
			tx.Log([]byte("APPEND"), []byte(k), chunk)
		})
		if werr == nil {
			werr = db.Wait(seq)
		}
	}
	if !errors.Is(werr, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %v, want ENOSPC", werr)
	}
	last := db.LastSeq()
	if last < seq {
		t.Fatalf("LastSeq %d below the failed record's %d", last, seq)
	}
	if err := db.Wait(last); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Wait(%d) for the dropped record before a snapshot: %v, want ENOSPC", last, err)
	}
	resizeTmpfs(t, dir, 8<<20)
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	if err := db.Wait(last); err != nil {
		t.Fatalf("Wait(%d) after a snapshot covering the dropped record: %v", last, err)
	}
	if got := db.LastSeq(); got != last {
		t.Fatalf("LastSeq moved from %d to %d without a record", last, got)
	}
	seq, err := s.Update([]byte("after"), func(tx *keyspace.Txn) { tx.Log([]byte("APPEND"), []byte("after"), chunk) })
	if err != nil || seq <= last {
		t.Fatalf("write after the snapshot: seq %d, %v", seq, err)
	}
	if err := db.Wait(seq); err != nil {
		t.Fatal(err)
	}
}
