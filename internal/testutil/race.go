//go:build race

package testutil

// Race is true when the test binary was built with -race. Acceptance tests
// whose full size takes minutes without the race detector use it to keep
// their full form for the runs without -race (.ci/run runs them there).
const Race = true
