package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recLog records every appended record as a string.
type recLog struct {
	mu   sync.Mutex
	recs []string
	fail bool
}

func (l *recLog) Append(args [][]byte) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail {
		return 0, fmt.Errorf("log refuses")
	}
	l.recs = append(l.recs, fmt.Sprintf("%q", args))
	return uint64(len(l.recs)), nil
}

func (l *recLog) records() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.recs)
}

// fakeClock is a settable clock in Unix ms.
type fakeClock struct{ ms atomic.Int64 }

func (c *fakeClock) now() int64 { return c.ms.Load() }

func newExpiryStore(t *testing.T) (*Store, *recLog, *fakeClock) {
	t.Helper()
	l := &recLog{}
	s := New(l)
	c := &fakeClock{}
	c.ms.Store(1_000_000)
	s.SetClock(c.now)
	return s, l, c
}

func setWithExpire(s *Store, key string, n int, when int64) {
	s.Update([]byte(key), func(tx *Txn) {
		tx.Set(&capVal{b: make([]byte, n)})
		tx.SetExpire(when)
	})
}

func checkUsed(t *testing.T, s *Store) {
	t.Helper()
	if u, m := s.Used(), s.MemoryUsage(); u != m {
		t.Fatalf("Used %d, MemoryUsage %d", u, m)
	}
}

func TestLazyExpiry(t *testing.T) {
	s, l, clk := newExpiryStore(t)
	setWithExpire(s, "a", 10, 1_000_100)
	setWithExpire(s, "b", 10, 0) // no expire time
	checkUsed(t, s)
	withTTL := s.Used()
	s.Update([]byte("b"), func(tx *Txn) {})
	if got, _ := s.ExpireOf([]byte("a")); got != 1_000_100 {
		t.Fatalf("ExpireOf(a) = %d", got)
	}
	if n, avg := s.ExpireStats(); n != 1 || avg != 100 {
		t.Fatalf("ExpireStats = %d, %d", n, avg)
	}
	clk.ms.Store(1_000_100) // not yet: expired only once now > when
	if s.Len() != 2 {
		t.Fatalf("Len = %d at the expire time", s.Len())
	}
	clk.ms.Store(1_000_101)
	var seen Value
	s.View([]byte("a"), func(v Value) { seen = v })
	if seen != nil {
		t.Fatal("View sees an expired key")
	}
	if s.Len() != 1 || !slices.Equal(s.Keys("*"), []string{"b"}) {
		t.Fatalf("Len %d, Keys %v", s.Len(), s.Keys("*"))
	}
	if _, ks := s.Scan(0, "", "", 1000); !slices.Equal(ks, []string{"b"}) {
		t.Fatalf("Scan %v", ks)
	}
	if _, ok := s.ExpireOf([]byte("a")); ok {
		t.Fatal("ExpireOf finds an expired key")
	}
	if n, _ := s.ExpireStats(); n != 0 {
		t.Fatalf("ExpireStats counts %d expired keys", n)
	}
	// Only reads so far: the key is still stored, and nothing is logged.
	if len(l.records()) != 0 || s.Used() != withTTL || s.ExpiredKeys() != 0 {
		t.Fatalf("a read changed something: %v, used %d", l.records(), s.Used())
	}
	// A write deletes it first (logged as DEL) and then sees it missing.
	var inFn Value = &capVal{}
	seq, err := s.Update([]byte("a"), func(tx *Txn) { inFn = tx.Value })
	if err != nil || inFn != nil || seq != 1 {
		t.Fatalf("Update saw %v (seq %d, err %v)", inFn, seq, err)
	}
	if !slices.Equal(l.records(), []string{`["DEL" "a"]`}) || s.ExpiredKeys() != 1 {
		t.Fatalf("records %v, expired %d", l.records(), s.ExpiredKeys())
	}
	checkUsed(t, s)
}

func TestSetExpireAccounting(t *testing.T) {
	s, _, _ := newExpiryStore(t)
	s.Update([]byte("k"), func(tx *Txn) { tx.Set(&capVal{b: make([]byte, 5)}) })
	base := s.Used()
	s.Update([]byte("k"), func(tx *Txn) { tx.SetExpire(2_000_000) })
	if got := s.Used() - base; got != expireEntryCost+1 {
		t.Fatalf("an expire time costs %d", got)
	}
	// Set keeps the time (an in-place replacement), Delete drops it.
	s.Update([]byte("k"), func(tx *Txn) { tx.Set(&capVal{b: make([]byte, 5)}) })
	if ms, _ := s.ExpireOf([]byte("k")); ms != 2_000_000 {
		t.Fatalf("Set dropped the expire time: %d", ms)
	}
	s.Update([]byte("k"), func(tx *Txn) { tx.SetExpire(0) })
	if s.Used() != base {
		t.Fatalf("Used %d after removing the time, want %d", s.Used(), base)
	}
	s.Update([]byte("k"), func(tx *Txn) { tx.SetExpire(3_000_000); tx.Delete(); tx.Set(&capVal{}) })
	if ms, _ := s.ExpireOf([]byte("k")); ms != 0 {
		t.Fatalf("Delete kept the expire time: %d", ms)
	}
	// SetExpire on a missing key does nothing.
	s.Update([]byte("none"), func(tx *Txn) { tx.SetExpire(5) })
	if _, ok := s.ExpireOf([]byte("none")); ok {
		t.Fatal("SetExpire created a key")
	}
	checkUsed(t, s)
	s.Update([]byte("k"), func(tx *Txn) { tx.SetExpire(3_000_000) })
	s.Flush(nil)
	if s.Used() != 0 || s.MemoryUsage() != 0 {
		t.Fatal("Flush left memory")
	}
	s.Update([]byte("k"), func(tx *Txn) { tx.Set(&capVal{}) })
	if ms, _ := s.ExpireOf([]byte("k")); ms != 0 {
		t.Fatal("Flush kept an expire time")
	}
}

func TestLoadingDisablesExpiry(t *testing.T) {
	s, l, clk := newExpiryStore(t)
	setWithExpire(s, "a", 1, 10) // long past
	s.SetLoading(true)
	var seen Value
	s.View([]byte("a"), func(v Value) { seen = v })
	s.Update([]byte("a"), func(tx *Txn) {
		if tx.Value == nil {
			t.Error("Update while loading expired the key")
		}
	})
	if seen == nil || s.Len() != 1 || s.ExpireCycle(time.Second) != 0 {
		t.Fatal("a key expired while loading")
	}
	s.SetLoading(false)
	clk.ms.Add(1)
	if s.Len() != 0 || s.ExpireCycle(time.Second) != 1 || len(l.records()) != 1 {
		t.Fatalf("after loading: Len %d, records %v", s.Len(), l.records())
	}
}

func TestExpiryLogFailureKeepsKey(t *testing.T) {
	s, l, clk := newExpiryStore(t)
	setWithExpire(s, "a", 1, 1_000_001)
	clk.ms.Add(10)
	l.fail = true
	ran := false
	if _, err := s.Update([]byte("a"), func(tx *Txn) { ran = true }); err == nil || ran {
		t.Fatalf("Update ran (%v) with a refused DEL: %v", ran, err)
	}
	if s.ExpireCycle(time.Second) != 0 {
		t.Fatal("the cycle deleted a key whose DEL the log refused")
	}
	l.fail = false
	if s.ExpireCycle(time.Second) != 1 || s.Used() != 0 {
		t.Fatal("the key was not reclaimed once the log accepted")
	}
}

// TestExpireCycle: keys nobody reads are reclaimed by the cycle alone, the
// live ones stay, and memory returns exactly to what the live keys hold.
func TestExpireCycle(t *testing.T) {
	s, l, clk := newExpiryStore(t)
	r := rand.New(rand.NewPCG(1, 2))
	const gone = 100_000 // about 390 a shard: their expire maps get compacted
	for i := range gone {
		setWithExpire(s, fmt.Sprint("gone-", i), r.IntN(100), 1_000_000+int64(r.IntN(1000)))
	}
	for i := range 1000 {
		setWithExpire(s, fmt.Sprint("live-", i), r.IntN(100), 5_000_000)
	}
	for i := range 500 {
		setWithExpire(s, fmt.Sprint("plain-", i), r.IntN(100), 0)
	}
	clk.ms.Store(1_001_000)
	deleted := 0
	for c := 0; c < 10000 && s.ExpiredKeys() < gone; c++ {
		deleted += s.ExpireCycle(time.Second)
	}
	if deleted != gone || s.ExpiredKeys() != gone || len(l.records()) != gone {
		t.Fatalf("deleted %d, expired %d, records %d", deleted, s.ExpiredKeys(), len(l.records()))
	}
	if s.Len() != 1500 || len(s.Keys("gone-*")) != 0 {
		t.Fatalf("Len %d", s.Len())
	}
	checkUsed(t, s)
	if n, _ := s.ExpireStats(); n != 1000 {
		t.Fatalf("%d keys with a time left", n)
	}
	compacted := 0
	for i := range s.shards {
		sh := &s.shards[i]
		if sh.expPeak != len(sh.exp) && sh.expPeak >= 256 && len(sh.exp)*4 < sh.expPeak {
			t.Fatalf("shard %d: %d expire times left of a peak of %d, not compacted", i, len(sh.exp), sh.expPeak)
		}
		if sh.expPeak < 100 {
			compacted++
		}
	}
	if compacted == 0 {
		t.Fatal("no expire map was compacted")
	}
}

// TestExpiryDuringCOW: a key that expires while a FreezeCOW cut is held
// stays in the cut with its value and expire time.
func TestExpiryDuringCOW(t *testing.T) {
	s, _, clk := newExpiryStore(t)
	setWithExpire(s, "a", 3, 1_000_010)
	setWithExpire(s, "b", 3, 1_000_010)
	setWithExpire(s, "c", 3, 9_000_000)
	f, err := s.FreezeCOW(nil)
	if err != nil {
		t.Fatal(err)
	}
	clk.ms.Store(1_000_011)
	s.Update([]byte("a"), func(tx *Txn) {}) // lazy
	s.ExpireCycle(time.Second)              // active: b
	s.Update([]byte("c"), func(tx *Txn) { tx.SetExpire(7) })
	got := map[string]int64{}
	for _, e := range f.Entries() {
		got[e.Key] = e.Expire
	}
	f.Release()
	if fmt.Sprint(got) != "map[a:1000010 b:1000010 c:9000000]" {
		t.Fatalf("cut: %v", got)
	}
	if s.Len() != 0 {
		t.Fatalf("Len %d", s.Len())
	}
	es, _ := s.Freeze(nil)
	if len(es) != 1 || es[0].Expire != 7 {
		t.Fatalf("Freeze: %+v", es)
	}
}

// TestExpiryConcurrent races lazy and active expiry, writers setting
// times and readers, and checks the memory total (run with -race).
func TestExpiryConcurrent(t *testing.T) {
	s, _, clk := newExpiryStore(t)
	stop := s.StartActiveExpire()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for range 3000 {
				k := []byte(fmt.Sprint("k", r.IntN(200)))
				switch r.IntN(4) {
				case 0:
					s.Update(k, func(tx *Txn) {
						tx.Set(&capVal{b: make([]byte, r.IntN(40))})
						tx.SetExpire(clk.now() + int64(r.IntN(20)))
					})
				case 1:
					s.View(k, func(Value) {})
				case 2:
					s.ExpireCycle(time.Millisecond)
				case 3:
					clk.ms.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	stop()
	stop()
	checkUsed(t, s)
}

// BenchmarkExpireCycle: the active cycle's cost per reclaimed key (logger
// off). ns/op is per key.
func BenchmarkExpireCycle(b *testing.B) {
	s := New(nil)
	var now atomic.Int64
	now.Store(1000)
	s.SetClock(now.Load)
	for i := range b.N {
		s.Update(fmt.Appendf(nil, "k%d", i), func(tx *Txn) {
			tx.Set(&capVal{b: make([]byte, 8)})
			tx.SetExpire(1000)
		})
	}
	now.Store(2000)
	b.ResetTimer()
	for n := 0; n < b.N; {
		n += s.ExpireCycle(time.Hour)
	}
}

// BenchmarkViewNoExpiry and BenchmarkViewWithExpiry: a read of a key in a
// store without any expire time (no clock read) and with one on every key.
func BenchmarkViewNoExpiry(b *testing.B)   { benchView(b, false) }
func BenchmarkViewWithExpiry(b *testing.B) { benchView(b, true) }

func benchView(b *testing.B, ttl bool) {
	s := New(nil)
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%d", i)
		s.Update(keys[i], func(tx *Txn) {
			tx.Set(&capVal{b: make([]byte, 8)})
			if ttl {
				tx.SetExpire(1 << 60)
			}
		})
	}
	b.ResetTimer()
	for i := range b.N {
		s.View(keys[i%len(keys)], func(Value) {})
	}
}
