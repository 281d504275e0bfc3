package persist

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/testutil"
)

func TestParseSaveRules(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []SaveRule
		out  string
	}{
		{"", nil, ""},
		{"  ", nil, ""},
		{DefaultSave, []SaveRule{{3600, 1}, {300, 100}, {60, 10000}}, DefaultSave},
		{" 900   0 ", []SaveRule{{900, 0}}, "900 0"},
	} {
		got, err := ParseSaveRules(c.in)
		if err != nil || !slices.Equal(got, c.want) || FormatSaveRules(got) != c.out {
			t.Errorf("ParseSaveRules(%q) = %v, %v (formats as %q)", c.in, got, err, FormatSaveRules(got))
		}
	}
	for _, bad := range []string{"1", "0 1", "-1 1", "1 -1", "a 1", "1 b", "1 1 2", "1.5 1", "99999999999999999999 1"} {
		if _, err := ParseSaveRules(bad); !errors.Is(err, ErrSaveRules) {
			t.Errorf("ParseSaveRules(%q) = %v, want ErrSaveRules", bad, err)
		}
	}
}

// waitSnapshot waits for a background snapshot to finish.
func waitSnapshot(t *testing.T, db *DB) {
	t.Helper()
	if !testutil.Eventually(t, 10*time.Second, func() bool { return !db.InProgress() }) {
		t.Fatal("snapshot did not finish")
	}
}

// TestSaveRules drives the scheduler's decision with explicit times: a
// rule fires only with enough changes and more than its seconds since the
// last save, and the counter restarts after the snapshot.
func TestSaveRules(t *testing.T) {
	db, s := openStore(t, t.TempDir(), FsyncNo)
	defer db.Close()
	db.SetSaveRules([]SaveRule{{Seconds: 10, Changes: 3}, {Seconds: 100, Changes: 1}})
	if got := FormatSaveRules(db.SaveRules()); got != "10 3 100 1" {
		t.Fatal(got)
	}
	t0 := db.LastSave()
	check := func(at time.Duration, want bool, wantTrig Trigger) {
		t.Helper()
		trig, ok := db.autoCheck(s, t0.Add(at))
		if ok != want || (ok && trig != wantTrig) {
			t.Fatalf("at +%v with %d changes: started %v (%v), want %v (%v)", at, db.Changes(), ok, trig, want, wantTrig)
		}
		waitSnapshot(t, db)
	}
	check(time.Hour, false, 0) // no changes: nothing to save
	set(t, s, "a", "1")
	set(t, s, "b", "2")
	check(11*time.Second, false, 0)  // 2 < 3 changes
	check(100*time.Second, false, 0) // not more than 100 s
	set(t, s, "c", "3")
	check(10*time.Second, false, 0) // not more than 10 s
	check(10*time.Second+time.Millisecond, true, TriggerSave)
	if db.Changes() != 0 || !db.LastSave().After(t0) {
		t.Fatalf("after the save: %d changes, last save %v", db.Changes(), db.LastSave())
	}
	t0 = db.LastSave()
	set(t, s, "d", "4")
	check(50*time.Second, false, 0)
	check(101*time.Second, true, TriggerSave)
	db.SetSaveRules(nil)
	set(t, s, "e", "5")
	check(24*time.Hour, false, 0)
	if st := db.SnapshotStats(); st.ByTrigger["save"] != 2 || st.Succeeded != 2 || db.Rewrites() != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// TestAutoRewrite: with no snapshot the base is 1 byte, so the first
// rewrite happens once the AOF passes the minimum size; afterwards the
// AOF must reach the percentage of dump.pdb's size.
func TestAutoRewrite(t *testing.T) {
	db, s := openStore(t, t.TempDir(), FsyncNo)
	defer db.Close()
	db.SetAutoRewrite(100, 4096)
	now := time.Now()
	val := string(make([]byte, 100))
	i := 0
	for db.AOFSize() <= 4096 {
		if _, ok := db.autoCheck(s, now); ok {
			t.Fatalf("rewrite at %d AOF bytes, below the minimum", db.AOFSize())
		}
		set(t, s, fmt.Sprintf("k%d", i), val)
		i++
	}
	if trig, ok := db.autoCheck(s, now); !ok || trig != TriggerRewrite {
		t.Fatalf("no rewrite at %d AOF bytes", db.AOFSize())
	}
	waitSnapshot(t, db)
	base := db.SnapshotStats().BaseSize
	if base < 4096 || db.AOFSize() != aofHeaderSize {
		t.Fatalf("after the rewrite: base %d, AOF %d", base, db.AOFSize())
	}
	// Overwriting the same keys: the AOF grows, the data does not.
	for j := 0; db.AOFSize() < base; j++ {
		if _, ok := db.autoCheck(s, now); ok {
			t.Fatalf("rewrite at %d AOF bytes, below 100%% of the %d-byte base", db.AOFSize(), base)
		}
		set(t, s, fmt.Sprintf("k%d", j%i), val)
	}
	if trig, ok := db.autoCheck(s, now); !ok || trig != TriggerRewrite {
		t.Fatalf("no rewrite at %d AOF bytes over a %d-byte base", db.AOFSize(), base)
	}
	waitSnapshot(t, db)
	db.SetAutoRewrite(0, 0) // disabled
	for j := 0; j < 3*i; j++ {
		set(t, s, fmt.Sprintf("k%d", j%i), val)
	}
	if _, ok := db.autoCheck(s, now); ok {
		t.Fatal("rewrite while disabled")
	}
	if p, m := db.AutoRewrite(); p != 0 || m != 0 {
		t.Fatal(p, m)
	}
	if st := db.SnapshotStats(); st.ByTrigger["aof-rewrite"] != 2 || db.Rewrites() != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// TestAutoRetryDelay: after a failed snapshot the scheduler waits 5 s
// before trying again.
func TestAutoRetryDelay(t *testing.T) {
	db, s := openStore(t, t.TempDir(), FsyncNo)
	defer db.Close()
	db.SetSaveRules([]SaveRule{{Seconds: 1, Changes: 1}})
	set(t, s, "a", "1")
	testHookBeforeRename = func() error { return errors.New("disk on fire") }
	now := db.LastSave().Add(2 * time.Second)
	if _, ok := db.autoCheck(s, now); !ok {
		t.Fatal("no snapshot")
	}
	waitSnapshot(t, db)
	testHookBeforeRename = nil
	if db.LastSaveOK() {
		t.Fatal("the snapshot should have failed")
	}
	tried := time.Unix(0, db.lastTry.Load())
	if _, ok := db.autoCheck(s, tried.Add(4*time.Second)); ok {
		t.Fatal("retried within 5 s of a failure")
	}
	if _, ok := db.autoCheck(s, tried.Add(5*time.Second)); !ok {
		t.Fatal("not retried after 5 s")
	}
	waitSnapshot(t, db)
	if !db.LastSaveOK() || db.SnapshotStats().Failed != 1 {
		t.Fatalf("retry: ok %v, stats %+v", db.LastSaveOK(), db.SnapshotStats())
	}
}

// TestStartAutoResyncs: after a failed append the scheduler takes a
// snapshot on its own and writes resume.
func TestStartAutoResyncs(t *testing.T) {
	dir := t.TempDir()
	db, s := openStore(t, dir, FsyncNo)
	defer db.Close()
	if err := db.StartAuto(s); err != nil {
		t.Fatal(err)
	}
	if err := db.StartAuto(s); err == nil {
		t.Fatal("StartAuto twice")
	}
	set(t, s, "a", "1")
	// Simulate a failed append.
	werr := errors.New("no space left on device (simulated)")
	db.mu.Lock()
	db.lastWriteErr.Store(&werr)
	db.writeErrs.Add(1)
	db.mu.Unlock()
	if db.WriteGate() == nil {
		t.Fatal("writes accepted after a failed append")
	}
	if !testutil.Eventually(t, 10*time.Second, func() bool { return db.WriteGate() == nil }) {
		t.Fatal("the scheduler did not resync")
	}
	set(t, s, "b", "2")
	if st := db.SnapshotStats(); st.ByTrigger["resync"] != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestFsyncObserver: every AOF fsync is reported with its duration.
func TestFsyncObserver(t *testing.T) {
	var mu sync.Mutex
	var seen []time.Duration
	s := keyspace.New(nil)
	sm := storeModel{s}
	db, err := Open(Options{Dir: t.TempDir(), Fsync: FsyncAlways, OnFsync: func(d time.Duration) {
		mu.Lock()
		seen = append(seen, d)
		mu.Unlock()
	}}, decodeTest, sm.load, sm.replay)
	if err != nil {
		t.Fatal(err)
	}
	s.SetLogger(db)
	for i := range 5 {
		if err := db.Wait(set(t, s, fmt.Sprint(i), "v")); err != nil {
			t.Fatal(err)
		}
	}
	n, total, longest := db.FsyncStats()
	mu.Lock()
	got := len(seen)
	mu.Unlock()
	if n < 5 || uint64(got) != n || total <= 0 || longest <= 0 || longest > total {
		t.Fatalf("fsyncs %d, observed %d, total %v, longest %v", n, got, total, longest)
	}
	db.SetOnFsync(nil)
	db.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != got {
		t.Fatal("observer called after removal")
	}
}

// TestRefusedAppendAfterCutNotCovered: an append refused while writes are
// out of sync may also have left a change in memory only; a snapshot whose
// cut came before it does not bring writes back, the next one does.
func TestRefusedAppendAfterCutNotCovered(t *testing.T) {
	db, s := openStore(t, t.TempDir(), FsyncNo)
	defer db.Close()
	set(t, s, "a", "1")
	werr := errors.New("no space left on device (simulated)")
	db.mu.Lock()
	db.lastWriteErr.Store(&werr)
	db.writeErrs.Add(1)
	db.mu.Unlock()
	testHookBeforeRename = func() error {
		// After the cut: a writer that passed WriteGate before the failure.
		if _, err := db.Append([][]byte{[]byte("SET"), []byte("b"), []byte("2")}); !errors.Is(err, ErrOutOfSync) {
			t.Errorf("append while out of sync: %v", err)
		}
		return nil
	}
	err := db.Snapshot(s)
	testHookBeforeRename = nil
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(db.WriteGate(), ErrOutOfSync) {
		t.Fatal("writes resumed although a refused append came after the snapshot's cut")
	}
	if err := db.Snapshot(s); err != nil {
		t.Fatal(err)
	}
	if err := db.WriteGate(); err != nil {
		t.Fatalf("after a second snapshot: %v", err)
	}
}
