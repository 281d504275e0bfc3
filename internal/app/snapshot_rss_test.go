package app

import (
	"os"
	"strconv"
	"testing"

	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/persist"
	"github.com/probly/probly/internal/redisbloom"
	"github.com/probly/probly/internal/testutil"
)

// sparseDirEnv passes TestSnapshotSparseFilterRSS's data directory to the
// fresh processes of its subtests.
const sparseDirEnv = "PROBLY_TEST_SPARSE_SNAPSHOT_DIR"

// TestSnapshotSparseFilterRSS (PROBLY_FULL=1; issue 18): BF.RESERVE bf
// 0.000001 300000000 makes a 1.1 GB filter whose pages the OS maps only
// when written; 200 items touch about 4,000 of them. Saving it must not
// touch the others, nor copy the filter (resident memory grows by far
// less than its size), the snapshot holds the zero runs as counts (a few
// MB, not 1.1 GB), and loading it in a fresh process decodes in place:
// resident memory grows by about the touched pages, not by one or two
// copies of the filter, and every item is found. Each phase runs in a
// fresh process (testutil.RunFresh), whose heap has no freed memory the
// runtime would clear (touching it) for the filter.
func TestSnapshotSparseFilterRSS(t *testing.T) {
	testutil.Full(t)
	if testutil.Race {
		// The race detector's shadow memory follows every byte the
		// zero checks read: twice the filter's size, whatever the code
		// touches. .ci/run runs this test without -race.
		t.Skip("resident memory is not the program's under -race")
	}
	const size = 1132420136 // the bit array's bytes (BF.INFO SIZE 1132420232 with the overhead)
	const limit = 128 << 20 // RSS growth allowed (touched pages ≈ 16 MB; race shadow memory more)
	dir := os.Getenv(sparseDirEnv)
	if dir == "" {
		dir = t.TempDir()
		t.Setenv(sparseDirEnv, dir)
	}
	open := func(t *testing.T, store *keyspace.Store) *persist.DB {
		db, err := persist.Open(persist.Options{Dir: dir, Fsync: persist.FsyncNo}, Decode,
			func(key string, v keyspace.Value) error {
				store.Update([]byte(key), func(tx *keyspace.Txn) { tx.Set(v) })
				return nil
			}, func([][]byte) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	t.Run("save", func(t *testing.T) {
		if !testutil.RunFresh(t) {
			return
		}
		c, err := redisbloom.New(redisbloom.Params{ErrorRate: 0.000001, Capacity: 300000000, Expansion: 2}, 2*size)
		if err != nil {
			t.Fatal(err)
		}
		if c.SizeBytes() != size {
			t.Fatalf("filter of %d bytes, want %d", c.SizeBytes(), size)
		}
		for i := range 200 {
			if _, err := c.Add([]byte(strconv.Itoa(i))); err != nil {
				t.Fatal(err)
			}
		}
		store := keyspace.New(nil)
		store.Update([]byte("bf"), func(tx *keyspace.Txn) { tx.Set(c) })
		db := open(t, store)
		defer db.Close()
		before := testutil.RSS(t)
		if err := db.Snapshot(store); err != nil {
			t.Fatal(err)
		}
		grew := testutil.RSS(t) - before
		st, err := os.Stat(dir + "/dump.pdb")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("SAVE: RSS grew by %d bytes; dump.pdb has %d bytes", grew, st.Size())
		if grew > limit {
			t.Errorf("SAVE grew RSS by %d bytes for a %d-byte filter with 200 items", grew, size)
		}
		if st.Size() > 16<<20 {
			t.Errorf("dump.pdb has %d bytes for a filter with 200 items", st.Size())
		}
	})
	t.Run("load", func(t *testing.T) {
		if !testutil.RunFresh(t) {
			return
		}
		store := keyspace.New(nil)
		before := testutil.RSS(t)
		db := open(t, store)
		defer db.Close()
		grew := testutil.RSS(t) - before
		t.Logf("load: RSS grew by %d bytes", grew)
		var c *redisbloom.Chain
		store.View([]byte("bf"), func(v keyspace.Value) { c, _ = v.(*redisbloom.Chain) })
		if c == nil || c.SizeBytes() != size || c.Card() != 200 {
			t.Fatalf("loaded %v", c)
		}
		for i := range 200 {
			if !c.Exists([]byte(strconv.Itoa(i))) {
				t.Fatalf("item %d missing after the load", i)
			}
		}
		if grew > limit {
			t.Errorf("loading grew RSS by %d bytes for a %d-byte filter with 200 items", grew, size)
		}
	})
}
