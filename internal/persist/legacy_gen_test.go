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

// TestGenerateLegacyFixtures writes testdata/legacy-v1 with the format
// version 1 writer (the code before end-of-generation records). It runs
// only with PROBLY_GEN_LEGACY=1.
func TestGenerateLegacyFixtures(t *testing.T) {
	if os.Getenv("PROBLY_GEN_LEGACY") == "" {
		t.Skip("set PROBLY_GEN_LEGACY=1 to regenerate testdata/legacy-v1")
	}
	root := filepath.Join("testdata", "legacy-v1")
	os.RemoveAll(root)
	mk := func(name string, fn func(dir string)) {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		fn(dir)
		os.Remove(filepath.Join(dir, lockName))
		// Record what a recovery gives, for the loading test.
		db, md := open(t, dir, FsyncNo)
		db.Close()
		os.Remove(filepath.Join(dir, lockName))
		var lines []string
		for k, v := range md.m {
			lines = append(lines, k+"="+v)
		}
		slices.Sort(lines)
		writeFile(t, filepath.Join(dir, "expected.txt"), []byte(strings.Join(lines, "\n")+"\n"))
		t.Logf("%s: %v, %d keys", name, files(t, dir), len(lines))
	}
	// AOF only: appendonly.1.aof with records, no snapshot.
	mk("aof-only", func(dir string) {
		db, s := openStore(t, dir, FsyncAlways)
		for i := range 20 {
			db.Wait(set(t, s, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)))
		}
		db.Wait(del(t, s, "k3"))
		db.Close()
	})
	// dump.pdb (gen 2) plus appendonly.2.aof with the writes after it.
	mk("snapshot-aof", func(dir string) {
		db, s := openStore(t, dir, FsyncAlways)
		for i := range 10 {
			db.Wait(set(t, s, fmt.Sprintf("a%d", i), "before"))
		}
		if err := db.Snapshot(s); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			db.Wait(set(t, s, fmt.Sprintf("b%d", i), "after"))
		}
		db.Wait(del(t, s, "a0"))
		db.Close()
	})
	// dump.pdb (gen 2) and a header-only appendonly.2.aof: a snapshot and
	// no write after it.
	mk("snapshot-header-only", func(dir string) {
		db, s := openStore(t, dir, FsyncAlways)
		for i := range 5 {
			db.Wait(set(t, s, fmt.Sprintf("c%d", i), "x"))
		}
		if err := db.Snapshot(s); err != nil {
			t.Fatal(err)
		}
		db.Close()
	})
	// The issue 13 pattern: after a good snapshot, snapshots that fail
	// after the AOF switched generation leave header-only generations;
	// writes continue in the last one.
	mk("failed-retries", func(dir string) {
		db, s := openStore(t, dir, FsyncAlways)
		for i := range 5 {
			db.Wait(set(t, s, fmt.Sprintf("d%d", i), "1"))
		}
		if err := db.Snapshot(s); err != nil { // dump.pdb gen 2
			t.Fatal(err)
		}
		db.Wait(set(t, s, "d0", "2"))
		testHookBeforeRename = func() error { return errors.New("injected failure") }
		for range 3 { // gens 3 (records before it are in 2), 4, 5, 6
			if err := db.Snapshot(s); err == nil {
				t.Fatal("snapshot succeeded")
			}
		}
		testHookBeforeRename = nil
		db.Wait(set(t, s, "d1", "3"))
		db.Wait(del(t, s, "d2"))
		db.Close()
	})
}
