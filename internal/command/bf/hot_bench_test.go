package bf_test

import (
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/bf"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
)

// The hot-path benchmarks drive the BF.ADD / BF.EXISTS handlers the way
// the server does (commandtest.Bencher), with a zero-cost logger, on the
// workload of redis-benchmark -r 1000000 "BF.ADD bf __rand_int__": one
// key, 12-digit items drawn from a million values. Run them with a fixed
// count so the filter state is the same in every run:
//
//	go test -run '^$' -bench 'Hot' -benchtime 200000x -count 8 -benchmem ./internal/command/bf/

// hotEnv returns a command table and a store holding key "bf" after
// prefill random adds (default parameters: 100 items, ×2 per link, so a
// chain of ~12 links after 300 000 items), or after BF.RESERVE with
// reserve items when reserve > 0 (a single link).
func hotEnv(b *testing.B, reserve string, prefill int) (*command.Table, *keyspace.Store, *config.Registry) {
	tab, cfg := command.NewTable(), config.New()
	bf.Register(tab, cfg)
	store := keyspace.New(&commandtest.Discard{})
	if reserve != "" {
		if r, _ := commandtest.Run(tab, store, cfg, 2, commandtest.Argv("BF.RESERVE", "bf", "0.01", reserve)); r != "+OK\r\n" {
			b.Fatal(r)
		}
	}
	add := commandtest.NewBencher(tab, store, cfg, 2, "BF.ADD")
	key := []byte("bf")
	items := commandtest.NewRandInts(1_000_000, 1)
	for range prefill {
		add.Do([][]byte{nil, key, items.Next()})
	}
	return tab, store, cfg
}

func benchHot(b *testing.B, name, reserve string, prefill int) {
	tab, store, cfg := hotEnv(b, reserve, prefill)
	run := commandtest.NewBencher(tab, store, cfg, 2, name)
	items := commandtest.NewRandInts(1_000_000, 2)
	args := [][]byte{[]byte(name), []byte("bf"), nil}
	b.ReportAllocs()
	for b.Loop() {
		args[2] = items.Next()
		if r := run.Do(args); r[0] != ':' {
			b.Fatalf("%q", r)
		}
	}
}

// BenchmarkHotBFAdd: BF.ADD on a default-parameter chain of many links
// (the redis-benchmark state) and on a single reserved link.
func BenchmarkHotBFAdd(b *testing.B) {
	b.Run("chain", func(b *testing.B) { benchHot(b, "BF.ADD", "", 300_000) })
	b.Run("onelink", func(b *testing.B) { benchHot(b, "BF.ADD", "2000000", 300_000) })
}

// BenchmarkHotBFExists: BF.EXISTS on the same two states.
func BenchmarkHotBFExists(b *testing.B) {
	b.Run("chain", func(b *testing.B) { benchHot(b, "BF.EXISTS", "", 300_000) })
	b.Run("onelink", func(b *testing.B) { benchHot(b, "BF.EXISTS", "2000000", 300_000) })
}
