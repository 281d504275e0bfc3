package keyspace

import (
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkParallelIndependentKeys runs the command path's key-space part
// (command gate shared, then one View or Update of a key) from every
// GOMAXPROCS goroutine on independent keys (each goroutine its own set
// of 64 keys). Run with -cpu 1,2,... and -mutexprofile: independent keys
// should not contend, so ns/op should fall with the CPU count.
func BenchmarkParallelIndependentKeys(b *testing.B) {
	for _, write := range []bool{false, true} {
		name := "View"
		if write {
			name = "Update"
		}
		b.Run(name, func(b *testing.B) {
			s := New(nil)
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				id := next.Add(1)
				keys := make([][]byte, 64)
				for i := range keys {
					keys[i] = []byte("g" + strconv.FormatInt(id, 10) + ":" + strconv.Itoa(i))
					s.Update(keys[i], func(tx *Txn) { tx.Set(&capVal{b: make([]byte, 8)}) })
				}
				slot := s.SharedSlot(uint64(id))
				var seen Value
				i := 0
				for pb.Next() {
					k := keys[i&63]
					i++
					s.SharedAt(slot)
					if write {
						s.Update(k, func(tx *Txn) { seen = tx.Value })
					} else {
						s.View(k, func(v Value) { seen = v })
					}
					s.SharedDoneAt(slot)
				}
				_ = seen
			})
		})
	}
}
