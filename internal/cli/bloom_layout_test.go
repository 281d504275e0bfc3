package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/probly/probly/bloom"
	"github.com/probly/probly/cuckoo"
)

// TestBloomLayouts builds sbbf and counting filters with the CLI and
// checks that query, info and merge detect the layout from the file, that
// merging needs equal layouts, and that the sbbf file holds the Parquet
// bitset.
func TestBloomLayouts(t *testing.T) {
	dir := t.TempDir()
	keys := writeKeys(t, dir, "keys.txt", 5000, "user-%d")
	keys2 := writeKeys(t, dir, "keys2.txt", 200, "other-%d")
	files := map[string]string{}
	for _, layout := range []string{"classic", "sbbf", "counting"} {
		for i, in := range []string{keys, keys2} {
			out := filepath.Join(dir, fmt.Sprintf("%s%d.bloom", layout, i))
			code, _, stderr := runCLI(t, "", "bloom", "build", "--layout", layout, "-n", "5000", "-p", "0.01", "-o", out, in)
			if code != ExitOK {
				t.Fatalf("build --layout %s: exit %d, %s", layout, code, stderr)
			}
			files[fmt.Sprintf("%s%d", layout, i)] = out
		}
		f0 := files[layout+"0"]
		code, stdout, _ := runCLI(t, "", "bloom", "query", f0, "user-0", "user-4999")
		if code != ExitOK || stdout != "maybe\tuser-0\nmaybe\tuser-4999\n" {
			t.Fatalf("%s query: exit %d %q", layout, code, stdout)
		}
		data, _ := os.ReadFile(keys)
		if code, stdout, _ = runCLI(t, string(data), "bloom", "query", "--count", f0); code != ExitOK || !strings.Contains(stdout, "maybe\t5000\nno\t0\n") {
			t.Fatalf("%s query --count: %d %q", layout, code, stdout)
		}
		var non strings.Builder
		for i := 0; i < 2000; i++ {
			fmt.Fprintf(&non, "absent-%d\n", i)
		}
		if code, stdout, _ = runCLI(t, non.String(), "bloom", "query", "--count", f0); code != ExitOK {
			t.Fatalf("%s query absent: %d", layout, code)
		} else if strings.Contains(stdout, "\nno\t0\n") {
			t.Fatalf("%s: every absent key answered maybe: %q", layout, stdout)
		}
		code, stdout, _ = runCLI(t, "", "bloom", "info", "--json", f0)
		var info filterInfo
		if code != ExitOK || json.Unmarshal([]byte(stdout), &info) != nil {
			t.Fatalf("%s info: %d %q", layout, code, stdout)
		}
		if info.Layout != layout || info.Capacity != 5000 || info.P != 0.01 || info.N == 0 || info.N > 5000 ||
			info.FPR <= 0 || info.FPR > 0.012 {
			t.Fatalf("%s info: %+v", layout, info)
		}
		switch layout {
		case "sbbf":
			if info.K != 8 || info.M%256 != 0 || info.Bytes != info.M/8 {
				t.Fatalf("sbbf info: %+v", info)
			}
		case "counting":
			if info.Bytes < info.M/2 {
				t.Fatalf("counting info: %+v", info)
			}
		}
		if code, stdout, _ = runCLI(t, "", "bloom", "info", f0); code != ExitOK || !regexp.MustCompile(`(?m)^layout\s+`+layout+`$`).MatchString(stdout) {
			t.Fatalf("%s info text: %q", layout, stdout)
		}
		// Union of the two filters of this layout holds both key sets.
		merged := filepath.Join(dir, layout+"-merged.bloom")
		if code, _, e := runCLI(t, "", "bloom", "merge", "-o", merged, f0, files[layout+"1"]); code != ExitOK {
			t.Fatalf("%s merge: %d %s", layout, code, e)
		}
		if code, _, _ = runCLI(t, "", "bloom", "query", merged, "user-17", "other-42"); code != ExitOK {
			t.Fatalf("%s merged query: %d", layout, code)
		}
		inter := filepath.Join(dir, layout+"-inter.bloom")
		if code, _, e := runCLI(t, "", "bloom", "merge", "--intersect", "-o", inter, f0, merged); code != ExitOK {
			t.Fatalf("%s intersect: %d %s", layout, code, e)
		}
		if code, _, _ = runCLI(t, "", "bloom", "query", inter, "user-17", "user-4000"); code != ExitOK {
			t.Fatalf("%s intersection lost keys: %d", layout, code)
		}
	}
	// Different layouts do not merge: a data error naming both.
	for _, pair := range [][2]string{{"classic0", "sbbf0"}, {"sbbf0", "counting0"}, {"counting0", "classic0"}} {
		code, _, stderr := runCLI(t, "", "bloom", "merge", "-o", filepath.Join(dir, "x.bloom"), files[pair[0]], files[pair[1]])
		if code != ExitDataFail || !strings.Contains(stderr, "incompatible") || !strings.Contains(stderr, "layout") {
			t.Fatalf("merge %v: exit %d %q", pair, code, stderr)
		}
	}
	// The sbbf file is probly's SBBF encoding; its body is the Parquet bitset
	// and the bloom package reads it back with every key.
	data, _ := os.ReadFile(files["sbbf0"])
	s := new(bloom.SBBF)
	if err := s.UnmarshalBinary(data); err != nil {
		t.Fatalf("SBBF.UnmarshalBinary: %v", err)
	}
	p, err := bloom.NewSBBFFromParquet(s.ParquetBitset())
	if err != nil || !p.Test([]byte("user-123")) || !s.Test([]byte("user-4999")) {
		t.Fatalf("Parquet bitset round trip: %v", err)
	}
	// Files of kinds the commands do not handle are refused clearly.
	st, _ := bloom.NewStable(1000, 0.01)
	enc, _ := st.MarshalBinary()
	stable := filepath.Join(dir, "stable.bloom")
	if err := os.WriteFile(stable, enc, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "", "bloom", "info", stable); code != ExitDataFail || !strings.Contains(stderr, "stable") {
		t.Fatalf("stable file: exit %d %q", code, stderr)
	}
	for _, bad := range [][]byte{nil, []byte("PRB"), []byte("nope, not a filter")} {
		name := filepath.Join(dir, "bad.bloom")
		if err := os.WriteFile(name, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runCLI(t, "", "bloom", "query", name, "x"); code != ExitDataFail || stderr == "" {
			t.Fatalf("bad file %q: exit %d %q", bad, code, stderr)
		}
	}
	// Unknown layouts are usage errors naming the supported ones.
	if code, _, stderr := runCLI(t, "", "bloom", "build", "--layout", "cuckoo", "-n", "10", "-o", filepath.Join(dir, "c.bloom")); code != ExitUsage || !strings.Contains(stderr, "sbbf") {
		t.Fatalf("unknown layout: %d %q", code, stderr)
	}
}

// TestBloomInfoCuckooFile: a cuckoo filter file (PRBL kind 3) is named as
// such, with a usage error, not taken for another layout or called corrupt.
func TestBloomInfoCuckooFile(t *testing.T) {
	f, err := cuckoo.NewWithConfig(cuckoo.Config{Capacity: 100})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "c.cuckoo")
	if err := os.WriteFile(name, enc, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "bloom", "info", name)
	if code == ExitOK || !strings.Contains(stderr, "holds a cuckoo filter") || strings.Contains(stderr, "checksum") {
		t.Fatalf("bloom info on a cuckoo file: exit %d, %q", code, stderr)
	}
}
