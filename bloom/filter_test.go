package bloom

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func mustNew(t testing.TB, n uint64, p float64) *Filter {
	t.Helper()
	f, err := New(n, p)
	if err != nil {
		t.Fatalf("New(%d, %v): %v", n, p, err)
	}
	return f
}

func TestNoFalseNegatives(t *testing.T) {
	const n = 50000
	for _, fam := range keyFamilies {
		t.Run(fam.name, func(t *testing.T) {
			f := mustNew(t, n, 0.01)
			var buf []byte
			for i := uint64(0); i < n; i++ {
				buf = fam.key(buf, i)
				f.Add(buf)
			}
			for i := uint64(0); i < n; i++ {
				buf = fam.key(buf, i)
				if !f.Test(buf) || !f.testString(string(buf)) {
					t.Fatalf("false negative for key %q", buf)
				}
			}
		})
	}
	t.Run("random", func(t *testing.T) {
		f := mustNew(t, n, 0.001)
		rng := splitmix64(1)
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = rng.randomKey(nil)
		}
		f.AddMany(keys)
		for _, ok := range f.TestMany(keys, nil) {
			if !ok {
				t.Fatal("false negative after AddMany")
			}
		}
	})
	t.Run("string-forms", func(t *testing.T) {
		f := mustNew(t, 1000, 0.01)
		for i := range 1000 {
			f.addString(fmt.Sprintf("user-%d", i))
		}
		for i := range 1000 {
			k := fmt.Sprintf("user-%d", i)
			if !f.Test([]byte(k)) || !f.testString(k) {
				t.Fatalf("false negative for %q", k)
			}
		}
	})
}

func TestAddReportsNewBitsAndCountsN(t *testing.T) {
	f := mustNew(t, 1000, 0.01)
	if !newly(f.TestAndAdd([]byte("x"))) {
		t.Fatal("first Add reported not added")
	}
	if newly(f.TestAndAdd([]byte("x"))) || f.addString("x") {
		t.Fatal("second Add reported added")
	}
	if !was(f.TestAndAdd([]byte("x"))) {
		t.Fatal("TestAndAdd of present key reported absent")
	}
	if was(f.TestAndAdd([]byte("y"))) {
		t.Fatal("TestAndAdd of new key reported present")
	}
	if got := f.items(); got != 2 {
		t.Fatalf("N = %d, want 2", got)
	}
	h1, h2 := Hash([]byte("z"))
	if f.TestHash(h1, h2) || was(f.TestAndAddHash(h1, h2)) || !was(f.TestAndAddHash(h1, h2)) {
		t.Fatal("hash forms disagree")
	}
	if !f.Test([]byte("z")) {
		t.Fatal("key added by hash pair not found by key")
	}
	if s1, s2 := hashString("z"); s1 != h1 || s2 != h2 {
		t.Fatal("HashString != Hash")
	}
	f.setN(42)
	if f.items() != 42 {
		t.Fatal("SetN")
	}
}

// TestProbePositions pins the exact probe formula the RedisBloom layer relies
// on: x_i = (h1 + i·h2) mod m in uint64 wrap-around arithmetic.
func TestProbePositions(t *testing.T) {
	cases := []struct {
		m      uint64
		k      uint32
		h1, h2 uint64
	}{
		{1000, 5, math.MaxUint64 - 3, 1<<63 + 7},
		{1152, 8, 0x0123456789abcdef, 0xfedcba9876543210},
		{64, 7, 5, 0},
		{1 << 20, 11, 1 << 62, 3 << 62},
		{1, 3, 12345, 678},
		{977, 4, math.MaxUint64, math.MaxUint64},
	}
	for _, c := range cases {
		f, err := NewWithConfig(Config{M: c.m, K: c.k})
		if err != nil {
			t.Fatal(err)
		}
		want := map[uint64]bool{}
		for i := uint64(0); i < uint64(c.k); i++ {
			want[(c.h1+i*c.h2)%c.m] = true
		}
		if !f.addHash(c.h1, c.h2) || f.items() != 1 {
			t.Fatalf("%+v: AddHash on empty filter reported not added", c)
		}
		raw := make([]byte, f.sizeBytes())
		f.readBitsAt(raw, 0)
		for x := uint64(0); x < c.m; x++ {
			set := raw[x>>3]&(1<<(x&7)) != 0
			if set != want[x] {
				t.Fatalf("%+v: bit %d set=%v, want %v", c, x, set, want[x])
			}
		}
		if !f.TestHash(c.h1, c.h2) {
			t.Fatalf("%+v: TestHash false after AddHash", c)
		}
	}
}

// TestConstructorParameterTable is issue 2's table: every combination of
// n ∈ {0, 1, 2^63} and p ∈ {0, 1, 1.5, −0.1, NaN, +Inf, 1e-300} (and −Inf)
// is an error, returned without a hang, a panic or a large allocation.
// p = 0.01 is the control: valid for n = 1, too large for n = 2^63.
func TestConstructorParameterTable(t *testing.T) {
	ns := []uint64{0, 1, 1 << 63}
	ps := []float64{0, 1, 1.5, -0.1, math.NaN(), math.Inf(1), math.Inf(-1), 1e-300, 0.01}
	for _, n := range ns {
		for _, p := range ps {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			f, err := New(n, p)
			c, cerr := NewCounting(n, p)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Errorf("New/NewCounting(%d, %v) allocated %d bytes", n, p, alloc)
			}
			// NewCounting sizes with optimalSizing too: the same verdict.
			if (err == nil) != (cerr == nil) || (cerr == nil) != (c != nil) ||
				(err != nil && errors.Is(err, ErrInvalidParameter) != errors.Is(cerr, ErrInvalidParameter)) {
				t.Errorf("NewCounting(%d, %v) = %v; New gave %v", n, p, cerr, err)
			}
			var want error
			switch {
			case n == 0 || !(p >= MinP && p < 1):
				want = ErrInvalidParameter
			case n == 1<<63:
				want = ErrTooLarge
			}
			if want != nil {
				if !errors.Is(err, want) || f != nil {
					t.Errorf("New(%d, %v) = %v, %v; want error %v", n, p, f, err, want)
				}
				if err != nil && !strings.HasPrefix(err.Error(), "bloom: ") {
					t.Errorf("error %q lacks the bloom: prefix", err)
				}
				if n != 0 && p == 1e-300 && (err == nil || !strings.Contains(err.Error(), "MinP = 2^-64")) {
					t.Errorf("New(%d, 1e-300): error %v does not name the floor", n, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("New(%d, %v): %v", n, p, err)
				continue
			}
			if f.numBits() != 10 || f.numHashes() != 7 || f.capacityN() != n || f.targetRate() != p {
				t.Errorf("New(%d, %v): m=%d k=%d cap=%d p=%v, want m=10 k=7", n, p, f.numBits(), f.numHashes(), f.capacityN(), f.targetRate())
			}
			if !newly(f.TestAndAdd([]byte("a"))) || !f.Test([]byte("a")) {
				t.Errorf("New(%d, %v): filter does not work", n, p)
			}
		}
	}
}

// TestMinP pins the floor on p: MinP = 2^-64 itself is valid (k = 64
// probes, 93 bits for one key), the next smaller float64 and every rate
// down to the smallest subnormal are ErrInvalidParameter, for New,
// NewCounting and optimalSizing alike. chainSizingFn, which sizes a
// Scalable's sub-filters (bounded by MinErrorRate instead), has no such
// floor.
func TestMinP(t *testing.T) {
	if MinP != 1.0/(1<<32)/(1<<32) {
		t.Fatalf("MinP = %v, want 2^-64", MinP)
	}
	m, k, err := optimalSizing(1, MinP)
	if err != nil || m != 93 || k != 64 {
		t.Errorf("optimalSizing(1, MinP) = %d, %d, %v; want 93, 64", m, k, err)
	}
	if m, k, err := optimalSizing(1e6, MinP); err != nil || k != 64 || m != 92332483 {
		t.Errorf("optimalSizing(1e6, MinP) = %d, %d, %v", m, k, err)
	}
	if f, err := New(3, MinP); err != nil || f.numHashes() != 64 || !newly(f.TestAndAdd([]byte("x"))) || !f.Test([]byte("x")) {
		t.Errorf("New(3, MinP): %v", err)
	}
	for _, p := range []float64{math.Nextafter(MinP, 0), 1e-20, 1e-100, 1e-300, math.SmallestNonzeroFloat64} {
		if _, _, err := optimalSizing(1, p); !errors.Is(err, ErrInvalidParameter) || !strings.Contains(err.Error(), "MinP") {
			t.Errorf("optimalSizing(1, %v): %v", p, err)
		}
		if f, err := New(1000, p); !errors.Is(err, ErrInvalidParameter) || f != nil {
			t.Errorf("New(1000, %v): %v", p, err)
		}
		if c, err := NewCounting(1000, p); !errors.Is(err, ErrInvalidParameter) || c != nil {
			t.Errorf("NewCounting(1000, %v): %v", p, err)
		}
		if _, k, err := chainSizingFn(10, p); err != nil || k > MaxK {
			t.Errorf("chainSizingFn(10, %v) = k %d, %v; want no floor", p, k, err)
		}
	}
	// n = 0 is reported as such, whatever p.
	if _, _, err := optimalSizing(0, 1e-300); err == nil || !strings.Contains(err.Error(), "capacity") {
		t.Errorf("optimalSizing(0, 1e-300): %v", err)
	}
}

func TestClassicSizingFormula(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		p    float64
		m    uint64
		k    uint32
		bits string
	}{
		{1000, 0.01, 9586, 7, ""},
		{1e6, 0.01, 9585059, 7, ""},
		{1e4, 0.1, 47926, 3, ""},
		{1e6, 0.001, 14377588, 10, ""},
		{1, 0.9999, 1, 1, ""},
	} {
		m, k, err := optimalSizing(c.n, c.p)
		if err != nil || m != c.m || k != c.k {
			t.Errorf("optimalSizing(%d, %v) = %d, %d, %v; want %d, %d", c.n, c.p, m, k, err, c.m, c.k)
		}
	}
}

func TestNewWithMKParameterTable(t *testing.T) {
	for _, c := range []struct {
		m    uint64
		k    uint32
		want error
	}{
		{0, 3, ErrInvalidParameter},
		{1, 0, ErrInvalidParameter},
		{64, MaxK + 1, ErrInvalidParameter},
		{64, math.MaxUint32, ErrInvalidParameter},
		{MaxBits + 1, 3, ErrTooLarge},
		{math.MaxUint64, 3, ErrTooLarge},
		{1, 1, nil},
		{100, MaxK, nil},
	} {
		f, err := NewWithConfig(Config{M: c.m, K: c.k})
		if !errors.Is(err, c.want) || (c.want == nil) != (f != nil) {
			t.Errorf("NewWithConfig(Config{M: %d, K: %d}) = %v; want %v", c.m, c.k, err, c.want)
		}
		if f != nil && (f.capacityN() != 0 || f.targetRate() != 0 || f.sizeBytes() != words(c.m)*8) {
			t.Errorf("NewWithConfig(Config{M: %d, K: %d}): capacity %d, target %v, bytes %d", c.m, c.k, f.capacityN(), f.targetRate(), f.sizeBytes())
		}
	}
	// MaxBits itself is valid (checked without allocating 128 GiB).
	if err := checkMK(MaxBits, MaxK); err != nil {
		t.Errorf("checkMK(MaxBits, MaxK): %v", err)
	}
}

func TestUnionIntersect(t *testing.T) {
	a, b := mustNew(t, 2000, 0.01), mustNew(t, 2000, 0.01)
	var buf []byte
	for i := uint64(0); i < 1500; i++ {
		buf = userKey(buf, i)
		a.Add(buf) // 0..1499
		buf = userKey(buf, i+1000)
		b.Add(buf) // 1000..2499
	}
	u := a.clone()
	if err := u.Merge(b); err != nil {
		t.Fatal(err)
	}
	u2 := b.clone()
	if err := u2.Merge(a); err != nil {
		t.Fatal(err)
	}
	in := a.clone()
	if err := in.Intersect(b); err != nil {
		t.Fatal(err)
	}
	for i := uint64(0); i < 2500; i++ {
		buf = userKey(buf, i)
		if !u.Test(buf) {
			t.Fatalf("union lost %q", buf)
		}
		if i >= 1000 && i < 1500 && !in.Test(buf) {
			t.Fatalf("intersection lost %q", buf)
		}
	}
	// Commutativity, idempotence, bits.
	if !bitsEqual(u, u2) {
		t.Error("union not commutative")
	}
	u3 := u.clone()
	if err := u3.Merge(u3); err != nil || !bitsEqual(u3, u) {
		t.Error("union not idempotent")
	}
	if got := u.items(); got != a.items()+b.items() {
		t.Errorf("union N = %d, want %d", got, a.items()+b.items())
	}
	if got := in.items(); got != min(a.items(), b.items()) {
		t.Errorf("intersection N = %d", got)
	}
	if s := u.Stats(); s.SetBits < a.Stats().SetBits || s.SetBits < b.Stats().SetBits {
		t.Error("union lost bits")
	}
	if s := in.Stats(); s.SetBits > a.Stats().SetBits || s.SetBits > b.Stats().SetBits {
		t.Error("intersection gained bits")
	}
}

func bitsEqual(a, b *Filter) bool {
	if len(a.bits) != len(b.bits) {
		return false
	}
	for i := range a.bits {
		if a.bits[i] != b.bits[i] {
			return false
		}
	}
	return true
}

func TestIncompatibleErrorsNameBothValues(t *testing.T) {
	base, _ := NewWithConfig(Config{M: 1000, K: 7})
	k5, _ := NewWithConfig(Config{M: 1000, K: 5})
	m2, _ := NewWithConfig(Config{M: 2000, K: 7})
	hm, _ := NewWithConfig(Config{M: 1000, K: 7})
	_ = hm.setHash(hashMurmur64A, 0)
	sd, _ := NewWithConfig(Config{M: 1000, K: 7})
	_ = sd.setHash(HashXXH3_128, 99)
	for _, c := range []struct {
		g    *Filter
		want string
	}{
		{k5, "bloom: incompatible filters: k 7 != k 5"},
		{m2, "bloom: incompatible filters: m 1000 != m 2000"},
		{hm, "bloom: incompatible filters: hash xxh3-128 != hash murmur64a"},
		{sd, "bloom: incompatible filters: seed 0x0 != seed 0x63"},
	} {
		before := base.clone()
		for name, op := range map[string]func(*Filter) error{"Union": base.Merge, "Intersect": base.Intersect} {
			err := op(c.g)
			if !errors.Is(err, ErrIncompatible) || err.Error() != c.want {
				t.Errorf("%s: got %v, want %q", name, err, c.want)
			}
		}
		if !base.equal(before) {
			t.Error("failed merge changed the filter")
		}
	}
}

func TestStats(t *testing.T) {
	f, _ := NewWithConfig(Config{M: 1000, K: 3})
	if s := f.Stats(); s != (Stats{M: 1000, K: 3, Bytes: 128}) {
		t.Errorf("empty stats %+v", s)
	}
	f = mustNew(t, 10000, 0.01)
	var buf []byte
	for i := uint64(0); i < 10000; i++ {
		f.Add(userKey(buf, i))
	}
	s := f.Stats()
	if s.M != f.numBits() || s.K != 7 || s.Bytes != f.sizeBytes() || s.N != f.items() || s.Capacity != 10000 || s.P != 0.01 {
		t.Errorf("stats %+v", s)
	}
	if math.Abs(s.FillRatio-0.5) > 0.02 {
		t.Errorf("fill ratio %v, want ≈ 0.5 at capacity", s.FillRatio)
	}
	if math.Abs(s.FPR-0.01)/0.01 > 0.15 {
		t.Errorf("estimated FPR %v, want ≈ 0.01", s.FPR)
	}
	if math.Abs(s.Cardinality-10000)/10000 > 0.03 {
		t.Errorf("estimated cardinality %v, want ≈ 10000", s.Cardinality)
	}
	if s.N > 10000 || s.N < 9900 {
		t.Errorf("N = %d", s.N)
	}
	full, _ := NewWithConfig(Config{M: 64, K: 1})
	_ = full.writeBitsAt([]byte{255, 255, 255, 255, 255, 255, 255, 255}, 0)
	if s := full.Stats(); !math.IsInf(s.Cardinality, 1) || s.FPR != 1 || s.SetBits != 64 {
		t.Errorf("saturated stats %+v", s)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	f := mustNew(t, 100, 0.01)
	f.Add([]byte("a"))
	c := f.clone()
	if !c.equal(f) {
		t.Fatal("clone differs")
	}
	c.Add([]byte("b"))
	if f.items() != 1 || c.items() != 2 || c.equal(f) || !c.Test([]byte("b")) {
		t.Fatal("clone shares state")
	}
}

func TestRawBits(t *testing.T) {
	f := mustNew(t, 500, 0.01)
	var buf []byte
	for i := uint64(0); i < 500; i++ {
		f.Add(prefixKey(buf, i))
	}
	size := f.sizeBytes()
	all := make([]byte, size+10)
	if n := f.readBitsAt(all, 0); uint64(n) != size {
		t.Fatalf("ReadBitsAt read %d, want %d", n, size)
	}
	all = all[:size]
	for x := uint64(0); x < f.numBits(); x++ {
		if (all[x>>3]&(1<<(x&7)) != 0) != (f.bits[x>>6]&(1<<(x&63)) != 0) {
			t.Fatalf("bit %d differs between byte and word view", x)
		}
	}
	if f.readBitsAt(make([]byte, 8), size) != 0 || f.readBitsAt(make([]byte, 8), math.MaxUint64) != 0 {
		t.Error("ReadBitsAt past the end read something")
	}
	// Restore in odd, unaligned chunks (SCANDUMP/LOADCHUNK).
	g, _ := NewWithConfig(Config{M: f.numBits(), K: f.numHashes()})
	chunk := make([]byte, 13)
	for off := uint64(0); off < size; {
		n := f.readBitsAt(chunk, off)
		if err := g.writeBitsAt(chunk[:n], off); err != nil {
			t.Fatal(err)
		}
		off += uint64(n)
	}
	g.setN(f.items())
	if !bitsEqual(f, g) || g.items() != f.items() {
		t.Fatal("chunked restore differs")
	}
	for _, c := range []struct {
		n   int
		off uint64
	}{{1, size}, {int(size) + 1, 0}, {2, size - 1}, {1, math.MaxUint64}, {8, math.MaxUint64 - 4}} {
		if err := g.writeBitsAt(make([]byte, c.n), c.off); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("writeBitsAt(%d bytes, off %d) = %v", c.n, c.off, err)
		}
	}
	if !bitsEqual(f, g) {
		t.Fatal("failed WriteBitsAt changed bits")
	}
	// WriteBitsAt overwrites (can clear) and keeps padding past m zero.
	p, _ := NewWithConfig(Config{M: 20, K: 2})
	if err := p.writeBitsAt([]byte{0xff, 0xff, 0xff, 0xff}, 0); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.SetBits != 20 || p.items() != 0 {
		t.Fatalf("padding: %d bits set, N %d", s.SetBits, p.items())
	}
	// Byte 1 becomes 0x0f: bits 8..11 stay set, 12..15 are cleared.
	if err := p.writeBitsAt([]byte{0x0f}, 1); err != nil {
		t.Fatal(err)
	}
	if got := p.bits[0]; got != 0xf0fff {
		t.Fatalf("after overwrite word = %#x, want 0xf0fff", got)
	}
}

// TestLargeFilter checks a filter of more than 2^32 bits (512 MiB): bit
// indexes beyond 2^32 are set, found and visible at the right byte offset.
func TestLargeFilter(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 512 MiB")
	}
	const m = 1<<32 + 64*1024
	f, err := NewWithConfig(Config{M: m, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GC()
	// Pairs whose probes all land above 2^32: x_i = h1 + i·h2 < m.
	pairs := [][2]uint64{
		{1<<32 + 5, 1000},
		{1<<32 + 64*1024 - 1, math.MaxUint64}, // h2 = −1: walks down from the top bit
		{m + 1<<32 + 17, 3},                   // h1 ≥ m: reduced mod m to 2^32+17
	}
	for _, p := range pairs {
		if f.TestHash(p[0], p[1]) {
			t.Fatalf("pair %v present in empty region", p)
		}
		f.AddHash(p[0], p[1])
		for i := uint64(0); i < 3; i++ {
			x := (p[0] + i*p[1]) % m
			if x <= 1<<32 {
				t.Fatalf("test setup: position %d not beyond 2^32", x)
			}
			if f.bits[x>>6]&(1<<(x&63)) == 0 {
				t.Fatalf("bit %d not set", x)
			}
			var b [1]byte
			if f.readBitsAt(b[:], x>>3) != 1 || b[0]&(1<<(x&7)) == 0 {
				t.Fatalf("bit %d not visible at byte offset %d", x, x>>3)
			}
		}
		if !f.TestHash(p[0], p[1]) {
			t.Fatalf("pair %v lost", p)
		}
	}
	// Nothing landed in the low 2^32 bits (no 32-bit truncation).
	for i := uint64(0); i < 1<<26; i += 1 << 14 {
		if f.bits[i] != 0 {
			t.Fatalf("word %d set: index truncated to 32 bits", i)
		}
	}
	if f.bits[(1<<32+5)>>6] == 0 {
		t.Fatal("expected high word set")
	}
	// Keys, too: find a key whose first probe lands beyond 2^32 (about 1
	// in 65537 keys) and check the key path sets and finds that bit.
	var buf []byte
	found := false
	for i := uint64(0); i < 5_000_000 && !found; i++ {
		buf = userKey(buf, i)
		h1, _ := Hash(buf)
		if x := h1 % m; x >= 1<<32 {
			found = true
			f.Add(buf)
			if f.bits[x>>6]&(1<<(x&63)) == 0 || !f.Test(buf) {
				t.Fatalf("key %q: bit %d beyond 2^32 not set/found", buf, x)
			}
		}
	}
	if !found {
		t.Fatal("no key with a probe beyond 2^32 found")
	}
}

func TestConcurrentAddTest(t *testing.T) {
	const writers, perWriter = 4, 5000
	f := mustNew(t, writers*perWriter, 0.01)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for i := uint64(0); i < perWriter; i++ {
				buf = userKey(buf, uint64(w)*perWriter+i)
				if i%2 == 0 {
					f.Add(buf)
				} else {
					f.AddHash(Hash(buf))
				}
				if !f.Test(buf) {
					t.Errorf("key %q not found right after Add", buf)
					return
				}
			}
		}()
	}
	var rg sync.WaitGroup
	for r := range 2 {
		rg.Add(1)
		go func() {
			defer rg.Done()
			var buf []byte
			for i := uint64(0); ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				f.Test(userKey(buf, (i*7919+uint64(r))%(writers*perWriter)))
				if i%1000 == 0 {
					_ = f.Stats()
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	var buf []byte
	for i := uint64(0); i < writers*perWriter; i++ {
		if !f.Test(userKey(buf, i)) {
			t.Fatalf("false negative for %q after concurrent adds", buf)
		}
	}
	if n := f.items(); n > writers*perWriter || n < writers*perWriter*98/100 {
		t.Errorf("N = %d after %d distinct adds", n, writers*perWriter)
	}
}

func TestZeroAllocations(t *testing.T) {
	f := mustNew(t, 1000, 0.01)
	s, err := NewScalableWithConfig(ScalableConfig{Capacity: 1 << 20, ErrorRate: 0.01, Growth: 2})
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("some-key-16bytes")
	skey := "some-key-16bytes"
	h1, h2 := Hash(key)
	keys := [][]byte{key, []byte("b"), []byte("c")}
	out := make([]bool, 0, len(keys))
	var stackKey [16]byte
	for name, fn := range map[string]func(){
		"Add":        func() { f.Add(key) },
		"AddString":  func() { f.addString(skey) },
		"AddHash":    func() { f.AddHash(h1, h2) },
		"Test":       func() { f.Test(key) },
		"TestString": func() { f.testString(skey) },
		"TestHash":   func() { f.TestHash(h1, h2) },
		"TestAndAdd": func() { f.TestAndAdd(key) },
		"AddMany":    func() { f.AddMany(keys) },
		"TestMany":   func() { out = f.TestMany(keys, out) },
		"StackKey":   func() { stackKey[0]++; f.Test(stackKey[:]); f.Add(stackKey[:]) },
		"Scalable":   func() { _ = s.AddHash(h1, h2); s.TestHash(h1, h2); s.Test(key) },
	} {
		if n := testing.AllocsPerRun(200, fn); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
}

func TestHashIDs(t *testing.T) {
	if !canHashKeys(HashXXH3_128) || canHashKeys(hashMurmur64A) || canHashKeys(7) {
		t.Error("CanHashKeys")
	}
	if HashXXH3_128.String() != "xxh3-128" || hashMurmur64A.String() != "murmur64a" || HashID(9).String() != "hash#9" {
		t.Error("HashID.String")
	}
	// A seeded filter hashes keys with the seed; seed 0 is plain XXH3-128.
	f, _ := NewWithConfig(Config{M: 1 << 16, K: 4})
	if err := f.setHash(HashXXH3_128, 12345); err != nil {
		t.Fatal(err)
	}
	f.Add([]byte("k"))
	if !f.Test([]byte("k")) || !f.testString("k") {
		t.Fatal("seeded filter lost its key")
	}
	if f.TestHash(Hash([]byte("k"))) {
		t.Error("seeded filter used the unseeded hash")
	}
	if err := f.setHash(0, 0); !errors.Is(err, ErrInvalidParameter) {
		t.Error("setHash(0) accepted")
	}
	// Key methods on a hash this package cannot compute refuse loudly.
	m, _ := NewWithConfig(Config{M: 64, K: 2})
	_ = m.setHash(hashMurmur64A, 0)
	defer func() {
		if recover() == nil {
			t.Error("Test on a murmur filter did not panic")
		}
	}()
	m.Test([]byte("k"))
}

func TestSetSizing(t *testing.T) {
	f, _ := NewWithConfig(Config{M: 64, K: 2})
	if err := f.setSizing(5, 0.1); err != nil || f.capacityN() != 5 || f.targetRate() != 0.1 {
		t.Error("SetSizing")
	}
	for _, p := range []float64{-1, 1, math.NaN(), math.Inf(1)} {
		if err := f.setSizing(5, p); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("setSizing(p=%v) accepted", p)
		}
	}
}
