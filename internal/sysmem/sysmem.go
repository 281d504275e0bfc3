// Package sysmem reads how much memory the process may use: the smallest
// of the cgroup limit (v2 memory.max, v1 memory.limit_in_bytes) and the
// machine's MemTotal (/proc/meminfo). The server derives its memory
// defaults from it (maxmemory, the Go soft limit, the per-filter caps).
package sysmem

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Available returns the memory available to the process in bytes: the
// smallest of the cgroup limit and MemTotal, or 0 when neither can be
// read (not Linux, /proc not mounted). The files are read once, on the
// first call; later calls return that value. Safe for concurrent use.
var Available = sync.OnceValue(available)

func available() uint64 {
	avail := memTotal()
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if n := readLimit(p); n > 0 && (avail == 0 || n < avail) {
			avail = n
		}
	}
	return avail
}

// memTotal reads MemTotal from /proc/meminfo in bytes (0 if unavailable).
func memTotal() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	return parseMemTotal(f)
}

// parseMemTotal returns the MemTotal line of a meminfo file in bytes, 0 if
// it is missing or malformed.
func parseMemTotal(r io.Reader) uint64 {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("MemTotal:")) {
			continue
		}
		fields := strings.Fields(string(line[len("MemTotal:"):]))
		if len(fields) == 2 && fields[1] == "kB" {
			if n, err := strconv.ParseUint(fields[0], 10, 64); err == nil && n < 1<<53 {
				return n << 10
			}
		}
		return 0
	}
	return 0
}

// readLimit reads a cgroup memory limit file: a byte count, or "max" /
// a huge value meaning none (0).
func readLimit(path string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n >= 1<<62 {
		return 0
	}
	return n
}

// FilterShare is the fraction of Available that a single Bloom or cuckoo
// filter may take by default (bf-max-filter-bytes, cf-max-filter-bytes):
// one quarter, the same share maxmemory defaults to, so that with default
// settings one filter may fill the whole memory limit and no more.
const FilterShare = 4

// FilterCap returns the default per-filter byte cap for a process with
// avail bytes of memory (Available): avail/FilterShare, but never below
// floor, which is also the answer when avail is 0 (unknown).
func FilterCap(avail, floor uint64) uint64 { return max(avail/FilterShare, floor) }
