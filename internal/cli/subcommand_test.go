package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSubcommandExitCodes pins the exit codes of command groups and help
// (README "Exit codes"): a group without its sub-command or with an
// unknown one, and an unknown help topic, are usage errors (exit 2, usage
// on stderr, nothing on stdout); --help and `probly help TOPIC` print help
// on stdout and exit 0, as does `probly` alone (cobra's convention for the
// root).
func TestSubcommandExitCodes(t *testing.T) {
	for _, c := range []struct {
		args       []string
		want       int
		stderrHas  string // in stderr
		stdoutHelp bool   // help on stdout (else stdout empty)
	}{
		{[]string{"bloom"}, ExitUsage, `missing sub-command for "probly bloom"`, false},
		{[]string{"bloom", "nosuch"}, ExitUsage, `unknown command "nosuch" for "probly bloom"`, false},
		{[]string{"bloom", "buld"}, ExitUsage, `did you mean "build"?`, false},
		{[]string{"bloom", "nosuch", "--help"}, ExitOK, "", true},
		{[]string{"nosuch"}, ExitUsage, `unknown command "nosuch" for "probly"`, false},
		{[]string{"help", "nosuch"}, ExitUsage, `unknown help topic "nosuch"`, false},
		{[]string{"help", "bloom", "nosuch"}, ExitUsage, `unknown help topic "bloom nosuch"`, false},
		{[]string{"bloom", "--help"}, ExitOK, "", true},
		{[]string{"bloom", "-h"}, ExitOK, "", true},
		{[]string{"help", "bloom"}, ExitOK, "", true},
		{[]string{"help", "bloom", "build"}, ExitOK, "", true},
		{[]string{"bloom", "build", "--help"}, ExitOK, "", true},
		{[]string{"help"}, ExitOK, "", true},
		{[]string{}, ExitOK, "", true},
	} {
		code, stdout, stderr := runCLI(t, "", c.args...)
		name := "probly " + strings.Join(c.args, " ")
		if code != c.want {
			t.Errorf("%s: exit %d, want %d (stderr %q)", name, code, c.want, stderr)
		}
		if c.stderrHas != "" && !strings.Contains(stderr, c.stderrHas) {
			t.Errorf("%s: stderr %q lacks %q", name, stderr, c.stderrHas)
		}
		if c.want == ExitUsage && (!strings.Contains(stderr, "Usage:") || stdout != "") {
			t.Errorf("%s: want usage on stderr only; stdout %q, stderr %q", name, stdout, stderr)
		}
		if c.stdoutHelp && (!strings.Contains(stdout, "Usage:") || stderr != "") {
			t.Errorf("%s: want help on stdout; stdout %q, stderr %q", name, stdout, stderr)
		}
	}
	// The group's usage lists its sub-commands, not "probly bloom [flags]".
	_, _, stderr := runCLI(t, "", "bloom")
	if !strings.Contains(stderr, "probly bloom [command]") || strings.Contains(stderr, "probly bloom [flags]") {
		t.Errorf("bloom usage: %q", stderr)
	}
}

// TestBuildRateFloor: a rate below bloom.MinP (2^-64) is a usage error
// naming the floor, for every layout that sizes with the classic formula;
// MinP itself builds.
func TestBuildRateFloor(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "f.bloom")
	for _, layout := range []string{"classic", "counting"} {
		for _, p := range []string{"1e-300", "5e-20", "4.9e-324"} {
			code, _, stderr := runCLI(t, "a\n", "bloom", "build", "--layout", layout, "-n", "10", "-p", p, "-o", out)
			if code != ExitUsage || !strings.Contains(stderr, "2^-64") {
				t.Errorf("%s -p %s: exit %d, stderr %q; want %d naming 2^-64", layout, p, code, stderr, ExitUsage)
			}
		}
		if code, _, stderr := runCLI(t, "a\n", "bloom", "build", "--layout", layout, "-n", "10", "-p", "5.421010862427522e-20", "-o", out); code != ExitOK {
			t.Errorf("%s -p MinP: exit %d, stderr %q", layout, code, stderr)
		}
	}
	// -p 1e-300 with the default layout, as the issue states it.
	if code, _, _ := runCLI(t, "", "bloom", "build", "-n", "4500000", "-p", "1e-300", "-o", out); code != ExitUsage {
		t.Errorf("bloom build -p 1e-300: exit %d, want %d", code, ExitUsage)
	}
}
