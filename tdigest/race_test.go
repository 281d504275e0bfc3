//go:build race

package tdigest

// The race detector slows the single-goroutine accuracy test ~10×
// without adding anything: it keeps its default size under -race.
const raceEnabled = true
