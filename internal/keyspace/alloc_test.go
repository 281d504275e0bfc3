package keyspace

import (
	"testing"
)

// seqLog hands out increasing sequence numbers and keeps nothing.
type seqLog struct{ n uint64 }

func (l *seqLog) Append([][]byte) (uint64, error) { l.n++; return l.n, nil }

// TestUpdateViewNoAlloc pins the hot path: Update and View on an existing
// key, including a logged record, allocate nothing.
func TestUpdateViewNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	s := New(&seqLog{})
	key := []byte("key")
	rec := []byte("REC")
	s.Update(key, func(tx *Txn) { tx.Set(&capVal{b: make([]byte, 8)}) })
	var seen Value
	if n := testing.AllocsPerRun(1000, func() {
		seq, err := s.Update(key, func(tx *Txn) {
			seen = tx.Value
			_ = tx.Log(rec, key)
		})
		if seq == 0 || err != nil {
			t.Fatal(seq, err)
		}
	}); n != 0 {
		t.Errorf("Update: %v allocs/op, want 0", n)
	}
	if n := testing.AllocsPerRun(1000, func() {
		s.View(key, func(v Value) { seen = v })
	}); n != 0 {
		t.Errorf("View: %v allocs/op, want 0", n)
	}
	if seen == nil {
		t.Fatal("value not seen")
	}
}

// TestUpdateTxnReuse checks that the reused per-shard Txn starts clean:
// the sequence number and error of one Update do not leak into the next.
func TestUpdateTxnReuse(t *testing.T) {
	l := &seqLog{}
	s := New(l)
	key := []byte("k")
	seq, err := s.Update(key, func(tx *Txn) { _ = tx.Log([]byte("A")) })
	if seq != 1 || err != nil {
		t.Fatalf("first: %d %v", seq, err)
	}
	seq, err = s.Update(key, func(tx *Txn) {
		if tx.Value != nil || tx.seq != 0 || tx.err != nil || tx.set {
			t.Errorf("dirty Txn: %+v", *tx)
		}
	})
	if seq != 0 || err != nil {
		t.Fatalf("second: %d %v", seq, err)
	}
}

func BenchmarkUpdate(b *testing.B) {
	s := New(&seqLog{})
	key := []byte("bf")
	rec := []byte("BF.MADD")
	s.Update(key, func(tx *Txn) { tx.Set(&capVal{b: make([]byte, 8)}) })
	b.ReportAllocs()
	for b.Loop() {
		s.Update(key, func(tx *Txn) { _ = tx.Log(rec, key, key) })
	}
}

func BenchmarkView(b *testing.B) {
	s := New(nil)
	key := []byte("bf")
	s.Update(key, func(tx *Txn) { tx.Set(&capVal{b: make([]byte, 8)}) })
	var seen Value
	b.ReportAllocs()
	for b.Loop() {
		s.View(key, func(v Value) { seen = v })
	}
	_ = seen
}
