package cf

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/probly/probly/internal/rediscuckoo"
	"github.com/probly/probly/internal/testutil"
)

// header2p32 is a CF.SCANDUMP header of one sub-filter of 2^32 buckets of
// size 1 (4 GiB of slots), 20 iterations, expansion 1.
func header2p32() string {
	le := binary.LittleEndian
	b := le.AppendUint64(nil, 0)
	b = le.AppendUint64(b, 1<<32)
	b = le.AppendUint64(b, 0)
	b = le.AppendUint64(b, 1)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, 20)
	return string(le.AppendUint16(b, 1))
}

// The header is judged by the budget alone: at the old maximum of
// cf-max-filter-bytes (2^32 − 1) it cannot fit and is refused with
// RedisBloom's error, creating nothing; the setting now accepts larger
// values (up to the machine's memory).
func TestLoadChunk2p32BucketsRule(t *testing.T) {
	e := newEnv(t)
	e.set("cf-max-filter-bytes", "4294967295")
	e.expect(2, errReply("Couldn't create filter!"), "CF.LOADCHUNK", "k", "1", header2p32())
	if e.store.Len() != 0 {
		t.Fatal("refused header left a key")
	}
	n, ok := rediscuckoo.HeaderMemoryUsage([]byte(header2p32()), 32, rediscuckoo.MaxBudget)
	if !ok {
		if rediscuckoo.MaxBudget < 1<<32+(1<<20) {
			t.Skipf("this machine's memory (%d) cannot hold the filter", rediscuckoo.MaxBudget)
		}
		t.Fatal("header refused at the largest budget")
	}
	if err := e.cfg.Set("cf-max-filter-bytes", strconv.FormatUint(n, 10)); err != nil {
		t.Fatalf("cf-max-filter-bytes %d refused: %v", n, err)
	}
}

// The real load (PROBLY_FULL=1): with a budget that holds it, the 4 GiB
// filter loads, answers CF.INFO and CF.ADD/EXISTS, and resident memory
// grows only by the pages touched.
func TestLoadChunk2p32BucketsAllocate(t *testing.T) {
	testutil.Full(t)
	if !testutil.RunFresh(t) {
		return
	}
	n, ok := rediscuckoo.HeaderMemoryUsage([]byte(header2p32()), 32, rediscuckoo.MaxBudget)
	if !ok || n > rediscuckoo.MaxBudget/2 {
		t.Skip("this machine's memory is too small for a 4 GiB filter")
	}
	e := newEnv(t)
	e.set("cf-max-filter-bytes", strconv.FormatUint(n, 10))
	before := testutil.RSS(t)
	e.expect(2, "+OK\r\n", "CF.LOADCHUNK", "k", "1", header2p32())
	e.expect(2, ":1\r\n", "CF.ADD", "k", "x")
	e.expect(2, ":1\r\n", "CF.EXISTS", "k", "x")
	if got := e.do(2, "CF.INFO", "k"); !strings.Contains(got, ":4294967296\r\n") {
		t.Fatalf("CF.INFO = %q", got)
	}
	grew := testutil.RSS(t) - before
	t.Logf("RSS grew by %d bytes for a 4 GiB filter", grew)
	if grew > 1<<30 {
		t.Fatalf("RSS grew by %d bytes: the table was touched", grew)
	}
}
