package sysmem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseMemTotal(t *testing.T) {
	for in, want := range map[string]uint64{
		"MemFree: 1 kB\nMemTotal:       24683568 kB\n": 24683568 << 10,
		"MemTotal: 12 MB\n":                            0,
		"MemTotal: x kB\n":                             0,
		"MemFree: 1 kB\n":                              0,
	} {
		if got := parseMemTotal(strings.NewReader(in)); got != want {
			t.Errorf("parseMemTotal(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestReadLimit(t *testing.T) {
	dir := t.TempDir()
	for in, want := range map[string]uint64{"max\n": 0, "1073741824\n": 1 << 30, "9223372036854771712\n": 0, "": 0} {
		p := filepath.Join(dir, "limit")
		if err := os.WriteFile(p, []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := readLimit(p); got != want {
			t.Errorf("readLimit(%q) = %d, want %d", in, got, want)
		}
	}
	if got := readLimit(filepath.Join(dir, "missing")); got != 0 {
		t.Errorf("missing file: %d", got)
	}
}

// The per-filter cap is a quarter of the memory, never below the floor.
func TestFilterCap(t *testing.T) {
	const floor = 128 << 20
	for _, c := range []struct{ avail, want uint64 }{
		{0, floor},                   // unknown memory: the floor
		{256 << 20, floor},           // a quarter would be below the floor
		{8 << 30, 2 << 30},           // 8 GiB machine: 2 GiB per filter
		{24683568 << 10, 6318993408}, // this CI machine's MemTotal
	} {
		if got := FilterCap(c.avail, floor); got != c.want {
			t.Errorf("FilterCap(%d) = %d, want %d", c.avail, got, c.want)
		}
	}
}

func TestAvailableReadsThisMachine(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo")
	}
	if Available() == 0 {
		t.Fatal("Available() = 0 with /proc/meminfo present")
	}
}
