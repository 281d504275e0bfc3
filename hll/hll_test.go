package hll

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestNewAndPrecision(t *testing.T) {
	for _, p := range []uint8{0, 3, 19, 255} {
		if _, err := New(p); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("New(%d): %v", p, err)
		}
	}
	for p := uint8(MinPrecision); p <= MaxPrecision; p++ {
		s, err := New(p)
		if err != nil || s.Stats().Precision != p || s.Count() != 0 {
			t.Fatalf("New(%d): %v", p, err)
		}
		st := s.Stats()
		if st.M != 1<<p || !st.Sparse || st.Cardinality != 0 || st.StandardError != 1.04/math.Sqrt(float64(uint(1)<<p)) {
			t.Fatalf("Stats(%d) = %+v", p, st)
		}
	}
	if StandardError(14) != 1.04/128 || StandardError(3) != 0 {
		t.Fatal(StandardError(14))
	}
}

// Dense register packing: set and read back random values (PFSELFTEST's
// first part) at every precision.
func TestRegisterPacking(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for p := MinPrecision; p <= MaxPrecision; p++ {
		l := paramTable[p]
		r := make([]byte, l.denseSize-hdrSize)
		want := make([]uint8, l.m)
		for round := 0; round < 3; round++ {
			for i := range want {
				want[i] = uint8(rng.IntN(64))
				setReg(r, i, want[i])
			}
			for i, v := range want {
				if getReg(r, i) != v {
					t.Fatalf("p=%d reg %d", p, i)
				}
			}
			var h [64]int
			denseHisto(r, l.m, &h)
			var w [64]int
			for _, v := range want {
				w[v]++
			}
			if h != w {
				t.Fatalf("p=%d histogram", p)
			}
		}
	}
	if msg := RedisSelfTest(20, 100_000, 42); msg != "" {
		t.Fatal(msg)
	}
}

// Small sets are exact in practice (Redis doctests).
func TestSmallCounts(t *testing.T) {
	s, _ := New(14)
	for i := 1; i <= 9; i++ {
		s.Add([]byte(strconv.Itoa(i)))
		if c := s.Count(); c != uint64(i) {
			t.Fatalf("%d elements: %d", i, c)
		}
	}
	a, _, _ := RedisAdd(nil, [][]byte{[]byte("foo"), []byte("bar"), []byte("zap"), []byte("a")}, 3000)
	b, _, _ := RedisAdd(nil, [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("foo")}, 3000)
	if n, _, _ := RedisCount(append([]byte(nil), a...)); n != 4 {
		t.Fatal(n)
	}
	if n, err := RedisCountMany([][]byte{a, nil, b}); err != nil || n != 6 {
		t.Fatal(n, err)
	}
}

// The library Sketch at p = 14 produces exactly the bytes of the Redis
// string functions for the same operations (one-element PFADDs, PFCOUNTs,
// merges), sparse through dense.
func TestSketchMatchesRedisFunctions(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	s, _ := New(DefaultPrecision)
	var r []byte
	for i := 0; i < 6000; i++ {
		e := []byte("user-" + strconv.Itoa(rng.IntN(20000)))
		ch1 := s.Add(e)
		var ch2 bool
		var err error
		r, ch2, err = RedisAdd(r, [][]byte{e}, DefaultSparseMaxBytes)
		if err != nil || ch1 != ch2 && i > 0 {
			t.Fatalf("step %d: %v %v %v", i, ch1, ch2, err)
		}
		if rng.IntN(7) == 0 {
			n1 := s.Count()
			n2, upd, err := RedisCount(r)
			if err != nil || n1 != n2 {
				t.Fatalf("step %d: count %d vs %d %v", i, n1, n2, err)
			}
			if upd != nil {
				r = upd
			}
		}
		got, _ := s.MarshalBinary()
		if !bytes.Equal(got, r) {
			t.Fatalf("step %d: sketch %d bytes, redis functions %d bytes", i, len(got), len(r))
		}
	}
	o, _ := New(DefaultPrecision)
	o.Add([]byte("x"))
	if err := s.Merge(o); err != nil {
		t.Fatal(err)
	}
	ob, _ := o.MarshalBinary()
	r, err := RedisMerge(r, [][]byte{ob}, DefaultSparseMaxBytes)
	got, _ := s.MarshalBinary()
	if err != nil || !bytes.Equal(got, r) {
		t.Fatal("merge differs", err)
	}
}

func TestMergePrecisionMismatch(t *testing.T) {
	a, _ := New(12)
	b, _ := New(14)
	err := a.Merge(b)
	if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "12") || !strings.Contains(err.Error(), "14") {
		t.Fatalf("%v", err)
	}
}

// Permuted insertion orders and merge orders give identical registers (and
// identical bytes once dense).
func TestOrderIndependence(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, p := range []uint8{4, 10, 14, 16} {
		for _, n := range []int{10, 500, 3000, 40000} {
			elems := make([][]byte, n)
			for i := range elems {
				elems[i] = []byte(fmt.Sprintf("user-%d", i))
			}
			var first *Sketch
			for perm := 0; perm < 3; perm++ {
				rng.Shuffle(len(elems), func(i, j int) { elems[i], elems[j] = elems[j], elems[i] })
				s, _ := New(p)
				for _, e := range elems {
					s.Add(e)
				}
				if first == nil {
					first = s
					continue
				}
				if !bytes.Equal(s.Registers(), first.Registers()) || s.Count() != first.Count() {
					t.Fatalf("p=%d n=%d: registers depend on insertion order", p, n)
				}
				if !s.Stats().Sparse && !first.Stats().Sparse {
					a, _ := s.MarshalBinary()
					b, _ := first.MarshalBinary()
					if !bytes.Equal(a, b) {
						t.Fatalf("p=%d n=%d: dense bytes depend on order", p, n)
					}
				}
			}
			// Split into 4 parts, merge in every rotation order.
			parts := make([]*Sketch, 4)
			for i := range parts {
				parts[i], _ = New(p)
			}
			for i, e := range elems {
				parts[i%4].Add(e)
			}
			for rot := 0; rot < 4; rot++ {
				u, _ := New(p)
				for k := 0; k < 4; k++ {
					if err := u.Merge(parts[(rot+k)%4]); err != nil {
						t.Fatal(err)
					}
				}
				if !bytes.Equal(u.Registers(), first.Registers()) {
					t.Fatalf("p=%d n=%d rotation %d: merge order changes registers", p, n, rot)
				}
				// Merge into a clone of one part (a different tree shape).
				v := parts[rot].Clone()
				v.Merge(u)
				if !bytes.Equal(v.Registers(), first.Registers()) {
					t.Fatalf("p=%d n=%d: merge tree shape changes registers", p, n)
				}
			}
		}
	}
}

// Accuracy sweep on structured keys: at every checkpoint the relative error
// is within 3·1.04/√m, at p ∈ {4, 8, 12, 14, 16, 18}, n up to 1e7 (1e6
// with -short or -race).
func TestAccuracySweep(t *testing.T) {
	maxN := 10_000_000
	if small() {
		maxN = 1_000_000
	}
	for _, p := range []uint8{4, 8, 12, 14, 16, 18} {
		s, _ := New(p)
		bound := 3 * StandardError(p)
		next := 1
		worst := 0.0
		var buf []byte
		for i := 1; i <= maxN; i++ {
			// Structured keys: counters, "user-%d", common prefixes.
			switch i % 3 {
			case 0:
				buf = strconv.AppendInt(buf[:0], int64(i), 10)
			case 1:
				buf = strconv.AppendInt(append(buf[:0], "user-"...), int64(i), 10)
			default:
				buf = strconv.AppendInt(append(buf[:0], "https://example.com/item/"...), int64(i), 10)
			}
			s.Add(buf)
			if i == next {
				rel := math.Abs(float64(s.Count())-float64(i)) / float64(i)
				worst = max(worst, rel)
				if rel > bound {
					t.Errorf("p=%d n=%d: estimate %d, relative error %.4f > 3σ = %.4f", p, i, s.Count(), rel, bound)
				}
				next = next*5/4 + 1
			}
		}
		t.Logf("p=%2d: worst relative error %.4f (3σ = %.4f) up to n=%d", p, worst, bound, maxN)
	}
}

// RMS error over many independent runs (key prefixes act as seeds) is close
// to 1.04/√m: within ±30 %.
func TestAccuracyRMS(t *testing.T) {
	type cfg struct {
		p       uint8
		n, runs int
	}
	cfgs := []cfg{{4, 1000, 2000}, {8, 5000, 600}, {12, 40000, 150}, {14, 100000, 100}, {16, 300000, 50}, {18, 1000000, 30}}
	if small() {
		cfgs = []cfg{{4, 1000, 1000}, {8, 5000, 300}, {12, 40000, 60}}
	}
	for _, c := range cfgs {
		var sum float64
		var buf []byte
		for r := 0; r < c.runs; r++ {
			s, _ := New(c.p)
			prefix := append(strconv.AppendInt(nil, int64(r), 10), ":user-"...)
			for i := 0; i < c.n; i++ {
				buf = strconv.AppendInt(append(buf[:0], prefix...), int64(i), 10)
				s.Add(buf)
			}
			rel := (float64(s.Count()) - float64(c.n)) / float64(c.n)
			sum += rel * rel
		}
		rms := math.Sqrt(sum / float64(c.runs))
		want := StandardError(c.p)
		t.Logf("p=%2d n=%d runs=%d: RMS error %.5f, 1.04/√m = %.5f (ratio %.2f)", c.p, c.n, c.runs, rms, want, rms/want)
		if rms < 0.7*want || rms > 1.3*want {
			t.Errorf("p=%d: RMS error %.5f not within ±30%% of %.5f", c.p, rms, want)
		}
	}
}

// No quadratic sparse behaviour: PFADD of 50 new elements alternating
// with PFCOUNT, up to 2M distinct, through the Redis string functions the
// server runs. The value never exceeds the dense size, and the bytes
// allocated per batch do not grow with the cardinality (zero once dense:
// both operations work in place). Deterministic: allocation counts, not
// time.
func TestNoQuadraticSparse(t *testing.T) {
	total := 2_000_000
	if small() {
		total = 200_000
	}
	var (
		b        []byte
		ms       runtime.MemStats
		buf      []byte
		maxBatch uint64
		dense    int // batches run dense
		elems    = make([][]byte, 50)
	)
	for i := range elems {
		elems[i] = make([]byte, 0, 24)
	}
	runtime.ReadMemStats(&ms)
	for i := 0; i < total; {
		for j := range elems {
			elems[j] = strconv.AppendInt(append(elems[j][:0], "user-"...), int64(i), 10)
			i++
		}
		before := ms.TotalAlloc
		var err error
		if b, _, err = RedisAdd(b, elems, DefaultSparseMaxBytes); err != nil {
			t.Fatal(err)
		}
		_, upd, err := RedisCount(b)
		if err != nil {
			t.Fatal(err)
		}
		if upd != nil {
			b = upd
		}
		if len(b) > RedisDenseSize {
			t.Fatalf("value of %d bytes exceeds the dense size", len(b))
		}
		if i%(total/20) < 50 || b[4] == encSparse || dense < 100 {
			runtime.ReadMemStats(&ms)
			delta := ms.TotalAlloc - before
			if b[4] == encDense {
				dense++
				// The promotion batch allocates the dense string (12 KiB)
				// once; a later batch that copies it again allocates at
				// least that much. TotalAlloc is process-wide, so other
				// goroutines' allocations may land in a batch: allow
				// 8 KiB (a batch measured 5,320 bytes once under load).
				if dense > 1 && delta > 8192 {
					t.Fatalf("dense batch at %d elements allocated %d bytes", i, delta)
				}
			} else {
				maxBatch = max(maxBatch, delta)
			}
		}
		_ = buf
	}
	// A sparse batch copies the ≤ 3000-byte value once and may grow it.
	if maxBatch > 4*DefaultSparseMaxBytes+4096 {
		t.Fatalf("a sparse batch allocated %d bytes", maxBatch)
	}
	n, _, _ := RedisCount(b)
	t.Logf("%d distinct: estimate %d; largest sparse batch allocation %d bytes; dense batches allocate nothing", total, n, maxBatch)
}

func TestMarshalRoundTrip(t *testing.T) {
	for p := uint8(MinPrecision); p <= MaxPrecision; p++ {
		for _, n := range []int{0, 3, 200, 100000} {
			s, _ := New(p)
			for i := 0; i < n; i++ {
				s.Add([]byte("k" + strconv.Itoa(i)))
			}
			if n%2 == 1 {
				s.Count()
			}
			b, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if p == 14 && string(b[:4]) != "HYLL" || p != 14 && string(b[:4]) != "PHLL" {
				t.Fatalf("p=%d: magic %q", p, b[:4])
			}
			var u Sketch
			if err := u.UnmarshalBinary(b); err != nil {
				t.Fatalf("p=%d n=%d: %v", p, n, err)
			}
			b2, _ := u.MarshalBinary()
			if !bytes.Equal(b, b2) || u.Count() != s.Count() || u.Stats().Precision != p {
				t.Fatalf("p=%d n=%d: round trip differs", p, n)
			}
			// WriteTo/ReadFrom.
			var w bytes.Buffer
			s.WriteTo(&w)
			var v Sketch
			if _, err := v.ReadFrom(&w); err != nil || !bytes.Equal(v.Registers(), s.Registers()) {
				t.Fatalf("ReadFrom: %v", err)
			}
			// The decoded sketch keeps working.
			u.Add([]byte("another"))
			s.Add([]byte("another"))
			if !bytes.Equal(u.Registers(), s.Registers()) {
				t.Fatal("diverged after unmarshal")
			}
		}
	}
}

func TestUnmarshalRejects(t *testing.T) {
	s, _ := New(12)
	for i := 0; i < 50; i++ {
		s.Add([]byte(strconv.Itoa(i)))
	}
	good, _ := s.MarshalBinary()
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrFormat},
		{"garbage", []byte("hello world, not a sketch"), ErrFormat},
		{"short", good[:10], io.ErrUnexpectedEOF},
		{"version", mut(func(b []byte) []byte { b[4] = 9; return b }), ErrVersion},
		{"precision", mut(func(b []byte) []byte { b[5] = 30; return b }), ErrInvalidParameter},
		{"hash", mut(func(b []byte) []byte { b[6] = 2; return b }), ErrFormat},
		{"seed", mut(func(b []byte) []byte { b[8] ^= 1; return b }), ErrFormat},
		{"length", mut(func(b []byte) []byte { b[12]++; return b }), io.ErrUnexpectedEOF},
		{"length short", mut(func(b []byte) []byte { b[12]--; return b }), ErrFormat},
		{"truncated", good[:len(good)-1], io.ErrUnexpectedEOF},
		{"checksum", mut(func(b []byte) []byte { b[20] ^= 0x40; return b }), ErrChecksum},
		{"redis short", []byte("HYLL\x01\x00\x00"), ErrFormat},
		{"redis encoding", []byte("HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"), ErrNotHLL},
		{"redis dense length", append([]byte("HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"), 1, 2, 3), ErrNotHLL},
		{"redis sparse short", []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xfe"), ErrCorrupt},
		{"redis sparse long", []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x00"), ErrCorrupt},
		{"redis sparse empty", []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"), ErrCorrupt},
	}
	for _, c := range cases {
		var u Sketch
		if err := u.UnmarshalBinary(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// A body corrupted consistently with its checksum is still rejected.
	bad := mut(func(b []byte) []byte {
		b[fmtHdr+hdrSize] = 0x7f // XZERO:16384-ish, overflowing 4096 registers
		return b
	})
	n := len(bad) - fmtTrailer
	crc := crc32c(bad[:n])
	bad[n], bad[n+1], bad[n+2], bad[n+3] = byte(crc), byte(crc>>8), byte(crc>>16), byte(crc>>24)
	var u Sketch
	if err := u.UnmarshalBinary(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("consistent checksum, corrupt body: %v", err)
	}
}

// Redis string validation and the crafted inputs of spec §4.5.
func TestRedisCorruptionChecks(t *testing.T) {
	hdr := []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80")
	mk := func(body ...byte) []byte { return append(append([]byte(nil), hdr...), body...) }
	// CVE-2025-32023: many XZERO runs whose sum overflows a 32-bit index.
	var huge []byte
	for i := 0; i < 140_000; i++ {
		huge = append(huge, 0x7f, 0xff)
	}
	for name, b := range map[string][]byte{
		"xzero overflow":     mk(huge...),
		"zero overflow":      mk(append(bytes.Repeat([]byte{0x3f}, 300), 0x80)...),
		"val past end":       mk(0x7f, 0xfe, 0x83, 0x83), // 16383 zeros then VAL run 4
		"short":              mk(0x7f, 0xfe),
		"trailing":           mk(0x7f, 0xff, 0x80),
		"truncated xzero":    mk(0x40),
		"val run past 16384": mk(0x7f, 0xfd, 0xff),
	} {
		if _, _, err := RedisCount(append([]byte(nil), b...)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: PFCOUNT %v", name, err)
		}
		if _, err := RedisCountMany([][]byte{b}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: PFCOUNT many %v", name, err)
		}
		if _, err := RedisMerge(nil, [][]byte{b}, 3000); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: PFMERGE %v", name, err)
		}
		if _, _, err := RedisGetReg(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: GETREG %v", name, err)
		}
		if _, _, err := RedisToDense(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: TODENSE %v", name, err)
		}
		RedisAdd(b, [][]byte{[]byte("a"), []byte("b")}, 3000) // may succeed (as in Redis) but must not panic
		RedisDecode(b)
	}
	for _, b := range [][]byte{nil, []byte("123"), []byte("HYL"), []byte("HYLL"), []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
		[]byte("hyll\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"), []byte("HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"),
		append(hdr[:4:4], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x7f, 0xff)} {
		if b == nil {
			continue
		}
		if err := RedisValidate(b); !errors.Is(err, ErrNotHLL) {
			t.Errorf("%q: %v", b, err)
		}
		if _, _, err := RedisAdd(b, nil, 3000); !errors.Is(err, ErrNotHLL) {
			t.Errorf("%q: PFADD %v", b, err)
		}
		if _, _, err := RedisCount(b); !errors.Is(err, ErrNotHLL) {
			t.Errorf("%q: PFCOUNT %v", b, err)
		}
	}
	// A valid cache is trusted without looking at the body (spec §4.2).
	trailing := mk(0x7f, 0xff, 0x11, 0x22)
	trailing[15] = 0
	if n, upd, err := RedisCount(trailing); n != 0 || upd != nil || err != nil {
		t.Fatal(n, upd, err)
	}
	if _, err := RedisCountMany([][]byte{trailing, RedisNew()}); !errors.Is(err, ErrCorrupt) {
		t.Fatal(err)
	}
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// small reports whether to run the reduced sizes (-short or -race).
func small() bool { return testing.Short() || raceEnabled }

// NewWithConfig: the sparse limit, the seed rule and Reset.
func TestNewWithConfig(t *testing.T) {
	d, err := NewWithConfig(Config{Precision: 12, SparseMaxBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Add([]byte("x")) || d.Stats().Sparse || d.Stats().Precision != 12 {
		t.Fatalf("SparseMaxBytes -1: %+v", d.Stats())
	}
	small, _ := NewWithConfig(Config{SparseMaxBytes: 40})
	def, _ := New(DefaultPrecision)
	for i := 0; i < 50; i++ {
		k := []byte("k" + strconv.Itoa(i))
		small.Add(k)
		def.Add(k)
	}
	if small.Stats().Sparse || !def.Stats().Sparse || !bytes.Equal(small.Registers(), def.Registers()) || small.Count() != def.Count() {
		t.Fatalf("SparseMaxBytes 40: %+v vs %+v", small.Stats(), def.Stats())
	}
	if _, err := NewWithConfig(Config{Seed: DefaultSeed}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Config{{Seed: 1}, {Precision: 3}, {Precision: MaxPrecision + 1}} {
		if _, err := NewWithConfig(c); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	// Reset keeps the precision and the sparse limit.
	small.Reset()
	if st := small.Stats(); st.Cardinality != 0 || !st.Sparse || st.Precision != DefaultPrecision || small.Count() != 0 {
		t.Fatalf("after Reset: %+v", st)
	}
	for i := 0; i < 50; i++ {
		small.Add([]byte("k" + strconv.Itoa(i)))
	}
	if small.Stats().Sparse {
		t.Fatal("Reset lost the sparse limit")
	}
}
