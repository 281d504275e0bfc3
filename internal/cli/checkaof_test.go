package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/persist"
)

// makeAOF writes n records into a fresh data directory and returns the
// directory and the byte offset of every record in appendonly.1.aof.
func makeAOF(t *testing.T, n int) (string, []int64) {
	t.Helper()
	dir := t.TempDir()
	db, err := persist.Open(persist.Options{Dir: dir, Fsync: persist.FsyncNo}, app.Decode,
		func(string, keyspace.Value) error { return nil }, func([][]byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	aof := filepath.Join(dir, "appendonly.1.aof")
	var offs []int64
	for i := range n {
		st, _ := os.Stat(aof)
		offs = append(offs, st.Size())
		if _, err := db.Append([][]byte{[]byte("BF.MADD"), []byte("k"), []byte(fmt.Sprint("item-", i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, offs
}

func damageAt(t *testing.T, p string, off int64) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0x55
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckAOF(t *testing.T) {
	dir, offs := makeAOF(t, 6)
	aof := filepath.Join(dir, "appendonly.1.aof")

	code, out, stderr := runCLI(t, "", "check-aof", "--dir", dir)
	if code != ExitOK || !strings.Contains(out, "appendonly.1.aof: ok (6 records") || !strings.Contains(out, "starts cleanly") {
		t.Fatalf("clean: exit %d\n%s%s", code, out, stderr)
	}

	damageAt(t, aof, offs[2]+10)
	code, out, stderr = runCLI(t, "", "check-aof", "--dir", dir)
	want := fmt.Sprintf("appendonly.1.aof: CORRUPT at byte offset %d (record 3): record checksum mismatch", offs[2])
	if code != ExitDataFail || !strings.Contains(out, want) || !strings.Contains(out, "check-aof --fix --dir "+dir) ||
		!strings.Contains(stderr, "damage found") {
		t.Fatalf("corrupt: exit %d, want %q\n%s%s", code, want, out, stderr)
	}
	// The server refuses to start and says what to do.
	err := app.Run(t.Context(), app.Options{Addr: "127.0.0.1:0", Dir: dir, MetricsAddr: "off"})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s at byte offset %d", aof, offs[2])) ||
		!strings.Contains(err.Error(), "probly check-aof --fix --dir "+dir) {
		t.Fatalf("start on a corrupt AOF: %v", err)
	}

	code, out, stderr = runCLI(t, "", "check-aof", "--fix", "--dir", dir)
	if code != ExitOK || !strings.Contains(out, fmt.Sprintf("truncated to %d bytes", offs[2])) ||
		!strings.Contains(out, "appendonly.1.aof.bak") || !strings.Contains(out, "fixed") {
		t.Fatalf("fix: exit %d\n%s%s", code, out, stderr)
	}
	if _, err := os.Stat(aof + ".bak"); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, "", "check-aof", dir) // a directory as the argument
	if code != ExitOK || !strings.Contains(out, "ok (2 records") {
		t.Fatalf("after the fix: exit %d\n%s", code, out)
	}
}

func TestCheckAOFFile(t *testing.T) {
	dir, offs := makeAOF(t, 4)
	aof := filepath.Join(dir, "appendonly.1.aof")
	b, _ := os.ReadFile(aof)
	torn := filepath.Join(t.TempDir(), "torn.aof")
	os.WriteFile(torn, b[:len(b)-2], 0o644)
	code, out, _ := runCLI(t, "", "check-aof", torn)
	if code != ExitOK || !strings.Contains(out, "torn tail") {
		t.Fatalf("torn: exit %d\n%s", code, out)
	}
	damageAt(t, aof, offs[1]+9)
	code, out, _ = runCLI(t, "", "check-aof", aof)
	if code != ExitDataFail || !strings.Contains(out, "(record 2)") {
		t.Fatalf("corrupt file: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "check-aof", "--fix", aof)
	if code != ExitOK || !strings.Contains(out, "fixed") {
		t.Fatalf("fix file: exit %d\n%s", code, out)
	}
}

func TestCheckAOFUsageAndLock(t *testing.T) {
	dir, _ := makeAOF(t, 1)
	if code, _, _ := runCLI(t, "", "check-aof", "--dir", dir, "x.aof"); code != ExitUsage {
		t.Fatalf("--dir and FILE: exit %d", code)
	}
	if code, _, _ := runCLI(t, "", "check-aof", "--bogus"); code != ExitUsage {
		t.Fatalf("unknown flag: exit %d", code)
	}
	db, err := persist.Open(persist.Options{Dir: dir}, app.Decode,
		func(string, keyspace.Value) error { return nil }, func([][]byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	code, _, stderr := runCLI(t, "", "check-aof", "--fix", "--dir", dir)
	if code != ExitDataFail || !strings.Contains(stderr, "stop the server first") {
		t.Fatalf("--fix on a directory in use: exit %d, %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "", "check-aof", "--dir", dir); code != ExitOK {
		t.Fatalf("check (read-only) on a directory in use: exit %d", code)
	}
}

// TestCheckAOFDamagedSnapshot: a damaged dump.pdb is reported with the
// remedy that works (a backup), not with --fix, which cannot repair it.
func TestCheckAOFDamagedSnapshot(t *testing.T) {
	dir := t.TempDir()
	db, err := persist.Open(persist.Options{Dir: dir, Fsync: persist.FsyncNo}, app.Decode,
		func(string, keyspace.Value) error { return nil }, func([][]byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Snapshot(keyspace.New(nil)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	damageAt(t, filepath.Join(dir, "dump.pdb"), 10)
	code, out, stderr := runCLI(t, "", "check-aof", "--dir", dir)
	if code == ExitOK || !strings.Contains(out, "dump.pdb is damaged") || !strings.Contains(out, "backup") || strings.Contains(out, "run `probly check-aof --fix") {
		t.Fatalf("damaged snapshot: exit %d\n%s%s", code, out, stderr)
	}
}

// TestCheckAOFMissingAfterSnapshot: with the generation that follows
// dump.pdb deleted, the server refuses to start naming it, check-aof
// reports it missing, and check-aof --fix creates it empty so that the
// snapshot alone starts.
func TestCheckAOFMissingAfterSnapshot(t *testing.T) {
	dir := t.TempDir()
	db, err := persist.Open(persist.Options{Dir: dir, Fsync: persist.FsyncNo}, app.Decode,
		func(string, keyspace.Value) error { return nil }, func([][]byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	// A record before the snapshot, so that it switches to generation 2
	// (an empty generation is reused).
	if _, err := db.Append([][]byte{[]byte("BF.MADD"), []byte("k"), []byte("first")}); err != nil {
		t.Fatal(err)
	}
	if err := db.Snapshot(keyspace.New(nil)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // writes after the snapshot, in appendonly.2.aof
		if _, err := db.Append([][]byte{[]byte("BF.MADD"), []byte("k"), []byte(fmt.Sprint("item-", i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	aof := filepath.Join(dir, "appendonly.2.aof")
	if err := os.Remove(aof); err != nil {
		t.Fatal(err)
	}
	err = app.Run(t.Context(), app.Options{Addr: "127.0.0.1:0", Dir: dir, MetricsAddr: "off"})
	if err == nil || !strings.Contains(err.Error(), aof+" is missing") || !strings.Contains(err.Error(), "probly check-aof --fix --dir "+dir) {
		t.Fatalf("start without the generation after dump.pdb: %v", err)
	}
	code, out, stderr := runCLI(t, "", "check-aof", "--dir", dir)
	if code != ExitDataFail || !strings.Contains(out, "appendonly.2.aof: MISSING; dump.pdb says the writes made after it are in this file") ||
		!strings.Contains(out, "to create the missing appendonly.2.aof empty") || strings.Contains(out, "truncate") {
		t.Fatalf("check: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = runCLI(t, "", "check-aof", "--fix", "--dir", dir)
	if code != ExitOK || !strings.Contains(out, "appendonly.2.aof: created with only its header") || !strings.Contains(out, "fixed") {
		t.Fatalf("fix: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = runCLI(t, "", "check-aof", "--dir", dir)
	if code != ExitOK || !strings.Contains(out, "appendonly.2.aof: ok (0 records") {
		t.Fatalf("check after the fix: exit %d\n%s%s", code, out, stderr)
	}
}
