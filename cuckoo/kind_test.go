package cuckoo

import (
	"testing"

	"github.com/probly/probly/bloom"
	"github.com/probly/probly/internal/binfmt"
)

// TestKindRegistry: a cuckoo encoding carries the kind the registry
// (internal/binfmt) gives it, so binfmt.PeekKind names it and no bloom
// decoder takes it.
func TestKindRegistry(t *testing.T) {
	f, err := NewWithConfig(Config{Capacity: 100})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if k, err := binfmt.PeekKind(enc); err != nil || k != binfmt.KindCuckoo || k.String() != "cuckoo" {
		t.Fatalf("PeekKind(cuckoo encoding) = %v, %v; want cuckoo", k, err)
	}
	var s bloom.SBBF
	if err := s.UnmarshalBinary(enc); err == nil {
		t.Fatal("bloom.SBBF decoded a cuckoo encoding")
	}
}
