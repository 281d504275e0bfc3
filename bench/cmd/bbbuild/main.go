// Command bbbuild is the bits-and-blooms/bloom/v3 counterpart of
// `probly bloom build`, for the CLI build-time comparison in
// docs/BENCHMARKS.md. It does the same work the same way: it reads keys one
// per line with a bufio.Scanner (64 KiB initial buffer, 1 MiB maximum line,
// a trailing '\r' dropped), adds each to bloom.NewWithEstimates(n, p), and
// writes the filter with its WriteTo through a 1 MiB bufio.Writer to a
// temporary file that is fsynced and renamed over -o.
//
//	bbbuild -n 4500000 -p 0.01 -o names.bab ../data/names.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/bits-and-blooms/bloom/v3"
)

func main() {
	n := flag.Uint64("n", 0, "expected number of keys")
	p := flag.Float64("p", 0.01, "false-positive rate")
	out := flag.String("o", "", "output file")
	flag.Parse()
	if *n == 0 || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: bbbuild -n N [-p P] -o FILE [INPUT...]")
		os.Exit(2)
	}
	f := bloom.NewWithEstimates(uint(*n), *p)
	inputs := flag.Args()
	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	var lines uint64
	for _, name := range inputs {
		var r io.Reader = os.Stdin
		if name != "-" {
			fh, err := os.Open(name)
			if err != nil {
				fatal(err)
			}
			defer fh.Close()
			r = fh
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
			f.Add(line)
			lines++
		}
		if err := sc.Err(); err != nil {
			fatal(fmt.Errorf("%s: %w", name, err))
		}
	}
	if err := writeFileAtomic(*out, f); err != nil {
		fatal(err)
	}
	fmt.Fprintf(os.Stderr, "read %d keys; m=%d bits k=%d\n", lines, f.Cap(), f.K())
}

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

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bbbuild:", err)
	os.Exit(1)
}
