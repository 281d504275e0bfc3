package cli

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/probly/probly/hll"
)

// countResult is the --json shape of `probly count` (and what the text
// output prints).
type countResult struct {
	// Estimate is the HyperLogLog estimate of the number of distinct values.
	Estimate uint64 `json:"estimate"`
	// StandardError is the sketch's relative standard error 1.04/√m, and
	// StandardErrorItems the same in items (StandardError × Estimate,
	// rounded): about 68% of estimates fall within ± that of the truth.
	StandardError      float64 `json:"standard_error"`
	StandardErrorItems uint64  `json:"standard_error_items"`
	Precision          uint8   `json:"precision"`
	Registers          uint64  `json:"registers"`
	Format             string  `json:"format"`
	Field              int     `json:"field,omitempty"` // 1-based; 0 (omitted) = whole line
	// Records is the number of input lines (lines, tsv) or CSV records read;
	// Skipped counts those that have no field Field (they are not counted).
	Records uint64 `json:"records"`
	Skipped uint64 `json:"skipped"`
	// With --exact: the exact number of distinct values, and
	// (Estimate − Exact)/Exact (omitted when Exact is 0 and Estimate is not).
	Exact         *uint64  `json:"exact,omitempty"`
	RelativeError *float64 `json:"relative_error,omitempty"`
}

func newCountCmd() *cobra.Command {
	var (
		precision int
		field     int
		format    string
		exact     bool
		asJSON    bool
		header    bool
	)
	c := &cobra.Command{
		Use:   "count [--field N --format csv|tsv [--header]] [--exact] [--json] [INPUT...]",
		Short: "Estimate the number of distinct lines (or CSV/TSV fields) with HyperLogLog",
		Long: `Count reads every line of the inputs ("-" or none = stdin), or field N of
every CSV or TSV record, adds it to a HyperLogLog sketch of 2^precision
registers and prints the estimated number of distinct values with its
standard error 1.04/√m (as a fraction, and as ± items). The sketch takes
0.75·2^precision bytes (12 KiB at the default 14) whatever the input size.

Lines are split on '\n' with a trailing '\r' dropped; an empty line is a
value in lines mode. --format csv follows RFC 4180 as encoding/csv reads it
(quoted fields may hold commas, quotes and newlines; bare quotes are
tolerated; records may have any number of fields). --format tsv splits each
line on tabs, without quoting. In csv and tsv modes empty lines are ignored,
and a record without field N is skipped and reported as skipped. --header
skips the first line (tsv) or record (csv) of every input, its header row.
A line or CSV record longer than 1 MiB is an error.

--exact also counts the distinct values exactly, in a hash set of every
distinct value (about 100 bytes each with Go's overhead: 440 MB for 4.5M
short names), and prints the estimate's relative error.`,
		RunE: run(func(cmd *cobra.Command, args []string) error {
			if precision < hll.MinPrecision || precision > hll.MaxPrecision {
				return usagef("count: --precision %d is outside [%d, %d]", precision, hll.MinPrecision, hll.MaxPrecision)
			}
			in := valueInput{format: format, field: field, header: header}
			if err := in.check("count"); err != nil {
				return err
			}
			field = in.field
			sk, err := hll.New(uint8(precision))
			if err != nil {
				return usageError{err: err}
			}
			res := countResult{Precision: uint8(precision), Registers: 1 << uint8(precision), Format: format, Field: field}
			var seen map[string]struct{}
			if exact {
				seen = make(map[string]struct{})
			}
			add := func(v []byte) {
				sk.Add(v)
				if seen != nil {
					if _, ok := seen[string(v)]; !ok {
						seen[string(v)] = struct{}{}
					}
				}
			}
			res.Records, res.Skipped, err = in.each(cmd, args, "counting", add)
			if err != nil {
				return err
			}

			res.Estimate = sk.Count()
			res.StandardError = hll.StandardError(uint8(precision))
			res.StandardErrorItems = uint64(math.Round(res.StandardError * float64(res.Estimate)))
			if seen != nil {
				n := uint64(len(seen))
				res.Exact = &n
				if n > 0 || res.Estimate == 0 {
					rel := 0.0
					if n > 0 {
						rel = (float64(res.Estimate) - float64(n)) / float64(n)
					}
					res.RelativeError = &rel
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			return printCount(cmd.OutOrStdout(), res)
		}),
	}
	c.Flags().IntVarP(&precision, "precision", "p", hll.DefaultPrecision,
		fmt.Sprintf("HyperLogLog precision p in [%d, %d]: 2^p registers, standard error 1.04/√(2^p)", hll.MinPrecision, hll.MaxPrecision))
	c.Flags().IntVarP(&field, "field", "f", 0, "count field N (1-based) of each record (csv, tsv; default 1)")
	c.Flags().StringVar(&format, "format", "lines", "input format: lines, csv or tsv")
	c.Flags().BoolVar(&exact, "exact", false, "also count exactly in memory and print the estimate's relative error")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	c.Flags().BoolVar(&header, "header", false, "skip the first line or record of every input, a header row (csv, tsv)")
	return c
}

func printCount(w io.Writer, r countResult) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "estimate\t%d\n", r.Estimate)
	fmt.Fprintf(tw, "standard error\t%.6f (%.2f%%, 1.04/√%d) = ±%d\n",
		r.StandardError, 100*r.StandardError, r.Registers, r.StandardErrorItems)
	fmt.Fprintf(tw, "precision\t%d (%d registers)\n", r.Precision, r.Registers)
	fmt.Fprintf(tw, "records\t%d\n", r.Records)
	if r.Field > 0 {
		fmt.Fprintf(tw, "field\t%d (%s)\n", r.Field, r.Format)
		fmt.Fprintf(tw, "skipped\t%d\n", r.Skipped)
	}
	if r.Exact != nil {
		fmt.Fprintf(tw, "exact\t%d\n", *r.Exact)
		if r.RelativeError != nil {
			rel := *r.RelativeError
			fmt.Fprintf(tw, "relative error\t%+.6f (%+.2f%%, %.2f standard errors)\n",
				rel, 100*rel, math.Abs(rel)/r.StandardError)
		} else {
			fmt.Fprintf(tw, "relative error\tn/a\n")
		}
	}
	return tw.Flush()
}

// tsvField returns field n (1-based) of a tab-separated line.
func tsvField(line []byte, n int) ([]byte, bool) {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(line, '\t')
		if j < 0 {
			return nil, false
		}
		line = line[j+1:]
	}
	if j := bytes.IndexByte(line, '\t'); j >= 0 {
		line = line[:j]
	}
	return line, true
}

// errRecordTooLong reports a CSV record (or unterminated quoted field)
// longer than maxLine.
var errRecordTooLong = fmt.Errorf("CSV record longer than %d bytes", maxLine)

// csvReadAhead is the read-ahead buffer handed to encoding/csv.
const csvReadAhead = 64 << 10

// boundedReader fails once more than limit bytes have been read: it stops
// encoding/csv from buffering an arbitrarily long record (an unterminated
// quote in a huge file) in memory.
type boundedReader struct {
	r     io.Reader
	read  int64
	limit int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.read >= b.limit {
		return 0, errRecordTooLong
	}
	if int64(len(p)) > b.limit-b.read {
		p = p[:b.limit-b.read]
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

// forEachCSVRecord calls fn with every CSV record of the named files ("-"
// or no names means stdin), like forEachLine: a progress bar on stderr
// when it is a terminal and the input sizes are known. Records never span
// files. The slice passed to fn is only valid during the call.
func forEachCSVRecord(names []string, stdin io.Reader, stderr io.Writer, desc string, skipFirst bool, fn func(rec []string)) error {
	return forEachCSVRecordAt(names, stdin, stderr, desc, skipFirst, func(_ inputPos, rec []string) error {
		fn(rec)
		return nil
	})
}

// forEachCSVRecordAt is forEachCSVRecord that also passes each record's
// position (the line it starts on) and stops at fn's first error.
func forEachCSVRecordAt(names []string, stdin io.Reader, stderr io.Writer, desc string, skipFirst bool, fn func(at inputPos, rec []string) error) error {
	return forEachInput(names, stdin, stderr, desc, func(name string, r io.Reader) error {
		return readCSV(name, r, skipFirst, fn)
	})
}

func readCSV(name string, r io.Reader, skipFirst bool, fn func(at inputPos, rec []string) error) error {
	// The bufio.Reader holds at most csvReadAhead unconsumed bytes, so
	// reading past InputOffset()+maxLine+csvReadAhead means the current
	// record alone is longer than maxLine.
	bounded := &boundedReader{r: r, limit: maxLine + csvReadAhead}
	cr := csv.NewReader(bufio.NewReaderSize(bounded, csvReadAhead))
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if skipFirst {
			skipFirst = false
		} else {
			line, _ := cr.FieldPos(0)
			if err := fn(inputPos{name, line}, rec); err != nil {
				return err
			}
		}
		bounded.limit = cr.InputOffset() + maxLine + csvReadAhead
	}
}
