package persist

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// copyDir copies the regular files of src into a fresh directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			writeFile(t, filepath.Join(dst, e.Name()), readFile(t, filepath.Join(src, e.Name())))
		}
	}
	return dst
}

// TestLegacyV1Loads loads the data directories written by the AOF format
// version 1 code (testdata/legacy-v1, see its README): the same keys and
// values as that code recovered, no repair needed (check-aof reports them
// valid), and the server goes on writing version 2 generations after them.
func TestLegacyV1Loads(t *testing.T) {
	root := filepath.Join("testdata", "legacy-v1")
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			dir := copyDir(t, filepath.Join(root, e.Name()))
			want := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(readFile(t, filepath.Join(dir, "expected.txt")))), "\n") {
				k, v, _ := strings.Cut(line, "=")
				want[k] = v
			}
			for _, g := range []uint64{1, 2, 3, 4, 5} {
				if b, err := os.ReadFile(aofPath(dir, g)); err == nil && aofHeaderVersion(b) != aofVersion1 {
					t.Fatalf("fixture %s is not format version 1", aofFileName(g))
				}
			}
			if r, err := CheckDir(dir, decodeTest); err != nil || !r.OK() {
				t.Fatalf("check: %+v %v", r, err)
			}
			before := files(t, dir)
			md := newModel()
			db, err := Open(Options{Dir: dir, Fsync: FsyncAlways}, decodeTest, md.load, md.replay)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(md.m, want) {
				t.Fatalf("recovered %v, want %v", md.m, want)
			}
			if got := files(t, dir); !slices.Equal(got, before) {
				t.Fatalf("files changed by the start: %v -> %v", before, got)
			}
			// Writing goes on in the version 1 file; a snapshot then
			// switches to a version 2 generation, which recovers.
			db.Close()
			db, s := openStore(t, dir, FsyncAlways)
			db.Wait(set(t, s, "new", "1"))
			want["new"] = "1"
			if err := db.Snapshot(s); err != nil {
				t.Fatal(err)
			}
			db.Wait(set(t, s, "newer", "2"))
			want["newer"] = "2"
			gen := db.Generation()
			db.Close()
			if v := aofHeaderVersion(readFile(t, aofPath(dir, gen))); v != AOFFormatVersion {
				t.Fatalf("new generation has version %d", v)
			}
			db, md = open(t, dir, FsyncNo)
			db.Close()
			if !maps.Equal(md.m, want) {
				t.Fatalf("after writes and a snapshot: %v, want %v", md.m, want)
			}
		})
	}
	if n < 4 {
		t.Fatalf("only %d fixtures in %s", n, root)
	}
}
