package keyspace

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// capVal counts its capacity, like strval.String, and its Clone trims the
// capacity: a copy-on-write clone changes the key's MemoryUsage.
type capVal struct{ b []byte }

func (v *capVal) TypeName() string    { return "string" }
func (v *capVal) MemoryUsage() uint64 { return uint64(cap(v.b)) + 24 }
func (v *capVal) Clone() Value        { return &capVal{b: append(make([]byte, 0, len(v.b)), v.b...)} }

// nopLog accepts every record.
type nopLog struct{}

func (nopLog) Append([][]byte) (uint64, error) { return 1, nil }

// randomOp applies one random mutation to a random key.
func randomOp(s *Store, r *rand.Rand) {
	key := []byte(fmt.Sprintf("key-%d", r.IntN(40)))
	n := r.IntN(300)
	switch r.IntN(9) {
	case 0, 1: // create or replace
		s.Update(key, func(tx *Txn) { tx.Set(&capVal{b: make([]byte, n, n+r.IntN(50))}) })
	case 2, 3: // grow in place
		s.Update(key, func(tx *Txn) {
			if v, ok := tx.Value.(*capVal); ok {
				v.b = append(v.b, make([]byte, n)...)
			}
		})
	case 4: // shrink in place (a smaller buffer)
		s.Update(key, func(tx *Txn) {
			if v, ok := tx.Value.(*capVal); ok {
				v.b = append([]byte(nil), v.b[:len(v.b)/2]...)
			}
		})
	case 5:
		s.Update(key, func(tx *Txn) { tx.Delete() })
	case 6: // several changes in one transaction
		s.Update(key, func(tx *Txn) {
			tx.Set(&capVal{b: make([]byte, n)})
			tx.Delete()
			tx.Set(&capVal{b: make([]byte, n/2)})
		})
	case 7: // read-only transaction
		s.Update(key, func(tx *Txn) {})
	case 8: // fn panics after changing the value
		func() {
			defer func() { _ = recover() }()
			s.Update(key, func(tx *Txn) {
				tx.Set(&capVal{b: make([]byte, n)})
				panic("boom")
			})
		}()
	}
}

// TestUsedMatchesMemoryUsage: after every random operation — including
// copy-on-write cuts (whose clones change sizes), Freeze, Flush, FlushLog
// and a panicking fn — Used equals the full walk.
func TestUsedMatchesMemoryUsage(t *testing.T) {
	s := New(nopLog{})
	r := rand.New(rand.NewPCG(1, 2))
	var cut *Frozen
	for i := range 20000 {
		switch x := r.IntN(1000); {
		case x < 3:
			s.Flush(nil)
		case x < 5:
			if _, err := s.FlushLog([]byte("FLUSHALL")); err != nil {
				t.Fatal(err)
			}
		case x < 10:
			if _, err := s.Freeze(nil); err != nil {
				t.Fatal(err)
			}
		case x < 20:
			if cut == nil {
				var err error
				if cut, err = s.FreezeCOW(nil); err != nil {
					t.Fatal(err)
				}
			} else {
				_ = cut.Entries()
				cut.Release()
				cut = nil
			}
		default:
			randomOp(s, r)
		}
		if got, want := s.Used(), s.MemoryUsage(); got != want {
			t.Fatalf("op %d: Used() = %d, MemoryUsage() = %d", i, got, want)
		}
	}
	if cut != nil {
		cut.Release()
	}
	s.Flush(nil)
	if s.Used() != 0 || s.MemoryUsage() != 0 {
		t.Fatalf("after Flush: Used %d, MemoryUsage %d", s.Used(), s.MemoryUsage())
	}
}

// TestUsedConcurrent: writers on overlapping keys in parallel, with cuts
// taken and released meanwhile; once they stop, Used equals the walk.
func TestUsedConcurrent(t *testing.T) {
	s := New(nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for range 3000 {
				randomOp(s, r)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 30 {
			cut, err := s.FreezeCOW(nil)
			if err != nil {
				t.Error(err)
				return
			}
			_ = cut.Entries()
			cut.Release()
		}
	}()
	wg.Wait()
	if got, want := s.Used(), s.MemoryUsage(); got != want {
		t.Fatalf("Used() = %d, MemoryUsage() = %d", got, want)
	}
}
