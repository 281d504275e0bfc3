package str

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/probly/probly/internal/command/commandtest"
)

// TestMSetAtomicForMGet: an MGET never sees part of an MSET, whose keys
// live in different shards.
func TestMSetAtomicForMGet(t *testing.T) {
	e := newEnv(t)
	keys := []string{"a", "b", "c", "d"}
	set := func(v string) {
		args := []string{"MSET"}
		for _, k := range keys {
			args = append(args, k, v)
		}
		if got := e.do(2, args...); got != "+OK\r\n" {
			t.Errorf("MSET: %q", got)
		}
	}
	set("0")
	var stop atomic.Bool
	var torn atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			got, _ := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv(append([]string{"MGET"}, keys...)...))
			parts := strings.Split(got, "\r\n")
			// *4, then $n and the value for each key.
			for i := 4; i < len(parts)-1; i += 2 {
				if parts[i] != parts[2] {
					torn.Add(1)
				}
			}
		}
	}()
	for i := range 3000 {
		set(fmt.Sprint(i))
	}
	stop.Store(true)
	wg.Wait()
	if torn.Load() != 0 {
		t.Fatalf("%d MGETs saw a partly applied MSET", torn.Load())
	}
	if e.store.Used() != e.store.MemoryUsage() {
		t.Fatalf("Used %d != MemoryUsage %d", e.store.Used(), e.store.MemoryUsage())
	}
}

// TestCountersOOMAndLog: a refused growth changes nothing and logs
// nothing; the canonical records are as documented.
func TestCountersOOMAndLog(t *testing.T) {
	e := newEnv(t)
	refuse := commandtest.ReserveMem(func(uint64) bool { return false })
	for _, cmd := range [][]string{{"MSET", "a", "1", "b", "2"}, {"MSETNX", "a", "1"}, {"SETNX", "a", "1"},
		{"GETSET", "a", "1"}, {"INCR", "a"}, {"INCRBYFLOAT", "a", "1.5"}} {
		got, _ := commandtest.Run(e.tab, e.store, e.cfg, 2, commandtest.Argv(cmd...), refuse)
		if !strings.HasPrefix(got, "-OOM") {
			t.Errorf("%q with no memory: %q", cmd, got)
		}
	}
	if e.store.Len() != 0 || len(e.log.Records()) != 0 {
		t.Fatalf("refused commands changed %d keys, logged %d", e.store.Len(), len(e.log.Records()))
	}
	for _, cmd := range [][]string{{"MSET", "a", "1", "b", "2"}, {"MSETNX", "c", "3"}, {"MSETNX", "c", "4"},
		{"SETNX", "d", "1"}, {"SETNX", "d", "2"}, {"GETSET", "d", "5"}, {"INCR", "a"}, {"DECR", "a"}, {"INCRBY", "a", "7"},
		{"DECRBY", "a", "3"}, {"INCRBYFLOAT", "f", "0.1"}, {"INCRBYFLOAT", "f", "x"}} {
		e.do(2, cmd...)
	}
	var got []string
	for _, r := range e.log.Records() {
		var parts []string
		for _, a := range r {
			parts = append(parts, string(a))
		}
		got = append(got, strings.Join(parts, " "))
	}
	want := []string{"MSET a 1 b 2", "MSET c 3", "SET d 1", "SET d 5", "INCRBY a 1", "INCRBY a -1", "INCRBY a 7",
		"INCRBY a -3", "SET f 0.1 KEEPTTL"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("records\n %q\nwant\n %q", got, want)
	}
}
