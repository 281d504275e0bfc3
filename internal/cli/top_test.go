package cli

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func topJSON(t *testing.T, stdin string, args ...string) topResult {
	t.Helper()
	code, stdout, stderr := runCLI(t, stdin, append([]string{"top", "--json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("top %q: exit %d, stderr %q", args, code, stderr)
	}
	var r topResult
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("top %q: %v in %q", args, err, stdout)
	}
	return r
}

func TestTopSmall(t *testing.T) {
	r := topJSON(t, "a\nb\na\nc\na\nb\r\n\n", "-k", "2")
	want := []topItem{{"a", 3}, {"b", 2}}
	if fmt.Sprint(r.Items) != fmt.Sprint(want) || r.Records != 7 || r.K != 2 || r.Width != 256 || r.Depth != 5 {
		t.Fatalf("%+v", r)
	}
	if r := topJSON(t, ""); len(r.Items) != 0 || r.Records != 0 || r.Items == nil {
		t.Fatalf("empty input: %+v", r)
	}
	code, out, _ := runCLI(t, "x\ny\nx\n", "top", "-k", "1")
	if code != ExitOK || !strings.Contains(out, "1     2      x\n") || !strings.Contains(out, "3 records, 0 skipped; k 1") {
		t.Fatalf("text output %q", out)
	}
}

func TestTopFields(t *testing.T) {
	csv := "user,page\nann,\"/a,b\"\nbob,/c\ncy,\"/a,b\"\nshort\n"
	r := topJSON(t, csv, "--format", "csv", "--field", "2", "--header", "-k", "3")
	if fmt.Sprint(r.Items) != fmt.Sprint([]topItem{{"/a,b", 2}, {"/c", 1}}) || r.Records != 4 || r.Skipped != 1 || r.Field != 2 {
		t.Fatalf("csv: %+v", r)
	}
	tsv := "h1\th2\nx\tp\ny\tp\n\nz\tq\n"
	r = topJSON(t, tsv, "--format", "tsv", "-f", "2", "--header")
	if fmt.Sprint(r.Items) != fmt.Sprint([]topItem{{"p", 2}, {"q", 1}}) || r.Records != 3 {
		t.Fatalf("tsv: %+v", r)
	}
	r = topJSON(t, "a\n", "--width", "100", "--depth", "3", "--decay", "1")
	if r.Width != 100 || r.Depth != 3 || r.Decay != 1 {
		t.Fatalf("sizing flags: %+v", r)
	}
}

func TestTopErrors(t *testing.T) {
	for _, args := range [][]string{
		{"top", "-k", "0"},
		{"top", "--decay", "1.5"},
		{"top", "--field", "2"},
		{"top", "--format", "xml"},
		{"top", "--format", "csv", "--field", "-1"},
	} {
		if code, _, stderr := runCLI(t, "a\n", args...); code != ExitUsage || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
	if code, _, _ := runCLI(t, "", "top", filepath.Join(t.TempDir(), "missing")); code == ExitOK {
		t.Error("a missing input file succeeded")
	}
}

// On a Zipf(1.1) stream of 200k lines in two files the default sizing
// reports the true top 20, with counts that never exceed the truth.
func TestTopZipfFiles(t *testing.T) {
	dir := t.TempDir()
	z := rand.NewZipf(rand.New(rand.NewSource(3)), 1.1, 1, 1<<16)
	truth := map[string]uint64{}
	var files []string
	for f := range 2 {
		var b strings.Builder
		for range 100_000 {
			v := fmt.Sprint("v", z.Uint64())
			truth[v]++
			b.WriteString(v + "\n")
		}
		p := filepath.Join(dir, fmt.Sprint(f, ".txt"))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	r := topJSON(t, "", append([]string{"-k", "20"}, files...)...)
	vals := make([]string, 0, len(truth))
	for v := range truth {
		vals = append(vals, v)
	}
	sort.Slice(vals, func(i, j int) bool { return truth[vals[i]] > truth[vals[j]] })
	kth := truth[vals[19]]
	hit := 0
	for _, it := range r.Items {
		if it.Count > truth[it.Value] {
			t.Errorf("%s: count %d above the true %d", it.Value, it.Count, truth[it.Value])
		}
		if truth[it.Value] >= kth {
			hit++
		}
	}
	if r.Records != 200_000 || len(r.Items) != 20 || hit < 19 {
		t.Fatalf("records %d, %d items, %d of the true top 20", r.Records, len(r.Items), hit)
	}
}
