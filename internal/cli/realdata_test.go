package cli

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/probly/probly/internal/testutil"
)

// TestRealNames builds a filter of the 4.5M npm package names with the CLI
// (n = 4,500,000, p = 0.01), checks that every name answers maybe, then
// queries 1M strings that are not names and requires the measured FPR to lie
// inside the 99.9% binomial interval around the filter's own fill^k, and at
// most the 1% target. The data comes from scripts/fetch-data.sh; the test is
// skipped when it is absent.
func TestRealNames(t *testing.T) {
	testutil.Full(t)
	names := filepath.Join("..", "..", "data", "names.txt")
	if _, err := os.Stat(names); err != nil {
		t.Skip("data/names.txt missing: run scripts/fetch-data.sh")
	}
	if testing.Short() {
		t.Skip("short mode")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "names.bloom")
	if code, _, e := runCLI(t, "", "bloom", "build", "-n", "4500000", "-p", "0.01", "-o", out, names); code != 0 {
		t.Fatalf("build: exit %d: %s", code, e)
	}

	// All members are found (no false negatives), and collect them to make
	// sure the probes below are not names.
	set := make(map[string]struct{}, 4_600_000)
	fh, err := os.Open(names)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<16), maxLine)
	for sc.Scan() {
		set[sc.Text()] = struct{}{}
	}
	fh.Close()
	code, stdout, _ := runCLI(t, "", "bloom", "query", "--count", "--input", names, out)
	if code != 0 || !strings.Contains(stdout, "\nno\t0\n") {
		t.Fatalf("members: exit %d, %q", code, stdout)
	}

	var probes strings.Builder
	const want = 1_000_000
	for i, n := 0, 0; n < want; i++ {
		s := fmt.Sprintf("zz-not-a-package-%d", i)
		if _, ok := set[s]; ok {
			continue
		}
		probes.WriteString(s)
		probes.WriteByte('\n')
		n++
	}
	code, stdout, _ = runCLI(t, probes.String(), "bloom", "query", "--count", out)
	if code != 0 {
		t.Fatalf("probes: exit %d", code)
	}
	maybe := field(t, stdout, "maybe")
	fpr := float64(maybe) / want

	code, stdout, _ = runCLI(t, "", "bloom", "info", out)
	if code != 0 {
		t.Fatalf("info: exit %d", code)
	}
	var fill float64
	var k int
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "fill ratio"):
			fill, _ = strconv.ParseFloat(f[len(f)-1], 64)
		case strings.HasPrefix(line, "k (hashes)"):
			k, _ = strconv.Atoi(f[len(f)-1])
		}
	}
	theory := math.Pow(fill, float64(k))
	half := 3.29 * math.Sqrt(theory*(1-theory)/want)
	t.Logf("real names: fill %.4f k %d theory %.5f measured FPR %.5f (%d / %d)", fill, k, theory, fpr, maybe, want)
	if math.Abs(fpr-theory) > half {
		t.Errorf("measured FPR %.5f outside 99.9%% interval %.5f ± %.5f", fpr, theory, half)
	}
	if fpr > 0.01+half {
		t.Errorf("measured FPR %.5f above the 1%% target", fpr)
	}
}

func field(t *testing.T, out, name string) int {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, name+"\t"); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %q in %q", name, out)
	return 0
}
