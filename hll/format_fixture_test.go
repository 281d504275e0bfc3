package hll_test

import (
	"strings"
	"testing"

	"github.com/probly/probly/hll"
	"github.com/probly/probly/internal/binfmt/binfmttest"
)

// TestFormatFixtures: the files under testdata/format, written by the code
// of commit ae2a351 (testdata/format/README.md), decode and re-encode byte
// for byte through every encoding entry point.
func TestFormatFixtures(t *testing.T) {
	binfmttest.CheckFixtures(t, "testdata/format", func(name string) binfmttest.Codec {
		if strings.HasPrefix(name, "hll-") {
			return new(hll.Sketch)
		}
		return nil
	})
}
