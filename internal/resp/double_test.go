package resp

import (
	"math"
	"strconv"
	"testing"
)

// The spellings are the ones redis-sketches.md ("Double replies") gives for
// Redis 8's d2string, plus the boundaries of each of its three forms.
func TestAppendDoubleRedis8(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{math.NaN(), "nan"}, {math.Inf(1), "inf"}, {math.Inf(-1), "-inf"},
		{0, "0"}, {math.Copysign(0, -1), "-0"},
		{5, "5"}, {-3, "-3"}, {100, "100"}, {1 << 62, "4611686018427387904"},
		{0.9, "0.9"}, {0.00001, "0.00001"}, {0.03333333333333333, "0.03333333333333333"},
		{1234.5678901234567, "1234.5678901234567"}, {1.5, "1.5"}, {-2.25, "-2.25"},
		{1.2345678901234567e+4, "1.2345678901234567e+4"},
		{123456789012345690000000, "123456789012345690000000"},
		{1e-7, "1e-7"}, {1.5e-7, "1.5e-7"}, {1e21, "1e+21"}, {-1e21, "-1e+21"},
		{0.000001, "0.000001"}, {1e-300, "1e-300"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
		{1 << 63, "9223372036854776000"}, {4.611686018427388e18 * 4, "18446744073709552000"},
	} {
		got := string(AppendDouble(nil, c.f))
		if got != c.want {
			t.Errorf("AppendDouble(%v) = %q, want %q", c.f, got, c.want)
		}
		if !math.IsNaN(c.f) {
			back, err := strconv.ParseFloat(got, 64)
			if err != nil || back != c.f {
				t.Errorf("%q parses to %v, %v; want %v", got, back, err, c.f)
			}
		}
	}
}

func TestAppendDoubleRoundTrips(t *testing.T) {
	x := uint64(0x9E3779B97F4A7C15)
	for i := 0; i < 200000; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		f := math.Float64frombits(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := string(AppendDouble(nil, f))
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || back != f {
			t.Fatalf("%v spelled %q parses to %v, %v", f, s, back, err)
		}
	}
}
