package hll

import (
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Spec §4.3: hashes of a few elements → (index, count).
func TestVectorHashes(t *testing.T) {
	for _, v := range []struct {
		elem  string
		index int
		count uint8
	}{{"a", 12711, 2}, {"b", 15780, 1}, {"c", 8436, 1}, {"", 5938, 2}, {"foo", 7348, 5}} {
		i, c := patLen(redisParams, Hash([]byte(v.elem)))
		if i != v.index || c != v.count {
			t.Errorf("%q → (%d, %d), want (%d, %d)", v.elem, i, c, v.index, v.count)
		}
	}
}

// Spec §4.2 conformance vector: PFADD hll a b c; DECODE; PFCOUNT; PFMERGE nk.
func TestVectorPFADDabc(t *testing.T) {
	want := mustHex(t, "48594c4c01000000000000000000008060f38050b1844bfb80425a")
	if len(want) != 27 {
		t.Fatal(len(want))
	}
	b, changed, err := RedisAdd(nil, [][]byte{[]byte("a"), []byte("b"), []byte("c")}, DefaultSparseMaxBytes)
	if err != nil || !changed || !bytes.Equal(b, want) {
		t.Fatalf("PFADD hll a b c = %x %v %v\nwant %x", b, changed, err, want)
	}
	dec, err := RedisDecode(b)
	if err != nil || dec != "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603" {
		t.Fatalf("DECODE = %q %v", dec, err)
	}
	n, upd, err := RedisCount(b)
	if err != nil || n != 3 || upd == nil {
		t.Fatalf("PFCOUNT = %d %v %v", n, upd, err)
	}
	if !bytes.Equal(upd[8:16], []byte{3, 0, 0, 0, 0, 0, 0, 0}) {
		t.Fatalf("cache bytes %x", upd[8:16])
	}
	counted := append([]byte(nil), upd...)
	n, upd, err = RedisCount(counted)
	if err != nil || n != 3 || upd != nil {
		t.Fatalf("cached PFCOUNT = %d %v %v", n, upd, err)
	}
	// Sketch API gives the same bytes.
	s, _ := New(DefaultPrecision)
	for _, e := range []string{"a", "b", "c"} {
		s.Add([]byte(e))
	}
	got, _ := s.MarshalBinary()
	if !bytes.Equal(got, want) {
		t.Fatalf("Sketch bytes %x", got)
	}
	if s.Count() != 3 {
		t.Fatal(s.Count())
	}
	got, _ = s.MarshalBinary()
	if !bytes.Equal(got, counted) {
		t.Fatalf("Sketch after Count %x", got)
	}

	nk, err := RedisMerge(nil, nil, DefaultSparseMaxBytes)
	wantNK := append([]byte("HYLL\x01\x00\x00\x00"), 0, 0, 0, 0, 0, 0, 0, 0x80, 0x7f, 0xff)
	if err != nil || !bytes.Equal(nk, wantNK) {
		t.Fatalf("PFMERGE nk = %x %v", nk, err)
	}
	pk, changed, err := RedisAdd(nil, nil, DefaultSparseMaxBytes)
	if err != nil || !changed || !bytes.Equal(pk, wantNK) {
		t.Fatalf("PFADD k = %x %v %v", pk, changed, err)
	}
}

// docVector extracts the hex block that follows "<!-- test-vector: name -->"
// in docs/FORMATS.md.
func docVector(t *testing.T, name string) []byte {
	t.Helper()
	doc, err := os.ReadFile("../docs/FORMATS.md")
	if err != nil {
		t.Fatalf("reading docs/FORMATS.md: %v", err)
	}
	_, after, ok := strings.Cut(string(doc), "<!-- test-vector: "+name+" -->")
	if !ok {
		t.Fatalf("docs/FORMATS.md has no test vector %q", name)
	}
	parts := strings.SplitN(after, "```", 3)
	if len(parts) < 3 {
		t.Fatalf("test vector %q is not followed by a code block", name)
	}
	return mustHex(t, strings.Join(strings.Fields(parts[1]), ""))
}

func TestDocVectors(t *testing.T) {
	s, _ := New(DefaultPrecision)
	for _, e := range []string{"a", "b", "c"} {
		s.Add([]byte(e))
	}
	if got, _ := s.MarshalBinary(); !bytes.Equal(got, docVector(t, "hll-redis-abc")) {
		t.Errorf("abc: % x", got)
	}
	s.Count()
	if got, _ := s.MarshalBinary(); !bytes.Equal(got, docVector(t, "hll-redis-abc-counted")) {
		t.Errorf("abc counted: % x", got)
	}
	p4, _ := New(4)
	for _, e := range []string{"a", "b", "c"} {
		p4.Add([]byte(e))
	}
	if p4.Count() != 2 {
		t.Fatal(p4.Count())
	}
	vec := docVector(t, "hll-p4")
	if got, _ := p4.MarshalBinary(); !bytes.Equal(got, vec) {
		t.Errorf("p4: % x", got)
	}
	var u Sketch
	if err := u.UnmarshalBinary(vec); err != nil || u.Stats().Precision != 4 || u.Count() != 2 {
		t.Fatal(err)
	}
}
