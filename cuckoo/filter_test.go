package cuckoo

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"
)

// TestAltInvolution checks alt(alt(i, fp), fp) == i for every table size
// the package allows (2^0 … 2^40 buckets), every fingerprint of both widths
// (1 … 65535 covers 1 … 255) and pseudo-random bucket indices, and that a
// key's two buckets are each other's alternates.
func TestAltInvolution(t *testing.T) {
	rng := splitmix64(1)
	for lg := 0; lg <= 40; lg++ {
		mask := uint64(1)<<lg - 1
		for fp := uint64(1); fp <= 65535; fp++ {
			i := rng.next() & mask
			if got := altBucket(altBucket(i, fp, mask), fp, mask); got != i {
				t.Fatalf("2^%d buckets, fp %d: alt(alt(%d)) = %d", lg, fp, i, got)
			}
			h := rng.next()
			b1, b2 := h&mask, altBucket(h, fp, mask)
			if altBucket(b1, fp, mask) != b2 || altBucket(b2, fp, mask) != b1 {
				t.Fatalf("2^%d buckets, fp %d, h %#x: buckets %d and %d are not alternates", lg, fp, h, b1, b2)
			}
		}
	}
}

// TestFingerprints checks the fingerprint ranges: 8-bit 1 … 255, 16-bit
// 1 … 65535, never 0 (the empty slot).
func TestFingerprints(t *testing.T) {
	for _, h := range []uint64{0, 1, 254, 255, 256, 65534, 65535, 65536, math.MaxUint64, math.MaxUint64 - 1} {
		if a, b := fp8(h), uint64(h%255+1); uint64(a) != b || a == 0 {
			t.Errorf("fp8(%d) = %d, want %d", h, a, b)
		}
		if a, b := fp16(h), uint64(h%65535+1); uint64(a) != b || a == 0 {
			t.Errorf("fp16(%d) = %d, want %d", h, a, b)
		}
	}
}

// TestNoKeyLostWhenFull is the failure mode of other Go cuckoo filters:
// fill a 1,024-slot filter with 5,000 keys. Every insert that succeeded
// must still be found, every failed insert must leave the filter exactly as
// it was, and the failures must be ErrFull.
func TestNoKeyLostWhenFull(t *testing.T) {
	for _, c := range []Config{
		{Buckets: 256, BucketSize: 4, FingerprintBits: 8, MaxKicks: 500},
		{Buckets: 256, BucketSize: 4, FingerprintBits: 16, MaxKicks: 20},
		{Buckets: 512, BucketSize: 2, FingerprintBits: 8, MaxKicks: 20},
		{Buckets: 1024, BucketSize: 1, FingerprintBits: 8, MaxKicks: 1},
	} {
		t.Run(fmt.Sprintf("b=%d,f=%d,kicks=%d", c.BucketSize, c.FingerprintBits, c.MaxKicks), func(t *testing.T) {
			f := mustConfig(t, c)
			var in [][]byte
			failed := 0
			var buf []byte
			for i := uint64(0); i < 5000; i++ {
				buf = userKey(buf, i)
				before := f.Clone()
				err := f.Add(buf)
				switch {
				case err == nil:
					in = append(in, append([]byte(nil), buf...))
				case errors.Is(err, ErrFull):
					failed++
					if !f.equal(before) {
						t.Fatalf("failed insert of key %d changed the filter", i)
					}
				default:
					t.Fatal(err)
				}
			}
			lost := 0
			for _, k := range in {
				if !f.Test(k) {
					lost++
				}
			}
			st := f.Stats()
			t.Logf("%d inserted, %d refused, load %.3f, %d lost", len(in), failed, st.FillRatio, lost)
			if lost != 0 {
				t.Fatalf("%d of %d inserted keys lost", lost, len(in))
			}
			if failed == 0 || st.N != uint64(len(in)) || st.SetBits != st.N || f.subFilters() != 1 {
				t.Fatalf("stats %+v after %d successes", st, len(in))
			}
		})
	}
}

// model is a multiset of keys.
type model map[string]int

func (m model) total() uint64 {
	n := uint64(0)
	for _, c := range m {
		n += uint64(c)
	}
	return n
}

// TestModel runs random sequences of inserts (with duplicates), unique
// inserts, deletes of inserted keys, lookups and compactions against a
// multiset model, on small filters that fill up, fail inserts and grow.
// After every operation: every key of the model is found, Count is at
// least its multiplicity, Items equals the model's size, and a failed
// insert changed nothing.
func TestModel(t *testing.T) {
	ops := 2000
	if raceEnabled || testing.Short() {
		ops = 1000
	}
	seed := splitmix64(42)
	for _, fpBits := range []int{8, 16} {
		for _, bs := range []int{1, 2, 4} {
			for _, exp := range []uint32{0, 1, 2, 4} {
				for _, kicks := range []int{1, 20, 500} {
					c := Config{Buckets: 8, BucketSize: bs, FingerprintBits: fpBits, MaxKicks: kicks, Expansion: exp, MaxBytes: 1 << 14}
					s := seed.next()
					t.Run(fmt.Sprintf("f=%d,b=%d,e=%d,k=%d", fpBits, bs, exp, kicks), func(t *testing.T) {
						t.Parallel()
						runModel(t, c, ops, s)
					})
				}
			}
		}
	}
}

func runModel(t *testing.T, c Config, ops int, seed uint64) {
	f := mustConfig(t, c)
	rng := splitmix64(seed)
	m := model{}
	universe := 150
	var present []string
	refresh := func() {
		present = present[:0]
		for k, n := range m {
			if n > 0 {
				present = append(present, k)
			}
		}
	}
	check := func(op int, what string) {
		for k, n := range m {
			if !f.Test([]byte(k)) {
				t.Fatalf("op %d (%s): false negative for %q (×%d)", op, what, k, n)
			}
			if got := f.Count([]byte(k)); got < uint64(n) {
				t.Fatalf("op %d (%s): Count(%q) = %d < %d", op, what, k, got, n)
			}
		}
		if f.Stats().N != m.total() {
			t.Fatalf("op %d (%s): Items %d, model %d", op, what, f.Stats().N, m.total())
		}
		if st := f.Stats(); st.SetBits != m.total() || st.Bytes != f.Stats().Bytes {
			t.Fatalf("op %d (%s): stats %+v, model %d", op, what, st, m.total())
		}
	}
	full, grown := 0, 0
	for op := 0; op < ops; op++ {
		key := "k" + strconv.Itoa(rng.intn(universe))
		var what string
		r := rng.intn(100)
		if (op/250)%2 == 1 && r < 55 {
			// Shrinking phase: mostly deletes, so compaction and refills
			// are exercised too.
			r = 65 + r%25
		}
		switch {
		case r < 55 || (r < 80 && len(m) == 0):
			what = "insert " + key
			before := f.Clone()
			subs := f.subFilters()
			switch err := f.Add([]byte(key)); {
			case err == nil:
				m[key]++
				if f.subFilters() > subs {
					grown++
				}
			case errors.Is(err, ErrFull), errors.Is(err, ErrTooLarge):
				full++
				if !f.equal(before) {
					t.Fatalf("op %d: failed insert (%v) changed the filter", op, err)
				}
			default:
				t.Fatal(err)
			}
		case r < 65:
			what = "insert-unique " + key
			before := f.Clone()
			present := f.Test([]byte(key))
			ok, err := f.TestAndAdd([]byte(key))
			switch {
			case err == nil && ok == present:
				if !ok {
					m[key]++
				} else if !f.equal(before) {
					t.Fatalf("op %d: InsertUnique of a present key changed the filter", op)
				}
			case errors.Is(err, ErrFull), errors.Is(err, ErrTooLarge):
				full++
				if !f.equal(before) {
					t.Fatalf("op %d: failed unique insert changed the filter", op)
				}
			default:
				t.Fatalf("op %d: InsertUnique = %v, %v (present %v)", op, ok, err, present)
			}
		case r < 90:
			refresh()
			if len(present) == 0 {
				continue
			}
			key = present[rng.intn(len(present))]
			what = "delete " + key
			if !f.Remove([]byte(key)) {
				t.Fatalf("op %d: Delete(%q) of an inserted key found nothing", op, key)
			}
			m[key]--
			if m[key] == 0 {
				delete(m, key)
			}
		case r < 95:
			what = "compact"
			if rng.intn(2) == 0 {
				f.Compact()
			} else {
				f.compact(true)
			}
			if f.Stats().Deletes != 0 {
				t.Fatalf("op %d: Deletes %d after compaction", op, f.Stats().Deletes)
			}
		default:
			what = "lookup " + key
			if m[key] > 0 && !f.Test([]byte(key)) {
				t.Fatalf("op %d: false negative", op)
			}
		}
		if op%8 == 0 || op == ops-1 {
			check(op, what)
		}
	}
	if c.Expansion == 0 && full == 0 {
		t.Errorf("the filter never filled up (%d sub-filters)", f.subFilters())
	}
	t.Logf("%d refused, %d grew, %d sub-filters, %d items", full, grown, f.subFilters(), f.Stats().N)
}

// TestFillPastCapacityThenContinue fills a non-growing filter well past
// its capacity with distinct keys, keeps inserting, deletes half of what
// went in and inserts again: no inserted key is ever lost.
func TestFillPastCapacityThenContinue(t *testing.T) {
	f := mustConfig(t, Config{Capacity: 1000, BucketSize: 2, FingerprintBits: 8, MaxKicks: 20})
	in := map[uint64]bool{}
	var buf []byte
	try := func(i uint64) {
		buf = prefixKey(buf, i)
		if err := f.Add(buf); err == nil {
			in[i] = true
		} else if !errors.Is(err, ErrFull) {
			t.Fatal(err)
		}
	}
	verify := func(stage string) {
		for i := range in {
			buf = prefixKey(buf, i)
			if !f.Test(buf) {
				t.Fatalf("%s: key %d lost", stage, i)
			}
		}
	}
	for i := uint64(0); i < 4000; i++ {
		try(i)
	}
	verify("after overfill")
	n := 0
	for i := range in {
		if n%2 == 0 {
			buf = prefixKey(buf, i)
			if !f.Remove(buf) {
				t.Fatalf("delete of %d failed", i)
			}
			delete(in, i)
		}
		n++
	}
	verify("after deletes")
	for i := uint64(4000); i < 8000; i++ {
		try(i)
	}
	verify("after refill")
	if st := f.Stats(); st.SetBits != uint64(len(in)) || st.N != uint64(len(in)) {
		t.Fatalf("stats %+v, %d keys", st, len(in))
	}
}

func TestGrowthShape(t *testing.T) {
	f := mustConfig(t, Config{Capacity: 8, BucketSize: 2, FingerprintBits: 8, MaxKicks: 5, Expansion: 3})
	if f.Config().Expansion != 4 || f.Config().Buckets != 4 {
		t.Fatalf("config %+v", f.Config())
	}
	for i := 0; f.subFilters() < 4; i++ {
		if err := f.Add([]byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []uint64{4, 16, 64, 256} {
		if got := f.subFilterBuckets(i); got != want {
			t.Errorf("sub-filter %d: %d buckets, want %d", i, got, want)
		}
		if got := f.tableBytes(i); got != 2*want {
			t.Errorf("sub-filter %d: %d bytes", i, got)
		}
	}
	if f.Stats().Bytes != 2*(4+16+64+256) || f.subFilterBuckets(4) != 0 || f.tableBytes(-1) != 0 {
		t.Fatalf("sizes %d", f.Stats().Bytes)
	}
	// The budget stops growth with ErrTooLarge and no change.
	f.setMaxBytes(f.Stats().Bytes + 100)
	var err error
	for i := 0; err == nil; i++ {
		before := f.Clone()
		if err = f.Add([]byte("x" + strconv.Itoa(i))); err != nil && !f.equal(before) {
			t.Fatal("failed growth changed the filter")
		}
	}
	if !errors.Is(err, ErrTooLarge) || f.subFilters() != 4 {
		t.Fatalf("%v with %d sub-filters", err, f.subFilters())
	}
}

// TestDuplicates: a key inserted repeatedly takes its two buckets of each
// sub-filter (2b copies, b if both buckets coincide), then needs a new
// sub-filter; Count follows the copies and Delete removes one at a time.
func TestDuplicates(t *testing.T) {
	f := mustConfig(t, Config{Buckets: 64, BucketSize: 2, FingerprintBits: 8, MaxKicks: 20})
	key := []byte("dup")
	n := 0
	for ; f.Add(key) == nil; n++ {
		if got := f.Count(key); got != uint64(n+1) {
			t.Fatalf("Count after %d inserts: %d", n+1, got)
		}
	}
	if n != 4 {
		t.Fatalf("%d copies fit, want 2·b = 4", n)
	}
	for ; n > 0; n-- {
		if !f.Test(key) || !f.Remove(key) {
			t.Fatalf("copy %d not deletable", n)
		}
	}
	if f.Test(key) || f.Remove(key) || f.Count(key) != 0 || f.Stats().N != 0 || f.Stats().Deletes != 4 {
		t.Fatalf("after deleting every copy: %+v", f.Stats())
	}
	g := mustConfig(t, Config{Buckets: 16, BucketSize: 3, FingerprintBits: 16, Expansion: 1})
	for i := 0; i < 30; i++ {
		if err := g.Add(key); err != nil {
			t.Fatal(err)
		}
	}
	if g.Count(key) < 30 || g.subFilters() < 5 {
		t.Fatalf("count %d over %d sub-filters", g.Count(key), g.subFilters())
	}
}

func TestCompact(t *testing.T) {
	f := mustConfig(t, Config{Buckets: 32, BucketSize: 4, FingerprintBits: 16, MaxKicks: 10, Expansion: 1})
	var keys []string
	for i := 0; f.subFilters() < 5; i++ {
		k := "key-" + strconv.Itoa(i)
		if err := f.Add([]byte(k)); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	// A full older set of sub-filters: nothing can move, nothing is freed.
	subs := f.subFilters()
	f.compact(true)
	if f.subFilters() != subs {
		t.Fatalf("CompactNewest freed a sub-filter of a full filter: %d → %d", subs, f.subFilters())
	}
	for i, k := range keys {
		if i%4 != 0 && !f.Remove([]byte(k)) {
			t.Fatalf("delete %q", k)
		}
	}
	var left []string
	for i, k := range keys {
		if i%4 == 0 {
			left = append(left, k)
		}
	}
	if f.Stats().Deletes == 0 {
		t.Fatal("deletes not counted")
	}
	f.Compact()
	if f.subFilters() >= subs || f.Stats().Deletes != 0 {
		t.Fatalf("compaction left %d of %d sub-filters, deletes %d", f.subFilters(), subs, f.Stats().Deletes)
	}
	for _, k := range left {
		if !f.Test([]byte(k)) {
			t.Fatalf("%q lost by compaction", k)
		}
	}
	st := f.Stats()
	if st.SetBits != uint64(len(left)) || st.Bytes != uint64(st.SubFilters)*32*4*2 {
		t.Fatalf("stats %+v", st)
	}
	// Deleting everything and compacting leaves one empty sub-filter.
	for _, k := range left {
		f.Remove([]byte(k))
	}
	f.Compact()
	if f.subFilters() != 1 || f.Stats().SetBits != 0 || f.Stats().Bytes != 32*4*2 {
		t.Fatalf("%d sub-filters after emptying", f.subFilters())
	}
}

func TestConfigValidation(t *testing.T) {
	for _, c := range []Config{
		{},
		{Capacity: 10, BucketSize: 256},
		{Capacity: 10, BucketSize: -1},
		{Capacity: 10, FingerprintBits: 12},
		{Capacity: 10, MaxKicks: 65536},
		{Capacity: 10, MaxKicks: -3},
		{Capacity: 10, Expansion: 32769},
		{Buckets: 3},
	} {
		if _, err := NewWithConfig(c); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	for _, c := range []Config{
		{Buckets: 1 << 41},
		{Capacity: math.MaxUint64},
		{Capacity: 1000, MaxBytes: 100},
	} {
		if _, err := NewWithConfig(c); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	f, err := NewWithConfig(Config{Capacity: 1})
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Config(); c.Capacity != 1 || c.Buckets != 1 || c.BucketSize != 4 || c.FingerprintBits != 16 || c.MaxKicks != 500 || c.HashID != HashXXH3 || c.Expansion != DefaultExpansion {
		t.Fatalf("defaults %+v", c)
	}
	// RedisBloom's sizing: nextPow2(capacity / bucket size).
	for _, v := range [][3]uint64{{1000, 2, 512}, {100, 2, 64}, {4, 2, 2}, {1024, 2, 512}, {1025, 2, 512}, {3, 4, 1}, {2048, 3, 1024}} {
		g := mustConfig(t, Config{Capacity: v[0], BucketSize: int(v[1])})
		if g.subFilterBuckets(0) != v[2] {
			t.Errorf("capacity %d, b %d: %d buckets, want %d", v[0], v[1], g.subFilterBuckets(0), v[2])
		}
	}
	if _, err := restore(Config{Buckets: 4}, 0, 0, 0); !errors.Is(err, ErrInvalidParameter) {
		t.Error(err)
	}
	if _, err := restore(Config{Buckets: 4}, 2, 0, 0); !errors.Is(err, ErrInvalidParameter) {
		t.Error("two sub-filters without expansion:", err)
	}
	if _, err := restore(Config{Buckets: 1 << 20, Expansion: 2, MaxBytes: 1 << 24}, 4, 0, 0); !errors.Is(err, ErrTooLarge) {
		t.Error(err)
	}
	if _, err := restore(Config{Buckets: 1 << 30, Expansion: 32768, FingerprintBits: 8, BucketSize: 1}, 3, 0, 0); !errors.Is(err, ErrTooLarge) {
		t.Error(err)
	}
}

func TestNewParameters(t *testing.T) {
	for _, v := range []struct {
		n      uint64
		p      float64
		f, b   int
		bucket uint64
	}{
		{1000, 0.05, 8, 4, 512},
		{1000, 8.0 / 255, 8, 4, 512},
		{1000, 0.01, 16, 4, 512},
		{100_000, 0.001, 16, 4, 32768},
		{1000, 1e-4, 16, 2, 1024},
		{1000, 5e-5, 16, 1, 2048},
		{1, 0.5, 8, 4, 1},
		{4, 0.5, 8, 4, 2},
	} {
		f, err := New(v.n, v.p)
		if err != nil {
			t.Fatal(err)
		}
		c := f.Config()
		if c.FingerprintBits != v.f || c.BucketSize != v.b || c.Buckets != v.bucket || c.Expansion != 2 || c.MaxKicks != 500 {
			t.Errorf("New(%d, %v) = %+v", v.n, v.p, c)
		}
		var buf []byte
		for i := uint64(0); i < v.n; i++ {
			buf = userKey(buf, i)
			if err := f.Add(buf); err != nil {
				t.Fatal(err)
			}
		}
		for i := uint64(0); i < v.n; i++ {
			buf = userKey(buf, i)
			if !f.Test(buf) {
				t.Fatalf("New(%d, %v): key %d lost", v.n, v.p, i)
			}
		}
	}
	for _, v := range []struct {
		n uint64
		p float64
	}{{0, 0.1}, {10, 0}, {10, 1}, {10, math.NaN()}, {10, -1}, {10, 1e-5}} {
		if _, err := New(v.n, v.p); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("New(%d, %v): %v", v.n, v.p, err)
		}
	}
}

func TestStats(t *testing.T) {
	f := mustConfig(t, Config{Buckets: 1024, BucketSize: 4, FingerprintBits: 8})
	s := f.Stats()
	if s.N != 0 || s.M != 4096 || s.Buckets != 1024 || s.Bytes != 4096 || s.FPR != 0 || s.FillRatio != 0 || s.SubFilters != 1 || s.BucketSize != 4 || s.FingerprintBits != 8 {
		t.Fatalf("%+v", s)
	}
	for i := 0; i < 2048; i++ {
		if err := f.Add([]byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	f.Remove([]byte("7"))
	s = f.Stats()
	want := 1 - math.Pow(1-1.0/255, 8*2047.0/4096)
	if s.N != 2047 || s.Deletes != 1 || s.SetBits != 2047 || math.Abs(s.FillRatio-2047.0/4096) > 1e-12 || math.Abs(s.FPR-want) > 1e-12 {
		t.Fatalf("%+v, want FPR %v", s, want)
	}
}

func TestHashIDs(t *testing.T) {
	if !CanHashKeys(HashXXH3) || CanHashKeys(hashMurmur64A) || CanHashKeys(9) {
		t.Error("CanHashKeys")
	}
	if HashXXH3.String() != "xxh3-64" || hashMurmur64A.String() != "murmur64a-single" || HashID(9).String() != "hash#9" {
		t.Error("String")
	}
	key := []byte("k")
	f := mustConfig(t, Config{Capacity: 64})
	g := mustConfig(t, Config{Capacity: 64, Seed: 7})
	f.Add(key)
	g.Add(key)
	if f.TestHash(Hash(key)) != true || !g.Test([]byte("k")) || !g.Test(key) {
		t.Fatal("seeded or default hash")
	}
	if _, err := NewWithConfig(Config{Capacity: 64, HashID: hashMurmur64A}); !errors.Is(err, ErrInvalidParameter) {
		t.Fatalf("NewWithConfig with a hash this package cannot compute: %v", err)
	}
	m, err := newWithConfig(Config{Capacity: 64, HashID: hashMurmur64A}) // the server's hook
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddHash(12345); err != nil || !m.TestHash(12345) {
		t.Fatal("hash methods on a murmur filter")
	}
	for name, fn := range map[string]func(){
		"Insert": func() { m.Add(key) }, "Lookup": func() { m.Test(key) },
		"LookupString": func() { m.Test([]byte("k")) }, "Delete": func() { m.Remove(key) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s on a murmur filter did not panic", name)
				}
			}()
			fn()
		}()
	}
}

func TestLookupMany(t *testing.T) {
	f := mustConfig(t, Config{Capacity: 100})
	f.Add([]byte("a"))
	f.Add([]byte("c"))
	out := f.TestMany([][]byte{[]byte("a"), []byte("b"), []byte("c")}, nil)
	if fmt.Sprint(out) != "[true false true]" {
		t.Fatal(out)
	}
}

func TestRawTables(t *testing.T) {
	for _, fb := range []int{8, 16} {
		f, err := restore(Config{Buckets: 4, BucketSize: 3, FingerprintBits: fb, Expansion: 2}, 3, 5, 1)
		if err != nil {
			t.Fatal(err)
		}
		w := uint64(fb / 8)
		for i, nb := range []uint64{4, 8, 16} {
			if f.tableBytes(i) != nb*3*w {
				t.Fatalf("f=%d sub %d: %d bytes", fb, i, f.tableBytes(i))
			}
		}
		if f.Stats().N != 5 || f.Stats().Deletes != 1 || f.Stats().SetBits != 0 {
			t.Fatalf("%+v", f.Stats())
		}
		src := make([]byte, f.tableBytes(1))
		for i := range src {
			src[i] = byte(i*7 + 1)
		}
		src[3] = 0
		if err := f.writeTableAt(1, src, 0); err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, len(src)+10)
		if n := f.readTableAt(1, dst, 0); n != len(src) || string(dst[:n]) != string(src) {
			t.Fatalf("f=%d: read back %d bytes %x", fb, n, dst[:n])
		}
		// Partial, odd-offset rewrites keep the used-slot count right.
		if err := f.writeTableAt(1, []byte{0, 0, 0}, 3); err != nil {
			t.Fatal(err)
		}
		want := append([]byte(nil), src...)
		copy(want[3:], []byte{0, 0, 0})
		if n := f.readTableAt(1, dst[:2], 5); n != 2 || dst[0] != 0 || dst[1] != want[6] {
			t.Fatalf("f=%d: partial read %x", fb, dst[:2])
		}
		used := uint64(0)
		for i := 0; i < len(want); i += int(w) {
			if want[i] != 0 || want[i+int(w)-1] != 0 {
				used++
			}
		}
		if got := f.Stats().SetBits; got != used {
			t.Errorf("f=%d: %d used slots, want %d", fb, got, used)
		}
		if fb == 16 {
			// Slot 0 of the 16-bit table is little-endian bytes 0 and 1.
			if got := f.c16.subs[1].data[0]; got != uint16(src[0])|uint16(src[1])<<8 {
				t.Errorf("slot 0 = %#x", got)
			}
		}
		for _, bad := range []struct {
			i   int
			off uint64
			n   int
		}{{3, 0, 1}, {-1, 0, 1}, {0, 12 * w, 1}, {0, 0, int(12*w) + 1}, {2, 1 << 62, 1}} {
			if err := f.writeTableAt(bad.i, make([]byte, bad.n), bad.off); !errors.Is(err, ErrInvalidParameter) {
				t.Errorf("WriteTableAt(%d, %d bytes, %d): %v", bad.i, bad.n, bad.off, err)
			}
		}
		if f.readTableAt(5, dst, 0) != 0 || f.readTableAt(0, dst, 12*w) != 0 {
			t.Error("reads outside the tables")
		}
	}
}

func TestCloneIndependent(t *testing.T) {
	for _, fb := range []int{8, 16} {
		f := mustConfig(t, Config{Capacity: 64, FingerprintBits: fb, Expansion: 1})
		f.Add([]byte("a"))
		g := f.Clone()
		if !g.equal(f) {
			t.Fatal("clone differs")
		}
		g.Add([]byte("b"))
		if f.Test([]byte("b")) || g.equal(f) {
			t.Fatal("clone shares state")
		}
	}
}

func TestZeroAllocations(t *testing.T) {
	f := mustConfig(t, Config{Capacity: 1 << 16, FingerprintBits: 8})
	g := mustConfig(t, Config{Capacity: 1 << 16})
	key := []byte("some-key-16bytes")
	h := Hash(key)
	keys := [][]byte{key, []byte("b")}
	out := make([]bool, 0, 2)
	for name, fn := range map[string]func(){
		"Insert/Delete": func() { f.Add(key); f.Remove(key) },
		"InsertHash16":  func() { g.AddHash(h); g.RemoveHash(h) },
		"Lookup":        func() { f.Test(key); g.Test(key) },
		"LookupString":  func() { f.Test([]byte("some-key")) },
		"Count":         func() { f.Count(key); g.CountHash(h) },
		"InsertUnique":  func() { f.TestAndAdd(key) },
		"LookupMany":    func() { out = f.TestMany(keys, out[:0]) },
		"Stats":         func() { f.Stats() },
	} {
		if n := testing.AllocsPerRun(200, fn); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
}
