package persist

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/testutil"
)

// Expire times in the fixture: far in the future (2100-01-01) and long
// past (2001-09-09).
const (
	fixtureFuture = 4102444800000
	fixturePast   = 1000000000000
)

// setExpire sets key's expire time and logs its canonical record.
func setExpire(t testing.TB, s *keyspace.Store, k string, ms int64) uint64 {
	t.Helper()
	seq, err := s.Update([]byte(k), func(tx *keyspace.Txn) {
		tx.SetExpire(ms)
		if err := tx.Log([]byte("PEXPIREAT"), []byte(k), fmt.Appendf(nil, "%d", ms)); err != nil {
			t.Errorf("Log: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// expiryState lists every stored key (loading mode: expired ones too)
// with its value and expire time.
func expiryState(s *keyspace.Store) string {
	es, _ := s.Freeze(nil)
	slices.SortFunc(es, func(a, b keyspace.Entry) int { return strings.Compare(a.Key, b.Key) })
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("%s=%s@%d", e.Key, e.Value.(strVal), e.Expire))
	}
	return strings.Join(out, "\n")
}

// writeExpiryFixture writes a data directory whose dump.pdb (format 2)
// holds keys with and without expire times, followed by AOF records.
func writeExpiryFixture(t *testing.T, dir string) {
	db, s := openStore(t, dir, FsyncAlways)
	set(t, s, "live", "1")
	setExpire(t, s, "live", fixtureFuture)
	set(t, s, "plain", "2")
	set(t, s, "gone", "3")
	setExpire(t, s, "gone", fixturePast) // past at any load: dropped
	set(t, s, "later", "4")
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	// After the cut: a time set, one removed by SET, a new expired one.
	setExpire(t, s, "plain", fixtureFuture+1)
	set(t, s, "later", "5")
	set(t, s, "after", "6")
	db.Wait(setExpire(t, s, "after", fixturePast))
	db.Close()
}

// TestExpiryFixtureV2 loads testdata/snapshot-v2 (written by
// writeExpiryFixture; PROBLY_WRITE_FIXTURES=1 rewrites it): the snapshot's
// live key comes back with its time, its past key is not loaded, and the
// AOF after it replays on top. The fixture stays in format version 2
// (written before version 3), so it also checks that version 2 files keep
// loading; rewriting it would make it version 3 and fail the check below.
// Version 1 snapshots keep loading (TestLegacyV1Loads).
func TestExpiryFixtureV2(t *testing.T) {
	src := filepath.Join("testdata", "snapshot-v2")
	if os.Getenv("PROBLY_WRITE_FIXTURES") == "1" {
		os.RemoveAll(src)
		if err := os.MkdirAll(src, 0o755); err != nil {
			t.Fatal(err)
		}
		writeExpiryFixture(t, src)
		os.Remove(filepath.Join(src, lockName))
	}
	dir := copyDir(t, src)
	if v := readFile(t, filepath.Join(dir, snapshotName))[8]; v != snapVersion2 {
		t.Fatalf("fixture dump.pdb has version %d", v)
	}
	s := keyspace.New(nil)
	s.SetLoading(true)
	sm := storeModel{s}
	db, err := Open(Options{Dir: dir, Fsync: FsyncNo}, decodeTest, sm.load, sm.replay)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	want := strings.Join([]string{
		"after=6@1000000000000", // replayed from the AOF; hidden once loading ends
		"later=5@0",
		"live=1@4102444800000",
		"plain=2@4102444800001",
	}, "\n")
	if got := expiryState(s); got != want {
		t.Fatalf("recovered\n%s\nwant\n%s", got, want)
	}
	s.SetLoading(false)
	if ks := s.Keys("*"); fmt.Sprint(ks) != "[later live plain]" {
		t.Fatalf("visible keys %v", ks)
	}
}

// TestExpirySnapshotRoundTrip: a snapshot of the recovered store carries
// the expire times again, and one taken with a key already expired but not
// reclaimed does not bring it back.
func TestExpirySnapshotRoundTrip(t *testing.T) {
	dir := t.TempDir()
	writeExpiryFixture(t, dir)
	db, s := openStore(t, dir, FsyncNo)
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s2 := keyspace.New(nil)
	s2.SetLoading(true)
	db, err := Open(Options{Dir: dir, Fsync: FsyncNo}, decodeTest, storeModel{s2}.load, storeModel{s2}.replay)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	// The second snapshot dropped nothing itself, but "after" had expired
	// before it was taken: not loaded from it.
	if got := expiryState(s2); got != "later=5@0\nlive=1@4102444800000\nplain=2@4102444800001" {
		t.Fatalf("after a second snapshot:\n%s", got)
	}
}

// TestActiveExpiryFlushesLog: the active cycle's DEL records reach the AOF
// file by themselves with BufferAppends, where no client waits for them
// (the cycle flushes after deleting; the DB's own once-a-second write
// would also get them there, within about a second).
func TestActiveExpiryFlushesLog(t *testing.T) {
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncNo)
	defer db.Close()
	set(t, s, "gone", "1")
	db.Wait(setExpire(t, s, "gone", fixturePast))
	stop := s.StartActiveExpire()
	defer stop()
	path := aofPath(dir, db.Generation())
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		return bytes.Contains(readFile(t, path), []byte("\x03DEL\x04gone"))
	}) {
		t.Fatal("the expiry's DEL never reached the AOF file")
	}
}
