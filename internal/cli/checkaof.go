package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/persist"
)

// errDamaged is returned by check-aof when it found damage that stops the
// server from starting and did not fix it (exit code 3).
var errDamaged = errors.New("check-aof: damage found that stops the server from starting")

func newCheckAOFCmd() *cobra.Command {
	var (
		fix bool
		dir string
	)
	c := &cobra.Command{
		Use:   "check-aof [--fix] [--dir DIR | FILE]",
		Short: "Check the append-only file of a data directory and repair it with --fix",
		Long: `check-aof reads a data directory the way "probly serve" recovers it, without
changing anything: dump.pdb (every entry verified and decoded), the sequence of
AOF generations (appendonly.<gen>.aof) and every record of every generation
that a start would replay. For each problem it prints the file, the byte
offset, the record number (1-based, in that file) and what is wrong. With FILE
instead of --dir it checks that one AOF file on its own. Without either it
checks ` + app.DefaultDir + `.

A torn last record at the end of the newest generation (an interrupted write)
is reported but is not an error: the server cuts it off by itself at start.

--fix cuts the log at the first damaged record, in replay order: the damaged
generation is truncated to its last good record (the file is first copied to
<name>.bak), and every later generation is renamed to <name>.bak, since its
records may depend on the ones lost; a generation with a damaged header, and
the generations after a missing one, are renamed to <name>.bak too. When the
log then ends before a missing generation, the end-of-generation record that
names it is cut off the generation before (after a copy to <name>.bak), and
when the generation dump.pdb names is missing (dump.pdb restored alone, or
the file deleted), it is created empty, so the server starts from the
snapshot alone: the writes made after the snapshot are lost. Nothing
is deleted (if <name>.bak exists, <name>.bak.2, … is used). --fix refuses to
run while a server has the directory open. A damaged dump.pdb cannot be fixed
here: restore it from a backup (see docs/OPERATIONS.md); the AOF generations
after it stay in place and replay on top of it. Moving it away does not help
once earlier AOF generations were compacted into it.

Exit codes: 0 no damage that stops a start (or --fix repaired it); 2 usage
error; 3 damage found and not fixed, damage that cannot be fixed, the
directory in use by a server (--fix), or an I/O error.`,
		Args: cobra.MaximumNArgs(1),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			if dir != "" && len(args) > 0 {
				return usagef("check-aof: give --dir DIR or FILE, not both")
			}
			out := cmd.OutOrStdout()
			if len(args) == 1 {
				st, err := os.Stat(args[0])
				if err != nil {
					return err
				}
				if !st.IsDir() {
					return checkAOFFile(out, args[0], fix)
				}
				dir = args[0]
			}
			if dir == "" {
				dir = app.DefaultDir
			}
			return checkAOFDir(out, dir, fix)
		}),
	}
	c.Flags().BoolVar(&fix, "fix", false, "truncate the log to the last good record (backups are kept as *.bak)")
	c.Flags().StringVar(&dir, "dir", "", "data directory to check (default "+app.DefaultDir+")")
	return c
}

func checkAOFDir(out io.Writer, dir string, fix bool) error {
	if st, err := os.Stat(dir); err != nil {
		return err
	} else if !st.IsDir() {
		return fmt.Errorf("check-aof: %s is not a directory", dir)
	}
	r, err := persist.CheckDir(dir, app.Decode)
	if err != nil {
		return err
	}
	printReport(out, r)
	if !fix {
		if r.OK() {
			fmt.Fprintln(out, "ok: the data directory starts cleanly (as far as framing and checksums tell: records are applied only by the server's start)")
			return nil
		}
		if r.SnapshotErr != nil {
			// --fix cannot repair a snapshot: only a backup can.
			fmt.Fprintf(out, "dump.pdb is damaged: --fix cannot repair it; restore %s from a backup (see docs/OPERATIONS.md, backup and restore)\n", r.Snapshot)
			return errDamaged
		}
		what := "to truncate the log to the last good record"
		if r.Gap != 0 && r.Gap == r.SnapshotGen && len(r.Files) == 0 {
			what = fmt.Sprintf("to create the missing %s empty, so that the server starts from dump.pdb alone (writes after the snapshot are lost)", fmt.Sprintf("appendonly.%d.aof", r.Gap))
		}
		fmt.Fprintf(out, "run `probly check-aof --fix --dir %s` %s (backups are kept as *.bak)\n", dir, what)
		return errDamaged
	}
	actions, after, err := persist.Fix(dir, app.Decode)
	for _, a := range actions {
		printAction(out, a)
	}
	if err != nil {
		if errors.Is(err, persist.ErrLocked) {
			return fmt.Errorf("%w (stop the server first)", err)
		}
		return err
	}
	if !after.OK() {
		printReport(out, after)
		return errDamaged
	}
	if len(actions) == 0 {
		fmt.Fprintln(out, "nothing to fix: the data directory starts cleanly")
	} else {
		fmt.Fprintln(out, "fixed: the data directory starts cleanly")
	}
	return nil
}

func printReport(out io.Writer, r *persist.CheckReport) {
	switch {
	case r.Snapshot == "":
		fmt.Fprintf(out, "%s: none; the AOF is replayed from appendonly.1.aof\n", "dump.pdb")
	case r.SnapshotErr != nil:
		fmt.Fprintf(out, "dump.pdb: CORRUPT: %v\n", r.SnapshotErr)
	default:
		fmt.Fprintf(out, "dump.pdb: ok (%d keys; the AOF is replayed from appendonly.%d.aof)\n", r.SnapshotKeys, r.SnapshotGen)
	}
	for _, p := range r.Stale {
		fmt.Fprintf(out, "%s: covered by dump.pdb, deleted at start (not checked)\n", filepath.Base(p))
	}
	for _, f := range r.Files {
		fmt.Fprintln(out, f.Describe())
	}
	if r.Gap != 0 {
		switch n := len(r.Files); {
		case n == 0 && r.Snapshot != "" && r.Gap == r.SnapshotGen:
			fmt.Fprintf(out, "appendonly.%d.aof: MISSING; dump.pdb says the writes made after it are in this file\n", r.Gap)
		case n > 0 && r.Files[n-1].Ended && r.Files[n-1].Gen+1 == r.Gap:
			fmt.Fprintf(out, "appendonly.%d.aof: MISSING; %s ends with a record saying the log continues in it\n",
				r.Gap, filepath.Base(r.Files[n-1].Path))
		default:
			fmt.Fprintf(out, "appendonly.%d.aof: MISSING; the generations after it cannot be replayed\n", r.Gap)
		}
	}
}

func printAction(out io.Writer, a persist.FixAction) {
	name, bak := filepath.Base(a.Path), filepath.Base(a.Backup)
	if a.Created {
		fmt.Fprintf(out, "%s: created with only its header (%s)\n", name, a.Why)
		return
	}
	if a.Truncated {
		fmt.Fprintf(out, "%s: truncated to %d bytes, its last good record (%d bytes dropped; %s); the original is kept as %s\n",
			name, a.Size, a.Dropped, a.Why, bak)
		return
	}
	fmt.Fprintf(out, "%s: renamed to %s (%s; %d bytes no longer replayed)\n", name, bak, a.Why, a.Dropped)
}

func checkAOFFile(out io.Writer, path string, fix bool) error {
	fc, err := persist.CheckFile(path)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, fc.Describe())
	if fc.Problem == "" {
		fmt.Fprintln(out, "ok")
		return nil
	}
	if !fix {
		if !fc.Fatal() {
			fmt.Fprintln(out, "ok: only a torn last record, which the server cuts off at start")
			return nil
		}
		fmt.Fprintf(out, "run `probly check-aof --fix %s` to truncate it to the last good record (a backup is kept as *.bak)\n", path)
		return errDamaged
	}
	a, after, err := persist.FixFile(path)
	if a != nil {
		printAction(out, *a)
	}
	if err != nil {
		return err
	}
	if after.Problem != "" {
		fmt.Fprintln(out, after.Describe())
		return errDamaged
	}
	fmt.Fprintln(out, "fixed")
	return nil
}
