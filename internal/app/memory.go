package app

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// DefaultMaxMemory is the default of maxmemory: a quarter of the memory
// available to the process, or 0 (no limit) where that cannot be read.
//
// A quarter, not more: maxmemory counts the key space's data (used_memory),
// Go's garbage collector lets the heap reach about twice the live data
// before it collects (GOGC=100), and a snapshot copies each value written
// while it runs (copy-on-write). Under write load during snapshots the
// process was measured at about 4× used_memory.
func DefaultMaxMemory() uint64 { return availableMemory() / 4 }

// GoMemoryLimit is the soft limit handed to the Go runtime
// (debug.SetMemoryLimit) unless GOMEMLIMIT is set: three quarters of the
// available memory, so the collector works harder before the kernel's OOM
// killer would act. 0 when the available memory cannot be read.
func GoMemoryLimit() uint64 { return availableMemory() / 4 * 3 }

// availableMemory is the smallest of the cgroup limit (v2 memory.max, v1
// memory.limit_in_bytes) and the machine's MemTotal (/proc/meminfo), in
// bytes; 0 when neither can be read.
func availableMemory() uint64 {
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
	sc := bufio.NewScanner(f)
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
