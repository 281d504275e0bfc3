//go:build race

package pf_test

// The race detector slows the command path ~10×: the differential runs
// shrink (the full sizes run without -race).
const raceEnabled = true
