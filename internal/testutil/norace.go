//go:build !race

package testutil

// Race is true when the test binary was built with -race (see race.go).
const Race = false
