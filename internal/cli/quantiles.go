package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/probly/probly/tdigest"
)

// quantilesResult is the --json shape of `probly quantiles`.
type quantilesResult struct {
	Quantiles []quantileValue `json:"quantiles"`
	// Count is the number of values summarised; Min and Max are exact
	// (omitted when Count is 0).
	Count       uint64   `json:"count"`
	Min         *float64 `json:"min,omitempty"`
	Max         *float64 `json:"max,omitempty"`
	Compression int      `json:"compression"`
	Format      string   `json:"format"`
	Field       int      `json:"field,omitempty"`
	// Records read; Skipped: without field N; Invalid: not a finite
	// number (only with --skip-invalid; otherwise the first one is an
	// error).
	Records uint64 `json:"records"`
	Skipped uint64 `json:"skipped"`
	Invalid uint64 `json:"invalid"`
}

// quantileValue is one requested quantile and its estimate (omitted when
// there are no values).
type quantileValue struct {
	Q     float64  `json:"q"`
	Value *float64 `json:"value,omitempty"`
}

// parseQuantiles parses the --q list: comma-separated numbers in [0, 1].
func parseQuantiles(s string) ([]float64, error) {
	var qs []float64
	for _, f := range strings.Split(s, ",") {
		q, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(q >= 0 && q <= 1) {
			return nil, usagef("quantiles: --q %q: want numbers in [0, 1], comma-separated", f)
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// parseValue parses one input value: a decimal or exponent number (Go's
// ParseFloat syntax, surrounding spaces allowed), finite.
func parseValue(v []byte) (float64, bool) {
	x, err := strconv.ParseFloat(strings.TrimSpace(string(v)), 64)
	return x, err == nil && !math.IsInf(x, 0) && !math.IsNaN(x)
}

func newQuantilesCmd() *cobra.Command {
	var (
		qlist       string
		compression int
		in          valueInput
		skipInvalid bool
		asJSON      bool
	)
	c := &cobra.Command{
		Use:   "quantiles [--q 0.5,0.99] [--field N --format csv|tsv [--header]] [--skip-invalid] [--json] [INPUT...]",
		Short: "Estimate quantiles (median, p99 …) of numbers, one a line or a CSV/TSV field, with a t-digest",
		Long: `Quantiles reads a number from every line of the inputs ("-" or none =
stdin), or from field N of every CSV or TSV record, adds it to a merging
t-digest (the structure of TDIGEST.*, package tdigest) and prints the
estimated value at each quantile of --q, with the exact count, minimum and
maximum. Memory is fixed by the compression: at most 16·(6·C+10) bytes
(9.8 KB at the default 100) whatever the input size. Near the tails the
estimates are most accurate: the rank error at quantile q is at most about
q(1−q)·2π·ln(n)/C (see the package doc), far less in practice.

Numbers use Go's syntax (1, -2.5, 1e-3, 0x1p-2; spaces around them are
ignored); NaN and infinities are not numbers here. The first line that
holds no number is an error naming its input and line; --skip-invalid skips
such values instead and reports how many. Input formats are those of
probly count (--format, --field, --header).`,
		RunE: run(func(cmd *cobra.Command, args []string) error {
			qs, err := parseQuantiles(qlist)
			if err != nil {
				return err
			}
			if err := in.check("quantiles"); err != nil {
				return err
			}
			d, err := tdigest.New(compression)
			if err != nil {
				return usageError{err: err}
			}
			res := quantilesResult{Compression: compression, Format: in.format, Field: in.field}
			res.Records, res.Skipped, err = in.eachAt(cmd, args, "reading",
				func(at inputPos, v []byte) error {
					x, ok := parseValue(v)
					switch {
					case ok:
						return d.Add(x)
					case skipInvalid:
						res.Invalid++
						return nil
					}
					return fmt.Errorf("quantiles: %v: %q is not a finite number (use --skip-invalid to skip such values)", at, v)
				})
			if err != nil {
				return err
			}
			res.Count = d.Count()
			var est []float64
			if res.Count > 0 {
				mn, mx := d.Min(), d.Max()
				res.Min, res.Max = &mn, &mx
				est = d.Quantiles(nil, qs...)
			}
			for i, q := range qs {
				qv := quantileValue{Q: q}
				if res.Count == 1 {
					qv.Value = res.Min // a single value is every quantile
				} else if res.Count > 1 {
					qv.Value = &est[i]
				}
				res.Quantiles = append(res.Quantiles, qv)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			return printQuantiles(cmd.OutOrStdout(), res)
		}),
	}
	c.Flags().StringVar(&qlist, "q", "0.5,0.9,0.99", "quantiles to estimate, comma-separated, each in [0, 1]")
	c.Flags().IntVarP(&compression, "compression", "c", tdigest.DefaultCompression,
		fmt.Sprintf("t-digest compression C in [1, %d]: 6·C+10 centroids at most", tdigest.MaxCompression))
	c.Flags().IntVarP(&in.field, "field", "f", 0, "read field N (1-based) of each record (csv, tsv; default 1)")
	c.Flags().StringVar(&in.format, "format", "lines", "input format: lines, csv or tsv")
	c.Flags().BoolVar(&in.header, "header", false, "skip the first line or record of every input, a header row (csv, tsv)")
	c.Flags().BoolVar(&skipInvalid, "skip-invalid", false, "skip values that are not finite numbers (counted as invalid) instead of failing")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func printQuantiles(w io.Writer, r quantilesResult) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	num := func(p *float64) string {
		if p == nil {
			return "n/a"
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	for _, q := range r.Quantiles {
		fmt.Fprintf(tw, "q=%s\t%s\n", strconv.FormatFloat(q.Q, 'g', -1, 64), num(q.Value))
	}
	fmt.Fprintf(tw, "count\t%d\n", r.Count)
	fmt.Fprintf(tw, "min\t%s\n", num(r.Min))
	fmt.Fprintf(tw, "max\t%s\n", num(r.Max))
	fmt.Fprintf(tw, "compression\t%d\n", r.Compression)
	fmt.Fprintf(tw, "records\t%d\n", r.Records)
	if r.Field > 0 {
		fmt.Fprintf(tw, "field\t%d (%s)\n", r.Field, r.Format)
		fmt.Fprintf(tw, "skipped\t%d\n", r.Skipped)
	}
	if r.Invalid > 0 {
		fmt.Fprintf(tw, "invalid\t%d\n", r.Invalid)
	}
	return tw.Flush()
}
