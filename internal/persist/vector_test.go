package persist

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test vectors of docs/FORMATS.md ("AOF" and "Snapshot").
const (
	// appendonly.1.aof holding one record: SET k v.
	aofVector = "5052424c59414f460200000001000000000000007c8f65db" +
		"090000007edd9041" + "0303534554016b0176"
	// The same generation after the AOF switched to generation 2: its
	// end-of-generation record (next 2, 1 record, at byte offset 41).
	aofEndVector = aofVector + "1a0000007cf0da7b" +
		"0001" + "0200000000000000" + "0100000000000000" + "2900000000000000"
	// The same record in a format version 1 file (written before
	// end-of-generation records); still read.
	aofV1Vector = "5052424c59414f460100000001000000000000002cf3f788" +
		"090000007edd9041" + "0303534554016b0176"
	// dump.pdb of generation 2, saved at 1700000000 s, one key "k" of type
	// "string" whose value bytes are "v" and that expires at 4102444800000
	// ms (2100-01-01): format version 4, the value as one segment (no
	// zero bytes, 1 stored byte).
	snapVector = "5052424c5950444204000000020000000000000000002a36fe9c97170100000000000000b782cd51" +
		"1200000000000000" + "0100000000000000" + "98c2c42b" + "016b06737472696e6780b08fe6b277" + "000176" +
		"5052424c59454e44010000000000000019b9bc5c"
	// The same file in format version 3 (the same records, which had to
	// be sorted by key); still read.
	snapV3Vector = "5052424c5950444203000000020000000000000000002a36fe9c9717010000000000000028a89131" +
		"1200000000000000" + "0100000000000000" + "98c2c42b" + "016b06737472696e6780b08fe6b277" + "000176" +
		"5052424c59454e44010000000000000019b9bc5c"
	// The same file in format version 2 (before sparse bodies); still read.
	snapV2Vector = "5052424c5950444202000000020000000000000000002a36fe9c971701000000000000001c238493" +
		"100000000000000009a5fd94" + "016b06737472696e6780b08fe6b27776" +
		"5052424c59454e440100000000000000087d0129"
	// The same file in format version 1 (before expire times), without
	// the expire time; still read.
	snapV1Vector = "5052424c5950444201000000020000000000000000002a36fe9c97170100000000000000b1c85670" +
		"0a000000000000008f5d2e7d" + "016b06737472696e6776" +
		"5052424c59454e440100000000000000844b6500"
)

// docVector returns the hex of the block tagged name in docs/FORMATS.md.
func docVector(t *testing.T, name string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "FORMATS.md"))
	if err != nil {
		t.Skipf("docs/FORMATS.md not readable: %v", err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- test-vector: "+name+" -->")
	if !ok {
		t.Fatalf("docs/FORMATS.md has no test vector %q", name)
	}
	_, rest, ok = strings.Cut(rest, "```\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatalf("docs/FORMATS.md: test vector %q is not a code block", name)
	}
	return strings.Join(strings.Fields(block), "")
}

func TestFormatVectorsMatchDocs(t *testing.T) {
	if got := docVector(t, "aof"); got != aofVector {
		t.Errorf("docs/FORMATS.md AOF vector differs from the code:\n doc  %s\n code %s", got, aofVector)
	}
	if got := docVector(t, "aof-end"); got != aofEndVector {
		t.Errorf("docs/FORMATS.md AOF end-of-generation vector differs from the code:\n doc  %s\n code %s", got, aofEndVector)
	}
	if got := docVector(t, "aof-v1"); got != aofV1Vector {
		t.Errorf("docs/FORMATS.md AOF version 1 vector differs from the code:\n doc  %s\n code %s", got, aofV1Vector)
	}
	if got := docVector(t, "snapshot"); got != snapVector {
		t.Errorf("docs/FORMATS.md snapshot vector differs from the code:\n doc  %s\n code %s", got, snapVector)
	}
	if got := docVector(t, "snapshot-v3"); got != snapV3Vector {
		t.Errorf("docs/FORMATS.md snapshot version 3 vector differs from the code:\n doc  %s\n code %s", got, snapV3Vector)
	}
	if got := docVector(t, "snapshot-v2"); got != snapV2Vector {
		t.Errorf("docs/FORMATS.md snapshot version 2 vector differs from the code:\n doc  %s\n code %s", got, snapV2Vector)
	}
	if got := docVector(t, "snapshot-v1"); got != snapV1Vector {
		t.Errorf("docs/FORMATS.md snapshot version 1 vector differs from the code:\n doc  %s\n code %s", got, snapV1Vector)
	}
}

func TestFormatVectors(t *testing.T) {
	args := [][]byte{[]byte("SET"), []byte("k"), []byte("v")}
	n, err := payloadSize(args)
	if err != nil {
		t.Fatal(err)
	}
	img := append(encodeAOFHeader(1), appendFrame(nil, args, n)...)
	if got := hex.EncodeToString(img); got != aofVector {
		t.Fatalf("AOF encoding changed:\n got %s\nwant %s", got, aofVector)
	}
	if got := hex.EncodeToString(appendEndOfGen(img, endOfGen{next: 2, records: 1, offset: int64(len(img))})); got != aofEndVector {
		t.Fatalf("end-of-generation encoding changed:\n got %s\nwant %s", got, aofEndVector)
	}
	if got := hex.EncodeToString(append(encodeAOFHeaderVersion(1, aofVersion1), appendFrame(nil, args, n)...)); got != aofV1Vector {
		t.Fatalf("AOF version 1 encoding changed:\n got %s\nwant %s", got, aofV1Vector)
	}
	dir := t.TempDir()
	p, _, err := writeSnapshot(dir, 2, entryList{{Key: "k", Value: strVal("v"), Expire: 4102444800000}}, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(readFile(t, p)); got != snapVector {
		t.Fatalf("snapshot encoding changed:\n got %s\nwant %s", got, snapVector)
	}

	// All decode: the AOF vectors alone (version 2 and version 1), the
	// closed generation followed by an empty generation 2, and the
	// snapshot with its (empty) generation 2.
	for name, v := range map[string]string{"aof": aofVector, "aof-v1": aofV1Vector} {
		aof, _ := hex.DecodeString(v)
		dir = t.TempDir()
		writeFile(t, aofPath(dir, 1), aof)
		db, md := open(t, dir, FsyncNo)
		db.Close()
		if len(md.records) != 1 || md.m["k"] != "v" {
			t.Fatalf("%s vector replayed %v", name, md.records)
		}
	}
	aof, _ := hex.DecodeString(aofEndVector)
	dir = t.TempDir()
	writeFile(t, aofPath(dir, 1), aof)
	writeFile(t, aofPath(dir, 2), encodeAOFHeader(2))
	db, md := open(t, dir, FsyncNo)
	db.Close()
	if len(md.records) != 1 || md.m["k"] != "v" {
		t.Fatalf("aof-end vector replayed %v", md.records)
	}
	// The snapshot vectors: versions 4 to 2 set k's expire time by
	// replaying its canonical record; version 1 has none.
	for v, want := range map[string]string{snapVector: "[[PEXPIREAT k 4102444800000]]", snapV3Vector: "[[PEXPIREAT k 4102444800000]]", snapV2Vector: "[[PEXPIREAT k 4102444800000]]", snapV1Vector: "[]"} {
		snap, _ := hex.DecodeString(v)
		dir = t.TempDir()
		writeFile(t, filepath.Join(dir, snapshotName), snap)
		writeFile(t, aofPath(dir, 2), encodeAOFHeader(2))
		db, md = open(t, dir, FsyncNo)
		db.Close()
		if md.loaded != 1 || md.m["k"] != "v" || fmt.Sprint(md.records) != want {
			t.Fatalf("snapshot vector loaded %v, replayed %v", md.m, md.records)
		}
		if !bytes.Equal(readFile(t, aofPath(dir, 2)), encodeAOFHeader(2)) {
			t.Fatal("generation 2 is not a bare header")
		}
	}
}
