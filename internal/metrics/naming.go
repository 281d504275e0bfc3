package metrics

import (
	"errors"
	"fmt"
	"strings"
)

// CheckName reports whether one exported metric family follows probly's
// naming rule (Prometheus's conventions), documented in
// docs/OPERATIONS.md ("Metrics and health"); the tests apply it to every
// probly_ metric the server exports:
//
//   - the name starts with "probly_" and the help text is not empty;
//   - a counter ends in "_total", and no other type does;
//   - a histogram or summary measures durations: it ends in "_seconds";
//   - a quantity with a unit carries its base unit as the last suffix
//     (before "_total" for counters): "_seconds" (durations and Unix
//     timestamps), "_bytes" (sizes) or "_ratio" (fractions in [0, 1]);
//   - a unitless count or state (keys, clients, items, sub-filters,
//     sequence numbers, 0/1 flags) carries none of those suffixes, and its
//     name holds no word that implies a unit (duration, time, size,
//     memory, fill, fpr …): such a name must end in the unit instead;
//   - no other unit suffix is used (milliseconds, kilobytes, percent …).
//
// typ is the family's type as in the text format's TYPE line: counter,
// gauge, histogram, summary or untyped.
func CheckName(name, typ, help string) error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, a...)...))
	}
	if !strings.HasPrefix(name, namespace+"_") {
		bad("not in the %s_ namespace", namespace)
	}
	if strings.TrimSpace(help) == "" {
		bad("no help text")
	}
	base := name
	switch typ {
	case "counter":
		var ok bool
		if base, ok = strings.CutSuffix(name, "_total"); !ok {
			bad("counter without the _total suffix")
		}
	case "gauge", "histogram", "summary", "untyped":
		if strings.HasSuffix(name, "_total") {
			bad("%s with the _total suffix of counters", typ)
		}
	default:
		bad("unknown type %q", typ)
	}
	unit := ""
	for _, u := range []string{"_seconds", "_bytes", "_ratio"} {
		if strings.HasSuffix(base, u) {
			unit = u
		}
	}
	if (typ == "histogram" || typ == "summary") && unit != "_seconds" {
		bad("%s without the _seconds suffix", typ)
	}
	words := strings.Split(strings.TrimPrefix(base, namespace+"_"), "_")
	for _, w := range words {
		switch w {
		case "ms", "millis", "milliseconds", "us", "microseconds", "ns", "nanoseconds", "minutes", "hours", "days",
			"kb", "kib", "mb", "mib", "gb", "gib", "kilobytes", "megabytes", "bits", "percent", "percentage":
			bad("unit %q is not a base unit (_seconds, _bytes, _ratio)", w)
		}
	}
	if unit == "" {
		for _, w := range words {
			switch w {
			case "duration", "latency", "time", "timestamp", "age", "elapsed", "stall",
				"size", "memory", "bytes", "fill", "fpr", "ratio", "rate", "seconds":
				bad("%q implies a unit, but the name does not end in _seconds, _bytes or _ratio", w)
			}
		}
	}
	return errors.Join(errs...)
}
