package keyspace

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
)

// bytesVal is a mutable test value: writers change it in place.
type bytesVal struct{ b []byte }

func (v *bytesVal) TypeName() string    { return "string" }
func (v *bytesVal) MemoryUsage() uint64 { return uint64(len(v.b)) }
func (v *bytesVal) Clone() Value        { return &bytesVal{b: append([]byte(nil), v.b...)} }

func entriesMap(es []Entry) map[string]string {
	m := map[string]string{}
	for _, e := range es {
		if _, dup := m[e.Key]; dup {
			panic("duplicate key " + e.Key)
		}
		m[e.Key] = string(e.Value.(*bytesVal).b)
	}
	return m
}

func appendTo(s *Store, k, suffix string) {
	s.Update([]byte(k), func(tx *Txn) {
		if tx.Value == nil {
			tx.Set(&bytesVal{b: []byte(suffix)})
			return
		}
		v := tx.Value.(*bytesVal)
		v.b = append(v.b, suffix...) // in place, as BF.ADD does
	})
}

// TestFreezeCOWKeepsTheCut: writes, deletes, creations and a flush after
// the cut are invisible in the cut's entries, visible in the store, and
// the entries never change while the cut is held.
func TestFreezeCOWKeepsTheCut(t *testing.T) {
	s := New(nil)
	want := map[string]string{}
	for i := range 200 {
		k := fmt.Sprintf("k%d", i)
		appendTo(s, k, "a")
		want[k] = "a"
	}
	ran := false
	f, err := s.FreezeCOW(func() error { ran = true; return nil })
	if err != nil || !ran {
		t.Fatal(err, ran)
	}
	for i := range 100 {
		appendTo(s, fmt.Sprintf("k%d", i), "b")
	}
	s.Update([]byte("k150"), func(tx *Txn) { tx.Delete() })
	appendTo(s, "new", "n")
	got := entriesMap(f.Entries())
	if !maps.Equal(got, want) {
		t.Fatalf("cut entries differ: %d keys vs %d", len(got), len(want))
	}
	s.View([]byte("k1"), func(v Value) {
		if string(v.(*bytesVal).b) != "ab" {
			t.Fatalf("live value %q", v.(*bytesVal).b)
		}
	})
	s.Flush(nil)
	if got := entriesMap(f.Entries()); !maps.Equal(got, want) {
		t.Fatal("cut entries changed by FLUSHALL")
	}
	if s.Len() != 0 {
		t.Fatal("flush did not flush")
	}
	f.Release()
	f.Release()
	appendTo(s, "x", "1")
	if s.Len() != 1 {
		t.Fatal(s.Len())
	}
}

func TestFreezeCOWFnError(t *testing.T) {
	s := New(nil)
	appendTo(s, "a", "1")
	boom := errors.New("boom")
	if _, err := s.FreezeCOW(func() error { return boom }); err != boom {
		t.Fatal(err)
	}
	// No cut is held: a new one can be taken.
	f, err := s.FreezeCOW(nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Release()
}

// TestFreezeCOWConcurrent runs writers while the cut's values are read;
// -race checks that nobody mutates a value the cut still shares.
func TestFreezeCOWConcurrent(t *testing.T) {
	s := New(nil)
	for i := range 64 {
		appendTo(s, fmt.Sprintf("k%d", i), "0")
	}
	for round := range 20 {
		f, _ := s.FreezeCOW(nil)
		var wg sync.WaitGroup
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 200 {
					appendTo(s, fmt.Sprintf("k%d", (i*7+g)%64), "x")
				}
			}()
		}
		es := f.Entries()
		n := 0
		for _, e := range es {
			n += len(e.Value.(*bytesVal).b) // reads the shared bytes
		}
		wg.Wait()
		if again := entriesMap(f.Entries()); !maps.Equal(again, entriesMap(es)) {
			t.Fatalf("round %d: entries changed while the cut was held", round)
		}
		f.Release()
	}
}

type gateLogger struct{ err error }

func (g *gateLogger) Append([][]byte) (uint64, error) { return 1, nil }
func (g *gateLogger) WriteGate() error                { return g.err }

func TestWriteGate(t *testing.T) {
	g := &gateLogger{}
	s := New(g)
	appendTo(s, "a", "1")
	g.err = errors.New("refused")
	ran := false
	if _, err := s.Update([]byte("a"), func(*Txn) { ran = true }); err != g.err || ran {
		t.Fatalf("gate: err %v ran %v", err, ran)
	}
	s.SetLogger(nil)
	if _, err := s.Update([]byte("a"), func(*Txn) { ran = true }); err != nil || !ran {
		t.Fatal("nil logger still gated")
	}
}

// TestFrozenReleaseShard: a cut listed part by part holds every key once
// (Len of them); a released part's values change in place again while the
// parts not yet listed still show the cut, and Release after some parts
// ends the rest.
func TestFrozenReleaseShard(t *testing.T) {
	s := New(nil)
	want := map[string]string{}
	for i := range 2000 {
		k := fmt.Sprintf("k%d", i)
		appendTo(s, k, "a")
		want[k] = "a"
	}
	f, err := s.FreezeCOW(nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Len() != 2000 {
		t.Fatalf("Len %d", f.Len())
	}
	got := map[string]string{}
	var part []Entry
	half := f.Shards() / 2
	for i := range half {
		part = f.AppendShard(part[:0], i)
		for _, e := range part {
			if _, dup := got[e.Key]; dup {
				t.Fatalf("key %s listed twice", e.Key)
			}
			got[e.Key] = string(e.Value.(*bytesVal).b)
		}
		f.ReleaseShard(i)
		f.ReleaseShard(i) // idempotent
		// Every key written now: the released parts change in place, the
		// others are copied and still list "a".
		if i == half-1 {
			for k := range want {
				appendTo(s, k, "b")
			}
		}
	}
	var listed []Entry
	for i := half; i < f.Shards(); i++ {
		listed = f.AppendShard(listed, i)
	}
	for _, e := range listed {
		got[e.Key] = string(e.Value.(*bytesVal).b)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("the cut listed %d keys, not the %d at the cut (or changed values)", len(got), len(want))
	}
	if sh := &s.shards[0]; sh.cow != nil {
		t.Fatal("a released part still copies on write")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("AppendShard of a released part did not panic")
			}
		}()
		f.AppendShard(nil, 0)
	}()
	f.Release()
	for i := range s.shards {
		if s.shards[i].cow != nil {
			t.Fatalf("part %d still copies on write after Release", i)
		}
	}
	if _, err := s.FreezeCOW(nil); err != nil { // a new cut may be taken
		t.Fatal(err)
	}
}
