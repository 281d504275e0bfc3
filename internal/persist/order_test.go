package persist

import (
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/probly/probly/internal/keyspace"
)

// Version 4 entries come in any order: a snapshot written from an unsorted
// list reads back with every key.
func TestSnapshotAnyOrder(t *testing.T) {
	var l entryList
	for i := 99; i >= 0; i-- {
		l = append(l, keyspace.Entry{Key: "k" + strconv.Itoa(i), Value: strVal("v" + strconv.Itoa(i))})
	}
	p, _, err := writeSnapshot(t.TempDir(), 2, l, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	h, ents, err := readSnapshot(p, decodeTest)
	if err != nil {
		t.Fatal(err)
	}
	if h.count != 100 || len(ents) != 100 {
		t.Fatalf("count %d, %d entries", h.count, len(ents))
	}
	got := map[string]string{}
	for _, e := range ents {
		got[e.key] = string(e.value.(strVal))
	}
	for i := range 100 {
		if k := "k" + strconv.Itoa(i); got[k] != "v"+strconv.Itoa(i) {
			t.Fatalf("%s = %q", k, got[k])
		}
	}
}

// A key that appears twice is damage in any version, found wherever the
// two records are.
func TestSnapshotDuplicateKey(t *testing.T) {
	l := entryList{{Key: "b", Value: strVal("1")}, {Key: "a", Value: strVal("2")}, {Key: "b", Value: strVal("3")}}
	p, _, err := writeSnapshot(t.TempDir(), 2, l, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	_, ents, err := readSnapshot(p, decodeTest)
	if !errors.Is(err, ErrCorrupt) || ents != nil || !strings.Contains(err.Error(), `key "b" appears twice`) {
		t.Fatalf("accepted or wrong error: %v (%d entries)", err, len(ents))
	}
	t.Log(err)
}

// A version 3 file must still list its keys sorted: the same unsorted
// records under a version 3 header are refused.
func TestSnapshotVersion3Unsorted(t *testing.T) {
	l := entryList{{Key: "b", Value: strVal("1")}, {Key: "a", Value: strVal("2")}}
	p, _, err := writeSnapshot(t.TempDir(), 2, l, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// Version 3, with the header's checksum recomputed; the whole-file
	// checksum does not change (it covers the header and its checksum,
	// whose CRC-32C residue is the same for any header).
	binary.LittleEndian.PutUint16(b[8:], 3)
	binary.LittleEndian.PutUint32(b[36:], crc32c(b[:36]))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = readSnapshot(p, decodeTest)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "sorted") {
		t.Fatalf("accepted or wrong error: %v", err)
	}
	// Sorted, the version 3 file is read.
	p, _, err = writeSnapshot(t.TempDir(), 2, entryList{l[1], l[0]}, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if b, err = os.ReadFile(p); err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint16(b[8:], 3)
	binary.LittleEndian.PutUint32(b[36:], crc32c(b[:36]))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ents, err := readSnapshot(p, decodeTest); err != nil || len(ents) != 2 {
		t.Fatalf("sorted version 3 file: %v, %d entries", err, len(ents))
	}
}

// A source that lists fewer or more entries than its Len is an internal
// error, never a file whose count is wrong.
func TestSnapshotCountMismatch(t *testing.T) {
	for _, c := range []struct {
		name string
		src  snapSource
	}{
		{"fewer", badLen{entryList{{Key: "a", Value: strVal("1")}}, 2}},
		{"more", badLen{entryList{{Key: "a", Value: strVal("1")}, {Key: "b", Value: strVal("2")}}, 1}},
	} {
		dir := t.TempDir()
		if _, _, err := writeSnapshot(dir, 2, c.src, time.Now()); err == nil || !strings.Contains(err.Error(), "internal error") {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("%s: left %v", c.name, ents)
		}
	}
}

type badLen struct {
	entryList
	n int
}

func (b badLen) Len() int { return b.n }
