package rediscuckoo

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"os"
	"strconv"
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

// TestEncodingIgnoresBudget: the encoding (snapshot, DUMP) is a function of
// the filter's state, not of the budget it was created, grown, decoded or
// replayed under; a filter grown to three sub-filters under one budget and
// decoded under another encodes to the same bytes, and an encoding that
// records a budget (as older servers wrote) re-encodes with max bytes 0.
func TestEncodingIgnoresBudget(t *testing.T) {
	p := Params{Capacity: 1024, BucketSize: 2, MaxIterations: 20, Expansion: 1}
	f, err := New(p, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; f.NumFilters() < 3; i++ {
		if err := f.Insert([]byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	enc, _ := f.MarshalBinary()
	if mb := binary.LittleEndian.Uint64(enc[56:]); mb != 0 {
		t.Fatalf("max bytes %d, want 0", mb)
	}
	var w bytes.Buffer
	if _, err := f.WriteTo(&w); err != nil || !bytes.Equal(w.Bytes(), enc) {
		t.Fatalf("WriteTo differs from MarshalBinary (%v)", err)
	}
	for _, budget := range []uint64{0, 1 << 20, MaxBudget} {
		g, err := UnmarshalFilter(enc, budget)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := g.MarshalBinary(); !bytes.Equal(got, enc) {
			t.Errorf("decoded under budget %d: encoding differs", budget)
		}
		g.SetBudget(1 << 30)
		if err := g.Insert([]byte("x")); err != nil {
			t.Fatal(err)
		}
		h := f.CloneFilter()
		if err := h.Insert([]byte("x")); err != nil {
			t.Fatal(err)
		}
		a, _ := g.MarshalBinary()
		b, _ := h.MarshalBinary()
		if !bytes.Equal(a, b) {
			t.Errorf("budget %d: the same insert after decoding encodes differently", budget)
		}
	}
	// An encoding recording a budget (max bytes 2^20, header CRC resealed).
	old := bytes.Clone(enc)
	binary.LittleEndian.PutUint64(old[56:], 1<<20)
	binary.LittleEndian.PutUint32(old[68:], crc32.Checksum(old[:68], crc32.MakeTable(crc32.Castagnoli)))
	g, err := UnmarshalFilter(old, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := g.MarshalBinary(); !bytes.Equal(got, enc) {
		t.Error("an encoding with a recorded budget does not re-encode with max bytes 0")
	}
}
