//go:build !race

package rediscuckoo

const raceEnabled = false
