package bloom

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"runtime"
	"sync"
	"testing"
)

// parquetVector returns the parquet-testing conformance file: the copy in
// testdata/parquet (so a clean clone works); when the project's shared
// folder is present next to the repository, it must hold the same bytes.
func parquetVector(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/parquet/bloom_filter.xxhash.bin")
	if err != nil {
		t.Fatal(err)
	}
	if shared, err := os.ReadFile("../../shared/testdata/parquet/bloom_filter.xxhash.bin"); err == nil && !bytes.Equal(shared, data) {
		t.Fatal("testdata/parquet copy differs from ../shared/testdata/parquet")
	}
	return data
}

// TestParquetVector checks the expected results of the shared vector's
// README: the header, the XXH64 values and blocks, 4 present, 4 absent and
// 32 bits set; and that the header writer reproduces the file.
func TestParquetVector(t *testing.T) {
	t.Logf("block access: %s", sbbfImpl)
	data := parquetVector(t)
	if len(data) != 1040 {
		t.Fatalf("vector is %d bytes, want 1040", len(data))
	}
	s, rest, err := DecodeParquet(data)
	if err != nil || len(rest) != 0 {
		t.Fatalf("DecodeParquet: %v, %d bytes left", err, len(rest))
	}
	if s.numBlocks() != 32 || s.sizeBytes() != 1024 || s.hashSeed() != 0 {
		t.Fatalf("blocks %d bytes %d", s.numBlocks(), s.sizeBytes())
	}
	table := []struct {
		key     string
		hash    uint64
		block   uint64
		present bool
	}{
		{"hello", 0x26c7827d889f6da3, 4, true},
		{"parquet", 0x3c9d29275c52e429, 7, true},
		{"bloom", 0x50c8fb9e62dbc53c, 10, true},
		{"filter", 0x2a5736cdfcd7a9a1, 5, true},
		{"absent", 0x917bedb7999e409e, 18, false},
		{"", 0xef46db3751d8e999, 29, false},
		{"xyzzy", 0x4c56f6090e82291f, 9, false},
		{"Hello", 0x0a75a91375b27d44, 1, false},
	}
	for _, c := range table {
		if h := hash64String(c.key); h != c.hash || Hash64([]byte(c.key)) != c.hash {
			t.Errorf("XXH64(%q) = %016x, want %016x", c.key, h, c.hash)
		}
		if b := sbbfIndex(c.hash, s.numBlocks()); b != c.block {
			t.Errorf("%q: block %d, want %d", c.key, b, c.block)
		}
		if s.testString(c.key) != c.present || s.Test([]byte(c.key)) != c.present || s.TestHash(c.hash) != c.present {
			t.Errorf("%q: present = %v, want %v", c.key, !c.present, c.present)
		}
		if refTest(data[16:], c.hash) != c.present {
			t.Errorf("%q: reference implementation disagrees with the vector", c.key)
		}
	}
	if st := s.Stats(); st.SetBits != 32 || st.M != 8192 || st.K != 8 {
		t.Errorf("stats %+v, want 32 bits set", st)
	}
	out := s.TestMany([][]byte{[]byte("hello"), []byte("absent"), []byte("filter"), []byte("")}, nil)
	if fmt.Sprint(out) != "[true false true false]" {
		t.Errorf("TestMany %v", out)
	}
	// Writing back gives the same 1040 bytes: header and bitset.
	if enc, err := s.AppendParquet(nil); err != nil || !bytes.Equal(enc, data) {
		t.Fatalf("AppendParquet differs from the vector: %v\n%x\n%x", err, enc[:16], data[:16])
	}
	if !bytes.Equal(s.ParquetBitset(), data[16:]) {
		t.Fatal("ParquetBitset differs")
	}
	g, err := NewSBBFFromParquet(data[16:])
	if err != nil || !g.equal(s) {
		t.Fatalf("NewSBBFFromParquet: %v", err)
	}
	// Adding the four keys again changes nothing.
	for _, k := range []string{"hello", "parquet", "bloom", "filter"} {
		if g.addString(k) {
			t.Errorf("re-adding %q set a new bit", k)
		}
	}
}

// Reference implementation, transcribed from BloomFilter.md with uint32
// lanes, independent of the package's word packing.
var refSalt = [8]uint32{0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31}

func refBlock(bitset []byte, h uint64) []byte {
	n := uint64(len(bitset) / 32)
	i := ((h >> 32) * n) >> 32
	return bitset[32*i : 32*i+32]
}

func refInsert(bitset []byte, h uint64) {
	b := refBlock(bitset, h)
	for i := 0; i < 8; i++ {
		bit := (uint32(h) * refSalt[i]) >> 27
		w := binary.LittleEndian.Uint32(b[4*i:])
		binary.LittleEndian.PutUint32(b[4*i:], w|1<<bit)
	}
}

func refTest(bitset []byte, h uint64) bool {
	b := refBlock(bitset, h)
	for i := 0; i < 8; i++ {
		bit := (uint32(h) * refSalt[i]) >> 27
		if binary.LittleEndian.Uint32(b[4*i:])&(1<<bit) == 0 {
			return false
		}
	}
	return true
}

// TestSBBFMatchesReference builds the same set with the package and with
// the reference transcription of the spec, for block counts that are and
// are not powers of two, and requires identical bitsets and answers.
func TestSBBFMatchesReference(t *testing.T) {
	for _, blocks := range []uint64{1, 3, 32, 1000, 1 << 12} {
		if raceEnabled && blocks > 1000 {
			continue
		}
		s, err := NewSBBFWithConfig(SBBFConfig{Blocks: blocks})
		if err != nil {
			t.Fatal(err)
		}
		ref := make([]byte, 32*blocks)
		n := blocks * 20
		var buf []byte
		for i := uint64(0); i < n; i++ {
			buf = userKey(buf, i)
			s.Add(buf)
			refInsert(ref, Hash64(buf))
		}
		if !bytes.Equal(s.ParquetBitset(), ref) {
			t.Fatalf("blocks=%d: bitset differs from the reference", blocks)
		}
		for i := uint64(0); i < 2*n; i++ {
			buf = prefixKey(buf, i)
			if h := Hash64(buf); s.TestHash(h) != refTest(ref, h) {
				t.Fatalf("blocks=%d: answer for %q differs", blocks, buf)
			}
		}
	}
}

// TestSBBFWriteReadBack: a filter probly writes (Parquet header + bitset,
// and probly's own encoding) is read back, by this package and by the
// reference algorithm, with every key present.
func TestSBBFWriteReadBack(t *testing.T) {
	s := mustSBBF(t, 5000, 0.01)
	var buf []byte
	for i := uint64(0); i < 5000; i++ {
		s.Add(userKey(buf, i))
	}
	pq, err := s.AppendParquet([]byte("prefix"))
	if err != nil {
		t.Fatal(err)
	}
	g, rest, err := DecodeParquet(append(pq[6:], "tail"...))
	if err != nil || string(rest) != "tail" {
		t.Fatalf("DecodeParquet: %v %q", err, rest)
	}
	bitset := pq[len(pq)-int(s.sizeBytes()):]
	for i := uint64(0); i < 5000; i++ {
		buf = userKey(buf, i)
		if !g.Test(buf) || !refTest(bitset, Hash64(buf)) {
			t.Fatalf("key %q lost in the Parquet round trip", buf)
		}
	}
	enc, _ := s.MarshalBinary()
	if !bytes.Equal(enc[sbbfHeaderLen:len(enc)-4], s.ParquetBitset()) {
		t.Fatal("the body of probly's encoding is not the Parquet bitset")
	}
	// A nonzero seed cannot be read by Parquet readers.
	s.setHashSeed(7)
	if _, err := s.AppendParquet(nil); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("seeded AppendParquet: %v", err)
	}
}

func TestDecodeParquetErrors(t *testing.T) {
	good := parquetVector(t)
	hdr := func(b ...byte) []byte { return append(b, make([]byte, 64)...) }
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, io.ErrUnexpectedEOF},
		{"header only", good[:16], io.ErrUnexpectedEOF},
		{"short bitset", good[:1039], io.ErrUnexpectedEOF},
		{"missing fields", hdr(0x15, 0x40, 0x00), ErrFormat},
		{"numBytes 0", hdr(0x15, 0x00, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0), ErrFormat},
		{"numBytes 33", hdr(0x15, 0x42, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0), ErrFormat},
		{"numBytes negative", hdr(0x15, 0x3f, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0), ErrFormat},
		{"algorithm 2", hdr(0x15, 0x40, 0x1c, 0x2c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0), ErrFormat},
		{"hash 2", hdr(0x15, 0x40, 0x1c, 0x1c, 0, 0, 0x1c, 0x2c, 0, 0, 0x1c, 0x1c, 0, 0, 0), ErrFormat},
		{"compression 2", hdr(0x15, 0x40, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x2c, 0, 0, 0), ErrFormat},
		{"empty union", hdr(0x15, 0x40, 0x1c, 0x00, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0), ErrFormat},
		{"two-field union", hdr(0x15, 0x40, 0x1c, 0x1c, 0, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0), ErrFormat},
		{"unknown type", hdr(0x1d), ErrFormat},
		{"huge binary", hdr(0x58, 0xff, 0xff, 0xff, 0xff, 0x0f), io.ErrUnexpectedEOF},
		{"huge list", append([]byte{0x59, 0xf5, 0xff, 0xff, 0xff, 0xff, 0x0f}, 1, 2, 3), io.ErrUnexpectedEOF},
		{"deep nesting", bytes.Repeat([]byte{0x1c}, 40), ErrFormat},
		{"varint overflow", append([]byte{0x15}, bytes.Repeat([]byte{0xff}, 11)...), ErrFormat},
		{"unknown type 15", []byte{0xff, 0, 0}, ErrFormat},
	}
	for _, c := range cases {
		_, _, err := DecodeParquet(c.data)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// Unknown fields are skipped, in any order, with any value type.
	var b []byte
	b = append(b, 0x2c, 0x1c, 0, 0)  // field 2 algorithm
	b = append(b, 0x1c, 0x1c, 0, 0)  // field 3 hash
	b = append(b, 0x1c, 0x1c, 0, 0)  // field 4 compression
	b = append(b, 0x18, 2, 'h', 'i') // field 5 binary "hi"
	b = append(b, 0x11)              // field 6 bool true
	b = append(b, 0x17)              // field 7 double
	b = append(b, make([]byte, 8)...)
	b = append(b, 0x19, 0x25, 2, 4) // field 8 list<i32> [1, 2]
	b = append(b, 0x1b, 1, 0x55, 2, 4)
	b = append(b, 0x05, 0x02, 0x40) // field 1 (long form: zigzag 1) i32 numBytes 32
	b = append(b, 0x00)
	b = append(b, make([]byte, 32)...)
	if s, _, err := DecodeParquet(b); err != nil || s.numBlocks() != 1 {
		t.Fatalf("header with unknown fields: %v", err)
	}
	if _, err := NewSBBFFromParquet(make([]byte, 33)); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("33-byte bitset: %v", err)
	}
}

func mustSBBF(t testing.TB, n uint64, p float64) *SBBF {
	t.Helper()
	s, err := NewSBBF(n, p)
	if err != nil {
		t.Fatalf("NewSBBF(%d, %v): %v", n, p, err)
	}
	return s
}

// naiveSBBFFPR sums the Poisson series term by term from L = 0.
func naiveSBBFFPR(lambda float64) float64 {
	var sum float64
	for l := 0; l < 4000; l++ {
		lg, _ := math.Lgamma(float64(l) + 1)
		p := math.Exp(-lambda + float64(l)*math.Log(lambda) - lg)
		sum += p * math.Pow(1-math.Pow(31.0/32, float64(l)), 8)
	}
	return sum
}

func TestSBBFSizing(t *testing.T) {
	for _, lambda := range []float64{1e-3, 0.5, 5, 24.3, 40, 100, 700} {
		got, want := sbbfFPR(lambda), naiveSBBFFPR(lambda)
		if math.Abs(got-want) > 1e-12*want+1e-300 {
			t.Errorf("λ=%v: FPR %.17g, naive sum %.17g", lambda, got, want)
		}
	}
	for _, c := range []struct {
		n uint64
		p float64
	}{{1, 0.5}, {1000, 0.1}, {1e6, 0.01}, {1e6, 0.001}, {12345, 1e-6}, {1e9, 0.01}} {
		b, err := sbbfSizing(c.n, c.p)
		if err != nil {
			t.Fatalf("sbbfSizing(%d, %v): %v", c.n, c.p, err)
		}
		if sbbfFalsePositiveRate(b, c.n) > c.p || (b > 1 && sbbfFalsePositiveRate(b-1, c.n) <= c.p) {
			t.Errorf("sbbfSizing(%d, %v) = %d blocks is not the smallest meeting p", c.n, c.p, b)
		}
		t.Logf("n=%g p=%g: %d blocks, %.3f bits/key", float64(c.n), c.p, b, 256*float64(b)/float64(c.n))
	}
	// The block-aware rate exceeds the classic one at equal memory.
	if s, c := sbbfFalsePositiveRate(1000, 24000), math.Pow(1-math.Exp(-8*24000.0/256000), 8); s <= c {
		t.Errorf("SBBF rate %v not above the classic %v", s, c)
	}
	for _, p := range []float64{0, 1, -1, math.NaN(), math.Inf(1)} {
		if _, err := sbbfSizing(10, p); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("p=%v: %v", p, err)
		}
	}
	if _, err := sbbfSizing(0, 0.1); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("n=0: %v", err)
	}
	if _, err := sbbfSizing(1e12, 1e-15); !errors.Is(err, ErrTooLarge) {
		t.Errorf("p below what MaxSBBFBlocks reach: %v", err)
	}
	if _, err := NewSBBFWithConfig(SBBFConfig{Blocks: 0}); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("0 blocks: %v", err)
	}
	if _, err := NewSBBFWithConfig(SBBFConfig{Blocks: MaxSBBFBlocks + 1}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too many blocks: %v", err)
	}
	if !math.IsNaN(sbbfFalsePositiveRate(0, 1)) || sbbfFalsePositiveRate(5, 0) != 0 {
		t.Error("sbbfFalsePositiveRate edge cases")
	}
}

func TestSBBFBatchEqualsSingle(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 1000} {
		a, b, c := mustSBBF(t, 2000, 0.01), mustSBBF(t, 2000, 0.01), mustSBBF(t, 2000, 0.01)
		keys := make([][]byte, n)
		hs := make([]uint64, n)
		for i := range keys {
			keys[i] = counterKey(nil, uint64(i%700)) // with repeats
			hs[i] = Hash64(keys[i])
		}
		for _, k := range keys {
			a.Add(k)
		}
		b.AddMany(keys)
		c.addHashMany(hs)
		if !a.equal(b) || !a.equal(c) {
			t.Fatalf("n=%d: AddMany/AddHashMany differ from Add: N %d %d %d", n, a.items(), b.items(), c.items())
		}
		probes := make([][]byte, 2*n+3)
		ph := make([]uint64, len(probes))
		for i := range probes {
			probes[i] = counterKey(nil, uint64(i))
			ph[i] = Hash64(probes[i])
		}
		out := b.TestMany(probes, make([]bool, 5))
		out2 := b.testHashMany(ph, nil)
		if len(out) != len(probes) || len(out2) != len(probes) {
			t.Fatalf("TestMany length %d", len(out))
		}
		for i, k := range probes {
			if out[i] != a.Test(k) || out2[i] != out[i] {
				t.Fatalf("n=%d: TestMany[%d] = %v", n, i, out[i])
			}
		}
	}
}

func TestSBBFNoFalseNegativesAndSeed(t *testing.T) {
	n := uint64(20000)
	if raceEnabled {
		n = 2000
	}
	for _, seed := range []uint64{0, 1, 0xdeadbeef} {
		for _, fam := range keyFamilies {
			s := mustSBBF(t, n, 0.001)
			s.setHashSeed(seed)
			var buf []byte
			for i := uint64(0); i < n; i++ {
				buf = fam.key(buf, i)
				if i%2 == 0 {
					s.Add(buf)
				} else {
					s.addString(string(buf))
				}
			}
			for i := uint64(0); i < n; i++ {
				buf = fam.key(buf, i)
				if !s.Test(buf) || !s.testString(string(buf)) || !was(s.TestAndAdd(buf)) {
					t.Fatalf("seed %d %s: false negative %q", seed, fam.name, buf)
				}
			}
		}
	}
	// The seed changes the hash.
	a, b := mustSBBF(t, 100, 0.01), mustSBBF(t, 100, 0.01)
	b.setHashSeed(99)
	a.addString("x")
	b.addString("x")
	if a.equal(b) {
		t.Error("seed 99 sets the same bits as seed 0")
	}
}

func TestSBBFStats(t *testing.T) {
	s := mustSBBF(t, 100_000, 0.01)
	var buf []byte
	for i := uint64(0); i < 100_000; i++ {
		s.Add(userKey(buf, i))
	}
	st := s.Stats()
	// Brute-force conditional rate and popcount.
	var set uint64
	var fpr float64
	bs := s.ParquetBitset()
	for b := 0; b < len(bs)/32; b++ {
		q := 1.0
		for i := 0; i < 8; i++ {
			c := bits.OnesCount32(binary.LittleEndian.Uint32(bs[32*b+4*i:]))
			set += uint64(c)
			q *= float64(c) / 32
		}
		fpr += q
	}
	fpr /= float64(len(bs) / 32)
	if st.SetBits != set || math.Abs(st.FPR-fpr) > 1e-12 || st.K != 8 || st.M != 256*s.numBlocks() ||
		st.Bytes != 32*s.numBlocks() || st.Capacity != 100_000 || st.P != 0.01 || st.N > 100_000 || st.N < 99_000 {
		t.Fatalf("stats %+v (set %d fpr %v)", st, set, fpr)
	}
	if math.Abs(st.FillRatio-float64(set)/float64(st.M)) > 1e-15 {
		t.Error("fill ratio")
	}
	if math.Abs(st.Cardinality-100_000)/100_000 > 0.02 {
		t.Errorf("estimated cardinality %.0f for 100000 keys", st.Cardinality)
	}
	if e := sbbfFalsePositiveRate(s.numBlocks(), 100_000); math.Abs(st.FPR-e)/e > 0.05 {
		t.Errorf("conditional FPR %v far from the expected %v", st.FPR, e)
	}
	if s.numHashes() != 8 || s.hashKind() != HashXXH64 || HashXXH64.String() != "xxh64" {
		t.Error("K / HashID")
	}
	s.setN(3)
	if s.items() != 3 {
		t.Error("SetN")
	}
	if err := s.setSizing(5, 2); !errors.Is(err, ErrInvalidParameter) {
		t.Error("SetSizing p=2 accepted")
	}
}

func TestSBBFUnionIntersect(t *testing.T) {
	a, b := mustSBBF(t, 1000, 0.01), mustSBBF(t, 1000, 0.01)
	var buf []byte
	for i := uint64(0); i < 600; i++ {
		if i < 400 {
			a.Add(userKey(buf, i))
		}
		if i >= 200 {
			b.Add(userKey(buf, i))
		}
	}
	u, x := a.clone(), a.clone()
	if err := u.Merge(b); err != nil {
		t.Fatal(err)
	}
	if err := x.Intersect(b); err != nil {
		t.Fatal(err)
	}
	for i := uint64(0); i < 600; i++ {
		buf = userKey(buf, i)
		if !u.Test(buf) {
			t.Fatalf("union lost %q", buf)
		}
		if i >= 200 && i < 400 && !x.Test(buf) {
			t.Fatalf("intersection lost %q", buf)
		}
	}
	if u.items() != a.items()+b.items() || x.items() != min(a.items(), b.items()) {
		t.Errorf("N: union %d intersect %d", u.items(), x.items())
	}
	before := u.clone()
	if err := u.Merge(u); err != nil || !u.equal(before) {
		t.Error("self-union changed the filter")
	}
	c := mustSBBF(t, 5000, 0.01)
	if err := a.Merge(c); !errors.Is(err, ErrIncompatible) || !containsAll(err.Error(), fmt.Sprint(a.numBlocks()), fmt.Sprint(c.numBlocks())) {
		t.Errorf("blocks mismatch: %v", err)
	}
	d := a.clone()
	d.setHashSeed(5)
	if err := a.Intersect(d); !errors.Is(err, ErrIncompatible) || !containsAll(err.Error(), "0x5", "0x0") {
		t.Errorf("seed mismatch: %v", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !bytes.Contains([]byte(s), []byte(sub)) {
			return false
		}
	}
	return true
}

// TestSBBFLargerThan2To32Bits uses 2^24 + 1 blocks (2^32 + 256 bits,
// 512 MiB, mostly untouched): the last block starts at bit 2^32.
func TestSBBFLargerThan2To32Bits(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 512 MiB")
	}
	s, err := NewSBBFWithConfig(SBBFConfig{Blocks: 1<<24 + 1})
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GC()
	h := uint64(0xffffffff)<<32 | 0x12345678 // block ((2^32−1)·(2^24+1)) >> 32 = 2^24
	if b := sbbfIndex(h, s.numBlocks()); b != 1<<24 {
		t.Fatalf("block %d", b)
	}
	if s.TestHash(h) || !s.addHash(h) || !s.TestHash(h) {
		t.Fatal("add/test in the last block")
	}
	last := s.bits[len(s.bits)-4:]
	var n int
	for _, w := range last {
		n += bits.OnesCount64(w)
	}
	if n != 8 {
		t.Fatalf("%d bits set in the last block", n)
	}
	for i := 0; i < 1<<20; i += 1 << 10 {
		if s.bits[i] != 0 {
			t.Fatalf("word %d set: index truncated", i)
		}
	}
	var out [1]bool
	if r := s.testHashMany([]uint64{h}, out[:0]); !r[0] {
		t.Fatal("TestHashMany in the last block")
	}
}

func TestSBBFConcurrent(t *testing.T) {
	s := mustSBBF(t, 40000, 0.01)
	const writers, per = 4, 5000
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			keys := make([][]byte, 0, 100)
			for i := uint64(0); i < per; i++ {
				keys = append(keys, userKey(nil, uint64(w)*per+i))
				if len(keys) == cap(keys) {
					s.AddMany(keys)
					keys = keys[:0]
				}
			}
			s.AddMany(keys)
		}()
		go func() {
			defer wg.Done()
			var buf []byte
			for i := uint64(0); i < per; i++ {
				s.Test(userKey(buf, i))
			}
		}()
	}
	wg.Wait()
	var buf []byte
	for i := uint64(0); i < writers*per; i++ {
		if !s.Test(userKey(buf, i)) {
			t.Fatalf("lost %d", i)
		}
	}
	if n := s.items(); n > writers*per || n < writers*per*98/100 {
		t.Errorf("N = %d", n)
	}
}
