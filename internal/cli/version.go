package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// versionText describes the running binary from its build information
// (runtime/debug.ReadBuildInfo): the main module's version (a tag such as
// v1.2.0, a pseudo-version for an untagged commit, or "(devel)" for
// `go run` and builds outside a module cache), the VCS revision and commit
// time that `go build` stamps in a checkout ("+dirty" when the work tree
// had changes), and the Go version that built it. Fields the build did not
// record read "unknown". The text is three lines, newline-terminated:
//
//	probly v0.3.1
//	revision 4f1c0d2e9a… 2026-12-02T21:40:00Z (+dirty)
//	go1.26.8 linux/amd64
func versionText(bi *debug.BuildInfo, ok bool) string {
	version, revision, when, dirty := "unknown", "unknown", "", false
	goVersion := runtime.Version()
	if ok && bi != nil {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "probly %s\nrevision %s", version, revision)
	if when != "" {
		fmt.Fprintf(&b, " %s", when)
	}
	if dirty {
		b.WriteString(" +dirty")
	}
	fmt.Fprintf(&b, "\n%s %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// buildVersion is versionText for the running binary.
func buildVersion() string { return versionText(debug.ReadBuildInfo()) }

// newVersionCmd is `probly version`: it prints what `probly --version`
// prints.
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print probly's module version, VCS revision and Go version",
		Args:  cobra.NoArgs,
		RunE: run(func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), buildVersion())
			return err
		}),
	}
}
