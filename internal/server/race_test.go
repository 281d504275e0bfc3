//go:build race

package server

// raceEnabled: the race detector multiplies memory use, so RSS bounds are
// not asserted.
const raceEnabled = true
