package bloom

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/probly/probly/internal/testutil"
)

func mustCounting(t testing.TB, n uint64, p float64) *Counting {
	t.Helper()
	c, err := NewCounting(n, p)
	if err != nil {
		t.Fatalf("NewCounting(%d, %v): %v", n, p, err)
	}
	return c
}

// TestCountingMultisetModel runs random Add/Remove sequences against a
// multiset model: items in the model (count > 0) always test present (no
// false negatives), Count is at least min(model count, 15), removing a
// present item succeeds, and removing an item the model does not hold is
// refused with ErrNotPresent and no change whenever the filter can tell
// (some counter 0). Small filters make collisions and saturation common.
func TestCountingMultisetModel(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := splitmix64(seed)
		m := 64 + rng.next()%2000
		k := uint32(1 + rng.next()%8)
		c, err := NewCountingWithConfig(CountingConfig{M: m, K: k})
		if err != nil {
			t.Fatal(err)
		}
		universe := 50 + rng.next()%300
		model := map[uint64]int{}
		var buf []byte
		total := 0
		for step := 0; step < 5000; step++ {
			x := rng.next() % universe
			buf = userKey(buf, x)
			switch op := rng.next() % 10; {
			case op < 5: // add
				c.Add(buf)
				model[x]++
				total++
			case op < 8: // remove a present item
				if model[x] == 0 {
					continue
				}
				if !c.Remove(buf) {
					t.Fatalf("seed %d step %d: removing present %q refused", seed, step, buf)
				}
				model[x]--
				total--
			default: // remove an item the model does not hold
				if model[x] != 0 || c.Test(buf) {
					continue // present, or a false positive the filter cannot detect
				}
				before := c.clone()
				if c.Remove(buf) {
					t.Fatalf("seed %d: removing absent %q succeeded", seed, buf)
				}
				if !c.equal(before) {
					t.Fatalf("seed %d: refused Remove changed the filter", seed)
				}
			}
			if step%97 == 0 {
				for y, cnt := range model {
					if cnt == 0 {
						continue
					}
					buf = userKey(buf, y)
					if !c.Test(buf) {
						t.Fatalf("seed %d step %d: false negative for %q (count %d)", seed, step, buf, cnt)
					}
					if got := int(c.Count(buf)); got < min(cnt, CounterMax) {
						t.Fatalf("seed %d: Count(%q) = %d < model %d", seed, buf, got, cnt)
					}
				}
			}
		}
		if c.items() != uint64(total) {
			t.Fatalf("seed %d: N = %d, model holds %d", seed, c.items(), total)
		}
	}
}

func TestCountingSaturation(t *testing.T) {
	c := mustCounting(t, 1000, 0.01)
	key := []byte("hot")
	for i := 0; i < 20; i++ {
		c.Add(key)
		if want := uint64(min(i+1, 15)); c.Count(key) != want {
			t.Fatalf("after %d adds Count = %d, want %d", i+1, c.Count(key), want)
		}
	}
	if s := c.saturated(); s != uint64(c.numHashes()) {
		t.Fatalf("%d saturated counters, want k = %d", s, c.numHashes())
	}
	// Saturated counters stick: any number of removes keeps the key.
	for i := 0; i < 40; i++ {
		if !c.Remove(key) {
			t.Fatalf("remove %d refused", i)
		}
		if !c.Test(key) || c.Count(key) != 15 {
			t.Fatalf("saturated key lost after %d removes", i+1)
		}
	}
	if c.items() != 0 {
		t.Errorf("N = %d after more removes than adds, want 0 (floor)", c.items())
	}
	// Another key sharing a saturated counter keeps it saturated.
	h1, _ := Hash(key)
	x := h1 % c.numBits()
	other, err := NewCountingWithConfig(CountingConfig{M: c.numBits(), K: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 16; i++ {
		other.AddHash(x, 0)
	}
	if other.counter(x) != 15 || !other.RemoveHash(x, 0) || other.counter(x) != 15 {
		t.Fatal("saturated counter decremented")
	}
}

func TestCountingRemoveAbsent(t *testing.T) {
	c := mustCounting(t, 100, 0.01)
	before := c.clone()
	for _, k := range []string{"a", "b", ""} {
		if c.removeString(k) {
			t.Fatalf("Remove(%q) on empty filter succeeded", k)
		}
	}
	if !c.equal(before) || c.items() != 0 {
		t.Fatal("refused removes changed the filter")
	}
	c.addString("a")
	c.addString("a")
	if c.CountHash(Hash([]byte("a"))) != 2 {
		t.Fatalf("Count %d", c.Count([]byte("a")))
	}
	for range 2 { // both copies
		if !c.removeString("a") {
			t.Fatal("removing an added key failed")
		}
	}
	if c.testString("a") || c.removeString("a") {
		t.Fatal("key still present after removing both adds")
	}
	if !c.equal(before) {
		t.Fatal("add+remove did not restore the empty filter")
	}
}

// TestCountingRepeatedProbes covers items whose probes repeat a counter
// (h2 ≡ 0 mod m): Add counts it k times, and a Remove that finds it too low
// for all k decrements is refused and rolled back.
func TestCountingRepeatedProbes(t *testing.T) {
	c, err := NewCountingWithConfig(CountingConfig{M: 100, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	c.AddHash(7, 100) // probes 7, 7, 7
	if c.counter(7) != 3 || c.CountHash(7, 100) != 3 {
		t.Fatalf("counter %d", c.counter(7))
	}
	if !c.RemoveHash(7, 100) || c.counter(7) != 0 {
		t.Fatal("remove")
	}
	c.AddHash(7, 1) // probes 7, 8, 9
	before := c.clone()
	if c.RemoveHash(7, 0) {
		t.Fatal("remove with counter 1 < 3 probes succeeded")
	}
	if !c.equal(before) {
		t.Fatal("refused remove was not rolled back")
	}
	// Rollback also restores partially decremented distinct counters.
	c.AddHash(50, 1) // 50, 51, 52
	before = c.clone()
	if c.RemoveHash(50, 25) { // 50, 75: 75 is 0
		t.Fatal("remove succeeded")
	}
	if !c.equal(before) {
		t.Fatal("partial remove not rolled back")
	}
}

// TestCountingOver2To32Counters checks a filter of 2^32 + 64 counters
// (2 GiB of nibbles, nearly all untouched so not resident): counters past
// index 2^32 are counted, read and removed at the right place, with no
// 32-bit truncation. It allocates 2 GiB of address space, so it is skipped
// in -short mode.
func TestCountingOver2To32Counters(t *testing.T) {
	testutil.Full(t)
	if testing.Short() {
		t.Skip("allocates 3 GiB")
	}
	const m = 1<<32 + 1<<31
	c, err := NewCountingWithConfig(CountingConfig{M: m, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GC()
	pairs := [][2]uint64{
		{1<<32 + 5, 7},                  // 2^32+5, +12, +19
		{m - 1, math.MaxUint64},         // walks down from the last counter
		{m + 1<<32 + 17, 1},             // h1 ≥ m reduces to 2^32+17
		{1<<32 + 40, m},                 // h2 ≡ 0: one counter, three times
		{(1 << 32) + 63, (1 << 33) + 1}, // large stride, wraps mod m
	}
	for _, p := range pairs {
		if c.TestHash(p[0], p[1]) {
			t.Fatalf("%v present in an empty region", p)
		}
		c.AddHash(p[0], p[1])
		c.AddHash(p[0], p[1])
		if !c.TestHash(p[0], p[1]) || c.CountHash(p[0], p[1]) < 2 {
			t.Fatalf("%v: count %d after two adds", p, c.CountHash(p[0], p[1]))
		}
		for i := uint64(0); i < 3; i++ {
			x := (p[0] + i*p[1]) % m
			if x <= 1<<32 && p != pairs[4] {
				t.Fatalf("test setup: position %d not beyond 2^32", x)
			}
			if c.counter(x) == 0 {
				t.Fatalf("%v: counter %d is 0", p, x)
			}
			// Not truncated: the counter at x mod 2^32 is untouched.
			if y := x & (1<<32 - 1); y != x && y < 1<<31 && c.counter(y) != 0 {
				t.Fatalf("counter %d (= %d mod 2^32) set: truncated index", y, x)
			}
		}
	}
	for _, p := range pairs {
		for r := 0; r < 2; r++ {
			if !c.RemoveHash(p[0], p[1]) {
				t.Fatalf("%v: remove %d refused", p, r)
			}
		}
		if c.TestHash(p[0], p[1]) {
			t.Fatalf("%v still present after removing both adds", p)
		}
		if c.RemoveHash(p[0], p[1]) {
			t.Fatalf("%v: third remove succeeded", p)
		}
	}
	if c.counter(1<<32+5) != 0 || c.counter(m-1) != 0 {
		t.Fatal("counters not back to 0")
	}

	// Random items over the whole range, against a model of every counter
	// they touch: (h1 + i·h2) mod m in wrapping 64-bit arithmetic, the
	// documented position formula. A third of the positions lie beyond 2^32, so a
	// truncated index or a 32-bit offset anywhere shows up as a wrong
	// counter. Items are added 1, 2 or 20 times (20 saturates at 15).
	rng := rand.New(rand.NewPCG(42, 7))
	model := map[uint64]uint64{}
	type item struct{ h1, h2, times uint64 }
	items := make([]item, 0, 20000)
	beyond := 0
	for len(items) < cap(items) {
		it := item{h1: rng.Uint64(), h2: rng.Uint64(), times: []uint64{1, 2, 20}[rng.IntN(3)]}
		seen := map[uint64]bool{}
		dup := false
		for i := uint64(0); i < 3; i++ {
			x := (it.h1 + i*it.h2) % m
			dup = dup || seen[x]
			seen[x] = true
		}
		if dup {
			continue // an item hitting one counter twice is covered above
		}
		for x := range seen {
			model[x] += it.times
			if x > 1<<32 {
				beyond++
			}
		}
		for r := uint64(0); r < it.times; r++ {
			c.AddHash(it.h1, it.h2)
		}
		items = append(items, it)
	}
	if beyond < len(items)/2 {
		t.Fatalf("test setup: only %d of %d positions beyond 2^32", beyond, 3*len(items))
	}
	check := func(stage string) {
		t.Helper()
		for x, want := range model {
			if want > CounterMax {
				want = CounterMax
			}
			if got := c.counter(x); got != want {
				t.Fatalf("%s: counter %d = %d, model %d", stage, x, got, want)
			}
		}
	}
	check("after adds")
	for _, it := range items {
		want := it.times
		if want > CounterMax {
			want = CounterMax
		}
		if got := uint64(c.CountHash(it.h1, it.h2)); got < want {
			t.Fatalf("item %+v: Count %d < %d", it, got, want)
		}
	}
	// Remove one copy of every item added once or twice whose counters are
	// not saturated: the model drops by one on each of its counters.
	for _, it := range items {
		if it.times == 20 {
			continue
		}
		sat := false
		for i := uint64(0); i < 3; i++ {
			sat = sat || model[(it.h1+i*it.h2)%m] >= CounterMax
		}
		if sat {
			continue
		}
		if !c.RemoveHash(it.h1, it.h2) {
			t.Fatalf("remove %+v refused", it)
		}
		for i := uint64(0); i < 3; i++ {
			model[(it.h1+i*it.h2)%m]--
		}
	}
	check("after removes")
}

func TestCountingStatsUnionIntersect(t *testing.T) {
	a, b := mustCounting(t, 2000, 0.01), mustCounting(t, 2000, 0.01)
	var buf []byte
	for i := uint64(0); i < 1500; i++ {
		if i < 1000 {
			a.Add(userKey(buf, i))
		}
		if i >= 500 {
			b.Add(userKey(buf, i))
		}
	}
	st := a.Stats()
	var nonzero uint64
	for x := uint64(0); x < a.numBits(); x++ {
		if a.counter(x) != 0 {
			nonzero++
		}
	}
	if st.SetBits != nonzero || st.M != a.numBits() || st.K != a.numHashes() || st.N != 1000 || st.Bytes != 8*((a.numBits()+15)/16) ||
		st.Capacity != 2000 || st.P != 0.01 || math.Abs(st.FPR-math.Pow(st.FillRatio, float64(st.K))) > 1e-15 {
		t.Fatalf("stats %+v, nonzero %d", st, nonzero)
	}
	if math.Abs(st.Cardinality-1000)/1000 > 0.05 {
		t.Errorf("estimated cardinality %.0f for 1000 keys", st.Cardinality)
	}
	u, x := a.clone(), a.clone()
	if err := u.Merge(b); err != nil {
		t.Fatal(err)
	}
	if err := x.Intersect(b); err != nil {
		t.Fatal(err)
	}
	for i := uint64(0); i < 1500; i++ {
		buf = userKey(buf, i)
		want := uint64(1)
		if i >= 500 && i < 1000 {
			want = 2
			if !x.Test(buf) {
				t.Fatalf("intersection lost %q", buf)
			}
		}
		if u.Count(buf) < want {
			t.Fatalf("union count of %q = %d, want ≥ %d", buf, u.Count(buf), want)
		}
	}
	// The union is the multiset sum: removing a's items leaves b's.
	for i := uint64(0); i < 1000; i++ {
		if !u.Remove(userKey(buf, i)) {
			t.Fatalf("remove %d from union refused", i)
		}
	}
	for i := uint64(500); i < 1500; i++ {
		if !u.Test(userKey(buf, i)) {
			t.Fatalf("union minus a lost b's %q", buf)
		}
	}
	if u.items() != 1000 || x.items() != 1000 {
		t.Errorf("N: %d %d", u.items(), x.items())
	}
	// Union saturates.
	s := mustCounting(t, 10, 0.1)
	for i := 0; i < 10; i++ {
		s.addString("z")
	}
	s2 := s.clone()
	if err := s.Merge(s2); err != nil || s.CountHash(Hash([]byte("z"))) != 15 {
		t.Fatalf("saturating union: %v %d", err, s.Count([]byte("z")))
	}
	c := mustCounting(t, 5000, 0.01)
	if err := a.Merge(c); !errors.Is(err, ErrIncompatible) || !containsAll(err.Error(), fmt.Sprint(a.numBits()), fmt.Sprint(c.numBits())) {
		t.Errorf("m mismatch: %v", err)
	}
	d, _ := NewCountingWithConfig(CountingConfig{M: a.numBits(), K: a.numHashes() + 1})
	if err := a.Intersect(d); !errors.Is(err, ErrIncompatible) {
		t.Errorf("k mismatch: %v", err)
	}
}

func TestCountingBatchEqualsSingle(t *testing.T) {
	for _, n := range []int{0, 1, 36, 37, 1000} {
		a, b := mustCounting(t, 500, 0.01), mustCounting(t, 500, 0.01)
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = prefixKey(nil, uint64(i%300))
		}
		for _, k := range keys {
			a.Add(k)
		}
		b.AddMany(keys)
		if !a.equal(b) {
			t.Fatalf("n=%d: AddMany differs from Add", n)
		}
		probes := make([][]byte, 700)
		for i := range probes {
			probes[i] = prefixKey(nil, uint64(i))
		}
		out := b.TestMany(probes, nil)
		for i, k := range probes {
			if out[i] != a.Test(k) {
				t.Fatalf("TestMany[%d]", i)
			}
		}
	}
	// k larger than the batch falls back to one key at a time.
	a, _ := NewCountingWithConfig(CountingConfig{M: 100000, K: 300})
	b, _ := NewCountingWithConfig(CountingConfig{M: 100000, K: 300})
	keys := [][]byte{[]byte("x"), []byte("y")}
	a.Add(keys[0])
	a.Add(keys[1])
	b.AddMany(keys)
	if !a.equal(b) || fmt.Sprint(b.TestMany(keys, nil)) != "[true true]" {
		t.Fatal("k > batch")
	}
}

func TestCountingParameters(t *testing.T) {
	for _, c := range []struct {
		m    uint64
		k    uint32
		want error
	}{{0, 1, ErrInvalidParameter}, {10, 0, ErrInvalidParameter}, {10, MaxK + 1, ErrInvalidParameter}, {MaxCounters + 1, 1, ErrTooLarge}} {
		if _, err := NewCountingWithConfig(CountingConfig{M: c.m, K: c.k}); !errors.Is(err, c.want) {
			t.Errorf("m=%d k=%d: %v", c.m, c.k, err)
		}
	}
	for _, p := range []float64{0, 1, math.NaN()} {
		if _, err := NewCounting(10, p); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("p=%v: %v", p, err)
		}
	}
	c := mustCounting(t, 10, 0.1)
	if err := c.setHash(0, 1); !errors.Is(err, ErrInvalidParameter) {
		t.Error("setHash(0)")
	}
	if err := c.setHash(HashXXH3_128, 9); err != nil || c.hashSeed() != 9 || c.hashKind() != HashXXH3_128 {
		t.Error("SetHash")
	}
	c.addString("a")
	if !c.Test([]byte("a")) || c.capacityN() != 10 || c.targetRate() != 0.1 {
		t.Error("seeded add")
	}
	c.setN(42)
	if c.items() != 42 {
		t.Error("SetN")
	}
}
