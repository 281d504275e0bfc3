// Package cli implements probly's command line with spf13/cobra. Each
// sub-command turns flags into options and calls into the library or the
// server; no algorithm lives here.
//
// Exit codes (documented in README.md):
//
//	0  success (for `bloom query`: every key answered "maybe")
//	1  `bloom query` only: at least one key is definitely not in the filter
//	2  usage error (unknown flag, missing argument, invalid parameter,
//	   missing or unknown sub-command, unknown help topic)
//	3  input/output or data error (unreadable file, corrupt filter, server failure)
package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// `probly` alone, `probly --help`, `probly help [COMMAND]` and `COMMAND
// --help` print help on stdout and exit 0 (cobra's convention for the
// root); a command group without its sub-command (`probly bloom`) is a
// usage error.

// Exit codes.
const (
	ExitOK       = 0
	ExitAbsent   = 1
	ExitUsage    = 2
	ExitDataFail = 3
	// ExitOverfull: `bloom build --strict` found more distinct keys than
	// -n allows for the target p (errOverfull).
	ExitOverfull = 4
)

// usageError marks errors caused by how the command was invoked. shown
// says the command's usage is already on stderr.
type usageError struct {
	err   error
	shown bool
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{err: fmt.Errorf(format, a...)} }

// errAbsent is returned by `bloom query` when a key is definitely absent; it
// prints nothing more.
var errAbsent = errors.New("definitely absent")

// Execute runs the command line and returns the process exit code.
func Execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errAbsent):
		return ExitAbsent
	case errors.Is(err, errOverfull):
		fmt.Fprintln(stderr, "probly:", err)
		return ExitOverfull
	}
	fmt.Fprintln(stderr, "probly:", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		if !ue.shown && cmd != nil {
			fmt.Fprint(stderr, cmd.UsageString())
		}
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
	// --version prints what `probly version` prints (cobra adds the flag
	// when Version is set).
	root.Version = buildVersion()
	root.SetVersionTemplate("{{.Version}}")
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newServeCmd(), newBloomCmd(), newCountCmd(), newTopCmd(), newQuantilesCmd())
	root.AddCommand(newCheckAOFCmd(), newFollowCmd(), newVersionCmd())
	root.SetHelpCommand(newHelpCmd())
	requireSubcommand(root, true)
	return root
}

// requireSubcommand makes the command group c refuse to run without one of
// its sub-commands: `probly bloom` and `probly bloom nosuch` print c's
// usage on stderr and return a usage error (exit 2), where cobra would
// print the help and exit 0. `c --help` still prints the help and exits 0.
// For the root (bareHelp), c alone prints the help on stdout and exits 0,
// cobra's convention; an unknown sub-command is still a usage error.
func requireSubcommand(c *cobra.Command, bareHelp bool) {
	c.Args = cobra.ArbitraryArgs
	// c is runnable only to report the error: its usage does not list
	// "c [flags]" as a way to run it (the template is inherited by its
	// sub-commands, for which the condition is just .Runnable).
	c.SetUsageTemplate(strings.Replace(c.UsageTemplate(),
		"Usage:{{if .Runnable}}", "Usage:{{if and .Runnable (not .HasAvailableSubCommands)}}", 1))
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 && bareHelp {
			return cmd.Help()
		}
		fmt.Fprint(cmd.ErrOrStderr(), cmd.UsageString())
		if len(args) == 0 {
			return usageError{fmt.Errorf("missing sub-command for %q", cmd.CommandPath()), true}
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2 // cobra's default
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf(" (did you mean %q?)", s[0])
		}
		return usageError{errors.New(msg), true}
	}
}

// newHelpCmd is cobra's help command, except that an unknown topic
// (`probly help nosuch`, `probly help bloom nosuch`) is a usage error
// (exit 2) instead of a message and exit 0.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help provides help for any command in the application.\nSimply type probly help [path to command] for full details.",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || cmd == nil || len(rest) > 0 {
				fmt.Fprint(c.ErrOrStderr(), c.Root().UsageString())
				return usageError{fmt.Errorf("unknown help topic %q", strings.Join(args, " ")), true}
			}
			cmd.InitDefaultHelpFlag()
			return cmd.Help()
		},
	}
}
