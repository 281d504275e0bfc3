package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/probly/probly/bloom"
	"github.com/probly/probly/internal/bloomraw"
)

func newBloomCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "bloom",
		Short: "Build, query, inspect and merge Bloom filter files",
		Long: `Bloom filter files use probly's versioned, checksummed format
(docs/FORMATS.md). Keys are read one per line; a trailing '\r' is dropped.`,
	}
	c.AddCommand(newBloomBuildCmd(), newBloomQueryCmd(), newBloomInfoCmd(), newBloomMergeCmd())
	requireSubcommand(c, false)
	return c
}

func newBloomBuildCmd() *cobra.Command {
	var (
		n      uint64
		p      float64
		out    string
		layout string
		strict bool
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

query, info and merge detect the layout from the file.

When the input holds more distinct keys than -n allows for -p (more lines
than -n and a fill whose estimated false-positive rate is over 1.1 p), build
prints a warning with the fill and the estimated rate; with --strict it
writes nothing and exits 4.`,
		RunE: run(func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("bloom build: -o FILE is required")
			}
			f, many, err := newLayoutFilter(layout, n, p)
			if err != nil {
				if _, ok := err.(usageError); ok {
					return err
				}
				return usageError{err: err}
			}
			adder := newAddBatcher(buildPathFor(f, many))
			err = forEachLine(args, cmd.InOrStdin(), cmd.ErrOrStderr(), "adding", false, adder.add)
			adder.close()
			if err != nil {
				return err
			}
			lines := adder.lines
			st := f.Stats()
			over := overfull(lines, n, p, st)
			if over != nil && strict {
				return over
			}
			if err := writeFileAtomic(out, f); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "read %d keys; m=%d bits k=%d bytes=%d fill=%.4f estimated fpr=%.6g\n",
				lines, st.M, st.K, st.Bytes, st.FillRatio, st.FPR)
			if over != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "probly: warning: %v\n", over)
			}
			return nil
		}),
	}
	c.Flags().BoolVar(&strict, "strict", false, "fail (exit 4, no file written) instead of warning when the input holds more distinct keys than -n allows for -p")
	c.Flags().Uint64VarP(&n, "capacity", "n", 0, "expected number of distinct keys n (required, > 0)")
	c.Flags().Float64VarP(&p, "error-rate", "p", 0.01, "target false-positive rate p, in [2^-64, 1) (2^-64 ≈ 5.4e-20)")
	c.Flags().StringVarP(&out, "output", "o", "", "filter file to write")
	c.Flags().StringVar(&layout, "layout", "classic", "filter layout: "+layoutHelp)
	return c
}

// buildPath says how the build loop adds lines to a filter of a given
// layout. Every path gives exactly the bits and N of calling Add on every
// line in input order, on two goroutines.
//
//   - builder set: the classic filter is filled by a bloom.Builder. The
//     reading goroutine hashes each line and computes its bit positions;
//     the Builder's goroutine sets the bits with plain stores (no atomic
//     instructions). That is allowed because the filter is not shared
//     until the build is done: Builder.Close, called before the file is
//     written, waits for that goroutine.
//   - hash set: the reading goroutine hashes each line and only the hash
//     travels to the adding goroutine, which calls addPairs on a batch.
//   - otherwise the reader copies the lines into batches and the adding
//     goroutine calls addKeys.
type buildPath struct {
	builder  bloomraw.Builder
	hash     func(key []byte) (h1, h2 uint64)
	addPairs func(h1, h2 []uint64)
	addKeys  func(keys [][]byte)
}

// buildPathFor picks the fastest path for f:
//
//   - classic with a hash this package computes (all the CLI makes): Builder;
//   - sbbf with seed 0 (what NewSBBF makes): bloom.Hash64 on the reader,
//     AddHashMany on the adder;
//   - otherwise (counting): copied keys and AddMany.
func buildPathFor(f layoutFilter, many manyAdder) buildPath {
	switch f := f.(type) {
	case *bloom.Filter:
		if bloomRaw.CanHashKeys(f) {
			return buildPath{builder: bloomRaw.NewBuilder(f)}
		}
	case *bloom.SBBF:
		if bloomRaw.SBBFSeed(f) == 0 {
			return buildPath{
				hash:     func(key []byte) (uint64, uint64) { return bloom.Hash64(key), 0 },
				addPairs: func(h, _ []uint64) { bloomRaw.SBBFAddHashMany(f, h) },
			}
		}
	}
	return buildPath{addKeys: func(keys [][]byte) { _ = many.AddMany(keys) }}
}

// addBatcher adds lines to a filter in input order, on its own goroutine
// (or the Builder's), so that reading, splitting and hashing the input, on
// the caller's goroutine, overlap with adding. A single goroutine adds,
// batch after batch in input order, so the result (bits and N) is exactly
// that of calling Add on every line in order.
type addBatcher struct {
	path  buildPath
	cur   *keyBatch
	free  chan *keyBatch // empty batches, for the reader
	full  chan *keyBatch // filled batches, for the adder
	done  chan struct{}  // closed when the adder has finished
	lines uint64
}

// keyBatch holds either up to addBatchPairs hash pairs (h1[i], h2[i]) or
// copies of up to addBatchKeys keys (a line is only valid during the
// forEachLine callback).
type keyBatch struct {
	h1, h2 []uint64
	arena  []byte
	keys   [][]byte // slices of arena
}

const (
	addBatchPairs = 4096 // 64 KiB of pairs
	addBatchKeys  = 1024
	addBatchBytes = 64 << 10
	addBatches    = 4 // batches in flight between reader and adder
)

func newAddBatcher(path buildPath) *addBatcher {
	if path.builder != nil {
		return &addBatcher{path: path}
	}
	a := &addBatcher{
		path: path,
		free: make(chan *keyBatch, addBatches),
		full: make(chan *keyBatch, addBatches),
		done: make(chan struct{}),
	}
	for range addBatches {
		b := new(keyBatch)
		if path.hash != nil {
			b.h1, b.h2 = make([]uint64, 0, addBatchPairs), make([]uint64, 0, addBatchPairs)
		} else {
			b.arena, b.keys = make([]byte, 0, addBatchBytes), make([][]byte, 0, addBatchKeys)
		}
		a.free <- b
	}
	a.cur = <-a.free
	go func() {
		defer close(a.done)
		for b := range a.full {
			if path.hash != nil {
				path.addPairs(b.h1, b.h2)
				b.h1, b.h2 = b.h1[:0], b.h2[:0]
			} else {
				path.addKeys(b.keys)
				if cap(b.arena) != addBatchBytes { // a one-off batch of a long line
					continue
				}
				b.keys, b.arena = b.keys[:0], b.arena[:0]
			}
			a.free <- b
		}
	}()
	return a
}

// add queues line (its hash pair, or a copy). It never fails; its
// signature fits forEachLine.
func (a *addBatcher) add(line []byte) error {
	a.lines++
	if a.path.builder != nil {
		a.path.builder.Add(line)
		return nil
	}
	if a.path.hash != nil {
		b := a.cur
		h1, h2 := a.path.hash(line)
		b.h1, b.h2 = append(b.h1, h1), append(b.h2, h2)
		if len(b.h1) == addBatchPairs {
			a.send()
		}
		return nil
	}
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
	if len(a.cur.keys) > 0 || len(a.cur.h1) > 0 {
		a.full <- a.cur
		a.cur = <-a.free
	}
}

// close adds the remaining keys and waits until every queued key is added.
// It must be called exactly once, also on error paths. After it returns,
// the filter may be used by any goroutine.
func (a *addBatcher) close() {
	if a.path.builder != nil {
		a.path.builder.Close()
		return
	}
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
			} else if err := forEachLine(inputs, cmd.InOrStdin(), cmd.ErrOrStderr(), "querying", false, test); err != nil {
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

// filterInfo is the --json shape of `bloom info`. Cardinality is null
// when every bit is set (the estimate is infinite; JSON has no infinity).
type filterInfo struct {
	File        string   `json:"file"`
	Layout      string   `json:"layout"`
	M           uint64   `json:"m"`
	K           uint32   `json:"k"`
	Bytes       uint64   `json:"bytes"`
	N           uint64   `json:"n"`
	NCounts     string   `json:"n_counts"`
	Capacity    uint64   `json:"capacity"`
	P           float64  `json:"target_p"`
	SetBits     uint64   `json:"set_bits"`
	FillRatio   float64  `json:"fill_ratio"`
	FPR         float64  `json:"estimated_fpr"`
	Cardinality *float64 `json:"estimated_cardinality"`
	Overfull    bool     `json:"overfull"`
}

// What a filter file's n counts, by layout (the bloom package's N).
const (
	nNewBits = "adds that set a new bit"
	nAdds    = "adds minus removes"
)

func newBloomInfoCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "info FILTER",
		Short: "Print a filter's parameters and statistics",
		Long: `info prints a filter file's parameters (m, k, bytes, the capacity n and
rate p it was sized for), n and the statistics of its bits: the fill
ratio, the false-positive rate estimated from it (fill^k for classic) and
the number of distinct keys estimated from it.

n is what the filter counted while keys were added: for classic and sbbf
the adds that set at least one new bit (a duplicate does not count, and
neither does a new key whose bits were all set already, a false positive),
so n is at most the number of distinct keys added; for counting, every add
minus the removes (duplicates included). When the estimated false-positive
rate is over 1.1 p the filter holds more distinct keys than it was sized
for ("overfull"): then n undercounts them, often by far, and the estimate
from the fill is the better figure; once every bit is set the number cannot
be estimated at all (every query answers maybe).`,
		Args: cobra.ExactArgs(1),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			f, err := readFilterFile(args[0])
			if err != nil {
				return err
			}
			st := f.Stats()
			info := filterInfo{
				File: args[0], Layout: layoutName(f), M: st.M, K: st.K, Bytes: st.Bytes, N: st.N, NCounts: nNewBits,
				Capacity: st.Capacity, P: st.P, SetBits: st.SetBits, FillRatio: st.FillRatio,
				FPR: st.FPR, Overfull: st.P > 0 && st.FPR > overfullSlack*st.P,
			}
			if info.Layout == "counting" {
				info.NCounts = nAdds
			}
			if !math.IsInf(st.Cardinality, 0) {
				info.Cardinality = &st.Cardinality
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
			card := "unknown (every bit is set)"
			if info.Cardinality != nil {
				card = fmt.Sprintf("%.0f", *info.Cardinality)
			}
			fmt.Fprintf(tw, "file\t%s\nlayout\t%s\nm (%s)\t%d\nk (hashes)\t%d\nbytes\t%d\nn (%s)\t%d\ncapacity\t%d\ntarget p\t%g\nset bits\t%d\nfill ratio\t%.6f\nestimated fpr\t%.6g\nestimated cardinality\t%s\n",
				info.File, info.Layout, unit, info.M, info.K, info.Bytes, info.NCounts, info.N, info.Capacity, info.P,
				info.SetBits, info.FillRatio, info.FPR, card)
			if info.Overfull {
				how := "n undercounts the distinct keys added (a key whose bits were all set already is not counted); " +
					"the estimated cardinality, from the fill, is the better figure"
				if info.Layout == "counting" {
					how = "n counts every add, duplicates included; the estimated cardinality is from the fill"
				}
				if info.Cardinality == nil {
					how = "every bit is set: how many keys were added cannot be estimated, and every query answers maybe"
				}
				fmt.Fprintf(tw, "overfull\tyes: the estimated fpr is over 1.1 × target p: the filter holds more distinct keys than capacity; %s\n", how)
			}
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

// errOverfull marks a build whose input overfilled the filter (exit 4
// with --strict).
var errOverfull = errors.New("more distinct keys than -n allows")

// overfullSlack is how far over the target p the estimated rate may be
// before build calls the filter overfull: the fill of exactly n distinct
// keys gives about p (within a few per cent for k rounded to an integer
// and the fill's own spread).
const overfullSlack = 1.1

// overfull reports (errOverfull) whether a build of lines keys into a
// filter sized for n at p holds more distinct keys than n allows: more
// lines than n (duplicates are not distinct, so fewer lines never are)
// and an estimated false-positive rate, from the fill, over
// overfullSlack·p. It names the fill and the estimated rate.
func overfull(lines, n uint64, p float64, st bloom.Stats) error {
	if lines <= n || st.FPR <= overfullSlack*p {
		return nil
	}
	return fmt.Errorf("%w: read %d keys into a filter for -n %d at -p %g: fill=%.4f estimated fpr=%.6g (target %g); "+
		"rebuild with a larger -n", errOverfull, lines, n, p, st.FillRatio, st.FPR, p)
}

// writeFileAtomic writes w to a temporary file in name's folder, fsyncs it
// and renames it over name. The file gets mode 0666 minus the umask (0644
// by default), as a file the shell creates.
func writeFileAtomic(name string, w io.WriterTo) error {
	tmp, err := createTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp")
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

// createTemp creates a new file dir/prefix<random> with mode 0666 minus
// the umask (os.CreateTemp's files are 0600 whatever the umask).
func createTemp(dir, prefix string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("creating a temporary file in %s: too many name collisions", dir)
}

// bloomRaw is package bloom's bulk-build hooks (internal/bloomraw).
var bloomRaw = bloomraw.Get[bloomraw.Hooks[bloom.Filter, bloom.SBBF, bloom.Scalable, bloom.Stable, bloom.ScalableConfig]]()
