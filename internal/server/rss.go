package server

import (
	"bytes"
	"os"
	"strconv"
)

// processRSS returns the process's resident set size in bytes, read from
// /proc/self/statm (the second field, in pages), as Redis reports
// used_memory_rss; ok is false where that file cannot be read.
func processRSS() (rss uint64, ok bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseUint(string(f[1]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}
