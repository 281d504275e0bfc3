package binfmt

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// section returns the lines of docs/FORMATS.md from the heading "## name"
// to the next "## " heading.
func section(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/FORMATS.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n## "+name+"\n")
	if i < 0 {
		t.Fatalf("docs/FORMATS.md has no section %q", name)
	}
	s = s[i+1:]
	if j := strings.Index(s[3:], "\n## "); j >= 0 {
		s = s[:j+3]
	}
	return s
}

// rows returns the first two cells of each table row that starts with a
// number.
func rows(t *testing.T, sec string) map[int]string {
	t.Helper()
	out := map[int]string{}
	re := regexp.MustCompile(`(?m)^\|\s*(\d+)\s*\|\s*([^|]*?)\s*\|`)
	for _, m := range re.FindAllStringSubmatch(sec, -1) {
		n, _ := strconv.Atoi(m[1])
		out[n] = m[2]
	}
	return out
}

// TestRegistriesMatchFormatsDoc: the kind and hash-ID tables of
// docs/FORMATS.md list exactly the numbers defined here.
func TestRegistriesMatchFormatsDoc(t *testing.T) {
	kinds := rows(t, section(t, "PRBL kinds"))
	registry := []Kind{KindClassic, KindScalable, KindCuckoo, KindCounting, KindStable, KindSBBF, KindCountMin, KindTopK, KindTDigest}
	if len(kinds) != len(registry) {
		t.Fatalf("FORMATS lists %d kinds, the registry %d: %v", len(kinds), len(registry), kinds)
	}
	for _, k := range registry {
		name := k.String()
		switch name {
		case "sbbf":
			name = "split-block"
		case "topk":
			name = "top-k"
		}
		if !strings.HasPrefix(kinds[int(k)], name) {
			t.Errorf("kind %d: FORMATS says %q, the registry %q", k, kinds[int(k)], k)
		}
		if got, err := PeekKind([]byte{'P', 'R', 'B', 'L', Version, byte(k)}); err != nil || got != k {
			t.Errorf("PeekKind of kind %d: %v, %v", k, got, err)
		}
	}
	ids := rows(t, section(t, "Hash IDs"))
	want := map[int]string{
		HashXXH3_128:      "`xxh3-128`",
		HashMurmur64APair: "`murmur64a`",
		HashXXH3_64:       "`xxh3-64`",
		HashMurmur64A:     "`murmur64a-single`",
		HashXXH64:         "`xxh64`",
		HashMurmur2:       "`murmur2`",
	}
	if len(ids) != len(want) {
		t.Fatalf("FORMATS lists hash IDs %v, the registry %v", ids, want)
	}
	for id, name := range want {
		if ids[id] != name {
			t.Errorf("hash ID %d: FORMATS says %q, the registry %q", id, ids[id], name)
		}
	}
}
