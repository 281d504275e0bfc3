//go:build race

package cuckoo

// raceEnabled is true under the race detector, which slows memory accesses
// down several times; statistical tests then use fewer probes (never fewer
// than 100/p).
const raceEnabled = true
