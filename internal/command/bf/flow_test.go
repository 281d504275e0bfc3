package bf

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"testing"

	"github.com/probly/probly/internal/redisbloom"
	"github.com/probly/probly/internal/sysmem"
	"github.com/probly/probly/internal/testutil"
)

// RedisBloom's test_issue178 (tests/flow/test_overall.py):
// BF.RESERVE bf 0.000001 300000000 is created where the memory exists,
// and BF.INFO shows Capacity 300000000, Size 1132420232.
const (
	issue178Capacity = 300000000
	issue178Size     = 1132420232
)

// The cap arithmetic, without allocating: the filter's memory fits the
// per-filter cap of any machine with 8 GiB (a quarter is 2 GiB), its BF.INFO
// Size is RedisBloom's, and a cap below its memory refuses it with
// RedisBloom's insufficient-memory error.
func TestIssue178Sizing(t *testing.T) {
	p := redisbloom.Params{ErrorRate: 0.000001, Capacity: issue178Capacity, Expansion: 2}
	_, _, bytes, _, err := redisbloom.LinkSize(issue178Capacity, 0.000001*0.5)
	if err != nil {
		t.Fatal(err)
	}
	if size := 32 + 64 + bytes; size != issue178Size {
		t.Fatalf("BF.INFO Size would be %d, RedisBloom says %d", size, issue178Size)
	}
	capOf8GiB := sysmem.FilterCap(8<<30, redisbloom.DefaultBudget)
	mem, ok := redisbloom.NewMemoryUsage(p, capOf8GiB)
	if !ok || mem < bytes {
		t.Fatalf("NewMemoryUsage under a %d cap = %d, %v", capOf8GiB, mem, ok)
	}
	if _, ok := redisbloom.NewMemoryUsage(p, mem-1); ok {
		t.Fatalf("a cap of %d admitted a filter of %d", mem-1, mem)
	}
	e := newEnv(t)
	if err := e.cfg.Set("bf-max-filter-bytes", strconv.FormatUint(mem-1, 10)); err != nil {
		t.Fatal(err)
	}
	e.expect(2, "-ERR Insufficient memory to create filter\r\n", "BF.RESERVE", "bf", "0.000001", "300000000")
	if e.store.Len() != 0 {
		t.Fatal("refused filter left a key")
	}
}

// The real allocation (PROBLY_FULL=1): with the default cap on a machine
// with at least 4.6 GB, the 1.1 GB filter is created, BF.INFO answers as
// RedisBloom does, and the process's resident memory grows only by the
// pages BF.ADD touches (the bit array is zeroed lazily by the OS), far
// less than the filter's size.
func TestIssue178Allocate(t *testing.T) {
	testutil.Full(t)
	if DefaultFilterBytes < issue178Size+(1<<20) {
		t.Skipf("default cap %d on this machine is below the filter's size", DefaultFilterBytes)
	}
	e := newEnv(t)
	before := rss(t)
	e.expect(2, ok, "BF.RESERVE", "bf", "0.000001", "300000000")
	e.expect(2, "*1\r\n:300000000\r\n", "BF.INFO", "bf", "CAPACITY")
	e.expect(2, "*1\r\n:1132420232\r\n", "BF.INFO", "bf", "SIZE")
	for i := range 1000 {
		e.expect(2, ":1\r\n", "BF.ADD", "bf", strconv.Itoa(i))
	}
	for i := range 1000 {
		e.expect(2, ":1\r\n", "BF.EXISTS", "bf", strconv.Itoa(i))
	}
	grew := rss(t) - before
	t.Logf("RSS grew by %d bytes for a %d-byte filter", grew, issue178Size)
	if grew > issue178Size/4 {
		t.Fatalf("RSS grew by %d bytes: the bit array was touched, not lazily zeroed", grew)
	}
}

// rss returns the process's resident set size (VmRSS) in bytes.
func rss(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			fields := bytes.Fields(rest)
			n, err := strconv.ParseInt(string(fields[0]), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// Tiny error rates follow RedisBloom's bloom_init exactly, with no floor.
// Expected values are RedisBloom's formulas evaluated with glibc's log:
// bpe = −ln(1e-300·0.5)/0.480453013918201 = 1439.2014516460063, bits =
// ⌊1000·bpe⌋ rounded up to 64, hashes = ⌈0.693147180559945·bpe⌉.
func TestTinyErrorRate(t *testing.T) {
	e := newEnv(t)
	e.expect(2, ok, "BF.RESERVE", "x", "1e-300", "1000")
	e.expect(2, "*2\r\n$6\r\nsize:0\r\n$83\r\nbytes:179904 bits:1439232 hashes:998 hashwidth:64 capacity:1000 size:0 ratio:5e-301\r\n",
		"BF.DEBUG", "x")
	e.expect(2, "*1\r\n:180000\r\n", "BF.INFO", "x", "SIZE") // 32 + 64 + 179904
}

// A scaling filter keeps halving each new link's rate, as SBChain_Add
// does, down to the smallest denormal (4.94066e-324, 1075 hashes, the
// most bloom_init can produce); the next halving is 0, which bloom_init
// refuses, so the add fails with "problem inserting into filter". With
// capacity 1 and expansion 1 that is 78 links (5e-301·2^-77 is the last
// non-zero rate), each of 1 item.
func TestTinyErrorRateScaling(t *testing.T) {
	e := newEnv(t)
	e.expect(2, ok, "BF.RESERVE", "t", "1e-300", "1", "EXPANSION", "1")
	// Add distinct items until the chain refuses to grow. An add may
	// answer 0 (a false positive: with ~1000 probes over ~1500 bits the
	// double-hashing stride often revisits few bits, in RedisBloom too).
	added := 0
	var last string
	for i := 0; i < 10000; i++ {
		last = e.do(2, "BF.ADD", "t", strconv.Itoa(i))
		if last == ":1\r\n" {
			added++
		} else if last != ":0\r\n" {
			break
		}
	}
	if last != "-ERR problem inserting into filter\r\n" {
		t.Fatalf("last BF.ADD = %q after %d items", last, added)
	}
	e.expect(2, "*1\r\n:78\r\n", "BF.INFO", "t", "FILTERS")
	e.expect(2, "*1\r\n:19888\r\n", "BF.INFO", "t", "SIZE")
	e.expect(2, "*1\r\n:"+strconv.Itoa(added)+"\r\n", "BF.INFO", "t", "ITEMS")
	if added != 78 {
		t.Fatalf("%d items added, want one per link", added)
	}
	lines := e.do(2, "BF.DEBUG", "t")
	if want := "bytes:200 bits:1600 hashes:1075 hashwidth:64 capacity:1 size:1 ratio:4.94066e-324\r\n"; !bytes.HasSuffix([]byte(lines), []byte(want)) {
		t.Fatalf("last link: %q", lines[max(0, len(lines)-120):])
	}
}
