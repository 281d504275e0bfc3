package cli

import (
	"io"

	"github.com/spf13/cobra"
)

// fieldInput is the value selection shared by the commands that read
// lines or a field of CSV/TSV records (count, quantiles): the --format,
// --field and --header flags, their checks, and the walk over the values.
type fieldInput struct {
	format string // lines, csv or tsv
	field  int    // 1-based field of csv/tsv records; 0 in lines mode
	header bool   // skip the first line or record of every input
}

// addFlags registers --format, --field and --header on c; what names the
// values ("count", "summarise").
func (f *fieldInput) addFlags(c *cobra.Command, what string) {
	c.Flags().IntVarP(&f.field, "field", "f", 0, what+" field N (1-based) of each record (csv, tsv; default 1)")
	c.Flags().StringVar(&f.format, "format", "lines", "input format: lines, csv or tsv")
	c.Flags().BoolVar(&f.header, "header", false, "skip the first line or record of every input, a header row (csv, tsv)")
}

// check validates the flags for command cmd and defaults --field to 1 in
// csv and tsv modes.
func (f *fieldInput) check(cmd string) error {
	switch f.format {
	case "lines":
		if f.field != 0 || f.header {
			return usagef("%s: --field and --header need --format csv or tsv", cmd)
		}
	case "csv", "tsv":
		if f.field < 0 {
			return usagef("%s: --field %d: fields are numbered from 1", cmd, f.field)
		}
		if f.field == 0 {
			f.field = 1
		}
	default:
		return usagef("%s: unknown --format %q (lines, csv or tsv)", cmd, f.format)
	}
	return nil
}

// each calls fn with every selected value of the inputs and where its
// line or record starts, behind the inputs' progress bar (desc). It counts
// the records read (in csv and tsv modes empty lines are not records) and
// those skipped because they have no field N. It stops at fn's first
// error. The value is only valid during the call.
func (f *fieldInput) each(names []string, stdin io.Reader, stderr io.Writer, desc string,
	fn func(at inputPos, v []byte) error) (records, skipped uint64, err error) {
	switch f.format {
	case "csv":
		err = forEachCSVRecordAt(names, stdin, stderr, desc, f.header, func(at inputPos, rec []string) error {
			records++
			if f.field > len(rec) {
				skipped++
				return nil
			}
			return fn(at, []byte(rec[f.field-1]))
		})
	default:
		err = forEachLineAt(names, stdin, stderr, desc, f.header, func(at inputPos, line []byte) error {
			if f.format == "lines" {
				records++
				return fn(at, line)
			}
			if len(line) == 0 {
				return nil
			}
			records++
			v, ok := tsvField(line, f.field)
			if !ok {
				skipped++
				return nil
			}
			return fn(at, v)
		})
	}
	return records, skipped, err
}
