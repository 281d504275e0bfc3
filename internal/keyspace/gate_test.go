package keyspace

import (
	"testing"
	"time"

	"github.com/probly/probly/internal/testutil"
)

// TestGateExclusiveWaitsForEverySlot: Exclusive waits for a command
// holding any slot, and while it is held no slot can be taken shared.
func TestGateExclusiveWaitsForEverySlot(t *testing.T) {
	s := New(nil)
	slot := s.SharedSlot(5)
	s.SharedAt(slot)
	done := make(chan struct{})
	go func() {
		s.Exclusive()
		close(done)
	}()
	// Exclusive has taken the slots before 5 (slot 0 is no longer free
	// for readers) but cannot finish while slot 5 is held.
	if !testutil.Eventually(t, 5*time.Second, func() bool {
		if s.cmd[0].mu.TryRLock() {
			s.cmd[0].mu.RUnlock()
			return false
		}
		return true
	}) {
		t.Fatal("Exclusive did not start")
	}
	select {
	case <-done:
		t.Fatal("Exclusive returned while slot 5 was held")
	default:
	}
	s.SharedDoneAt(slot)
	<-done
	for i := range s.cmd {
		if s.cmd[i].mu.TryRLock() {
			t.Fatalf("slot %d taken shared while the gate is exclusive", i)
		}
	}
	s.ExclusiveDone()
	for i := range s.cmd {
		if !s.cmd[i].mu.TryRLock() {
			t.Fatalf("slot %d not free after ExclusiveDone", i)
		}
		s.cmd[i].mu.RUnlock()
	}
	if s.SharedSlot(5) == s.SharedSlot(6) {
		t.Fatal("consecutive connection ids share a slot")
	}
}
