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
