package keyspace

import (
	"strconv"
	"testing"
	"time"
)

// TestIndependentKeysDoNotSerialize: while one writer holds key A's lock
// (a long command), writes and reads of a key in another shard complete,
// and a write to a key in A's own shard waits. This is what lets
// independent keys use both cores (DESIGN.md: no global lock on the hot
// path).
func TestIndependentKeysDoNotSerialize(t *testing.T) {
	s := New(nil)
	a := []byte("key-a")
	var other, same []byte
	for i := 0; other == nil || same == nil; i++ {
		k := []byte("key-" + strconv.Itoa(i))
		switch {
		case string(k) == string(a):
		case s.shardOf(k) == s.shardOf(a):
			if same == nil {
				same = k
			}
		default:
			if other == nil {
				other = k
			}
		}
	}

	holding, release := make(chan struct{}), make(chan struct{})
	go s.Update(a, func(tx *Txn) {
		tx.Set(&bytesVal{b: []byte("a")})
		close(holding)
		<-release
	})
	<-holding

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 1000; i++ {
			s.Update(other, func(tx *Txn) { tx.Set(&bytesVal{b: []byte(strconv.Itoa(i))}) })
			s.View(other, func(Value) {})
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("a key in another shard waited for key A's lock")
	}

	sameDone := make(chan struct{})
	go func() {
		defer close(sameDone)
		s.Update(same, func(tx *Txn) { tx.Set(&bytesVal{b: []byte("s")}) })
	}()
	select {
	case <-sameDone:
		t.Fatal("a key in A's shard was written while A's lock was held: the test cannot tell shards apart")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-sameDone
	s.View(other, func(v Value) {
		if got := string(v.(*bytesVal).b); got != "999" {
			t.Fatalf("other key = %q, want 999", got)
		}
	})
}
