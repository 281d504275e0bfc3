package persist

import (
	"fmt"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/testutil"
)

// TestSnapshotDoesNotStopWrites is issue 5's "snapshots are taken while
// serving, without stopping writes for the length of the dump", checked
// deterministically: the snapshot writer is held in the middle of the dump
// (after 10 of 20 entries, by testHookAfterEntry) while writes run on keys
// already dumped, keys not yet dumped, deleted keys and a new key, each
// made durable (appendfsync always). Every write must complete while the
// dump is still held (a write that waited for the dump would deadlock
// here; a 10 s bound turns that into a failure). Then the dump finishes:
// dump.pdb holds exactly the state at the cut (copy-on-write: the in-place
// appends did not reach the values being dumped; -race also watches
// that), and a recovery (dump.pdb + the AOF after the cut) holds the
// writes.
func TestSnapshotDoesNotStopWrites(t *testing.T) {
	dir := t.TempDir()
	db, s := openBuf(t, dir, Options{Fsync: FsyncAlways})
	defer func() { db.Close() }()
	const n, pauseAt = 20, 10
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%02d", i)) } // dumped in this order
	appendLogged := func(k []byte, chunk string) uint64 {
		seq, err := s.Update(k, func(tx *keyspace.Txn) {
			appendInPlace(tx, []byte(chunk))
			tx.Log([]byte("APPEND"), k, []byte(chunk))
		})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	var seq uint64
	for i := range n {
		seq = appendLogged(key(i), "v0")
	}
	if err := db.Wait(seq); err != nil {
		t.Fatal(err)
	}
	atCut := bufContents(s)

	paused, release := make(chan struct{}), make(chan struct{})
	testHookAfterEntry = func(written int) {
		if written == pauseAt {
			close(paused)
			<-release
		}
	}
	defer func() { testHookAfterEntry = nil }()
	released := false
	releaseOnce := func() {
		if !released {
			released = true
			close(release)
		}
	}
	defer releaseOnce() // never leave the snapshot goroutine blocked

	if err := db.BGSnapshot(s); err != nil {
		t.Fatal(err)
	}
	select {
	case <-paused:
	case <-time.After(10 * time.Second):
		t.Fatal("the snapshot did not reach the hook")
	}

	// While the dump is held after entry 10 (k09): writes to dumped and
	// not yet dumped keys, each made durable.
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			for _, w := range []struct {
				op string
				k  []byte
			}{
				{"APPEND", key(2)},  // already dumped
				{"APPEND", key(15)}, // not yet dumped
				{"APPEND", key(9)},  // the last one dumped
				{"APPEND", key(10)}, // the next one to dump
				{"DEL", key(3)},     // dumped
				{"DEL", key(16)},    // not yet dumped
				{"APPEND", []byte("new")},
				{"APPEND", key(15)}, // twice: copied once, then in place
			} {
				k := w.k
				seq, err := s.Update(k, func(tx *keyspace.Txn) {
					if w.op == "DEL" {
						tx.Delete()
						tx.Log([]byte("DEL"), k)
						return
					}
					appendInPlace(tx, []byte("+w"))
					tx.Log([]byte("APPEND"), k, []byte("+w"))
				})
				if err != nil {
					return fmt.Errorf("%s %s during the dump: %v", w.op, k, err)
				}
				if err := db.Wait(seq); err != nil { // written and fsynced
					return fmt.Errorf("Wait for %s %s during the dump: %v", w.op, k, err)
				}
			}
			return nil
		}()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("writes did not complete while the snapshot dump was paused: the dump stops writes")
	}
	if !db.InProgress() {
		t.Fatal("the snapshot is not in progress while its dump is held")
	}
	afterWrites := bufContents(s)
	want := maps.Clone(atCut)
	for _, k := range []string{"k02", "k09", "k10"} {
		want[k] += "+w"
	}
	want["k15"] += "+w+w"
	want["new"] = "+w"
	delete(want, "k03")
	delete(want, "k16")
	if !maps.Equal(afterWrites, want) {
		t.Fatalf("memory after the writes: %v, want %v", afterWrites, want)
	}

	releaseOnce()
	if !testutil.Eventually(t, 10*time.Second, func() bool { return !db.InProgress() }) {
		t.Fatal("the snapshot did not finish")
	}
	if !db.LastSaveOK() {
		t.Fatal("the snapshot failed")
	}

	// dump.pdb: the state at the cut, none of the writes made during it.
	_, entries, err := readSnapshot(filepath.Join(dir, snapshotName), decodeBuf)
	if err != nil {
		t.Fatal(err)
	}
	dumped := map[string]string{}
	for _, e := range entries {
		dumped[e.key] = string(e.value.(*bufVal).b)
	}
	if !maps.Equal(dumped, atCut) {
		t.Fatalf("dump.pdb holds %v, want the state at the cut %v", dumped, atCut)
	}

	// Recovery: dump.pdb plus the AOF after the cut holds the writes.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, s = openBuf(t, dir, Options{Fsync: FsyncAlways})
	if got := bufContents(s); !maps.Equal(got, afterWrites) {
		t.Fatalf("recovered %v, want %v", got, afterWrites)
	}
}
