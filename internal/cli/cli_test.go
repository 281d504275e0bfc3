package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Execute(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func writeKeys(t *testing.T, dir, name string, n int, format string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, format+"\n", i)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBloomBuildQueryInfoMerge(t *testing.T) {
	dir := t.TempDir()
	keys := writeKeys(t, dir, "keys.txt", 10000, "user-%d")
	out := filepath.Join(dir, "f.bloom")

	code, _, stderr := runCLI(t, "", "bloom", "build", "-n", "10000", "-p", "0.01", "-o", out, keys)
	if code != ExitOK {
		t.Fatalf("build: exit %d, stderr %q", code, stderr)
	}
	// Every member answers maybe: exit 0.
	code, stdout, _ := runCLI(t, "", "bloom", "query", out, "user-0", "user-9999")
	if code != ExitOK || stdout != "maybe\tuser-0\nmaybe\tuser-9999\n" {
		t.Fatalf("query members: exit %d, out %q", code, stdout)
	}
	// Keys from stdin, --count: all 10000 members are maybe.
	data, _ := os.ReadFile(keys)
	code, stdout, _ = runCLI(t, string(data), "bloom", "query", "--count", out)
	if code != ExitOK || !strings.Contains(stdout, "keys\t10000\nmaybe\t10000\nno\t0\n") {
		t.Fatalf("query --count: exit %d, out %q", code, stdout)
	}
	// Non-members: at least one is definitely absent → exit 1.
	var non strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&non, "absent-%d\n", i)
	}
	code, _, _ = runCLI(t, non.String(), "bloom", "query", out)
	if code != ExitAbsent {
		t.Fatalf("query non-members: exit %d, want %d", code, ExitAbsent)
	}

	code, stdout, _ = runCLI(t, "", "bloom", "info", "--json", out)
	if code != ExitOK {
		t.Fatalf("info: exit %d", code)
	}
	var info filterInfo
	if err := json.Unmarshal([]byte(stdout), &info); err != nil {
		t.Fatalf("info --json: %v in %q", err, stdout)
	}
	if info.N == 0 || info.N > 10000 || info.K != 7 || info.Capacity != 10000 || info.FillRatio <= 0.3 || info.FillRatio >= 0.7 {
		t.Fatalf("info: %+v", info)
	}

	// Merge with a second filter of the same shape: the union holds both sets.
	keys2 := writeKeys(t, dir, "keys2.txt", 100, "other-%d")
	out2 := filepath.Join(dir, "g.bloom")
	if code, _, e := runCLI(t, "", "bloom", "build", "-n", "10000", "-p", "0.01", "-o", out2, keys2); code != 0 {
		t.Fatalf("build 2: %d %s", code, e)
	}
	merged := filepath.Join(dir, "m.bloom")
	if code, _, e := runCLI(t, "", "bloom", "merge", "-o", merged, out, out2); code != 0 {
		t.Fatalf("merge: %d %s", code, e)
	}
	code, _, _ = runCLI(t, "", "bloom", "query", merged, "user-17", "other-42")
	if code != ExitOK {
		t.Fatalf("query merged: exit %d", code)
	}

	// Merging filters of different shapes is a data error naming both values.
	out3 := filepath.Join(dir, "h.bloom")
	if code, _, e := runCLI(t, "", "bloom", "build", "-n", "100", "-p", "0.2", "-o", out3, keys2); code != 0 {
		t.Fatalf("build 3: %d %s", code, e)
	}
	code, _, stderr = runCLI(t, "", "bloom", "merge", "-o", merged, out, out3)
	if code != ExitDataFail || !strings.Contains(stderr, "incompatible") {
		t.Fatalf("merge mismatch: exit %d stderr %q", code, stderr)
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "f.bloom")
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"unknown flag", []string{"bloom", "build", "--nope"}, ExitUsage},
		{"missing output", []string{"bloom", "build", "-n", "10"}, ExitUsage},
		{"bad p", []string{"bloom", "build", "-n", "10", "-p", "1.5", "-o", out}, ExitUsage},
		{"zero n", []string{"bloom", "build", "-n", "0", "-o", out}, ExitUsage},
		{"unknown layout", []string{"bloom", "build", "-n", "10", "-o", out, "--layout", "zzz"}, ExitUsage},
		{"query missing file", []string{"bloom", "query", filepath.Join(dir, "missing")}, ExitDataFail},
		{"info no args", []string{"bloom", "info"}, ExitUsage},
		{"build unreadable input", []string{"bloom", "build", "-n", "10", "-o", out, filepath.Join(dir, "missing")}, ExitDataFail},
		{"serve bad fsync", []string{"serve", "--appendfsync", "sometimes"}, ExitUsage},
	}
	for _, c := range cases {
		if code, _, _ := runCLI(t, "", c.args...); code != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, code, c.want)
		}
	}
}

func TestCorruptFilterFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "f.bloom")
	if code, _, e := runCLI(t, "a\nb\n", "bloom", "build", "-n", "100", "-o", out); code != 0 {
		t.Fatalf("build: %d %s", code, e)
	}
	b, _ := os.ReadFile(out)
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "bloom", "query", out, "a")
	if code != ExitDataFail || stderr == "" {
		t.Fatalf("corrupt file: exit %d stderr %q", code, stderr)
	}
}
