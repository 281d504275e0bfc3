package cli

import "github.com/spf13/cobra"

// valueInput is the value selection shared by `probly count` and `probly
// top` (--format, --field, --header): every line, or field N of every CSV
// or TSV record.
type valueInput struct {
	format string // lines, csv or tsv
	field  int    // 1-based; 0 = whole line (lines) or 1 (csv, tsv)
	header bool   // skip the first line or record of every input
}

// check validates the flags for command name and defaults field to 1 in
// csv and tsv modes.
func (in *valueInput) check(name string) error {
	switch in.format {
	case "lines":
		if in.field != 0 || in.header {
			return usagef("%s: --field and --header need --format csv or tsv", name)
		}
	case "csv", "tsv":
		if in.field < 0 {
			return usagef("%s: --field %d: fields are numbered from 1", name, in.field)
		}
		if in.field == 0 {
			in.field = 1
		}
	default:
		return usagef("%s: unknown --format %q (lines, csv or tsv)", name, in.format)
	}
	return nil
}

// each calls add with every value of the inputs (args; "-" or none =
// stdin) behind one progress bar labelled desc, and returns the records
// read and those skipped for lacking the field. In csv and tsv modes empty
// lines are ignored. The slice passed to add is only valid during the call.
func (in *valueInput) each(cmd *cobra.Command, args []string, desc string, add func(v []byte)) (records, skipped uint64, err error) {
	return in.eachAt(cmd, args, desc, func(_ inputPos, v []byte) error {
		add(v)
		return nil
	})
}

// eachAt is each that also passes where each value's line or record
// starts, and stops at fn's first error.
func (in *valueInput) eachAt(cmd *cobra.Command, args []string, desc string, fn func(at inputPos, v []byte) error) (records, skipped uint64, err error) {
	stdin, stderr := cmd.InOrStdin(), cmd.ErrOrStderr()
	switch in.format {
	case "csv":
		err = forEachCSVRecordAt(args, stdin, stderr, desc, in.header, func(at inputPos, rec []string) error {
			records++
			if in.field > len(rec) {
				skipped++
				return nil
			}
			return fn(at, []byte(rec[in.field-1]))
		})
	default:
		err = forEachLineAt(args, stdin, stderr, desc, in.header, func(at inputPos, line []byte) error {
			if in.format == "lines" {
				records++
				return fn(at, line)
			}
			if len(line) == 0 {
				return nil
			}
			records++
			v, ok := tsvField(line, in.field)
			if !ok {
				skipped++
				return nil
			}
			return fn(at, v)
		})
	}
	return records, skipped, err
}
