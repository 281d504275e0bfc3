package persist

import (
	"strconv"
	"testing"

	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/strval"
)

// BenchmarkSnapshotStore takes SAVE-style snapshots of a store holding
// 200,000 small string keys (the server's values), from the cut to the
// fsynced file: the per-key cost of an automatic AOF rewrite.
func BenchmarkSnapshotStore(b *testing.B) {
	db, s := openBuf(b, b.TempDir(), Options{Fsync: FsyncNo})
	defer db.Close()
	for i := range 200000 {
		k := []byte("key:" + strconv.Itoa(i))
		s.Update(k, func(tx *keyspace.Txn) { tx.Set(strval.New([]byte("xxxxxxxxxxxxxxxx"))) })
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := db.Snapshot(s); err != nil {
			b.Fatal(err)
		}
	}
}
