package cf_test

import (
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/cf"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
)

// The hot-path benchmarks drive the CF.ADD / CF.EXISTS handlers the way
// the server does (commandtest.Bencher), with a zero-cost logger, on the
// workload of redis-benchmark -r 1000000 "CF.ADD cf __rand_int__". Run
// them with a fixed count so the filter state is the same in every run:
//
//	go test -run '^$' -bench 'Hot' -benchtime 200000x -count 8 -benchmem ./internal/command/cf/
//
// "reserved" is a filter reserved for 4M items (one sub-filter, filling
// up during the run); "default" is an autocreated filter with the default
// parameters (1024 items per sub-filter, expansion 1), refilled to
// prefill items every prefill/2 adds (it stops accepting adds at 32
// sub-filters), so every add tries many sub-filters before it finds room.
func benchHotCF(b *testing.B, name, reserve string, prefill int, refill bool) {
	tab, cfg := command.NewTable(), config.New()
	cf.Register(tab, cfg)
	store := keyspace.New(&commandtest.Discard{})
	if reserve != "" {
		if r, _ := commandtest.Run(tab, store, cfg, 2, commandtest.Argv("CF.RESERVE", "cf", reserve)); r != "+OK\r\n" {
			b.Fatal(r)
		}
	}
	add := commandtest.NewBencher(tab, store, cfg, 2, "CF.ADD")
	key := []byte("cf")
	items := commandtest.NewRandInts(1_000_000, 1)
	fill := func() {
		store.Update(key, func(tx *keyspace.Txn) { tx.Delete() })
		for range prefill {
			add.Do([][]byte{nil, key, items.Next()})
		}
	}
	if reserve == "" || prefill > 0 {
		fill()
	}
	run := commandtest.NewBencher(tab, store, cfg, 2, name)
	items = commandtest.NewRandInts(1_000_000, 2)
	args := [][]byte{[]byte(name), key, nil}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i++; refill && i%(prefill/2) == 0 {
			b.StopTimer()
			fill()
			b.StartTimer()
		}
		args[2] = items.Next()
		if r := run.Do(args); r[0] != ':' {
			b.Fatalf("%q", r)
		}
	}
}

func BenchmarkHotCFAdd(b *testing.B) {
	b.Run("reserved", func(b *testing.B) { benchHotCF(b, "CF.ADD", "4194304", 0, false) })
	b.Run("default", func(b *testing.B) { benchHotCF(b, "CF.ADD", "", 16*1024, true) })
}

func BenchmarkHotCFExists(b *testing.B) {
	b.Run("reserved", func(b *testing.B) { benchHotCF(b, "CF.EXISTS", "4194304", 1_000_000, false) })
}
