package bf

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/hashing"
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
	// Within the cap but over maxmemory's room: the same insufficient-
	// memory error (used_memory is not over maxmemory, so Redis's OOM text
	// would be wrong), asked for exactly the filter's memory before
	// anything is allocated.
	if err := e.cfg.Set("bf-max-filter-bytes", strconv.FormatUint(mem, 10)); err != nil {
		t.Fatal(err)
	}
	reply, asked := e.runReserve(false, mem, "BF.RESERVE", "bf", "0.000001", "300000000")
	if reply != commandtest.NoRoomReply || asked != uint64(len("bf"))+mem || e.store.Len() != 0 {
		t.Fatalf("maxmemory room %d: %q, asked %d, %d keys", mem, reply, asked, e.store.Len())
	}
}

// The real allocation (PROBLY_FULL=1): with the default cap on a machine
// with at least 4.6 GB, the 1.1 GB filter is created, BF.INFO answers as
// RedisBloom does, and the process's resident memory grows only by the
// pages BF.ADD touches (the bit array is zeroed lazily by the OS), far
// less than the filter's size.
func TestIssue178Allocate(t *testing.T) {
	testutil.Full(t)
	if !testutil.RunFresh(t) {
		return
	}
	if DefaultFilterBytes < issue178Size+(1<<20) {
		t.Skipf("default cap %d on this machine is below the filter's size", DefaultFilterBytes)
	}
	e := newEnv(t)
	before := testutil.RSS(t)
	e.expect(2, ok, "BF.RESERVE", "bf", "0.000001", "300000000")
	e.expect(2, "*1\r\n:300000000\r\n", "BF.INFO", "bf", "CAPACITY")
	e.expect(2, "*1\r\n:1132420232\r\n", "BF.INFO", "bf", "SIZE")
	// 200 items touch at most 200·20 pages (16 MB; a few times that
	// under the race detector's shadow memory).
	for i := range 200 {
		e.expect(2, ":1\r\n", "BF.ADD", "bf", strconv.Itoa(i))
	}
	for i := range 200 {
		e.expect(2, ":1\r\n", "BF.EXISTS", "bf", strconv.Itoa(i))
	}
	grew := testutil.RSS(t) - before
	t.Logf("RSS grew by %d bytes for a %d-byte filter", grew, issue178Size)
	if grew > issue178Size/4 {
		t.Fatalf("RSS grew by %d bytes: the bit array was touched, not lazily zeroed", grew)
	}
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

// RedisBloom's test_arbitrary_offset: a LOADCHUNK header without FORCE64
// (options 1) whose one link has 1 byte = 8 bits (not a multiple of 64)
// and a full link of 361,296,158,169,105 entries. RedisBloom accepts it;
// BF.ADD then needs a new link it cannot allocate ("problem inserting into
// filter"), and a chunk at an offset past the 1-byte link has no link.
func TestArbitraryOffset(t *testing.T) {
	hdr := "\x11\x18\xf3\xdd\x74\x48\x01\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00" +
		"\x01\x00\x00\x00\x00\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x11\x18\xf3\xdd\x74\x48\x01\x00" +
		"\x9a\x99\x99\x99\x99\x99\xb9\x3f\x9a\x99\x99\x99\x99\x99\xb9\x3f\x01\x00\x00\x00" +
		"\x11\x18\xf3\xdd\x74\x48\x01\x00\x00"
	e := newEnv(t)
	e.expect(2, ok, "BF.LOADCHUNK", "k", "1", hdr)
	e.expect(2, "-ERR problem inserting into filter\r\n", "BF.ADD", "k", "1")
	e.expect(2, "-ERR invalid offset - no link found\r\n", "BF.LOADCHUNK", "k", "71752852194637", "HELLO")
	// What RedisBloom's struct sizes give: 32 + 64·1 + 1 byte.
	e.expect(2, "*1\r\n:97\r\n", "BF.INFO", "k", "SIZE")
	// SCANDUMP gives back the same header and the 1-byte array.
	e.expect(2, "*2\r\n:1\r\n$73\r\n"+hdr+"\r\n", "BF.SCANDUMP", "k", "0")
	e.expect(2, "*2\r\n:2\r\n$1\r\n\x00\r\n", "BF.SCANDUMP", "k", "1")
	e.expect(2, "*2\r\n:0\r\n$0\r\n\r\n", "BF.SCANDUMP", "k", "2")
}

// A legacy (no FORCE64) chain answers BF.EXISTS bit-exactly as RedisBloom:
// the pair is a = MurmurHash2(item, 0x9747b28c), b = MurmurHash2(item, a),
// the position (a + i·b) mod bits. The 1-byte link of test_arbitrary_offset
// with 1 hash has one bit per item: setting exactly bit x makes exactly the
// items with a mod 8 = x present.
func TestLegacyHashPositions(t *testing.T) {
	hdr := []byte("\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00" +
		"\x01\x00\x00\x00\x00\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x9a\x99\x99\x99\x99\x99\xb9\x3f\x9a\x99\x99\x99\x99\x99\xb9\x3f\x01\x00\x00\x00" +
		"\x64\x00\x00\x00\x00\x00\x00\x00\x00") // size 0, entries 100
	e := newEnv(t)
	e.expect(2, ok, "BF.LOADCHUNK", "k", "1", string(hdr))
	e.expect(2, ok, "BF.LOADCHUNK", "k", "2", "\x20") // bit 5
	present := 0
	for i := range 64 {
		item := "item" + strconv.Itoa(i)
		want := ":0\r\n"
		if hashing.Murmur2([]byte(item), 0x9747b28c)%8 == 5 {
			want = ":1\r\n"
			present++
		}
		e.expect(2, want, "BF.EXISTS", "k", item)
	}
	if present == 0 || present == 64 {
		t.Fatalf("%d of 64 items present: the test distinguishes nothing", present)
	}
	// BF.ADD sets the item's bit and counts it.
	e.expect(2, ":1\r\n", "BF.ADD", "k", "new")
	bit := hashing.Murmur2([]byte("new"), 0x9747b28c) % 8
	if bit != 5 {
		e.expect(2, "*2\r\n:2\r\n$1\r\n"+string([]byte{0x20 | 1<<bit})+"\r\n", "BF.SCANDUMP", "k", "1")
	}
	e.expect(2, "*1\r\n:1\r\n", "BF.INFO", "k", "ITEMS")
}

// A chain loaded without NOROUND (options 0: RedisBloom's oldest filters,
// power-of-two links, 32-bit hashes) grows as SBChain_Add does under those
// options: the new link for 5·2 entries at 0.0025 is bloom_init's
// power-of-two link (bits 2^7 = 128, 9 hashes, entries rounded up to 10),
// and the item's bits are (a + i·b) mod 2^7 with the MurmurHash2 pair.
// Expected sizes are bloom_init's formulas evaluated with glibc's log.
func TestLegacyPowerOfTwoGrowth(t *testing.T) {
	hdr := "\x05\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00" +
		"\x08\x00\x00\x00\x00\x00\x00\x00@\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00" +
		"{\x14\xaeG\xe1zt?\xe9\x86/\xb25\x0e&@\x08\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x06"
	e := newEnv(t)
	e.expect(2, ok, "BF.LOADCHUNK", "k", "1", hdr)
	e.expect(2, ":1\r\n", "BF.ADD", "k", "x")
	e.expect(2, "*3\r\n$6\r\nsize:6\r\n"+
		"$67\r\nbytes:8 bits:64 hashes:8 hashwidth:64 capacity:5 size:5 ratio:0.005\r\n"+
		"$71\r\nbytes:16 bits:128 hashes:9 hashwidth:64 capacity:10 size:1 ratio:0.0025\r\n", "BF.DEBUG", "k")
	a := uint64(hashing.Murmur2([]byte("x"), 0x9747b28c))
	b := uint64(hashing.Murmur2([]byte("x"), uint32(a)))
	want := make([]byte, 16)
	for i := range uint64(9) {
		x := (a + i*b) % 128
		want[x/8] |= 1 << (x % 8)
	}
	e.expect(2, "*2\r\n:25\r\n$16\r\n"+string(want)+"\r\n", "BF.SCANDUMP", "k", "9")
	e.expect(2, ":1\r\n", "BF.EXISTS", "k", "x")
}

// A scaling header with expansion 0 loads (RedisBloom's integrity checks
// do not look at growth); a full last link then needs an entries·0 link,
// which bloom_init refuses: "problem inserting into filter".
func TestLoadChunkScalingGrowthZero(t *testing.T) {
	le := binary.LittleEndian
	h := le.AppendUint64(nil, 1)
	h = le.AppendUint32(h, 1)
	h = le.AppendUint32(h, redisbloom.OptNoRound|redisbloom.OptForce64)
	h = le.AppendUint32(h, 0) // growth 0, scaling
	_, bits, bytes, k, err := redisbloom.LinkSize(1, 0.005)
	if err != nil {
		t.Fatal(err)
	}
	h = le.AppendUint64(h, bytes)
	h = le.AppendUint64(h, bits)
	h = le.AppendUint64(h, 1) // full: size 1 of 1 entry
	h = le.AppendUint64(h, math.Float64bits(0.005))
	h = le.AppendUint64(h, math.Float64bits(redisbloom.BPE(0.005)))
	h = le.AppendUint32(h, k)
	h = le.AppendUint64(h, 1)
	h = append(h, 0)
	e := newEnv(t)
	e.expect(2, ok, "BF.LOADCHUNK", "g0", "1", string(h))
	e.expect(2, "*1\r\n:0\r\n", "BF.INFO", "g0", "EXPANSION")
	e.expect(2, "-ERR problem inserting into filter\r\n", "BF.ADD", "g0", "x")
	e.expect(2, "*1\r\n:1\r\n", "BF.INFO", "g0", "FILTERS")
}

// RedisBloom's test_scandump_invalid_header_alloc: a real header whose
// first link's bytes and bits get top bytes 0x03 and 0x18 (still
// bits = 8·bytes, asking for about 2^57 bytes) is refused with "received
// bad data" whatever the per-filter cap, and nothing is created.
func TestScanDumpInvalidHeaderAlloc(t *testing.T) {
	e := newEnv(t)
	e.expect(2, ok, "BF.RESERVE", "bf", "0.01", "5")
	for i := range 50 {
		e.do(2, "BF.ADD", "bf", "foo"+strconv.Itoa(i))
	}
	reply := e.do(2, "BF.SCANDUMP", "bf", "0")
	i := strings.Index(reply, "\r\n$")
	j := strings.Index(reply[i+3:], "\r\n")
	n, err := strconv.Atoi(reply[i+3 : i+3+j])
	if err != nil {
		t.Fatalf("SCANDUMP reply %q", reply)
	}
	hdr := []byte(reply[i+3+j+2 : i+3+j+2+n])
	hdr[27], hdr[35] = 0x03, 0x18
	if err := e.cfg.Set("bf-max-filter-bytes", strconv.FormatUint(MaxFilterBytes, 10)); err != nil {
		t.Fatal(err)
	}
	e.expect(2, "-ERR received bad data\r\n", "BF.LOADCHUNK", "bf2", "1", string(hdr))
	if e.store.Len() != 1 {
		t.Fatal("refused header created a key")
	}
}
