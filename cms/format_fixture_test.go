package cms_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/probly/probly/cms"
	"github.com/probly/probly/internal/binfmt/binfmttest"
)

// TestFormatFixtures: the files under testdata/format (a 5×2 HashMurmur2
// sketch, the documented vector, and a 64×4 HashXXH3 sketch with seed 7
// holding k0…k99 with counts 0…99) decode and re-encode byte for byte
// through every encoding entry point.
func TestFormatFixtures(t *testing.T) {
	binfmttest.CheckFixtures(t, "testdata/format", func(name string) binfmttest.Codec {
		if strings.HasPrefix(name, "cms-") {
			return new(cms.Sketch)
		}
		return nil
	})
}

// TestDocVector: the vector of docs/FORMATS.md ("Count-min sketch") is
// what the documented calls encode, and it decodes to their counts.
func TestDocVector(t *testing.T) {
	want := binfmttest.DocVector(t, "../docs/FORMATS.md", "cms-murmur2")
	s, err := cms.NewWithConfig(cms.Config{Width: 5, Depth: 2, Hash: cms.HashMurmur2})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range []struct {
		k string
		n uint64
	}{{"a", 2147483647}, {"b", 10}, {"c", 7}, {"d", 5}} {
		s.AddN([]byte(kv.k), kv.n)
	}
	if got, _ := s.MarshalBinary(); !bytes.Equal(got, want) {
		t.Fatalf("encoding\n%x\nwant\n%x", got, want)
	}
	var d cms.Sketch
	if err := d.UnmarshalBinary(want); err != nil {
		t.Fatal(err)
	}
	for k, n := range map[string]uint64{"a": 2147483647, "b": 17, "c": 17, "d": 5, "e": 0} {
		if got := d.Count([]byte(k)); got != n {
			t.Errorf("Count(%q) = %d, want %d", k, got, n)
		}
	}
	if d.Stats().N != 2147483669 {
		t.Errorf("N = %d", d.Stats().N)
	}
}
