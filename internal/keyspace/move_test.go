package keyspace

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// rename moves src onto dst with UpdateKeys, as RENAME does.
func rename(s *Store, src, dst string) bool {
	ok := false
	s.UpdateKeys([][]byte{[]byte(src), []byte(dst)}, func(txs []*Txn) {
		if txs[0].Value == nil || src == dst {
			return
		}
		_ = txs[0].Log([]byte("RENAME"), []byte(src), []byte(dst))
		txs[1].Set(txs[0].Value)
		txs[0].Delete()
		ok = true
	})
	return ok
}

func TestUpdateKeysAccountingAndDuplicates(t *testing.T) {
	s := New(nopLog{})
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 3000; i++ {
		a, b := fmt.Sprintf("k%d", r.IntN(30)), fmt.Sprintf("k%d", r.IntN(30))
		switch r.IntN(4) {
		case 0:
			s.Update([]byte(a), func(tx *Txn) { tx.Set(&capVal{b: make([]byte, r.IntN(100))}) })
		case 1:
			rename(s, a, b)
		case 2: // copy
			s.UpdateKeys([][]byte{[]byte(a), []byte(b)}, func(txs []*Txn) {
				if txs[0].Value != nil && a != b {
					txs[1].Set(txs[0].Value.Clone())
				}
			})
		case 3: // a key named twice shares its Txn
			s.UpdateKeys([][]byte{[]byte(a), []byte(a), []byte(b)}, func(txs []*Txn) {
				if txs[0] != txs[1] {
					t.Fatal("duplicate key got two Txns")
				}
				txs[1].Set(&capVal{b: make([]byte, 10)})
				txs[2].Delete()
			})
		}
		if s.Used() != s.MemoryUsage() {
			t.Fatalf("step %d: Used %d, MemoryUsage %d", i, s.Used(), s.MemoryUsage())
		}
	}
}

func TestUpdateKeysCOW(t *testing.T) {
	s := New(nil)
	s.Update([]byte("a"), func(tx *Txn) { tx.Set(&bytesVal{b: []byte("A")}) })
	s.Update([]byte("b"), func(tx *Txn) { tx.Set(&bytesVal{b: []byte("B")}) })
	f, err := s.FreezeCOW(nil)
	if err != nil {
		t.Fatal(err)
	}
	rename(s, "a", "b")
	got := entriesMap(f.Entries())
	if got["a"] != "A" || got["b"] != "B" || len(got) != 2 {
		t.Fatalf("cut changed by a rename: %v", got)
	}
	f.Release()
	s.View([]byte("b"), func(v Value) {
		if v == nil || string(v.(*bytesVal).b) != "A" {
			t.Fatalf("b after rename: %v", v)
		}
	})
	if s.Len() != 1 || s.Used() != s.MemoryUsage() {
		t.Fatalf("len %d used %d memory %d", s.Len(), s.Used(), s.MemoryUsage())
	}
}

func TestUpdateKeysWriteGateAndSeq(t *testing.T) {
	g := &gateLogger{}
	s := New(g)
	s.Update([]byte("a"), func(tx *Txn) { tx.Set(&bytesVal{b: []byte("A")}) })
	seq, err := s.UpdateKeys([][]byte{[]byte("a"), []byte("b")}, func(txs []*Txn) {
		_ = txs[0].Log([]byte("X"))
	})
	if seq != 1 || err != nil {
		t.Fatalf("seq %d err %v", seq, err)
	}
	g.err = fmt.Errorf("refused")
	ran := false
	if _, err := s.UpdateKeys([][]byte{[]byte("a")}, func([]*Txn) { ran = true }); err == nil || ran {
		t.Fatalf("write gate: err %v ran %v", err, ran)
	}
}

// TestRenameAtomicForReaders: readers of the destination key never find
// it missing while renames replace it, and a reader of all the keys at
// once never sees a value under both its old and its new name.
func TestRenameAtomicForReaders(t *testing.T) {
	s := New(nil)
	s.Update([]byte("dst"), func(tx *Txn) { tx.Set(&bytesVal{b: []byte("v0")}) })
	var stop atomic.Bool
	var missing, reads, doubled atomic.Int64
	var wg sync.WaitGroup
	all := [][]byte{[]byte("dst")}
	for i := range 7 {
		all = append(all, []byte(fmt.Sprintf("src%d", i)))
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			s.ViewKeys(all, func(vals []Value) {
				for _, v := range vals[1:] {
					if v != nil && vals[0] != nil && string(v.(*bytesVal).b) == string(vals[0].(*bytesVal).b) {
						doubled.Add(1)
					}
				}
			})
		}
	}()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				s.View([]byte("dst"), func(v Value) {
					if v == nil {
						missing.Add(1)
					}
				})
				reads.Add(1)
			}
		}()
	}
	for i := range 3000 {
		src := fmt.Sprintf("src%d", i%7)
		val := fmt.Sprint(i)
		s.Update([]byte(src), func(tx *Txn) { tx.Set(&bytesVal{b: []byte(val)}) })
		if !rename(s, src, "dst") {
			t.Fatal("rename failed")
		}
	}
	stop.Store(true)
	wg.Wait()
	if missing.Load() != 0 {
		t.Fatalf("%d of %d reads found the destination missing", missing.Load(), reads.Load())
	}
	if doubled.Load() != 0 {
		t.Fatalf("%d multi-key reads saw a value under both names", doubled.Load())
	}
}

func TestViewKeysAndRandomKey(t *testing.T) {
	s := New(nil)
	if _, ok := s.RandomKey(); ok {
		t.Fatal("RandomKey of an empty store")
	}
	for i := range 50 {
		k := fmt.Sprint(i)
		s.Update([]byte(k), func(tx *Txn) { tx.Set(&bytesVal{b: []byte(k)}) })
	}
	s.ViewKeys([][]byte{[]byte("1"), []byte("x"), []byte("1")}, func(vals []Value) {
		if vals[0] == nil || vals[1] != nil || vals[2] != vals[0] {
			t.Fatalf("ViewKeys: %v", vals)
		}
	})
	seen := map[string]bool{}
	for range 5000 {
		k, ok := s.RandomKey()
		if !ok {
			t.Fatal("no key")
		}
		seen[k] = true
	}
	if len(seen) < 40 {
		t.Fatalf("RandomKey chose only %d of 50 keys in 5000 draws", len(seen))
	}
}
