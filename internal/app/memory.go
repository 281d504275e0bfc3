package app

import "github.com/probly/probly/internal/sysmem"

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

// availableMemory is sysmem.Available: the smallest of the cgroup limit
// and the machine's MemTotal, in bytes; 0 when neither can be read.
func availableMemory() uint64 { return sysmem.Available() }
