package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/probly/probly/bloom"
	"github.com/probly/probly/internal/binfmt"
)

// Layouts that `bloom build --layout` writes and that query, info and merge
// read back (the file's kind byte says which, see binfmt.PeekKind).
const layoutHelp = "classic, sbbf (split-block, Parquet-compatible) or counting (4-bit counters)"

// layoutFilter is a filter file of any layout the bloom commands handle.
type layoutFilter interface {
	Test(key []byte) bool
	Stats() bloom.Stats
	io.WriterTo
}

// manyAdder is what the build loop needs of a filter.
type manyAdder interface {
	AddMany(keys [][]byte) error // always nil for these layouts
}

// newLayoutFilter sizes an empty filter of the named layout for n keys at
// rate p: classic (bloom.New), sbbf (bloom.NewSBBF: block-aware sizing,
// XXH64 seed 0, readable by Parquet) or counting (bloom.NewCounting).
func newLayoutFilter(layout string, n uint64, p float64) (layoutFilter, manyAdder, error) {
	switch layout {
	case "classic":
		f, err := bloom.New(n, p)
		return f, f, err
	case "sbbf":
		f, err := bloom.NewSBBF(n, p)
		return f, f, err
	case "counting":
		f, err := bloom.NewCounting(n, p)
		return f, f, err
	}
	return nil, nil, usagef("bloom build: unknown --layout %q (supported: %s)", layout, layoutHelp)
}

// layoutName returns the --layout name of a filter read from a file.
func layoutName(f layoutFilter) string {
	switch f.(type) {
	case *bloom.SBBF:
		return "sbbf"
	case *bloom.Counting:
		return "counting"
	}
	return "classic"
}

// readFilterFile reads a filter file of any handled layout, detected from
// its header.
func readFilterFile(name string) (layoutFilter, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	r := bufio.NewReaderSize(fh, 1<<20)
	hdr, _ := r.Peek(6)
	kind, err := binfmt.PeekKind(hdr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var f interface {
		layoutFilter
		io.ReaderFrom
	}
	switch kind {
	case binfmt.KindClassic:
		f = new(bloom.Filter)
	case binfmt.KindSBBF:
		f = new(bloom.SBBF)
	case binfmt.KindCounting:
		f = new(bloom.Counting)
	default:
		return nil, fmt.Errorf("%s: holds a %v filter; the bloom commands handle %s", name, kind, layoutHelp)
	}
	if _, err := f.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

// mergeInto sets acc to the union (or intersection) of acc and g, which
// must have the same layout: classic and sbbf OR (AND) their bits, counting
// adds counters, saturating (takes the minimum).
func mergeInto(acc, g layoutFilter, intersect bool) error {
	switch a := acc.(type) {
	case *bloom.Filter:
		if b, ok := g.(*bloom.Filter); ok {
			if intersect {
				return a.Intersect(b)
			}
			return a.Merge(b)
		}
	case *bloom.SBBF:
		if b, ok := g.(*bloom.SBBF); ok {
			if intersect {
				return a.Intersect(b)
			}
			return a.Merge(b)
		}
	case *bloom.Counting:
		if b, ok := g.(*bloom.Counting); ok {
			if intersect {
				return a.Intersect(b)
			}
			return a.Merge(b)
		}
	}
	return fmt.Errorf("%w: layout %s != layout %s (only filters of the same layout merge)",
		bloom.ErrIncompatible, layoutName(acc), layoutName(g))
}
