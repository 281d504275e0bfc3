package server

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/probly/probly/internal/redisbloom"
	"github.com/probly/probly/internal/rediscuckoo"
)

// growthItems returns, for a filter that add grows, the items that fill it
// up to its next growth (fill) and the item whose add makes it grow.
func growthItems(t *testing.T, add func(item []byte) (grew bool)) (fill []string, trigger string) {
	t.Helper()
	for i := 0; i < 1_000_000; i++ {
		item := "item-" + strconv.Itoa(i)
		if add([]byte(item)) {
			return fill, item
		}
		fill = append(fill, item)
	}
	t.Fatal("the filter never grew")
	return nil, ""
}

// Replies of a filter that does not fit maxmemory's room: RedisBloom's
// errors for a filter over its per-filter budget (creation, BF growth, CF
// growth). Redis's OOM error is for a command that arrives while
// used_memory is over maxmemory already.
const (
	noRoomReply     = "-ERR Insufficient memory to create filter\r\n"
	bfNoGrowthReply = "-ERR problem inserting into filter\r\n"
	cfNoGrowthReply = "-ERR Insufficient memory\r\n"
)

// growConcurrently runs the issue-13 scenario on e (maxmemory mmLimit):
// eight clients each fill a scalable filter up to its next growth, then all
// send the item that makes it grow, at once, for three rounds. used_memory,
// sampled all the while, must never exceed maxmemory by more than one
// growth (grow bytes); some growths must be refused (no room: the filter's
// insufficient-memory error, or OOM once over the limit) and
// some admitted.
func growConcurrently(t *testing.T, e *env, create func(key string) []string, fill []string, addCmd, trigger string, grow uint64) {
	const clients = 8
	conns := make([]*mmConn, clients)
	for i := range conns {
		conns[i] = e.dial(t)
	}
	var peak uint64
	admitted, refused := 0, 0
	for round := range 3 {
		for i, c := range conns {
			key := "g" + strconv.Itoa(round) + "-" + strconv.Itoa(i)
			cmds := [][]string{create(key)}
			for _, it := range fill {
				cmds = append(cmds, []string{addCmd, key, it})
			}
			replies, err := c.pipeline(cmds...)
			if err != nil {
				t.Fatal(err)
			}
			for j, r := range replies {
				if r != "+OK\r\n" && r != ":1\r\n" && r != ":0\r\n" {
					t.Fatalf("filling %s, command %d %q: %q", key, j, cmds[j], r)
				}
			}
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // samples used_memory while the growths run
			defer wg.Done()
			for {
				peak = max(peak, e.srv.UsedMemory())
				select {
				case <-stop:
					return
				default:
					time.Sleep(20 * time.Microsecond)
				}
			}
		}()
		replies := concurrently(t, conns, func(i int) []string {
			return []string{addCmd, "g" + strconv.Itoa(round) + "-" + strconv.Itoa(i), trigger}
		})
		close(stop)
		wg.Wait()
		peak = max(peak, e.srv.UsedMemory())
		for i, r := range replies {
			switch r {
			case ":1\r\n":
				admitted++
			case oomReply, bfNoGrowthReply, cfNoGrowthReply: // over maxmemory already; no room for the growth
				refused++
			default:
				t.Fatalf("round %d client %d: %q", round, i, r)
			}
		}
		e.checkAccounting(t)
		if r, err := conns[0].do("FLUSHALL"); err != nil || r != "+OK\r\n" {
			t.Fatalf("FLUSHALL: %q %v", r, err)
		}
	}
	t.Logf("growths of %d bytes: %d admitted, %d refused; peak used_memory %d, maxmemory %d", grow, admitted, refused, peak, mmLimit)
	if peak > mmLimit+grow {
		t.Fatalf("used_memory reached %d, more than maxmemory %d + one growth %d", peak, mmLimit, grow)
	}
	if admitted == 0 || refused == 0 {
		t.Fatalf("%d growths admitted, %d refused", admitted, refused)
	}
}

// Issue 13: eight concurrent sub-filter growths of ~6.4 MB each under
// maxmemory 20mb. Before the fix every growth was admitted (the denyoom
// check ran before any of them had allocated): 51 MB. Now each growth is
// reserved before it is allocated, so at most what fits is admitted.
func TestMaxMemoryConcurrentBloomGrowth(t *testing.T) {
	e := startFull(t)
	p := redisbloom.Params{ErrorRate: 0.01, Capacity: 1000, Expansion: 4096}
	sim, err := redisbloom.New(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	var grow uint64
	fill, trigger := growthItems(t, func(item []byte) bool {
		probe := sim.CloneChain()
		if _, err := probe.Add(item); err != nil {
			t.Fatal(err)
		}
		if probe.NumFilters() > sim.NumFilters() {
			grow = probe.MemoryUsage() - sim.MemoryUsage()
			return true
		}
		_, _ = sim.Add(item)
		return false
	})
	if grow < 6<<20 {
		t.Fatalf("growth of %d bytes", grow)
	}
	growConcurrently(t, e, func(key string) []string {
		return []string{"BF.RESERVE", key, "0.01", "1000", "EXPANSION", "4096"}
	}, fill, "BF.ADD", trigger, grow)
}

// The same with cuckoo filters: a 256-byte first sub-filter, then 8 MiB.
func TestMaxMemoryConcurrentCuckooGrowth(t *testing.T) {
	e := startFull(t)
	p := rediscuckoo.Params{Capacity: 256, BucketSize: 4, MaxIterations: 20, Expansion: 32768}
	sim, err := rediscuckoo.New(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	var grow uint64
	fill, trigger := growthItems(t, func(item []byte) bool {
		probe := sim.CloneFilter()
		if err := probe.Insert(item); err != nil {
			t.Fatal(err)
		}
		if probe.NumFilters() > sim.NumFilters() {
			grow = probe.MemoryUsage() - sim.MemoryUsage()
			return true
		}
		_ = sim.Insert(item)
		return false
	})
	if grow < 8<<20 {
		t.Fatalf("growth of %d bytes", grow)
	}
	growConcurrently(t, e, func(key string) []string {
		return []string{"CF.RESERVE", key, "256", "BUCKETSIZE", "4", "MAXITERATIONS", "20", "EXPANSION", "32768"}
	}, fill, "CF.ADD", trigger, grow)
}
