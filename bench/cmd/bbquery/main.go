// Command bbquery counts how many keys (one per line on stdin, a trailing
// '\r' dropped) a bits-and-blooms/bloom/v3 filter file written by bbbuild
// reports as maybe present; the counterpart of `probly bloom query --count`.
//
//	seq -f 'zz-not-a-package-%.0f' 1 1000000 | bbquery names.bab
package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/bits-and-blooms/bloom/v3"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: bbquery FILTER < keys")
		os.Exit(2)
	}
	fh, err := os.Open(os.Args[1])
	if err != nil {
		fatal(err)
	}
	var f bloom.BloomFilter
	if _, err := f.ReadFrom(bufio.NewReaderSize(fh, 1<<20)); err != nil {
		fatal(err)
	}
	fh.Close()
	var total, maybe uint64
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		total++
		if f.Test(line) {
			maybe++
		}
	}
	if err := sc.Err(); err != nil {
		fatal(err)
	}
	rate := 0.0
	if total > 0 {
		rate = float64(maybe) / float64(total)
	}
	fmt.Printf("keys\t%d\nmaybe\t%d\nno\t%d\nmaybe_ratio\t%.6g\n", total, maybe, total-maybe, rate)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bbquery:", err)
	os.Exit(1)
}
