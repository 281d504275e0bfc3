package persist

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/probly/probly/internal/keyspace"
)

func BenchmarkAppend(b *testing.B) {
	db, _ := open(b, b.TempDir(), FsyncNo)
	defer db.Close()
	args := [][]byte{[]byte("BF.ADD"), []byte("filter"), []byte("user-0000000000")}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.Append(args); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAppendWaitAlways measures acknowledged writes with group commit.
func BenchmarkAppendWaitAlways(b *testing.B) {
	db, _ := open(b, b.TempDir(), FsyncAlways)
	defer db.Close()
	b.SetParallelism(16)
	start := db.Fsyncs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			seq, err := db.Append([][]byte{[]byte("SET"), []byte(strconv.Itoa(i)), []byte("v")})
			if err == nil {
				err = db.Wait(seq)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/float64(db.Fsyncs()-start+1), "records/fsync")
}

// BenchmarkWriteSnapshotSmallKeys writes a snapshot of 100,000 small
// string keys (the per-entry cost of the snapshot writer).
func BenchmarkWriteSnapshotSmallKeys(b *testing.B) {
	entries := make([]keyspace.Entry, 100000)
	for i := range entries {
		entries[i] = keyspace.Entry{Key: "key:" + strconv.Itoa(i), Value: strVal("value-" + strconv.Itoa(i))}
	}
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		p, _, err := writeSnapshot(dir, 2, entryList(entries), time.Now())
		if err != nil {
			b.Fatal(err)
		}
		os.Remove(p)
	}
}
