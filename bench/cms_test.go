package bench

// Count-min sketch against github.com/tylertreat/BoomFilters'
// CountMinSketch (docs/BENCHMARKS.md, "Count-min sketch"): increment and
// query, side by side, both sized for ε = 0.001, δ = 0.01 (2719 × 5
// counters: BoomFilters uses the same formula as cms.New). Keys are
// putKey(c) of a Zipf(1.1) stream over 2^20 values, made before the timer
// (keyBuf).
//
//	go test -run '^$' -bench 'CMS' -benchtime 5000000x -count 1 . | tee cms.txt
//	sed -E 's/#[0-9]+//' cms.txt > /tmp/cms.txt && benchstat -col /impl /tmp/cms.txt
//	go test -run CMSAccuracy -v .

import (
	"math"
	"math/rand"
	"sync"
	"testing"

	boom "github.com/tylertreat/BoomFilters"

	"github.com/probly/probly/cms"
)

const cmsEps, cmsDelta = 0.001, 0.01

// cmsKeys is the Zipf(1.1) stream over 2^20 values as 16-byte keys.
var cmsKeys = sync.OnceValue(func() keyBuf {
	z := rand.NewZipf(rand.New(rand.NewSource(1)), 1.1, 1, 1<<20-1)
	return newKeyBuf(func(uint64) uint64 { return z.Uint64() })
})

type cmsImpl struct {
	name string
	// new returns an empty sketch's add and count.
	new func(tb testing.TB) (add func([]byte), count func([]byte) uint64)
}

var cmsImpls = []cmsImpl{
	{"probly", func(tb testing.TB) (func([]byte), func([]byte) uint64) {
		s, err := cms.New(cmsEps, cmsDelta)
		if err != nil {
			tb.Fatal(err)
		}
		return s.Add, s.Count
	}},
	// RedisBloom's cells: one MurmurHash2 per row (what the server runs).
	{"probly-murmur2", func(tb testing.TB) (func([]byte), func([]byte) uint64) {
		s, err := cms.NewWithConfig(cms.Config{Width: 2719, Depth: 5, Hash: cms.HashMurmur2})
		if err != nil {
			tb.Fatal(err)
		}
		return s.Add, s.Count
	}},
	{"boom", func(testing.TB) (func([]byte), func([]byte) uint64) {
		s := boom.NewCountMinSketch(cmsEps, cmsDelta)
		return func(k []byte) { s.Add(k) }, s.Count
	}},
}

// BenchmarkCMSIncrement: ns per increment by 1 (Add).
func BenchmarkCMSIncrement(b *testing.B) {
	keys := cmsKeys()
	for r := 0; r < rounds(); r++ {
		for _, im := range cmsImpls {
			b.Run("impl="+im.name, func(b *testing.B) {
				add, _ := im.new(b)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					add(keys.at(i))
				}
			})
		}
	}
}

// BenchmarkCMSQuery: ns per query (Count) on a sketch holding the 2^20
// keys of the stream.
func BenchmarkCMSQuery(b *testing.B) {
	keys := cmsKeys()
	for r := 0; r < rounds(); r++ {
		for _, im := range cmsImpls {
			b.Run("impl="+im.name, func(b *testing.B) {
				add, count := im.new(b)
				for i := 0; i < len(keys.views); i++ {
					add(keys.at(i))
				}
				b.ResetTimer()
				var sink uint64
				for i := 0; i < b.N; i++ {
					sink += count(keys.at(i))
				}
				if sink == 0 {
					b.Fatal("every estimate was 0")
				}
			})
		}
	}
}

// TestCMSAccuracy compares the estimates of the three on the same 2^20
// Zipf keys: none may undercount; it logs the mean overestimate and the
// fraction of distinct keys over ε·N.
func TestCMSAccuracy(t *testing.T) {
	keys := cmsKeys()
	truth := map[string]uint64{}
	for i := range keys.views {
		truth[string(keys.at(i))]++
	}
	n := float64(len(keys.views))
	for _, im := range cmsImpls {
		add, count := im.new(t)
		for i := range keys.views {
			add(keys.at(i))
		}
		var sum, over float64
		for k, c := range truth {
			est := count([]byte(k))
			if est < c {
				t.Fatalf("%s: %d < true %d", im.name, est, c)
			}
			sum += float64(est - c)
			if float64(est-c) > cmsEps*n {
				over++
			}
		}
		t.Logf("%s: %d distinct keys, mean overestimate %.3f, over ε·N (%.0f): %.5f (δ = %v)",
			im.name, len(truth), sum/float64(len(truth)), math.Round(cmsEps*n), over/float64(len(truth)), cmsDelta)
	}
}
