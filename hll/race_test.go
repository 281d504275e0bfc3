//go:build race

package hll

// The race detector slows the statistical tests ~10× without adding
// anything (they are single-goroutine): they run their -short sizes.
const raceEnabled = true
