package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"testing"

	caio "github.com/caio/go-tdigest/v4"
	influx "github.com/influxdata/tdigest"

	"github.com/probly/probly/tdigest"
)

// Side-by-side t-digests: probly's tdigest (RedisBloom's t-digest-c
// arithmetic), github.com/caio/go-tdigest/v4 and
// github.com/influxdata/tdigest, each at the same compression, on the
// same normal values. docs/BENCHMARKS.md has the commands and numbers.

// digest is what the comparison needs of each library.
type digest interface {
	add(x float64)
	quantile(q float64) float64
}

type probly struct{ d *tdigest.Digest }

func (p probly) add(x float64)              { _ = p.d.Add(x) }
func (p probly) quantile(q float64) float64 { return p.d.Quantile(q) }

type caioD struct{ d *caio.TDigest }

func (c caioD) add(x float64)              { _ = c.d.Add(x) }
func (c caioD) quantile(q float64) float64 { return c.d.Quantile(q) }

type influxD struct{ d *influx.TDigest }

func (i influxD) add(x float64)              { i.d.Add(x, 1) }
func (i influxD) quantile(q float64) float64 { return i.d.Quantile(q) }

var tdLibs = []struct {
	name string
	make func(c float64) digest
}{
	{"probly", func(c float64) digest { d, _ := tdigest.New(int(c)); return probly{d} }},
	{"caio", func(c float64) digest {
		d, _ := caio.New(caio.Compression(c), caio.LocalRandomNumberGenerator(1))
		return caioD{d}
	}},
	{"influx", func(c float64) digest { return influxD{influx.NewWithCompression(c)} }},
}

// tdValues are 2^20 standard normal values (fixed seed).
var tdValues = func() []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float64, 1<<20)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}()

// BenchmarkTDigestAdd: one Add of a normal value, compression 100.
func BenchmarkTDigestAdd(b *testing.B) {
	for _, lib := range tdLibs {
		b.Run("impl="+lib.name, func(b *testing.B) {
			d := lib.make(100)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				d.add(tdValues[i&(len(tdValues)-1)])
			}
		})
	}
}

// BenchmarkTDigestQuantile: one Quantile on a digest of 2^20 values,
// compression 100 (probly's buffer is merged by the first call).
func BenchmarkTDigestQuantile(b *testing.B) {
	qs := []float64{0.001, 0.01, 0.5, 0.99, 0.999}
	for _, lib := range tdLibs {
		b.Run("impl="+lib.name, func(b *testing.B) {
			d := lib.make(100)
			for _, x := range tdValues {
				d.add(x)
			}
			d.quantile(0.5)
			b.ReportAllocs()
			sink := 0.0
			for i := 0; b.Loop(); i++ {
				sink += d.quantile(qs[i%len(qs)])
			}
			if math.IsNaN(sink) {
				b.Fatal("NaN quantile")
			}
		})
	}
}

// retained measures the heap a digest of n values holds: the heap after
// building it minus the heap before, both after a GC.
func retained(build func() digest) (digest, uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return d, after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
}

// TestTDigestAccuracyMemory prints, for each library and compression, the
// retained heap of a digest of 2^20 normal values and the rank error of
// its quantile estimates: |F(estimate) − q|, F the empirical CDF, at
// q ∈ {0.001, 0.01, 0.5, 0.99, 0.999}. Rows of equal memory compare
// accuracy at equal memory. Run with -v.
func TestTDigestAccuracyMemory(t *testing.T) {
	sorted := slices.Clone(tdValues)
	slices.Sort(sorted)
	n := float64(len(sorted))
	qs := []float64{0.001, 0.01, 0.5, 0.99, 0.999}
	t.Logf("%-7s %5s %9s  %s", "library", "C", "bytes", "rank error at q = 0.001 0.01 0.5 0.99 0.999")
	for _, lib := range tdLibs {
		for _, c := range []float64{25, 50, 100, 200, 400} {
			d, bytes := retained(func() digest {
				d := lib.make(c)
				for _, x := range tdValues {
					d.add(x)
				}
				d.quantile(0.5) // merge any buffer before measuring
				return d
			})
			line := fmt.Sprintf("%-7s %5.0f %9d ", lib.name, c, bytes)
			for _, q := range qs {
				v := d.quantile(q)
				lo := float64(sort.SearchFloat64s(sorted, v)) / n
				hi := float64(sort.Search(len(sorted), func(i int) bool { return sorted[i] > v })) / n
				line += fmt.Sprintf(" %.1e", math.Max(0, math.Max(lo-q, q-hi)))
			}
			t.Log(line)
			runtime.KeepAlive(d)
		}
	}
}
