package pf_test

import (
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/command/pf"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
)

// BenchmarkHotPFAdd drives the PFADD handler the way the server does
// (commandtest.Bencher), with a zero-cost logger, on the workload of
// redis-benchmark -r 1000000 "PFADD pf __rand_int__" (a dense HLL after
// the prefill). Run it with a fixed count:
//
//	go test -run '^$' -bench 'Hot' -benchtime 200000x -count 8 -benchmem ./internal/command/pf/
func BenchmarkHotPFAdd(b *testing.B) {
	tab, cfg := command.NewTable(), config.New()
	pf.Register(tab, cfg)
	store := keyspace.New(&commandtest.Discard{})
	run := commandtest.NewBencher(tab, store, cfg, 2, "PFADD")
	key := []byte("pf")
	items := commandtest.NewRandInts(1_000_000, 1)
	for range 100_000 {
		run.Do([][]byte{nil, key, items.Next()})
	}
	items = commandtest.NewRandInts(1_000_000, 2)
	args := [][]byte{[]byte("PFADD"), key, nil}
	b.ReportAllocs()
	for b.Loop() {
		args[2] = items.Next()
		if r := run.Do(args); r[0] != ':' {
			b.Fatalf("%q", r)
		}
	}
}
