package topk

import (
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"testing"

	"github.com/probly/probly/internal/testutil"
)

// recall feeds n Zipf(1.1) items over a universe of 2^20 to New(k) and
// returns the fraction of the true top k that List reports. Items tied
// with the k-th true count all count as "true top k" members, so a tie at
// the boundary cannot be held against the sketch.
func recall(t *testing.T, k, n int, seed int64) float64 {
	t.Helper()
	s, err := New(k)
	if err != nil {
		t.Fatal(err)
	}
	z := rand.NewZipf(rand.New(rand.NewSource(seed)), 1.1, 1, 1<<20)
	truth := map[uint64]int{}
	var buf []byte
	for range n {
		v := z.Uint64()
		truth[v]++
		buf = strconv.AppendUint(buf[:0], v, 10)
		s.Add(buf)
	}
	type kv struct {
		v uint64
		c int
	}
	all := make([]kv, 0, len(truth))
	for v, c := range truth {
		all = append(all, kv{v, c})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].c > all[j].c })
	kth := all[k-1].c
	top := map[string]bool{}
	for _, e := range all {
		if e.c < kth {
			break
		}
		top[strconv.FormatUint(e.v, 10)] = true
	}
	hit := 0
	for _, it := range s.List() {
		if top[string(it.Value)] {
			hit++
		}
		if got, want := it.Count, uint64(truth[mustUint(t, it.Value)]); got > want {
			t.Errorf("k %d: %s counted %d, seen %d times (overestimate)", k, it.Value, got, want)
		}
	}
	return float64(hit) / float64(k)
}

func mustUint(t *testing.T, b []byte) uint64 {
	v, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func testRecall(t *testing.T, n int, seeds int64) {
	for _, k := range []int{10, 50, 100} {
		for seed := int64(1); seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("k%d/seed%d", k, seed), func(t *testing.T) {
				r := recall(t, k, n, seed)
				t.Logf("n %d k %d recall %.3f", n, k, r)
				if r < 0.95 {
					t.Errorf("recall of the true top %d = %.3f, want ≥ 0.95", k, r)
				}
			})
		}
	}
}

func TestRecallZipf1M(t *testing.T) { testRecall(t, 1_000_000, 1) }

func TestRecallZipf10M(t *testing.T) {
	testutil.Full(t)
	testRecall(t, 10_000_000, 3)
}
