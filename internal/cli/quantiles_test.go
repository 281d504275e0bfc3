package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/probly/probly/tdigest"
)

func quantilesJSON(t *testing.T, stdin string, args ...string) quantilesResult {
	t.Helper()
	code, stdout, stderr := runCLI(t, stdin, append([]string{"quantiles", "--json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("quantiles %q: exit %d, stderr %q", args, code, stderr)
	}
	var r quantilesResult
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("quantiles %q: %v in %q", args, err, stdout)
	}
	return r
}

func values(r quantilesResult) []float64 {
	var out []float64
	for _, q := range r.Quantiles {
		if q.Value == nil {
			out = append(out, math.NaN())
		} else {
			out = append(out, *q.Value)
		}
	}
	return out
}

// The CLI answers what the library (and TDIGEST.QUANTILE) answers.
func TestQuantilesMatchLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var in strings.Builder
	d, _ := tdigest.New(100)
	for range 50_000 {
		x := r.ExpFloat64() * 100
		fmt.Fprintf(&in, "%v\n", x)
		d.Add(x)
	}
	res := quantilesJSON(t, in.String(), "--q", "0.001,0.5,0.99,0.999")
	want := d.Quantiles(nil, 0.001, 0.5, 0.99, 0.999)
	if !slices.Equal(values(res), want) || res.Count != 50_000 || res.Records != 50_000 || *res.Min != d.Min() || *res.Max != d.Max() {
		t.Fatalf("got %+v, want %v", res, want)
	}
}

func TestQuantilesSmall(t *testing.T) {
	res := quantilesJSON(t, "1\n2\n3\n4\n5\n", "--q", "0,0.5,0.8,1")
	if got := values(res); !slices.Equal(got, []float64{1, 3, 5, 5}) || res.Count != 5 {
		t.Fatalf("%v %+v", got, res)
	}
	one := quantilesJSON(t, " 7 \n")
	if got := values(one); !slices.Equal(got, []float64{7, 7, 7}) || *one.Min != 7 {
		t.Fatalf("single value: %v", got)
	}
	empty := quantilesJSON(t, "")
	if empty.Count != 0 || empty.Min != nil || empty.Quantiles[0].Value != nil || len(empty.Quantiles) != 3 {
		t.Fatalf("empty: %+v", empty)
	}
}

func TestQuantilesFields(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "lat.csv")
	os.WriteFile(csvPath, []byte("host,ms\na,10\nb,20\n\"c,d\",30\nshort\ne,40\n"), 0o644)
	res := quantilesJSON(t, "", "--format", "csv", "--field", "2", "--header", "--q", "0,1", csvPath)
	if got := values(res); !slices.Equal(got, []float64{10, 40}) || res.Count != 4 || res.Skipped != 1 || res.Records != 5 {
		t.Fatalf("csv: %v %+v", got, res)
	}
	tsv := quantilesJSON(t, "x\t1\nx\t2\nx\t3\n", "--format", "tsv", "-f", "2", "--q", "1")
	if got := values(tsv); !slices.Equal(got, []float64{3}) {
		t.Fatalf("tsv: %v", got)
	}
}

func TestQuantilesInvalid(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "v.txt")
	os.WriteFile(p, []byte("1\n2\nabc\n4\nNaN\n"), 0o644)
	code, _, stderr := runCLI(t, "", "quantiles", p)
	if code != ExitDataFail || !strings.Contains(stderr, p+":3:") || !strings.Contains(stderr, `"abc"`) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "x,1\ny,inf\n", "quantiles", "--format", "csv", "-f", "2")
	if code != ExitDataFail || !strings.Contains(stderr, "stdin:2:") {
		t.Fatalf("csv: exit %d, stderr %q", code, stderr)
	}
	res := quantilesJSON(t, "", "--skip-invalid", "--q", "1", p)
	if res.Invalid != 2 || res.Count != 3 || values(res)[0] != 4 {
		t.Fatalf("skip-invalid: %+v", res)
	}
	for _, args := range [][]string{{"--q", "1.5"}, {"--q", "a"}, {"--compression", "0"}, {"--header"}, {"--format", "xml"}} {
		if code, _, _ := runCLI(t, "1\n", append([]string{"quantiles"}, args...)...); code != ExitUsage {
			t.Errorf("%q: exit %d, want usage", args, code)
		}
	}
}

func TestQuantilesText(t *testing.T) {
	code, stdout, _ := runCLI(t, "1\n2\n3\n", "quantiles", "--q", "0.5")
	if code != ExitOK || !strings.Contains(stdout, "q=0.5") || !strings.Contains(stdout, "count        3") {
		t.Fatalf("exit %d: %q", code, stdout)
	}
}
