//go:build !race

package tdigest

const raceEnabled = false
