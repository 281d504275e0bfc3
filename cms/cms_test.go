package cms

import (
	"bytes"
	"errors"
	"io"
	"math"
	"testing"
)

func mustNew(t testing.TB, c Config) *Sketch {
	t.Helper()
	s, err := NewWithConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func redis(t testing.TB, w uint64, d uint32) *Sketch {
	return mustNew(t, Config{Width: w, Depth: d, Hash: HashMurmur2})
}

func addAll(s *Sketch, kv ...any) []uint64 {
	var out []uint64
	for i := 0; i < len(kv); i += 2 {
		out = append(out, s.AddN([]byte(kv[i].(string)), uint64(kv[i+1].(int))))
	}
	return out
}

func eq(t *testing.T, what string, got, want []uint64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
}

func counts(s *Sketch, keys ...string) []uint64 {
	var out []uint64
	for _, k := range keys {
		out = append(out, s.Count([]byte(k)))
	}
	return out
}

func TestNewSizing(t *testing.T) {
	for _, c := range []struct {
		eps, delta float64
		w          uint64
		d          uint32
	}{{0.001, 0.01, 2719, 5}, {0.1, 0.5, 28, 1}, {0.5, 0.9, 6, 1}, {0.01, 0.001, 272, 7}} {
		s, err := New(c.eps, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		st := s.Stats()
		if st.Width != c.w || st.Depth != c.d || st.M != c.w*uint64(c.d) || st.Bytes != 4*st.M || st.K != int(c.d) {
			t.Errorf("New(%v, %v): %+v, want %d × %d", c.eps, c.delta, st, c.w, c.d)
		}
		if st.Epsilon > c.eps || st.Delta > c.delta || st.Hash != HashXXH3 {
			t.Errorf("New(%v, %v): ε %v δ %v hash %v", c.eps, c.delta, st.Epsilon, st.Delta, st.Hash)
		}
	}
	for _, bad := range [][2]float64{{0, 0.1}, {1, 0.1}, {0.1, 0}, {0.1, 1}, {math.NaN(), 0.1}, {0.1, math.Inf(1)}} {
		if _, err := New(bad[0], bad[1]); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("New(%v, %v): %v", bad[0], bad[1], err)
		}
	}
	if _, err := New(1e-12, 0.5); !errors.Is(err, ErrTooLarge) {
		t.Errorf("New(1e-12, 0.5): %v", err)
	}
	for _, c := range []Config{{Width: 0, Depth: 1}, {Width: 1, Depth: 0}, {Width: 1, Depth: 1, Hash: 9},
		{Width: 1, Depth: 1, Hash: HashMurmur2, Seed: 1 << 32}} {
		if _, err := NewWithConfig(c); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("NewWithConfig(%+v): %v", c, err)
		}
	}
	for _, c := range []Config{{Width: MaxCells + 1, Depth: 1}, {Width: MaxCells, Depth: 2}, {Width: 1 << 63, Depth: 1 << 31}} {
		if _, err := NewWithConfig(c); !errors.Is(err, ErrTooLarge) {
			t.Errorf("NewWithConfig(%+v): %v", c, err)
		}
	}
}

// Spec §4.2 test_overflow on a 5×2 RedisBloom sketch (b and c share both
// cells), then the count wrapping of the L vectors.
func TestRedisOverflowVector(t *testing.T) {
	s := redis(t, 5, 2)
	const L = 2147483647
	args := []any{"a", L, "b", 10, "c", 7, "d", 5}
	eq(t, "incr 1", addAll(s, args...), []uint64{L, 10, 17, 5})
	eq(t, "query 1", counts(s, "a", "b", "c", "d"), []uint64{L, 17, 17, 5})
	eq(t, "incr 2", addAll(s, args...), []uint64{4294967294, 27, 34, 10})
	eq(t, "incr 3", addAll(s, args...), []uint64{MaxCount, 44, 51, 15})
	eq(t, "query 3", counts(s, "a", "b", "c", "d"), []uint64{MaxCount, 51, 51, 15})
	if n := s.Stats().N; n != 6442451007 {
		t.Fatalf("N = %d", n)
	}
	eq(t, "a 0", addAll(s, "a", 0), []uint64{MaxCount})
	if got := s.AddN([]byte("z"), math.MaxInt64); got != MaxCount {
		t.Fatalf("z: %d", got)
	}
	if n := int64(s.Stats().N); n != -9223372030412324802 {
		t.Fatalf("N = %d after wrap", n)
	}
	s.AddN([]byte("z"), math.MaxInt64)
	if n := s.Stats().N; n != 6442451005 {
		t.Fatalf("N = %d after second wrap", n)
	}
	// n above 2^63 saturates too, without wrapping a counter.
	u := redis(t, 5, 2)
	u.AddN([]byte("a"), 3)
	if got := u.AddN([]byte("a"), math.MaxUint64-1); got != MaxCount {
		t.Fatalf("huge n: %d", got)
	}
}

func TestRedisSmallVectors(t *testing.T) {
	s := redis(t, 2, 2)
	eq(t, "smallset", addAll(s, "foo", 10, "bar", 42), []uint64{10, 42})
	eq(t, "smallset query", counts(s, "foo", "bar"), []uint64{10, 42})
	eq(t, "smallset +0", addAll(s, "foo", 0, "bar", 0), []uint64{10, 42})
	if n := s.Stats().N; n != 52 {
		t.Fatalf("N = %d", n)
	}
	c := redis(t, 1000, 5)
	addAll(c, "bar", 5, "baz", 42)
	eq(t, "incrby_query", counts(c, "foo", "bar", "baz"), []uint64{0, 5, 42})
}

// P:test_cms_merge and the G merge vectors (spec §4.2).
func TestMergeVectors(t *testing.T) {
	a, b, c := redis(t, 1000, 5), redis(t, 1000, 5), redis(t, 1000, 5)
	addAll(a, "foo", 5, "bar", 3, "baz", 9)
	addAll(b, "foo", 2, "bar", 3, "baz", 1)
	for _, v := range []struct {
		w    []int64
		want []uint64
	}{{[]int64{1, 1}, []uint64{7, 6, 10}}, {[]int64{1, 2}, []uint64{9, 9, 11}}, {[]int64{2, 3}, []uint64{16, 15, 21}}} {
		if err := c.MergeWeighted([]*Sketch{a, b}, v.w); err != nil {
			t.Fatal(err)
		}
		eq(t, "merge", counts(c, "foo", "bar", "baz"), v.want)
	}
	x, y, z := redis(t, 5, 10), redis(t, 5, 10), redis(t, 5, 10)
	addAll(x, "item1", 1, "item2", 2)
	addAll(y, "item2", 2, "item3", 3)
	if err := z.MergeWeighted([]*Sketch{x, y}, []int64{1, 2}); err != nil {
		t.Fatal(err)
	}
	eq(t, "G weights", counts(z, "item1", "item2", "item3"), []uint64{1, 6, 6})
	if err := z.Merge(redis(t, 5, 9)); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("mixed dims: %v", err)
	}
	if err := z.Merge(mustNew(t, Config{Width: 5, Depth: 10})); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("mixed hash: %v", err)
	}
	if err := z.MergeWeighted([]*Sketch{x}, nil); !errors.Is(err, ErrInvalidParameter) {
		t.Fatalf("no weights: %v", err)
	}
}

// test_merge_success: subtracting twice fails and changes nothing.
func TestMergeSubtract(t *testing.T) {
	s1, s2, s3, d := redis(t, 1000, 5), redis(t, 1000, 5), redis(t, 1000, 5), redis(t, 1000, 5)
	for i := range 100 {
		s1.Add([]byte("foo" + itoa(i)))
		s2.Add([]byte("bar" + itoa(i)))
		s3.Add([]byte("baz" + itoa(i)))
	}
	all := redis(t, 1000, 5)
	if err := all.MergeWeighted([]*Sketch{s1, s2, s3}, []int64{1, 1, 1}); err != nil {
		t.Fatal(err)
	}
	if err := d.MergeWeighted([]*Sketch{all, s3}, []int64{1, -1}); err != nil {
		t.Fatal(err)
	}
	if d.Stats().N != 200 {
		t.Fatalf("N = %d", d.Stats().N)
	}
	for i := range 100 {
		if n := d.Count([]byte("baz" + itoa(i))); n != 0 {
			t.Fatalf("baz%d = %d", i, n)
		}
	}
	before, _ := d.MarshalBinary()
	if err := d.MergeWeighted([]*Sketch{d, s3}, []int64{1, -1}); !errors.Is(err, ErrOverflow) {
		t.Fatalf("second subtraction: %v", err)
	}
	if after, _ := d.MarshalBinary(); !bytes.Equal(before, after) {
		t.Fatal("a failed merge changed the sketch")
	}
}

// test_merge_overflow_large_cell and _large_weight (spec §4.2).
func TestMergeOverflowVectors(t *testing.T) {
	check := func(incr uint64, pairs [][2]int64, ok bool) {
		t.Helper()
		a, b := redis(t, 2, 2), redis(t, 2, 2)
		a.AddN([]byte("foo"), incr)
		b.AddN([]byte("foo"), incr)
		for _, w := range pairs {
			before, _ := a.MarshalBinary()
			err := a.MergeWeighted([]*Sketch{a, b}, w[:])
			if ok {
				if err != nil || a.Count([]byte("foo")) != 8 || a.Stats().N != 8 {
					t.Fatalf("weights %v: %v, foo %d", w, err, a.Count([]byte("foo")))
				}
				continue
			}
			if !errors.Is(err, ErrOverflow) {
				t.Fatalf("weights %v: %v", w, err)
			}
			if after, _ := a.MarshalBinary(); !bytes.Equal(before, after) {
				t.Fatalf("weights %v changed the sketch", w)
			}
		}
	}
	check(4000000000, [][2]int64{{1, -2}, {-2, -2}, {-2, 1}, {2, 0}, {0, 2}, {-1, -1}}, false)
	check(4, [][2]int64{{math.MaxInt64, -4000000000}, {8000000000, -4000000000}, {-8000000000, 4000000000},
		{-800000000000, 8000000000}, {-1, -1}, {-5, -4}}, false)
	check(4, [][2]int64{{-922337203685477500, 922337203685477502}}, true)
}

func TestMulAdd(t *testing.T) {
	for _, c := range []struct {
		sum, a, b, want int64
		ok              bool
	}{
		{0, 3, 4, 12, true}, {5, -3, 4, -7, true}, {0, math.MinInt64, 1, math.MinInt64, true},
		{0, math.MinInt64, -1, 0, false}, {0, 1 << 62, 2, 0, false}, {0, 1 << 62, -2, math.MinInt64, true},
		{-1, 1 << 62, -2, 0, false}, {math.MaxInt64, 1, 1, 0, false}, {0, 0, math.MinInt64, 0, true},
		{0, math.MaxInt64, 1, math.MaxInt64, true},
	} {
		got, ok := mulAdd(c.sum, c.a, c.b)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("mulAdd(%d, %d, %d) = %d, %v; want %d, %v", c.sum, c.a, c.b, got, ok, c.want, c.ok)
		}
	}
}

func TestHashPair(t *testing.T) {
	s := mustNew(t, Config{Width: 1000, Depth: 4, Seed: 9})
	h1, h2 := Hash([]byte("k"), 9)
	if got := s.AddHash(h1, h2, 3); got != 3 || s.Count([]byte("k")) != 3 || s.CountHash(h1, h2) != 3 {
		t.Fatalf("AddHash: %d, Count %d", got, s.Count([]byte("k")))
	}
	r := redis(t, 10, 2)
	defer func() {
		if recover() == nil {
			t.Error("AddHash on a HashMurmur2 sketch did not panic")
		}
	}()
	r.AddHash(h1, h2, 1)
}

func TestResetClone(t *testing.T) {
	s := mustNew(t, Config{Width: 100, Depth: 3})
	s.AddN([]byte("a"), 5)
	c := s.Clone()
	s.Reset()
	if s.Count([]byte("a")) != 0 || s.Stats().N != 0 || c.Count([]byte("a")) != 5 || c.Stats().N != 5 {
		t.Fatal("Reset or Clone shares state")
	}
}

func TestZeroAlloc(t *testing.T) {
	for _, s := range []*Sketch{mustNew(t, Config{Width: 1000, Depth: 5}), redis(t, 1000, 5)} {
		k := []byte("key")
		if n := testing.AllocsPerRun(100, func() { s.Add(k); s.Count(k) }); n != 0 {
			t.Errorf("%v: Add+Count allocate %v times", s.hashID, n)
		}
	}
}

func TestEncodingRoundTrip(t *testing.T) {
	for _, s := range []*Sketch{mustNew(t, Config{Width: 20000, Depth: 5, Seed: 77}), redis(t, 5, 2), redis(t, 1, 1)} {
		for i := range 1000 {
			s.AddN([]byte(itoa(i)), uint64(i))
		}
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if uint64(len(b)) != headerLen+s.cellBytes()+trailerLen {
			t.Fatalf("length %d", len(b))
		}
		var buf bytes.Buffer
		if n, err := s.WriteTo(&buf); err != nil || n != int64(len(b)) || !bytes.Equal(buf.Bytes(), b) {
			t.Fatalf("WriteTo: %d, %v, equal %v", n, err, bytes.Equal(buf.Bytes(), b))
		}
		var u, r Sketch
		if err := u.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		buf.WriteString("next")
		if n, err := r.ReadFrom(&buf); err != nil || n != int64(len(b)) || buf.String() != "next" {
			t.Fatalf("ReadFrom: %d, %v, rest %q", n, err, buf.String())
		}
		for _, d := range []*Sketch{&u, &r} {
			if d.Stats() != s.Stats() || !equalCells(d, s) {
				t.Fatalf("decoded %+v, want %+v", d.Stats(), s.Stats())
			}
		}
	}
}

func equalCells(a, b *Sketch) bool {
	if len(a.cells) != len(b.cells) {
		return false
	}
	for i := range a.cells {
		if a.cells[i] != b.cells[i] {
			return false
		}
	}
	return true
}

func TestDecodeErrors(t *testing.T) {
	s := redis(t, 7, 3)
	s.AddN([]byte("x"), 9)
	good, _ := s.MarshalBinary()
	mod := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return b
	}
	reseal := func(b []byte) []byte {
		b = b[:headerLen-4]
		b = append(b, 0, 0, 0, 0)
		copy(b[headerLen-4:], sealOf(b[:headerLen-4]))
		return append(b, good[headerLen:]...)
	}
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, io.ErrUnexpectedEOF},
		{"short header", good[:30], io.ErrUnexpectedEOF},
		{"short body", good[:len(good)-1], io.ErrUnexpectedEOF},
		{"magic", mod(func(b []byte) { b[0] = 'X' }), ErrFormat},
		{"version", mod(func(b []byte) { b[4] = 2 }), ErrVersion},
		{"kind", mod(func(b []byte) { b[5] = 3 }), ErrFormat},
		{"header crc", mod(func(b []byte) { b[20] ^= 1 }), ErrChecksum},
		{"body crc", mod(func(b []byte) { b[headerLen] ^= 1 }), ErrChecksum},
		{"trailing", append(bytes.Clone(good), 0), ErrFormat},
		{"width 0", reseal(mod(func(b []byte) { clear(b[24:32]) })), ErrFormat},
		{"depth 0", reseal(mod(func(b []byte) { clear(b[8:12]) })), ErrFormat},
		{"hash 0", reseal(mod(func(b []byte) { clear(b[6:8]) })), ErrFormat},
		{"hash 9", reseal(mod(func(b []byte) { b[6] = 9 })), ErrFormat},
		{"flags", reseal(mod(func(b []byte) { b[12] = 1 })), ErrFormat},
		{"reserved", reseal(mod(func(b []byte) { b[40] = 1 })), ErrFormat},
		{"huge width", reseal(mod(func(b []byte) { b[31] = 0x10 })), ErrFormat},
		{"width 8 claims more", reseal(mod(func(b []byte) { b[24] = 8 })), io.ErrUnexpectedEOF},
	} {
		var d Sketch
		if err := d.UnmarshalBinary(c.data); !errors.Is(err, c.want) {
			t.Errorf("%s: UnmarshalBinary: %v, want %v", c.name, err, c.want)
		}
		if _, err := d.ReadFrom(bytes.NewReader(c.data)); c.name != "trailing" && !errors.Is(err, c.want) {
			t.Errorf("%s: ReadFrom: %v, want %v", c.name, err, c.want)
		}
		if c.name != "trailing" && d.cells != nil {
			t.Errorf("%s: the receiver changed", c.name)
		}
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		if i /= 10; i == 0 {
			return string(b[n:])
		}
	}
}
