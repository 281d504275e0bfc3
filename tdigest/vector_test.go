package tdigest

import (
	"math"
	"slices"
	"strconv"
	"testing"
)

// Vectors of spec redis-sketches.md §4.4, at the library level (the
// server's tests check the same vectors on the wire).

func mustNew(t testing.TB, c int, vals ...float64) *Digest {
	t.Helper()
	d, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vals {
		if err := d.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func seq(from, to, step float64) []float64 {
	var out []float64
	for v := from; v <= to; v += step {
		out = append(out, v)
	}
	return out
}

// same compares float slices by value, NaN equal to NaN.
func same(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || (math.IsNaN(x) && math.IsNaN(y)) })
}

func checkStats(t *testing.T, d *Digest, merged, unmerged int, mw, uw, comps uint64) {
	t.Helper()
	s := d.Stats()
	if s.MergedNodes != merged || s.UnmergedNodes != unmerged || s.MergedWeight != mw || s.UnmergedWeight != uw || s.Compressions != comps {
		t.Fatalf("stats %+v, want merged %d unmerged %d weights %d/%d compressions %d", s, merged, unmerged, mw, uw, comps)
	}
}

func TestVectorInfo10000(t *testing.T) {
	d := mustNew(t, 100, seq(1, 10000, 1)...)
	checkStats(t, d, 51, 422, 9578, 422, 17)
	if s := d.Stats(); s.Capacity != 610 || s.N != 10000 {
		t.Fatalf("stats %+v", s)
	}
	h := mustNew(t, 100, seq(1, 100, 1)...)
	checkStats(t, h, 0, 100, 0, 100, 0)
	for _, v := range seq(1, 10000, 1) {
		h.Add(v)
	}
	checkStats(t, h, 51, 522, 9578, 522, 17)
}

func TestVectorTiedCompress(t *testing.T) {
	u := mustNew(t, 100, slices.Repeat([]float64{1}, 100)...)
	checkStats(t, u, 0, 100, 0, 100, 0)
	if got := u.Quantiles(nil, 0.5); !same(got, []float64{1}) {
		t.Fatal(got)
	}
	checkStats(t, u, 36, 0, 100, 0, 1)
}

func TestVectorSmall(t *testing.T) {
	d := mustNew(t, 1000, 1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5)
	if got := d.Quantiles(nil, seq(0, 1.05, 0.1)...); !same(got, []float64{1, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5}) {
		t.Fatalf("quantiles %v", got)
	}
	var cdf []float64
	for x := 0.0; x <= 6; x++ {
		cdf = append(cdf, d.CDF(x))
	}
	if !same(cdf, []float64{0, 0.03333333333333333, 0.13333333333333333, 0.3, 0.5333333333333333, 0.8333333333333334, 1}) {
		t.Fatalf("cdf %v", cdf)
	}
	var br, brr []float64
	for r := uint64(0); r <= 15; r++ {
		br = append(br, d.ByRank(r))
		brr = append(brr, d.ByRevRank(r))
	}
	inf := math.Inf(1)
	if !same(br, []float64{1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, inf}) || !same(brr, []float64{5, 5, 5, 5, 5, 4, 4, 4, 4, 3, 3, 3, 2, 2, 1, -inf}) {
		t.Fatalf("byrank %v byrevrank %v", br, brr)
	}
	var rk, rrk []int64
	for x := 0.0; x <= 6; x++ {
		rk = append(rk, d.Rank(x))
		rrk = append(rrk, d.RevRank(x))
	}
	if !slices.Equal(rk, []int64{-1, 0, 2, 4, 8, 12, 15}) || !slices.Equal(rrk, []int64{15, 14, 13, 10, 7, 2, -1}) {
		t.Fatalf("rank %v revrank %v", rk, rrk)
	}
	checkStats(t, d, 15, 0, 15, 0, 1)
}

func TestVectorRanks(t *testing.T) {
	s := mustNew(t, 1000, 10, 20, 30, 40, 50, 60)
	var rk, rrk []int64
	for _, x := range []float64{0, 10, 20, 30, 40, 50, 60, 70} {
		rk = append(rk, s.Rank(x))
		rrk = append(rrk, s.RevRank(x))
	}
	if !slices.Equal(rk, []int64{-1, 0, 1, 2, 3, 4, 5, 6}) || !slices.Equal(rrk, []int64{6, 5, 4, 3, 2, 1, 0, -1}) {
		t.Fatalf("rank %v revrank %v", rk, rrk)
	}
	e := mustNew(t, 1000)
	if e.Rank(0) != -2 || e.RevRank(1) != -2 {
		t.Fatal("empty rank")
	}
	d := mustNew(t, 500, seq(0, 19, 1)...)
	rk = rk[:0]
	for _, x := range []float64{-1, 0, 19, 20, 18, 10, 1} {
		rk = append(rk, d.Rank(x))
	}
	rrk = rrk[:0]
	for _, x := range []float64{20, 0, 19, 50, 18, 10, 1} {
		rrk = append(rrk, d.RevRank(x))
	}
	if !slices.Equal(rk, []int64{-1, 0, 19, 20, 18, 10, 1}) || !slices.Equal(rrk, []int64{-1, 19, 0, -1, 1, 9, 18}) {
		t.Fatalf("rank %v revrank %v", rk, rrk)
	}
	for _, c := range [][2]float64{{0.1, 0.9}, {0, 1}, {0.2, 0.8}} {
		if m := d.TrimmedMean(c[0], c[1]); m != 9.5 {
			t.Fatalf("trimmed mean %v: %v", c, m)
		}
	}
}

func TestVectorByRankTrimmed(t *testing.T) {
	d := mustNew(t, 500, seq(1, 10, 1)...)
	got := []float64{d.ByRank(0), d.ByRank(10), d.ByRank(100), d.ByRank(9), d.ByRevRank(0), d.ByRevRank(10), d.ByRevRank(100), d.ByRevRank(9)}
	inf := math.Inf(1)
	if !same(got, []float64{1, inf, inf, 10, 10, -inf, -inf, 1}) {
		t.Fatal(got)
	}
	e := mustNew(t, 1000, seq(1, 10, 1)...)
	if a, b, c := e.TrimmedMean(0.1, 0.6), e.TrimmedMean(0.3, 0.9), e.TrimmedMean(0, 1); a != 4 || b != 6.5 || c != 5.5 {
		t.Fatal(a, b, c)
	}
	tm := mustNew(t, 500, 1, 1, 1, 1, 1, 1, 1, 1, 1, 5)
	if tm.TrimmedMean(0.1, 0.9) != 1 || tm.TrimmedMean(0.095, 0.905) != 1.4 || tm.TrimmedMean(0.05, 0.95) != 1.4 || tm.TrimmedMean(0.01, 0.99) != 1.4 {
		t.Fatal("trimmed 1.4")
	}
	x := mustNew(t, 500)
	for i := 1; i <= 10000; i++ {
		x.Add(float64(i) / 1000)
	}
	want := []float64{1.5018084999999965, 2.50029220779221, 3.5065695000000074, 4.499498999999985, 5.499084499999987, 6.49675199999997, 7.500053499999982, 8.500685000000017, 9.499649500000015}
	for i, w := range want {
		lo := float64(i+1) / 10
		if got := x.TrimmedMean(lo, lo+0.1); got != w {
			t.Errorf("trimmed mean (%v, %v) = %v, want %v", lo, lo+0.1, got, w)
		}
	}
}

func TestVectorMerge(t *testing.T) {
	s1 := mustNew(t, 100, 10, 20)
	s2 := mustNew(t, 100, 30, 40)
	m, err := MergeAll(0, s1, s2)
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for r := uint64(0); r <= 4; r++ {
		got = append(got, m.ByRank(r))
	}
	if !same(got, []float64{10, 20, 30, 40, math.Inf(1)}) {
		t.Fatal(got)
	}
	t1 := mustNew(t, 100, seq(10, 100, 10)...)
	t2 := mustNew(t, 100, seq(15, 105, 10)...)
	t3 := mustNew(t, 100, seq(50, 140, 10)...)
	r, err := MergeAll(1000, t1, t2, t3)
	if err != nil {
		t.Fatal(err)
	}
	if r.Compression() != 1000 || r.Count() != 30 || r.Max() != 140 {
		t.Fatal(r.Stats())
	}
	checkStats(t, r, 20, 10, 20, 10, 2)
	if got := r.Quantiles(nil, 0, 0.25, 0.5, 0.75, 1); !same(got, []float64{10, 45, 70, 95, 140}) {
		t.Fatal(got)
	}
	a := mustNew(t, 50, 1, 2, 3)
	b := mustNew(t, 200, 10, 20)
	d, _ := MergeAll(0, a, b)
	checkStats(t, d, 3, 2, 3, 2, 1)
	if d.Compression() != 200 {
		t.Fatal(d.Compression())
	}
	d2, _ := MergeAll(0, d, a, b)
	checkStats(t, d2, 8, 2, 8, 2, 2)
}

func TestVectorSingle(t *testing.T) {
	d := mustNew(t, 100, 5)
	checkStats(t, d, 0, 1, 0, 1, 0)
	if got := d.Quantiles(nil, 0, 0.5, 1); !same(got, []float64{math.NaN(), math.NaN(), math.NaN()}) {
		t.Fatal(got)
	}
	if !math.IsNaN(d.CDF(5)) || !math.IsNaN(d.TrimmedMean(0.1, 0.9)) || d.Min() != 5 || d.Max() != 5 {
		t.Fatal("single")
	}
	if got := []float64{d.ByRank(0), d.ByRank(1), d.ByRank(2)}; !same(got, []float64{5, math.Inf(1), math.Inf(1)}) {
		t.Fatal(got)
	}
	if got := []int64{d.Rank(4), d.Rank(5), d.Rank(6), d.RevRank(4), d.RevRank(5), d.RevRank(6)}; !slices.Equal(got, []int64{-1, math.MinInt64, 1, 1, math.MinInt64, -1}) {
		t.Fatal(got)
	}
	d.Add(7)
	if got := d.Quantiles(nil, 0, 0.25, 0.5, 0.75, 1); !same(got, []float64{5, 5, 7, 7, 7}) {
		t.Fatal(got)
	}
	var cdf []float64
	var rk, rrk []int64
	for x := 4.0; x <= 8; x++ {
		cdf = append(cdf, d.CDF(x))
		rk = append(rk, d.Rank(x))
		rrk = append(rrk, d.RevRank(x))
	}
	if !same(cdf, []float64{0, 0.25, 0.5, 0.75, 1}) || !slices.Equal(rk, []int64{-1, 0, 1, 1, 2}) || !slices.Equal(rrk, []int64{2, 1, 1, 0, -1}) || d.TrimmedMean(0.1, 0.9) != 6 {
		t.Fatal(cdf, rk, rrk)
	}
	m := mustNew(t, 100, 1, 2, 3, 4.5)
	if got := []float64{m.CDF(0), m.CDF(2), m.CDF(10), m.TrimmedMean(0.1, 0.9)}; !same(got, []float64{0, 0.375, 1, 2.625}) {
		t.Fatal(got)
	}
	e := mustNew(t, 100)
	if !math.IsNaN(e.Min()) || !math.IsNaN(e.Max()) || !math.IsNaN(e.TrimmedMean(0.1, 0.6)) || !math.IsNaN(e.ByRank(0)) {
		t.Fatal("empty")
	}
}

func TestVectorGoRedis(t *testing.T) {
	d := mustNew(t, 100, seq(10, 100, 10)...)
	got := []float64{d.ByRank(0), d.ByRank(1), d.ByRank(2), d.ByRevRank(0), d.ByRevRank(1), d.ByRevRank(2), d.CDF(15), d.CDF(35), d.CDF(70)}
	if !same(got, []float64{10, 20, 30, 100, 90, 80, 0.1, 0.3, 0.65}) {
		t.Fatal(got)
	}
	if q := d.Quantiles(nil, 0.1, 0.2); !same(q, []float64{20, 30}) || d.Rank(10) != 0 || d.Rank(20) != 1 || d.RevRank(10) != 9 || d.RevRank(20) != 8 || d.TrimmedMean(0.1, 0.6) != 40 {
		t.Fatal(q)
	}
	p := mustNew(t, 100, seq(1, 9, 1)...)
	if c := []float64{p.CDF(1), p.CDF(9), p.TrimmedMean(0.1, 0.9), p.TrimmedMean(0.4, 0.5)}; !same(c, []float64{0.05555555555555555, 0.9444444444444444, 5, 4.5}) {
		t.Fatal(c)
	}
	q := mustNew(t, 100, 1, 2, 3, 4, 5)
	if got := q.Quantiles(nil, 0.5, 0.8); !same(got, []float64{3, 5}) {
		t.Fatal(got)
	}
	c := mustNew(t, 500, seq(1, 99, 1)...)
	if a, b := c.CDF(1), c.CDF(99); a != 0.005050505050505051 || b != 0.9949494949494949 {
		t.Fatal(a, b)
	}
}

func TestVectorQuantile500(t *testing.T) {
	d := mustNew(t, 500)
	for x := 1; x <= 9999; x++ {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x)*0.01, 'g', -1, 64), 64)
		d.Add(v)
	}
	checkStats(t, d, 172, 1285, 8714, 1285, 3)
	want := []float64{1.0049000000000001, 50.000000000000085, 94.99549999999988, 98.99509999999998}
	if got := d.Quantiles(nil, 0.01, 0.5, 0.95, 0.99); !same(got, want) {
		t.Fatalf("quantiles %v", got)
	}
	if got := append(d.Quantiles(nil, 0.95, 0.99), d.Quantiles(nil, 0.01, 0.5)...); !same(got, []float64{want[2], want[3], want[0], want[1]}) {
		t.Fatalf("quantiles %v", got)
	}
	if got := d.Quantiles(nil, 0, 1); !same(got, []float64{0.01, 99.99000000000001}) || d.Min() != 0.01 || d.Max() != 99.99000000000001 {
		t.Fatal(got)
	}
	checkStats(t, d, 179, 0, 9999, 0, 4)
}

func TestSelfMergeAndZero(t *testing.T) {
	d := mustNew(t, 50, seq(1, 1000, 1)...)
	e := d.Clone()
	if err := d.Merge(d); err != nil {
		t.Fatal(err)
	}
	if d.Count() != 2000 || d.Min() != 1 || d.Max() != 1000 {
		t.Fatal(d.Stats())
	}
	// Self-merge adds the compressed copy's nodes into d, after d's own:
	// the same as merging two copies into a digest holding the first.
	x := e.Clone()
	x.Merge(e.Clone())
	if a, b := d.Quantile(0.3), x.Quantile(0.3); a != b || !equalDigest(d, x) {
		t.Fatalf("self-merge %v, merge of a copy %v", a, b)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Add on a zero Digest did not panic")
		}
	}()
	var z Digest
	z.Add(1)
}
