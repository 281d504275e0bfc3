//go:build !race

package follow_test

const raceEnabled = false
