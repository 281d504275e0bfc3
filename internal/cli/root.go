// Package cli implements probly's command line with spf13/cobra. Each
// sub-command turns flags into options and calls into the library or the
// server; no algorithm lives here.
//
// Exit codes (documented in README.md):
//
//	0  success (for `bloom query`: every key answered "maybe")
//	1  `bloom query` only: at least one key is definitely not in the filter
//	2  usage error (unknown flag, missing argument, invalid parameter)
//	3  input/output or data error (unreadable file, corrupt filter, server failure)
package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitAbsent   = 1
	ExitUsage    = 2
	ExitDataFail = 3
)

// usageError marks errors caused by how the command was invoked.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// errAbsent is returned by `bloom query` when a key is definitely absent; it
// prints nothing more.
var errAbsent = errors.New("definitely absent")

// Execute runs the command line and returns the process exit code.
func Execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errAbsent):
		return ExitAbsent
	}
	fmt.Fprintln(stderr, "probly:", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return ExitUsage
	}
	return ExitDataFail
}

func isCobraUsage(err error) bool {
	// cobra reports flag and argument errors as plain errors; they are all
	// raised before RunE runs, which wraps its own errors.
	var re runError
	return !errors.As(err, &re)
}

// runError wraps every error returned from a RunE body, so Execute can tell
// them from cobra's own flag/argument errors.
type runError struct{ err error }

func (e runError) Error() string { return e.err.Error() }
func (e runError) Unwrap() error { return e.err }

func run(f func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := f(cmd, args); err != nil {
			var ue usageError
			if errors.As(err, &ue) {
				return err
			}
			return runError{err}
		}
		return nil
	}
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "probly",
		Short:         "Probabilistic membership and cardinality: Bloom, cuckoo, HyperLogLog",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newServeCmd(), newBloomCmd(), newCountCmd())
	root.AddCommand(newCheckAOFCmd())
	return root
}
