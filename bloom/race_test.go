//go:build race

package bloom

// raceEnabled is true under the race detector, which makes each atomic
// operation about a hundred times slower; statistical tests then use fewer
// probes and key families (never fewer than 100/p probes).
const raceEnabled = true
