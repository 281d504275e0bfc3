package cms_test

import (
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/cms"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/keyspace"
)

// The hot-path benchmarks drive CMS.INCRBY and CMS.QUERY the way the server
// does (commandtest.Bencher), with a zero-cost logger, on the workload of
// redis-benchmark -r 1000000 "CMS.INCRBY cms __rand_int__ 1" against
// CMS.INITBYPROB cms 0.001 0.01 (2000 × 7):
//
//	go test -run '^$' -bench 'Hot' -benchtime 200000x -count 8 -benchmem ./internal/command/cms/
func benchHot(b *testing.B, name string, extra ...[]byte) {
	tab := command.NewTable()
	cms.Register(tab, nil)
	store := keyspace.New(&commandtest.Discard{})
	if r, _ := commandtest.Run(tab, store, nil, 2, commandtest.Argv("CMS.INITBYPROB", "cms", "0.001", "0.01")); r != "+OK\r\n" {
		b.Fatal(r)
	}
	run := commandtest.NewBencher(tab, store, nil, 2, name)
	items := commandtest.NewRandInts(1_000_000, 2)
	args := append([][]byte{[]byte(name), []byte("cms"), nil}, extra...)
	b.ReportAllocs()
	for b.Loop() {
		args[2] = items.Next()
		if r := run.Do(args); r[0] != '*' {
			b.Fatalf("%q", r)
		}
	}
}

func BenchmarkHotCMSIncrBy(b *testing.B) { benchHot(b, "CMS.INCRBY", []byte("1")) }
func BenchmarkHotCMSQuery(b *testing.B)  { benchHot(b, "CMS.QUERY") }
