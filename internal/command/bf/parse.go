package bf

import "strconv"

// formatFloat prints f so that parsing it back gives exactly f (used for
// error rates in canonical AOF records).
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
