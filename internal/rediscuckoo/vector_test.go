package rediscuckoo

import (
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// docVector extracts the hex block that follows "<!-- test-vector: name -->"
// in docs/FORMATS.md.
func docVector(t *testing.T, name string) []byte {
	t.Helper()
	doc, err := os.ReadFile("../../docs/FORMATS.md")
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
	b, err := hex.DecodeString(strings.Join(strings.Fields(parts[1]), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDocVectors(t *testing.T) {
	f := mustNew(t, reserve4)
	if err := f.Insert([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if h := Hash([]byte("a")); h != 0x071717d2d36b6b11 {
		t.Fatalf("MurmurHash64A(a, 0) = %#x", h)
	}
	hdr := docVector(t, "cf-scandump-header")
	if got := f.Header(); !bytes.Equal(got, hdr) {
		t.Errorf("header % x, docs % x", got, hdr)
	}
	if next, data := f.DumpChunk(1); next != 5 || !bytes.Equal(data, []byte{0, 0, 0xc4, 0}) {
		t.Errorf("chunk %d % x", next, data)
	}
	snap := docVector(t, "cf-snapshot")
	if got, _ := f.MarshalBinary(); !bytes.Equal(got, snap) {
		t.Errorf("snapshot % x, docs % x", got, snap)
	}
	g, err := UnmarshalFilter(snap, 0)
	if err != nil || !g.Equal(f) || !g.Exists([]byte("a")) {
		t.Fatal(err)
	}
	h, err := DecodeHeader(hdr, 32, 0)
	if err != nil || h.LoadChunk(5, []byte{0, 0, 0xc4, 0}) != nil || !h.Equal(f) {
		t.Fatal("header + chunk do not rebuild the filter", err)
	}
}
