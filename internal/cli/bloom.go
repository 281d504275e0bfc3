package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func newBloomCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "bloom",
		Short: "Build, query, inspect and merge Bloom filter files",
		Long: `Bloom filter files use probly's versioned, checksummed format
(docs/FORMATS.md). Keys are read one per line; a trailing '\r' is dropped.`,
	}
	c.AddCommand(newBloomBuildCmd(), newBloomQueryCmd(), newBloomInfoCmd(), newBloomMergeCmd())
	return c
}

func newBloomBuildCmd() *cobra.Command {
	var (
		n      uint64
		p      float64
		out    string
		layout string
	)
	c := &cobra.Command{
		Use:   "build -n CAPACITY -p RATE -o FILE [INPUT...]",
		Short: "Build a filter from keys, one per line (files or stdin)",
		Long: `Build sizes a Bloom filter for n keys at false-positive rate p, adds every
line of the inputs ("-" or none = stdin) and writes the filter to FILE
atomically. --layout picks the filter:

  classic   m = -n ln p / ln²2 bits, k = (m/n) ln 2 probes (the default)
  sbbf      split-block filter, bit-compatible with Parquet: one 32-byte block
            per key (one cache miss per lookup), sized by the block-aware
            false-positive rate (about 10% more memory than classic at 1%)
  counting  4-bit counters at the classic positions (4x the memory; items
            can be removed with the bloom package)

query, info and merge detect the layout from the file.`,
		RunE: run(func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("bloom build: -o FILE is required")
			}
			f, many, err := newLayoutFilter(layout, n, p)
			if err != nil {
				if _, ok := err.(usageError); ok {
					return err
				}
				return usageError{err}
			}
			adder := newAddBatcher(many)
			err = forEachLine(args, cmd.InOrStdin(), cmd.ErrOrStderr(), "adding", adder.add)
			adder.close()
			if err != nil {
				return err
			}
			lines := adder.lines
			if err := writeFileAtomic(out, f); err != nil {
				return err
			}
			st := f.Stats()
			fmt.Fprintf(cmd.ErrOrStderr(), "read %d keys; m=%d bits k=%d bytes=%d fill=%.4f estimated fpr=%.6g\n",
				lines, st.M, st.K, st.Bytes, st.FillRatio, st.EstimatedFPR)
			return nil
		}),
	}
	c.Flags().Uint64VarP(&n, "capacity", "n", 0, "expected number of distinct keys n (required, > 0)")
	c.Flags().Float64VarP(&p, "error-rate", "p", 0.01, "target false-positive rate p, in (0, 1)")
	c.Flags().StringVarP(&out, "output", "o", "", "filter file to write")
	c.Flags().StringVar(&layout, "layout", "classic", "filter layout: "+layoutHelp)
	return c
}

// addBatcher adds keys to a filter in input order with Filter.AddMany, on
// its own goroutine, so that reading and splitting the input (the caller's
// goroutine) overlaps with adding. AddMany groups the memory accesses of many
// keys, which is several times faster than one Add per line when the filter
// does not fit in cache. A single goroutine adds, batch after batch, so the
// result (bits and N) is exactly that of calling Add on every key in order.
type addBatcher struct {
	cur   *keyBatch
	free  chan *keyBatch // empty batches, for the reader
	full  chan *keyBatch // filled batches, for the adder
	done  chan struct{}  // closed when the adder has finished
	lines uint64
}

// keyBatch holds copies of up to addBatchKeys keys (a line is only valid
// during the forEachLine callback).
type keyBatch struct {
	arena []byte
	keys  [][]byte // slices of arena
}

const (
	addBatchKeys  = 1024
	addBatchBytes = 64 << 10
	addBatches    = 4 // batches in flight between reader and adder
)

func newAddBatcher(f manyAdder) *addBatcher {
	a := &addBatcher{
		free: make(chan *keyBatch, addBatches),
		full: make(chan *keyBatch, addBatches),
		done: make(chan struct{}),
	}
	for range addBatches {
		a.free <- &keyBatch{arena: make([]byte, 0, addBatchBytes), keys: make([][]byte, 0, addBatchKeys)}
	}
	a.cur = <-a.free
	go func() {
		defer close(a.done)
		for b := range a.full {
			f.AddMany(b.keys)
			if cap(b.arena) == addBatchBytes { // not a one-off batch of a long line
				b.keys, b.arena = b.keys[:0], b.arena[:0]
				a.free <- b
			}
		}
	}()
	return a
}

// add queues a copy of line. It never fails; its signature fits forEachLine.
func (a *addBatcher) add(line []byte) error {
	a.lines++
	if len(line) > addBatchBytes {
		a.send() // keep the order of adds
		a.full <- &keyBatch{keys: [][]byte{bytes.Clone(line)}}
		return nil
	}
	if len(a.cur.keys) == addBatchKeys || len(a.cur.arena)+len(line) > cap(a.cur.arena) {
		a.send()
	}
	b := a.cur
	start := len(b.arena)
	b.arena = append(b.arena, line...) // within capacity: never reallocates
	b.keys = append(b.keys, b.arena[start:len(b.arena):len(b.arena)])
	return nil
}

func (a *addBatcher) send() {
	if len(a.cur.keys) > 0 {
		a.full <- a.cur
		a.cur = <-a.free
	}
}

// close adds the remaining keys and waits until every queued key is added.
// It must be called exactly once, also on error paths.
func (a *addBatcher) close() {
	a.send()
	close(a.full)
	<-a.done
}

func newBloomQueryCmd() *cobra.Command {
	var (
		inputs []string
		count  bool
	)
	c := &cobra.Command{
		Use:   "query FILTER [KEY...]",
		Short: "Test keys against a filter: prints 'maybe' or 'no' per key",
		Long: `Query tests each KEY (or, without KEY arguments, every line of the --input
files or stdin) and prints "maybe<TAB>key" or "no<TAB>key". With --count it
prints only the totals. Exit status: 0 if every key answered maybe, 1 if at
least one key is definitely not in the set (not with --count).`,
		Args: cobra.MinimumNArgs(1),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			f, err := readFilterFile(args[0])
			if err != nil {
				return err
			}
			w := bufio.NewWriterSize(cmd.OutOrStdout(), 64*1024)
			defer w.Flush()
			var total, maybe uint64
			test := func(key []byte) error {
				total++
				ok := f.Test(key)
				if ok {
					maybe++
				}
				if count {
					return nil
				}
				ans := "no"
				if ok {
					ans = "maybe"
				}
				_, err := fmt.Fprintf(w, "%s\t%s\n", ans, key)
				return err
			}
			if len(args) > 1 {
				for _, k := range args[1:] {
					if err := test([]byte(k)); err != nil {
						return err
					}
				}
			} else if err := forEachLine(inputs, cmd.InOrStdin(), cmd.ErrOrStderr(), "querying", test); err != nil {
				return err
			}
			if count {
				rate := 0.0
				if total > 0 {
					rate = float64(maybe) / float64(total)
				}
				fmt.Fprintf(w, "keys\t%d\nmaybe\t%d\nno\t%d\nmaybe_ratio\t%.6g\n", total, maybe, total-maybe, rate)
				return nil
			}
			if maybe < total {
				if err := w.Flush(); err != nil {
					return err
				}
				return errAbsent
			}
			return nil
		}),
	}
	c.Flags().StringSliceVarP(&inputs, "input", "i", nil, "files of keys, one per line (default stdin)")
	c.Flags().BoolVarP(&count, "count", "c", false, "print only the number of keys, maybe and no answers")
	return c
}

// filterInfo is the --json shape of `bloom info`.
type filterInfo struct {
	File                 string  `json:"file"`
	Layout               string  `json:"layout"`
	M                    uint64  `json:"m"`
	K                    uint32  `json:"k"`
	Bytes                uint64  `json:"bytes"`
	N                    uint64  `json:"n"`
	Capacity             uint64  `json:"capacity"`
	TargetP              float64 `json:"target_p"`
	SetBits              uint64  `json:"set_bits"`
	FillRatio            float64 `json:"fill_ratio"`
	EstimatedFPR         float64 `json:"estimated_fpr"`
	EstimatedCardinality float64 `json:"estimated_cardinality"`
}

func newBloomInfoCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "info FILTER",
		Short: "Print a filter's parameters and statistics",
		Args:  cobra.ExactArgs(1),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			f, err := readFilterFile(args[0])
			if err != nil {
				return err
			}
			st := f.Stats()
			info := filterInfo{
				File: args[0], Layout: layoutName(f), M: st.M, K: st.K, Bytes: st.Bytes, N: st.N,
				Capacity: st.Capacity, TargetP: st.TargetP, SetBits: st.SetBits, FillRatio: st.FillRatio,
				EstimatedFPR: st.EstimatedFPR, EstimatedCardinality: st.EstimatedCardinality,
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			unit := "bits"
			if info.Layout == "counting" {
				unit = "counters"
			}
			fmt.Fprintf(tw, "file\t%s\nlayout\t%s\nm (%s)\t%d\nk (hashes)\t%d\nbytes\t%d\nn (items added)\t%d\ncapacity\t%d\ntarget p\t%g\nset bits\t%d\nfill ratio\t%.6f\nestimated fpr\t%.6g\nestimated cardinality\t%.0f\n",
				info.File, info.Layout, unit, info.M, info.K, info.Bytes, info.N, info.Capacity, info.TargetP,
				info.SetBits, info.FillRatio, info.EstimatedFPR, info.EstimatedCardinality)
			return tw.Flush()
		}),
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func newBloomMergeCmd() *cobra.Command {
	var (
		out       string
		intersect bool
	)
	c := &cobra.Command{
		Use:   "merge -o OUT FILTER FILTER...",
		Short: "Union (or --intersect) filters of the same layout with identical m, k and hash",
		Args:  cobra.MinimumNArgs(2),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("bloom merge: -o OUT is required")
			}
			acc, err := readFilterFile(args[0])
			if err != nil {
				return err
			}
			for _, name := range args[1:] {
				g, err := readFilterFile(name)
				if err != nil {
					return err
				}
				if err := mergeInto(acc, g, intersect); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
			return writeFileAtomic(out, acc)
		}),
	}
	c.Flags().StringVarP(&out, "output", "o", "", "filter file to write")
	c.Flags().BoolVar(&intersect, "intersect", false, "intersect instead of union")
	return c
}

// writeFileAtomic writes w to a temporary file in name's folder, fsyncs it
// and renames it over name.
func writeFileAtomic(name string, w io.WriterTo) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if _, err := w.WriteTo(bw); err != nil {
		tmp.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
