package cli

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/probly/probly", Version: "v0.3.1"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "4f1c0d2e9a"},
			{Key: "vcs.time", Value: "2026-12-02T21:40:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	want := "probly v0.3.1\nrevision 4f1c0d2e9a 2026-12-02T21:40:00Z +dirty\ngo1.26.8 " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if got := versionText(bi, true); got != want {
		t.Errorf("versionText = %q, want %q", got, want)
	}
	bi.Settings[3].Value = "false"
	if got := versionText(bi, true); !strings.Contains(got, "revision 4f1c0d2e9a 2026-12-02T21:40:00Z\n") {
		t.Errorf("clean tree: %q", got)
	}
	// No build info (or none recorded): every field says unknown, no panic.
	for _, got := range []string{versionText(nil, false), versionText(&debug.BuildInfo{}, true)} {
		if !strings.HasPrefix(got, "probly unknown\nrevision unknown\n"+runtime.Version()) {
			t.Errorf("without build info: %q", got)
		}
	}
}

// `probly version` and `probly --version` print the same build description,
// taken from the running binary's build info, and exit 0.
func TestVersionCommandAndFlag(t *testing.T) {
	want := versionText(debug.ReadBuildInfo())
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errOut := runCLI(t, "", args...)
		if code != ExitOK || out != want || errOut != "" {
			t.Errorf("probly %v: exit %d, stdout %q, stderr %q; want 0 and %q", args, code, out, errOut, want)
		}
	}
	if code, _, _ := runCLI(t, "", "version", "extra"); code != ExitUsage {
		t.Errorf("probly version extra: exit %d, want %d", code, ExitUsage)
	}
}

// A built probly binary reports the module version and VCS revision that
// the Go toolchain stamped into it (as `go version -m` reads them back);
// in a git checkout that revision is HEAD.
func TestVersionOfBuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the probly binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	bin := filepath.Join(t.TempDir(), "probly")
	build := exec.Command(goTool, "build", "-buildvcs=auto", "-o", bin, "github.com/probly/probly/cmd/probly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("probly version: %v", err)
	}
	meta, err := exec.Command(goTool, "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	version, revision := "unknown", "unknown"
	for _, l := range strings.Split(string(meta), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/probly/probly":
			version = f[2]
		case len(f) >= 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			revision = strings.TrimPrefix(f[1], "vcs.revision=")
		}
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) != 4 || lines[0] != "probly "+version || !strings.HasPrefix(lines[1], "revision "+revision) {
		t.Fatalf("probly version printed %q; go version -m says version %s, revision %s", out, version, revision)
	}
	if revision == "unknown" {
		t.Logf("this build recorded no VCS revision (not a plain git checkout, or -buildvcs=false in GOFLAGS): %q", out)
		return
	}
	if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil && strings.TrimSpace(string(head)) != revision {
		t.Errorf("revision %s, git HEAD %s", revision, head)
	}
	t.Logf("%s", out)
}
