package cuckoo

import (
	"testing"

	"github.com/probly/probly/bloom"
)

// TestKindRegistry: a cuckoo encoding carries the kind bloom's registry
// gives it, so bloom.PeekKind names it and no bloom decoder takes it.
func TestKindRegistry(t *testing.T) {
	f, err := NewWithConfig(Config{Capacity: 100})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if k, err := bloom.PeekKind(enc); err != nil || k != bloom.KindCuckoo || k.String() != "cuckoo" {
		t.Fatalf("PeekKind(cuckoo encoding) = %v, %v; want cuckoo", k, err)
	}
	if kindCuckoo != byte(bloom.KindCuckoo) {
		t.Fatalf("kindCuckoo %d, registry %d", kindCuckoo, bloom.KindCuckoo)
	}
	var s bloom.SBBF
	if err := s.UnmarshalBinary(enc); err == nil {
		t.Fatal("bloom.SBBF decoded a cuckoo encoding")
	}
}
