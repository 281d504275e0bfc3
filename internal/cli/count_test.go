package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/probly/probly/internal/testutil"
)

// countJSON runs `probly count --json` and decodes the result.
func countJSON(t *testing.T, stdin string, args ...string) countResult {
	t.Helper()
	code, stdout, stderr := runCLI(t, stdin, append([]string{"count", "--json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("count %q: exit %d, stderr %q", args, code, stderr)
	}
	var r countResult
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("count %q: %v in %q", args, err, stdout)
	}
	return r
}

func TestCountSmallExact(t *testing.T) {
	for _, c := range []struct {
		name, in         string
		estimate, record uint64
	}{
		{"empty", "", 0, 0},
		{"one", "a\n", 1, 1},
		{"one no newline", "a", 1, 1},
		{"three", "a\nb\nc\n", 3, 3},
		{"duplicates", "a\nb\na\nc\nb\na\n", 3, 6},
		{"crlf", "a\r\nb\r\na\n", 2, 3},
		{"empty line is a value", "\n\na\n", 2, 3},
		{"same line many times", strings.Repeat("x\n", 1000), 1, 1000},
	} {
		r := countJSON(t, c.in, "--exact")
		if r.Estimate != c.estimate || r.Records != c.record || r.Exact == nil || *r.Exact != c.estimate ||
			r.RelativeError == nil || *r.RelativeError != 0 || r.Skipped != 0 {
			t.Errorf("%s: %+v", c.name, r)
		}
	}
}

func TestCountFiles(t *testing.T) {
	dir := t.TempDir()
	a := writeKeys(t, dir, "a.txt", 500, "user-%d")
	b := filepath.Join(dir, "b.txt")
	if err := os.WriteFile(b, []byte("user-1\nuser-2\nextra\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := countJSON(t, "stdin-only\nuser-3\n", "--exact", a, "-", b)
	if r.Records != 505 || *r.Exact != 502 {
		t.Fatalf("files: %+v", r)
	}
	if d := math.Abs(float64(r.Estimate) - 502); d > 5 {
		t.Fatalf("estimate %d for 502 distinct", r.Estimate)
	}
}

func TestCountJSONShape(t *testing.T) {
	keys := func(args ...string) []string {
		_, stdout, _ := runCLI(t, "a\nb\n", append([]string{"count", "--json"}, args...)...)
		var m map[string]any
		if err := json.Unmarshal([]byte(stdout), &m); err != nil {
			t.Fatalf("%v in %q", err, stdout)
		}
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	base := []string{"estimate", "format", "precision", "records", "registers", "skipped", "standard_error", "standard_error_items"}
	if got := keys(); !reflect.DeepEqual(got, base) {
		t.Errorf("keys %v", got)
	}
	withExact := append(append([]string(nil), base...), "exact", "relative_error")
	sort.Strings(withExact)
	if got := keys("--exact"); !reflect.DeepEqual(got, withExact) {
		t.Errorf("--exact keys %v", got)
	}
	withField := append(append([]string(nil), base...), "field")
	sort.Strings(withField)
	if got := keys("--format", "tsv"); !reflect.DeepEqual(got, withField) {
		t.Errorf("tsv keys %v", got)
	}

	r := countJSON(t, "a\nb\n", "--precision", "4")
	want := countResult{Estimate: 2, StandardError: 0.26, StandardErrorItems: 1, Precision: 4, Registers: 16, Format: "lines", Records: 2}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got %+v\nwant %+v", r, want)
	}
	r = countJSON(t, "", "--precision", "18")
	if r.Registers != 1<<18 || math.Abs(r.StandardError-1.04/512) > 1e-15 || r.Estimate != 0 {
		t.Fatalf("p=18: %+v", r)
	}
}

func TestCountTextOutput(t *testing.T) {
	code, stdout, _ := runCLI(t, "a\nb\na\n", "count", "--exact")
	want := `estimate        2
standard error  0.008125 (0.81%, 1.04/√16384) = ±0
precision       14 (16384 registers)
records         3
exact           2
relative error  +0.000000 (+0.00%, 0.00 standard errors)
`
	if code != 0 || stdout != want {
		t.Fatalf("exit %d, output:\n%s\nwant:\n%s", code, stdout, want)
	}
	code, stdout, _ = runCLI(t, "x,1\ny\n", "count", "--format", "csv", "--field", "2")
	want = `estimate        1
standard error  0.008125 (0.81%, 1.04/√16384) = ±0
precision       14 (16384 registers)
records         2
field           2 (csv)
skipped         1
`
	if code != 0 || stdout != want {
		t.Fatalf("exit %d, output:\n%s\nwant:\n%s", code, stdout, want)
	}
}

const sampleCSV = `id,name,city
1,"Smith, John",Paris
2,"Doe, Jane","New
York"
3,"Smith, John",Paris

4
5,"He said ""hi""",Rome
6,Doe, Jane,Lyon
7,bare "quote",Paris
`

func TestCountCSV(t *testing.T) {
	// The records as encoding/csv (FieldsPerRecord -1, LazyQuotes) reads them.
	var got [][]string
	dir := t.TempDir()
	p := filepath.Join(dir, "s.csv")
	if err := os.WriteFile(p, []byte(sampleCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	err := forEachCSVRecord([]string{p}, nil, nil, "", false, func(rec []string) {
		got = append(got, append([]string(nil), rec...))
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"id", "name", "city"},
		{"1", "Smith, John", "Paris"},
		{"2", "Doe, Jane", "New\nYork"},
		{"3", "Smith, John", "Paris"},
		{"4"},
		{"5", `He said "hi"`, "Rome"},
		{"6", "Doe", " Jane", "Lyon"},
		{"7", `bare "quote"`, "Paris"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("records %q", got)
	}

	for _, c := range []struct {
		field         string
		distinct, skp uint64
	}{
		{"1", 8, 0},  // id 1..7 plus the header
		{"2", 6, 1},  // name, Smith John, Doe Jane, He said "hi", Doe, bare "quote"
		{"3", 5, 1},  // city, Paris, New\nYork, Rome, " Jane"
		{"4", 1, 7},  // only record 6 has four fields
		{"99", 0, 8}, // nobody
	} {
		r := countJSON(t, sampleCSV, "--format", "csv", "--field", c.field, "--exact")
		if r.Records != 8 || r.Skipped != c.skp || *r.Exact != c.distinct || r.Estimate != c.distinct || r.Field != mustAtoi(c.field) {
			t.Errorf("field %s: %+v (exact %d)", c.field, r, *r.Exact)
		}
	}
	// --format csv without --field counts field 1; files work like stdin.
	if r := countJSON(t, "", "--format", "csv", p); r.Field != 1 || r.Estimate != 8 {
		t.Errorf("default field: %+v", r)
	}
	// CRLF line endings are one record terminator.
	if r := countJSON(t, "a,1\r\nb,1\r\n\"c\r\nd\",2\r\n", "--format", "csv", "--field", "2", "--exact"); r.Records != 3 || *r.Exact != 2 {
		t.Errorf("crlf: %+v", r)
	}
}

func mustAtoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

func TestCountTSV(t *testing.T) {
	in := "a\tb\tc\nx\ty\n\nlonely\n\tempty first\nq\tb\t\n"
	for _, c := range []struct {
		field         string
		distinct, skp uint64
	}{
		{"1", 5, 0}, // a, x, lonely, "", q
		{"2", 3, 1}, // b, y, "empty first"
		{"3", 2, 3}, // c, ""
	} {
		r := countJSON(t, in, "--format", "tsv", "--field", c.field, "--exact")
		if r.Records != 5 || r.Skipped != c.skp || *r.Exact != c.distinct || r.Estimate != c.distinct {
			t.Errorf("tsv field %s: %+v (exact %d)", c.field, r, *r.Exact)
		}
	}
	for _, c := range []struct {
		line string
		n    int
		want string
		ok   bool
	}{
		{"a\tb\tc", 1, "a", true}, {"a\tb\tc", 2, "b", true}, {"a\tb\tc", 3, "c", true},
		{"a\tb\tc", 4, "", false}, {"a", 1, "a", true}, {"", 1, "", true}, {"\t", 2, "", true},
		{"a,b", 2, "", false},
	} {
		v, ok := tsvField([]byte(c.line), c.n)
		if string(v) != c.want || ok != c.ok {
			t.Errorf("tsvField(%q, %d) = %q %v", c.line, c.n, v, ok)
		}
	}
}

// TestCountHeader: --header skips the first line or record of every input
// (a header row), and only that.
func TestCountHeader(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.csv")
	b := filepath.Join(dir, "b.csv")
	if err := os.WriteFile(a, []byte("id,item\n1,apple\n2,pear\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("id,item\n3,apple\n4,plum\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := countJSON(t, "", "--format", "csv", "--field", "2", "--header", "--exact", a, b)
	if r.Records != 4 || *r.Exact != 3 || r.Estimate != 3 {
		t.Errorf("csv --header: %+v (exact %d), want 4 records, 3 distinct (apple, pear, plum)", r, *r.Exact)
	}
	r = countJSON(t, "", "--format", "csv", "--field", "2", "--exact", a, b)
	if r.Records != 6 || *r.Exact != 4 {
		t.Errorf("csv without --header: %+v (exact %d), want 6 records, 4 distinct (item counted)", r, *r.Exact)
	}
	r = countJSON(t, "name\tn\nx\t1\ny\t2\nx\t3\n", "--format", "tsv", "--header", "--exact")
	if r.Records != 3 || *r.Exact != 2 {
		t.Errorf("tsv --header: %+v (exact %d), want 3 records, 2 distinct", r, *r.Exact)
	}
}

func TestCountErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	for _, c := range []struct {
		name string
		args []string
		want int
	}{
		{"precision 3", []string{"--precision", "3"}, ExitUsage},
		{"precision 19", []string{"-p", "19"}, ExitUsage},
		{"precision -1", []string{"--precision", "-1"}, ExitUsage},
		{"precision abc", []string{"--precision", "abc"}, ExitUsage},
		{"unknown format", []string{"--format", "xml"}, ExitUsage},
		{"field with lines", []string{"--field", "2"}, ExitUsage},
		{"header with lines", []string{"--header"}, ExitUsage},
		{"negative field", []string{"--format", "csv", "--field", "-1"}, ExitUsage},
		{"unknown flag", []string{"--nope"}, ExitUsage},
		{"missing file", []string{missing}, ExitDataFail},
		{"missing csv file", []string{"--format", "csv", missing}, ExitDataFail},
		{"missing tsv file", []string{"--format", "tsv", "-f", "2", missing}, ExitDataFail},
	} {
		code, stdout, stderr := runCLI(t, "a\n", append([]string{"count"}, c.args...)...)
		if code != c.want || stdout != "" || !strings.HasPrefix(stderr, "probly: ") {
			t.Errorf("%s: exit %d (want %d), stdout %q, stderr %q", c.name, code, c.want, stdout, stderr)
		}
	}
}

// TestCountCSVRecordLimit: an unterminated quote cannot make the reader
// buffer the rest of a large input; long records below the limit work.
func TestCountCSVRecordLimit(t *testing.T) {
	long := strings.Repeat("x", 900<<10)
	r := countJSON(t, "a,\""+long+"\nstill inside\"\nb,short\n", "--format", "csv", "--field", "2", "--exact")
	if r.Records != 2 || *r.Exact != 2 {
		t.Fatalf("long field: %+v", r)
	}
	in := "a,1\n\"" + strings.Repeat("y\n", 1<<20)
	code, _, stderr := runCLI(t, in, "count", "--format", "csv")
	if code != ExitDataFail || !strings.Contains(stderr, "CSV record longer than") {
		t.Fatalf("unterminated quote: exit %d, stderr %q", code, stderr)
	}
}

// TestCountAccuracy: structured keys at several precisions stay within
// three standard errors of the truth.
func TestCountAccuracy(t *testing.T) {
	var b strings.Builder
	const n = 100_000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "user-%d\nuser-%d\n", i, i/2)
	}
	for _, p := range []string{"8", "12", "14", "16"} {
		r := countJSON(t, b.String(), "--precision", p, "--exact")
		if *r.Exact != n || r.Records != 2*n {
			t.Fatalf("p=%s: %+v", p, r)
		}
		if math.Abs(*r.RelativeError) > 3*r.StandardError {
			t.Errorf("p=%s: estimate %d, relative error %.4f > 3·%.4f", p, r.Estimate, *r.RelativeError, r.StandardError)
		}
	}
}

// TestRealNamesCount counts the 4.5M real npm package names (all distinct)
// and requires the estimate within 2% of the exact count. The data comes
// from scripts/fetch-data.sh; the test is skipped when it is absent.
func TestRealNamesCount(t *testing.T) {
	testutil.Full(t)
	names := filepath.Join("..", "..", "data", "names.txt")
	if _, err := os.Stat(names); err != nil {
		t.Skip("data/names.txt missing: run scripts/fetch-data.sh")
	}
	if testing.Short() {
		t.Skip("short mode")
	}
	r := countJSON(t, "", names, "--exact")
	t.Logf("real names: records %d exact %d estimate %d relative error %+.4f%% (standard error %.4f%%)",
		r.Records, *r.Exact, r.Estimate, 100**r.RelativeError, 100*r.StandardError)
	if *r.Exact < 4_000_000 || r.Records < *r.Exact {
		t.Fatalf("unexpected input: %+v", r)
	}
	if math.Abs(*r.RelativeError) > 0.02 {
		t.Fatalf("estimate %d is %.2f%% off the exact %d", r.Estimate, 100**r.RelativeError, *r.Exact)
	}
}
