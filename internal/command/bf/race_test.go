//go:build race

package bf

const raceEnabled = true
