package bloom_test

import (
	"strings"
	"testing"

	"github.com/probly/probly/bloom"
	"github.com/probly/probly/internal/binfmt/binfmttest"
)

// TestFormatFixtures: the files under testdata/format, written by the code
// of commit ae2a351 (testdata/format/README.md), decode and re-encode byte
// for byte through every encoding entry point.
func TestFormatFixtures(t *testing.T) {
	binfmttest.CheckFixtures(t, "testdata/format", func(name string) binfmttest.Codec {
		switch {
		case strings.HasPrefix(name, "classic-"):
			return new(bloom.Filter)
		case strings.HasPrefix(name, "scalable-"):
			return new(bloom.Scalable)
		case strings.HasPrefix(name, "counting-"):
			return new(bloom.Counting)
		case strings.HasPrefix(name, "stable-"):
			return new(bloom.Stable)
		case strings.HasPrefix(name, "sbbf-"):
			return new(bloom.SBBF)
		}
		return nil
	})
}
