package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func keysFile(t *testing.T, dir string, distinct, copies int) string {
	t.Helper()
	var b strings.Builder
	for range copies {
		for i := range distinct {
			fmt.Fprintf(&b, "key-%d\n", i)
		}
	}
	path := filepath.Join(dir, fmt.Sprintf("keys-%d-%d.txt", distinct, copies))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// bloom build warns when the input holds more distinct keys than -n allows
// for -p, and with --strict exits 4 writing nothing; within -n (also with
// many duplicates) it says nothing.
func TestBloomBuildOverfull(t *testing.T) {
	dir := t.TempDir()
	over := keysFile(t, dir, 20000, 1)
	within := keysFile(t, dir, 1000, 1)
	dups := keysFile(t, dir, 900, 20) // 18,000 lines, 900 distinct
	for _, layout := range []string{"classic", "sbbf", "counting"} {
		out := filepath.Join(dir, layout+".bf")
		code, _, stderr := runCLI(t, "", "bloom", "build", "--layout", layout, "-n", "1000", "-p", "0.01", "-o", out, over)
		if code != 0 || !strings.Contains(stderr, "warning: more distinct keys than -n allows") ||
			!strings.Contains(stderr, "fill=") || !strings.Contains(stderr, "estimated fpr=") {
			t.Errorf("%s: 20,000 keys into -n 1000: exit %d, stderr %q; want 0 and a warning with fill and fpr", layout, code, stderr)
		}
		if _, err := os.Stat(out); err != nil {
			t.Errorf("%s: the warned build wrote no file: %v", layout, err)
		}
		strictOut := filepath.Join(dir, layout+"-strict.bf")
		code, _, stderr = runCLI(t, "", "bloom", "build", "--layout", layout, "--strict", "-n", "1000", "-p", "0.01", "-o", strictOut, over)
		if code != ExitOverfull || !strings.Contains(stderr, "more distinct keys than -n allows") || !strings.Contains(stderr, "fill=") {
			t.Errorf("%s --strict: exit %d, stderr %q; want %d", layout, code, stderr, ExitOverfull)
		}
		if _, err := os.Stat(strictOut); err == nil {
			t.Errorf("%s --strict wrote %s", layout, strictOut)
		}
		for _, in := range []string{within, dups} {
			code, _, stderr = runCLI(t, "", "bloom", "build", "--layout", layout, "--strict", "-n", "1000", "-p", "0.01", "-o", strictOut, in)
			if code != 0 || strings.Contains(stderr, "warning") {
				t.Errorf("%s --strict, %s: exit %d, stderr %q; want 0 without a warning", layout, filepath.Base(in), code, stderr)
			}
		}
	}
}

// Output files get 0666 minus the umask: 0644 under umask 022, 0600 under
// 077 (they were 0600 whatever the umask).
func TestBloomOutputHonoursUmask(t *testing.T) {
	dir := t.TempDir()
	in := keysFile(t, dir, 100, 1)
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, c := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}, {0o002, 0o664}} {
		syscall.Umask(c.umask)
		out := filepath.Join(dir, fmt.Sprintf("f-%o.bf", c.umask))
		if code, _, stderr := runCLI(t, "", "bloom", "build", "-n", "1000", "-o", out, in); code != 0 {
			t.Fatalf("build: %d %s", code, stderr)
		}
		merged := filepath.Join(dir, fmt.Sprintf("m-%o.bf", c.umask))
		if code, _, stderr := runCLI(t, "", "bloom", "merge", "-o", merged, out, out); code != 0 {
			t.Fatalf("merge: %d %s", code, stderr)
		}
		for _, f := range []string{out, merged} {
			fi, err := os.Stat(f)
			if err != nil || fi.Mode().Perm() != c.want {
				t.Errorf("umask %03o: %s mode %v %v, want %v", c.umask, filepath.Base(f), fi.Mode().Perm(), err, c.want)
			}
		}
	}
}

// The progress bar's rates are bytes over at least its 100 ms throttle,
// from the first frame: 1 GiB added right after the bar is made shows no
// rate above 1 GiB / 100 ms (the library alone showed it over the few
// microseconds between its first frame and the first read).
func TestProgressBarFirstFrameRate(t *testing.T) {
	var out bytes.Buffer
	bar := newProgressBar(4<<30, &out, "adding")
	if err := bar.Add64(1 << 30); err != nil {
		t.Fatal(err)
	}
	if err := bar.Add64(1 << 20); err != nil {
		t.Fatal(err)
	}
	unit := map[string]float64{"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15, "EB": 1e18}
	rates := regexp.MustCompile(`([0-9.]+) ([kMGTPE]?B)/s`).FindAllStringSubmatch(out.String(), -1)
	for _, m := range rates {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		if rate := v * unit[m[2]]; rate > float64(1<<30+1<<20)/0.1 {
			t.Errorf("frame shows %s %s/s, more than the bytes added over 100 ms:\n%q", m[1], m[2], out.String())
		}
	}
	if !strings.Contains(out.String(), "adding") {
		t.Errorf("no frame rendered: %q", out.String())
	}
}

// bloom info on an overfilled build says so and does not present n as
// the number of keys added: n is named for what it counts (adds that set
// a new bit, fewer than the distinct keys added) and the
// overfull line points to the estimate from the fill; a saturated filter
// (every bit set) has no cardinality estimate, and --json encodes that as
// null instead of failing on +Inf.
func TestBloomInfoOverfull(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		distinct  int
		saturated bool
	}{{5000, false}, {200000, true}} {
		in := keysFile(t, dir, c.distinct, 1)
		out := filepath.Join(dir, fmt.Sprintf("over-%d.bf", c.distinct))
		if code, _, stderr := runCLI(t, "", "bloom", "build", "-n", "1000", "-p", "0.01", "-o", out, in); code != 0 {
			t.Fatalf("build: %d %s", code, stderr)
		}
		code, stdout, stderr := runCLI(t, "", "bloom", "info", out)
		if code != 0 {
			t.Fatalf("info: %d %s", code, stderr)
		}
		m := regexp.MustCompile(`(?m)^n \(adds that set a new bit\)\s+(\d+)$`).FindStringSubmatch(stdout)
		if m == nil {
			t.Fatalf("%d keys: info does not name what n counts:\n%s", c.distinct, stdout)
		}
		n, _ := strconv.Atoi(m[1])
		if n >= c.distinct {
			t.Errorf("%d keys: n = %d; an overfilled filter cannot have counted every one", c.distinct, n)
		}
		if c.saturated && n >= c.distinct/2 {
			t.Errorf("%d keys: n = %d; a saturated filter cannot have counted most of them", c.distinct, n)
		}
		if card := regexp.MustCompile(`(?m)^estimated cardinality\s+(\d+)$`).FindStringSubmatch(stdout); !c.saturated {
			// The note's claim: the estimate from the fill is nearer.
			if card == nil {
				t.Fatalf("%d keys: no cardinality estimate:\n%s", c.distinct, stdout)
			}
			est, _ := strconv.Atoi(card[1])
			if abs(est-c.distinct) >= abs(n-c.distinct) {
				t.Errorf("%d keys: estimated cardinality %d is not nearer than n %d", c.distinct, est, n)
			}
		}
		if !regexp.MustCompile(`(?m)^overfull\s+yes: the estimated fpr is over 1.1 × target p`).MatchString(stdout) {
			t.Errorf("%d keys: info does not say the filter is overfull:\n%s", c.distinct, stdout)
		}
		if c.saturated != regexp.MustCompile(`(?m)^estimated cardinality\s+unknown \(every bit is set\)$`).MatchString(stdout) {
			t.Errorf("%d keys (saturated %v): cardinality line:\n%s", c.distinct, c.saturated, stdout)
		}
		code, stdout, stderr = runCLI(t, "", "bloom", "info", "--json", out)
		if code != 0 || !strings.Contains(stdout, `"overfull": true`) || !strings.Contains(stdout, `"n_counts": "adds that set a new bit"`) ||
			c.saturated != strings.Contains(stdout, `"estimated_cardinality": null`) {
			t.Errorf("%d keys: info --json: exit %d\n%s%s", c.distinct, code, stdout, stderr)
		}
	}
	// Within capacity: not overfull.
	in := keysFile(t, dir, 500, 1)
	out := filepath.Join(dir, "ok.bf")
	if code, _, stderr := runCLI(t, "", "bloom", "build", "-n", "1000", "-p", "0.01", "-o", out, in); code != 0 {
		t.Fatalf("build: %d %s", code, stderr)
	}
	if code, stdout, _ := runCLI(t, "", "bloom", "info", out); code != 0 || strings.Contains(stdout, "overfull") {
		t.Errorf("info of a filter within capacity: %d\n%s", code, stdout)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
