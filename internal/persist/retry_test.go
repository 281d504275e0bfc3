package persist

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/testutil"
)

// aofFiles counts the AOF generations (and temporary AOF files) in dir.
func aofFiles(t testing.TB, dir string) (gens, tmps int) {
	t.Helper()
	for _, f := range files(t, dir) {
		if _, ok := parseAOFName(f); ok {
			gens++
		} else if strings.HasPrefix(f, "appendonly.") && strings.HasSuffix(f, tmpSuffix) {
			tmps++
		}
	}
	return gens, tmps
}

// TestRetriesReuseOneGeneration: snapshots that fail after the AOF
// switched generation, with no write in between, reuse the generation the
// first one switched to: 50 failures leave one extra AOF file (the version
// 1 code left 50), and the snapshot that finally succeeds keeps it.
func TestRetriesReuseOneGeneration(t *testing.T) {
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncAlways)
	for i := range 10 {
		db.Wait(set(t, s, fmt.Sprintf("k%d", i), "v"))
	}
	testHookBeforeRename = func() error { return errors.New("injected: no space for dump.pdb") }
	for i := range 50 {
		if err := db.Snapshot(s); err == nil {
			t.Fatal("snapshot succeeded")
		}
		if gens, tmps := aofFiles(t, dir); gens != 2 || tmps != 0 {
			t.Fatalf("after %d failed snapshots: %d AOF generations, %d temporary files: %v", i+1, gens, tmps, files(t, dir))
		}
	}
	testHookBeforeRename = nil
	if st := db.SnapshotStats(); st.Failed != 50 || st.ConsecutiveFailures != 50 || db.ConsecutiveFailures() != 50 {
		t.Fatalf("stats %+v", st)
	}
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	if db.ConsecutiveFailures() != 0 || db.RetryDelay() != 0 {
		t.Fatalf("after a success: %d consecutive failures, retry delay %v", db.ConsecutiveFailures(), db.RetryDelay())
	}
	if got := files(t, dir); len(got) != 2 || got[0] != aofFileName(2) || got[1] != snapshotName {
		t.Fatalf("files after the successful snapshot: %v", got)
	}
	db.Wait(set(t, s, "after", "v"))
	crash(db)
	db, md := open(t, dir, FsyncNo)
	defer db.Close()
	if len(md.m) != 11 || md.m["after"] != "v" {
		t.Fatalf("recovered %v", md.m)
	}
}

// TestRetryBackoff: after consecutive failures the scheduler waits 5 s,
// then 10 s, 20 s and at most 30 s before the next automatic snapshot; a
// success resets it.
func TestRetryBackoff(t *testing.T) {
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncNo)
	defer db.Close()
	set(t, s, "k", "v")
	db.SetSaveRules([]SaveRule{{Seconds: 1, Changes: 0}}) // due whenever allowed
	testHookBeforeRename = func() error { return errors.New("injected") }
	defer func() { testHookBeforeRename = nil }()
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		db.Snapshot(s)
		if got := db.RetryDelay(); got != w {
			t.Fatalf("after %d failures: retry delay %v, want %v", i+1, got, w)
		}
		last := time.Unix(0, db.lastTry.Load())
		if _, ok := db.due(last.Add(w - 10*time.Millisecond)); ok {
			t.Fatalf("after %d failures: due before %v", i+1, w)
		}
		if trig, ok := db.due(last.Add(w + 10*time.Millisecond)); !ok || trig != TriggerSave {
			t.Fatalf("after %d failures: not due after %v", i+1, w)
		}
	}
	testHookBeforeRename = nil
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	if db.RetryDelay() != 0 {
		t.Fatal("retry delay not reset by a success")
	}
}

// TestDiskFullRetriesBounded is the reproduction of issue 13 item 3 on a
// 2 MiB tmpfs: the disk fills up, writes are refused, then less space is
// freed than a snapshot needs while the scheduler retries the snapshot
// (here with the delays shortened to 20 ms … 160 ms, so that a few
// seconds hold many retries). The version 1 code created a new AOF
// generation per retry (2 → 6 → 10 → 14 in a minute); now at most one
// extra file exists at any time. Once space is freed writes resume by
// themselves, and after a kill every acknowledged write is there.
func TestDiskFullRetriesBounded(t *testing.T) {
	dir := mountTmpfs(t, 2<<20)
	db, s := openBuf(t, dir, Options{Fsync: FsyncAlways})
	t.Cleanup(func() { db.Close() }) // before the unmount, also when the test fails
	db.auto.retryBase, db.auto.retryMax = 20*time.Millisecond, 160*time.Millisecond
	if err := db.StartAuto(s); err != nil {
		t.Fatal(err)
	}
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
	var werr error
	for i := 0; werr == nil; i++ {
		if i > 100000 {
			t.Fatal("the disk never filled up")
		}
		werr = write(fmt.Sprintf("k%d", i%50))
	}
	if !errors.Is(werr, syscall.ENOSPC) {
		t.Fatalf("write on the full disk: %v", werr)
	}
	if db.LastWriteOK() {
		t.Fatal("LastWriteOK after a failed write")
	}
	gens0, _ := aofFiles(t, dir)
	// Free less than a snapshot needs (the data is about 2 MiB).
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	resizeTmpfs(t, dir, int((st.Blocks-st.Bfree)*uint64(st.Bsize))+256<<10)

	failed0 := db.SnapshotStats().Failed
	maxGens := 0
	for deadline := time.Now().Add(60 * time.Second); db.SnapshotStats().Failed < failed0+20; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d retries in 60 s", db.SnapshotStats().Failed-failed0)
		}
		gens, _ := aofFiles(t, dir)
		maxGens = max(maxGens, gens)
		if gens > gens0+1 {
			t.Fatalf("%d AOF generations after %d retries (%d when the disk filled): %v",
				gens, db.SnapshotStats().Failed-failed0, gens0, files(t, dir))
		}
		if err := write("k0"); !errors.Is(err, ErrOutOfSync) {
			t.Fatalf("write while the snapshot cannot be written: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if db.LastWriteOK() || db.ConsecutiveFailures() < 20 {
		t.Fatalf("after the retries: LastWriteOK %v, %d consecutive failures", db.LastWriteOK(), db.ConsecutiveFailures())
	}
	t.Logf("%d retries failed; AOF generations: %d when the disk filled, at most %d during the retries; files %v",
		db.SnapshotStats().Failed-failed0, gens0, maxGens, files(t, dir))

	resizeTmpfs(t, dir, 16<<20)
	t0 := time.Now()
	var rerr error
	testutil.Eventually(t, 10*time.Second, func() bool {
		rerr = write("resumed")
		return rerr == nil || !errors.Is(rerr, ErrOutOfSync)
	})
	if rerr != nil {
		t.Fatalf("writes did not resume after space was freed: %v", rerr)
	}
	t.Logf("writes resumed %v after space was freed", time.Since(t0).Round(time.Millisecond))
	if !db.LastWriteOK() || db.ConsecutiveFailures() != 0 {
		t.Fatalf("after recovery: LastWriteOK %v, %d consecutive failures", db.LastWriteOK(), db.ConsecutiveFailures())
	}
	if gens, tmps := aofFiles(t, dir); gens > gens0+1 || tmps != 0 {
		t.Fatalf("files after recovery: %v", files(t, dir))
	}
	for i := range 20 {
		if err := write(fmt.Sprintf("late-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	crash(db) // kill -9: no final flush or fsync
	db, s = openBuf(t, dir, Options{Fsync: FsyncAlways})
	got := bufContents(s)
	for k, v := range acked {
		// The one write that failed may have reached memory before the
		// failure and been snapshotted: at most one chunk more.
		if !strings.HasPrefix(got[k], v) || len(got[k]) > len(v)+len(chunk) {
			t.Fatalf("key %s: recovered %d bytes, %d acknowledged", k, len(got[k]), len(v))
		}
	}
	t.Logf("%d keys acknowledged, all recovered after the kill", len(acked))
}
