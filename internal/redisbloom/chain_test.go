package redisbloom

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"
)

func mustNew(t testing.TB, p Params) *Chain {
	t.Helper()
	c, err := New(p, 0)
	if err != nil {
		t.Fatalf("New(%+v): %v", p, err)
	}
	return c
}

func TestLogCR(t *testing.T) {
	// ln(x) bit patterns from glibc 2.36 (correctly rounded for these),
	// including inputs where Go's math.Log is one ulp off.
	for _, v := range []struct{ x, want float64 }{
		{0.01, -4.605170185988091},
		{0.005, -5.298317366548036},
		{0.001, -6.907755278982137},
		{0.25, -1.3862943611198906},
		{0.5, -0.6931471805599453},
		{2, 0.6931471805599453},
		{1e-300, -690.7755278982137},
		{0.9724753528744159, -0.02791054789870675}, // glibc 2.36 gives …745, one ulp off
	} {
		if got := logCR(v.x); got != v.want {
			t.Errorf("logCR(%v) = %v, want %v", v.x, got, v.want)
		}
	}
	if got := fmt.Sprint(BPE(0.01)); got != "9.585058377367446" {
		t.Errorf("BPE(0.01) = %s, want 9.585058377367446 (glibc)", got)
	}
	if !math.IsInf(logCR(0), -1) || !math.IsNaN(logCR(-1)) || logCR(1) != 0 || !math.IsInf(logCR(math.Inf(1)), 1) {
		t.Error("special values")
	}
	// Sanity against math.Log: at most one ulp apart everywhere.
	for x := 1e-12; x < 1e12; x *= 1.37 {
		a, b := logCR(x), math.Log(x)
		if d := int64(math.Float64bits(a)) - int64(math.Float64bits(b)); d > 1 || d < -1 {
			t.Fatalf("logCR(%v) = %v, math.Log = %v", x, a, b)
		}
	}
}

func TestLinkSize(t *testing.T) {
	for _, v := range []struct {
		entries     uint64
		err         float64
		bits, bytes uint64
		hashes      uint32
	}{
		{10, 0.005, 128, 16, 8},
		{20, 0.0025, 256, 32, 9},
		{40, 0.00125, 576, 72, 10},
		{80, 0.000625, 1280, 160, 11},
		{50000, 0.0005, 791040, 98880, 11},
		{100, 0.005, 1152, 144, 8},
		{1, 0.25, 64, 8, 3}, // truncated ln2 constant gives 3
	} {
		_, bits, bytes, h, err := LinkSize(v.entries, v.err)
		if err != nil || bits != v.bits || bytes != v.bytes || h != v.hashes {
			t.Errorf("LinkSize(%d, %v) = %d/%d/%d, %v; want %d/%d/%d", v.entries, v.err, bits, bytes, h, err, v.bits, v.bytes, v.hashes)
		}
	}
}

func addN(t testing.TB, c *Chain, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := c.Add([]byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWorkedVectorDebug(t *testing.T) {
	c := mustNew(t, Params{ErrorRate: 0.01, Capacity: 10, Expansion: 2})
	addN(t, c, 100)
	want := []string{
		"size:99",
		"bytes:16 bits:128 hashes:8 hashwidth:64 capacity:10 size:10 ratio:0.005",
		"bytes:32 bits:256 hashes:9 hashwidth:64 capacity:20 size:20 ratio:0.0025",
		"bytes:72 bits:576 hashes:10 hashwidth:64 capacity:40 size:40 ratio:0.00125",
		"bytes:160 bits:1280 hashes:11 hashwidth:64 capacity:80 size:29 ratio:0.000625",
	}
	got := c.DebugLines()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("DEBUG:\n got %q\nwant %q", got, want)
	}
	if c.Card() != 99 || c.Capacity() != 150 || c.NumFilters() != 4 {
		t.Fatalf("card %d cap %d nf %d", c.Card(), c.Capacity(), c.NumFilters())
	}
	for i := 0; i < 100; i++ {
		if !c.Exists([]byte(strconv.Itoa(i))) {
			t.Fatalf("false negative %d", i)
		}
	}

	c2 := mustNew(t, Params{ErrorRate: 0.001, Capacity: 50000, Expansion: 2})
	if _, err := c2.Add([]byte("foo")); err != nil {
		t.Fatal(err)
	}
	if got := c2.DebugLines()[1]; got != "bytes:98880 bits:791040 hashes:11 hashwidth:64 capacity:50000 size:1 ratio:0.0005" {
		t.Fatalf("got %q", got)
	}
}

func TestInfoSize(t *testing.T) {
	for _, v := range []struct {
		p    Params
		want uint64
	}{
		{Params{ErrorRate: 0.01, Capacity: 100, Expansion: 2}, 240},
		{Params{ErrorRate: 0.001, Capacity: 100, Expansion: 2}, 296},
		{Params{ErrorRate: 0.01, Capacity: 3, Expansion: 2, NonScaling: true}, 104},
		{Params{ErrorRate: 0.001, Capacity: 2000, Expansion: 2}, 4056},
	} {
		if got := mustNew(t, v.p).InfoSize(); got != v.want {
			t.Errorf("%+v: Size %d, want %d", v.p, got, v.want)
		}
	}
}

func TestFormatG(t *testing.T) {
	for x, want := range map[float64]string{
		0.005: "0.005", 6.25e-05: "6.25e-05", 1.5625e-05: "1.5625e-05", 0.000625: "0.000625",
		0.0001: "0.0001", 1e-300: "1e-300", 0.123456789: "0.123457", 1e6: "1e+06", 100000: "100000",
		0.25: "0.25", 7.8125e-06: "7.8125e-06",
	} {
		if got := FormatG(x); got != want {
			t.Errorf("FormatG(%v) = %q, want %q", x, got, want)
		}
	}
}

func TestNonScalingFull(t *testing.T) {
	c := mustNew(t, Params{ErrorRate: 0.01, Capacity: 2, Expansion: 2, NonScaling: true})
	for _, it := range []string{"a", "b"} {
		if ok, err := c.Add([]byte(it)); !ok || err != nil {
			t.Fatalf("add %s: %v %v", it, ok, err)
		}
	}
	if ok, err := c.Add([]byte("a")); ok || err != nil {
		t.Fatalf("re-add of a present item must be 0 without error: %v %v", ok, err)
	}
	if _, err := c.Add([]byte("c")); err != ErrFull {
		t.Fatalf("got %v, want ErrFull", err)
	}
	if c.DebugLines()[1] != "bytes:8 bits:64 hashes:7 hashwidth:64 capacity:2 size:2 ratio:0.01" {
		t.Fatalf("%q", c.DebugLines())
	}
}

func TestBudget(t *testing.T) {
	// Creation over the budget.
	if _, err := New(Params{ErrorRate: 0.001, Capacity: 1 << 30, Expansion: 2}, 0); err != ErrInsufficientMemory {
		t.Fatalf("huge create: %v", err)
	}
	// Growth over the budget: 1 KiB budget, first link 144 bytes.
	c, err := New(Params{ErrorRate: 0.01, Capacity: 100, Expansion: 2}, 1024)
	if err != nil {
		t.Fatal(err)
	}
	var gerr error
	for i := 0; i < 10000 && gerr == nil; i++ {
		_, gerr = c.Add([]byte(strconv.Itoa(i)))
	}
	if gerr != ErrProblemInserting {
		t.Fatalf("growth: %v", gerr)
	}
	if c.SizeBytes() > 1024 {
		t.Fatalf("size %d over budget", c.SizeBytes())
	}
	if _, err := New(Params{ErrorRate: 0.01, Capacity: 100, Expansion: 0}, 0); err != ErrCouldNotCreate {
		t.Fatalf("scaling with expansion 0: %v", err)
	}
}

func TestScanDumpSequence(t *testing.T) {
	c := mustNew(t, Params{ErrorRate: 0.01, Capacity: 2, Expansion: 2, NonScaling: true})
	c.Add([]byte("x"))
	next, hdr := c.DumpChunk(0)
	if next != 1 || len(hdr) != 73 {
		t.Fatalf("iter 0: %d, %d bytes", next, len(hdr))
	}
	next, data := c.DumpChunk(1)
	if next != 9 || len(data) != 8 {
		t.Fatalf("iter 1: %d, %d bytes", next, len(data))
	}
	if next, data = c.DumpChunk(9); next != 0 || len(data) != 0 {
		t.Fatalf("iter 9: %d, %d bytes", next, len(data))
	}
	if next, data = c.DumpChunk(-5); next != 0 || len(data) != 0 {
		t.Fatalf("iter -5: %d, %d bytes", next, len(data))
	}
	// Header fields.
	le := binary.LittleEndian
	if le.Uint64(hdr) != 1 || le.Uint32(hdr[8:]) != 1 || le.Uint32(hdr[12:]) != 13 || le.Uint32(hdr[16:]) != 2 {
		t.Fatalf("header prefix % x", hdr[:20])
	}
	l := hdr[20:]
	if le.Uint64(l) != 8 || le.Uint64(l[8:]) != 64 || le.Uint64(l[16:]) != 1 ||
		math.Float64frombits(le.Uint64(l[24:])) != 0.01 || math.Float64frombits(le.Uint64(l[32:])) != BPE(0.01) ||
		le.Uint32(l[40:]) != 7 || le.Uint64(l[44:]) != 2 || l[52] != 0 {
		t.Fatalf("link % x", l)
	}
}

// dumpAll returns every SCANDUMP chunk, starting with the header.
func dumpAll(c *Chain) (iters []int64, chunks [][]byte) {
	var iter int64
	for {
		next, data := c.DumpChunk(iter)
		if next == 0 {
			return
		}
		iters = append(iters, next)
		chunks = append(chunks, data)
		iter = next
	}
}

func loadAll(t testing.TB, iters []int64, chunks [][]byte) *Chain {
	t.Helper()
	c, err := DecodeHeader(chunks[0], 0)
	if err != nil {
		t.Fatalf("header: %v", err)
	}
	for i := 1; i < len(chunks); i++ {
		if err := c.LoadChunk(iters[i], chunks[i]); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	return c
}

func TestDumpLoadRoundTrip(t *testing.T) {
	c := mustNew(t, Params{ErrorRate: 0.01, Capacity: 10, Expansion: 2})
	addN(t, c, 300)
	iters, chunks := dumpAll(c)
	if len(chunks) != 1+c.NumFilters() {
		t.Fatalf("%d chunks for %d links (chunks never cross links)", len(chunks), c.NumFilters())
	}
	d := loadAll(t, iters, chunks)
	if !c.Equal(d) {
		t.Fatal("loaded chain differs")
	}
	iters2, chunks2 := dumpAll(d)
	if fmt.Sprint(iters) != fmt.Sprint(iters2) || !bytes.Equal(bytes.Join(chunks, nil), bytes.Join(chunks2, nil)) {
		t.Fatal("re-dump differs")
	}
	for i := 0; i < 300; i++ {
		if !d.Exists([]byte(strconv.Itoa(i))) {
			t.Fatalf("false negative %d after load", i)
		}
	}
	// The loaded chain keeps growing like the original.
	addN(t, c, 1000)
	addN(t, d, 1000)
	if !c.Equal(d) {
		t.Fatal("chains diverge after more adds")
	}

	// A bpe that our sizing would not compute survives load and re-dump.
	hdr := append([]byte(nil), chunks[0]...)
	binary.LittleEndian.PutUint64(hdr[20+32:], math.Float64bits(math.Nextafter(BPE(0.005), 10)))
	e, err := DecodeHeader(hdr, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(e.Header(), hdr) {
		t.Fatal("header with foreign bpe not preserved")
	}
}

func TestLoadChunkErrors(t *testing.T) {
	c := mustNew(t, Params{ErrorRate: 0.01, Capacity: 10, Expansion: 2}) // one 16-byte link
	addN(t, c, 15)                                                       // two links: 16 + 32 bytes
	for _, v := range []struct {
		iter int64
		n    int
		want error
	}{
		{0, 0, ErrBadData},
		{-1, 0, ErrBadData},
		{3, 4, ErrBadData},
		{4, 4, ErrNoLink},          // offset −1
		{1 + 48 + 1, 1, ErrNoLink}, // offset 48 = past the end
		{1 + 10 + 8, 8, ErrChunkTooBig},
		{1 + 16 + 40, 40, ErrChunkTooBig},
		{1 + 16, 16, nil},
		{1 + 16 + 32, 32, nil},
		{1 + 20 + 4, 4, nil},
	} {
		if err := c.LoadChunk(v.iter, make([]byte, v.n)); err != v.want {
			t.Errorf("LoadChunk(%d, %d bytes) = %v, want %v", v.iter, v.n, err, v.want)
		}
	}
}

func validHeader(t testing.TB) []byte {
	c := mustNew(t, Params{ErrorRate: 0.01, Capacity: 10, Expansion: 2})
	addN(t, c, 15)
	return c.Header()
}

func TestHeaderValidation(t *testing.T) {
	base := validHeader(t)
	if _, err := DecodeHeader(base, 0); err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	l0, l1 := 20, 20+53
	mut := map[string]func(b []byte) []byte{
		"short":           func(b []byte) []byte { return b[:len(b)-1] },
		"long":            func(b []byte) []byte { return append(b, 0) },
		"tiny":            func(b []byte) []byte { return b[:19] },
		"nfilters 0":      func(b []byte) []byte { le.PutUint32(b[8:], 0); return b[:20] },
		"nfilters 3":      func(b []byte) []byte { le.PutUint32(b[8:], 3); return b },
		"options 16":      func(b []byte) []byte { le.PutUint32(b[12:], 5|16); return b },
		"error 0":         func(b []byte) []byte { le.PutUint64(b[l0+24:], 0); return b },
		"error 1":         func(b []byte) []byte { le.PutUint64(b[l1+24:], math.Float64bits(1)); return b },
		"error NaN":       func(b []byte) []byte { le.PutUint64(b[l0+24:], math.Float64bits(math.NaN())); return b },
		"n2 64":           func(b []byte) []byte { b[l0+52] = 64; return b },
		"n2 > log bits":   func(b []byte) []byte { b[l0+52] = 8; return b },
		"bits 0":          func(b []byte) []byte { le.PutUint64(b[l0+8:], 0); le.PutUint64(b[l0:], 0); return b },
		"bits != bytes*8": func(b []byte) []byte { le.PutUint64(b[l0+8:], 192); return b },
		"hashes":          func(b []byte) []byte { le.PutUint32(b[l0+40:], 9); return b },
		"bpe NaN":         func(b []byte) []byte { le.PutUint64(b[l0+32:], math.Float64bits(math.NaN())); return b },
		"size sum":        func(b []byte) []byte { le.PutUint64(b[0:], 16); return b },
		"link size":       func(b []byte) []byte { le.PutUint64(b[l1+16:], 6); return b },
		"entries 0":       func(b []byte) []byte { le.PutUint64(b[l0+44:], 0); return b },
		"n2 past bits":    func(b []byte) []byte { b[l0+52] = 8; return b }, // link 0 has 128 bits
		"n2 < bytes":      func(b []byte) []byte { b[l0+52] = 3; return b }, // 2^3 bits in 8 bytes, not 16
		"hashes 1076": func(b []byte) []byte { // BLOOM_MAX_HASHES is 1075
			le.PutUint64(b[l0+32:], math.Float64bits(1075.5/0.693147180559945))
			le.PutUint32(b[l0+40:], 1076)
			return b
		},
		"huge bytes": func(b []byte) []byte {
			b[l0+7] = 0x7f // top byte of bytes, as RedisBloom's tests do
			return b
		},
		"huge bytes+bits": func(b []byte) []byte {
			le.PutUint64(b[l0:], 1<<40)
			le.PutUint64(b[l0+8:], 1<<43)
			return b
		},
		"over budget": func(b []byte) []byte {
			le.PutUint64(b[l1:], (DefaultBudget/8+1)*8)
			le.PutUint64(b[l1+8:], (DefaultBudget/8+1)*64)
			return b
		},
		"bytes overflow": func(b []byte) []byte {
			le.PutUint64(b[l0:], 1<<61)
			le.PutUint64(b[l0+8:], 0)
			return b
		},
	}
	for name, f := range mut {
		b := f(append([]byte(nil), base...))
		if _, err := DecodeHeader(b, 0); err != ErrBadData {
			t.Errorf("%s: got %v, want ErrBadData", name, err)
		}
	}
	// n2 > 0 is accepted when bits == 2^n2 (power-of-two links).
	b := append([]byte(nil), base...)
	b[l0+52] = 7 // link 0 has 128 bits
	if c, err := DecodeHeader(b, 0); err != nil || !bytes.Equal(c.Header(), b) {
		t.Errorf("n2=7 on a 128-bit link: %v", err)
	}
	// Non-scaling with growth 0 is fine.
	b = append([]byte(nil), base...)
	le.PutUint32(b[12:], 13)
	le.PutUint32(b[16:], 0)
	if _, err := DecodeHeader(b, 0); err != nil {
		t.Errorf("non-scaling growth 0: %v", err)
	}
}

func TestHugeHeaderNoAllocation(t *testing.T) {
	b := validHeader(t)
	binary.LittleEndian.PutUint64(b[20:], 1<<37) // 128 GiB
	binary.LittleEndian.PutUint64(b[28:], 1<<40)
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := DecodeHeader(b, 0); err != ErrBadData {
			t.Fatal(err)
		}
	})
	if allocs > 2 {
		t.Fatalf("%v allocations", allocs)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, p := range []Params{
		{ErrorRate: 0.01, Capacity: 10, Expansion: 2},
		{ErrorRate: 0.25, Capacity: 3, Expansion: 7, NonScaling: true},
	} {
		c := mustNew(t, p)
		for i := 0; i < 200; i++ {
			c.Add([]byte(strconv.Itoa(i))) // may hit ErrFull
		}
		b, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		d, err := UnmarshalChain(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Equal(d) {
			t.Fatal("snapshot round trip differs")
		}
		b2, _ := d.MarshalBinary()
		if !bytes.Equal(b, b2) {
			t.Fatal("re-encoding differs")
		}
		// Every single-byte corruption and every truncation is refused.
		for i := range b {
			x := append([]byte(nil), b...)
			x[i] ^= 0x20
			if _, err := UnmarshalChain(x, 0); err == nil {
				t.Fatalf("corruption at %d accepted", i)
			}
		}
		for n := 0; n < len(b); n++ {
			if _, err := UnmarshalChain(b[:n], 0); err == nil {
				t.Fatalf("truncation to %d accepted", n)
			}
		}
	}
}

func TestCloneIndependent(t *testing.T) {
	c := mustNew(t, Params{ErrorRate: 0.01, Capacity: 10, Expansion: 2})
	addN(t, c, 5)
	d := c.Clone().(*Chain)
	addN(t, c, 50)
	if d.Card() != 5 || d.NumFilters() != 1 || c.Equal(d) {
		t.Fatal("clone shares state")
	}
	if c.TypeName() != "MBbloom--" || c.MemoryUsage() < c.SizeBytes() {
		t.Fatal("Value methods")
	}
}

func FuzzLoadHeader(f *testing.F) {
	f.Add(validHeader(f))
	c := mustNew(f, Params{ErrorRate: 0.25, Capacity: 1, Expansion: 1, NonScaling: true})
	f.Add(c.Header())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeHeader(data, 1<<20)
		if err != nil {
			if !errors.Is(err, ErrBadData) {
				t.Fatalf("error %v", err)
			}
			return
		}
		if c.SizeBytes() > 1<<20 {
			t.Fatalf("budget exceeded: %d", c.SizeBytes())
		}
		if !bytes.Equal(c.Header(), data) {
			t.Fatal("accepted header does not re-encode identically")
		}
		// Using it must not panic.
		c.Add([]byte("x"))
		c.Exists([]byte("y"))
		c.DumpChunk(1)
		c.LoadChunk(int64(len(data))+1, data[:min(len(data), 8)])
	})
}

func FuzzUnmarshalChain(f *testing.F) {
	c := mustNew(f, Params{ErrorRate: 0.01, Capacity: 10, Expansion: 2})
	addN(f, c, 30)
	b, _ := c.MarshalBinary()
	f.Add(b)
	f.Add([]byte("PRBC"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := UnmarshalChain(data, 1<<20)
		if err != nil {
			if !errors.Is(err, ErrBadData) {
				t.Fatalf("error %v", err)
			}
			return
		}
		out, _ := c.MarshalBinary()
		if !bytes.Equal(out, data) {
			t.Fatal("accepted snapshot does not re-encode identically")
		}
	})
}
