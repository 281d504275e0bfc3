package argparse

import (
	"math"
	"strconv"
	"testing"
)

func TestInt(t *testing.T) {
	for s, want := range map[string]int64{
		"0": 0, "1": 1, "-1": -1, "1073741824": 1 << 30,
		"9223372036854775807": math.MaxInt64, "-9223372036854775808": math.MinInt64,
	} {
		if got, ok := Int([]byte(s)); !ok || got != want {
			t.Errorf("Int(%q) = %d, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "-", "+1", "01", "-0", " 1", "1 ", "1.0", "1e3", "9223372036854775808",
		"-9223372036854775809", "99999999999999999999", "123456789012345678901", "0x10"} {
		if got, ok := Int([]byte(s)); ok {
			t.Errorf("Int(%q) accepted: %d", s, got)
		}
	}
}

func TestFloat(t *testing.T) {
	for s, want := range map[string]float64{
		"0.01": 0.01, ".5": 0.5, "5.": 5, "+.25": 0.25, "1e-3": 0.001, "0x1p-3": 0.125, "0x10": 16,
		"inf": math.Inf(1), "-Infinity": math.Inf(-1), "0": 0, "-0.0": 0, "0e5": 0, "4e-320": 4e-320,
	} {
		if got, ok := Float([]byte(s)); !ok || got != want {
			t.Errorf("Float(%q) = %v, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", " 1", "1 ", "abc", "nan", "NaN", "1_0", "1e400", "-1e400", "1e-400", "0x1p-2000", "0.1.2"} {
		if got, ok := Float([]byte(s)); ok {
			t.Errorf("Float(%q) accepted: %v", s, got)
		}
	}
	for _, f := range []float64{0.01, 0.1 + 0.2, 1.0 / 3, 0.25, 5e-324} {
		if got, ok := Float([]byte(strconv.FormatFloat(f, 'g', -1, 64))); !ok || got != f {
			t.Errorf("round trip of %v: %v %v", f, got, ok)
		}
	}
}
