package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/keyspace"
)

// redisBloom84 is every command RedisBloom 8.4 (the module Redis 8
// bundles) registers: the BF, CF, CMS, TOPK and TDIGEST families.
var redisBloom84 = strings.Fields(`
	bf.add bf.card bf.debug bf.exists bf.info bf.insert bf.loadchunk bf.madd bf.mexists bf.reserve bf.scandump
	cf.add cf.addnx cf.compact cf.count cf.debug cf.del cf.exists cf.info cf.insert cf.insertnx cf.loadchunk
	cf.mexists cf.reserve cf.scandump
	cms.incrby cms.info cms.initbydim cms.initbyprob cms.merge cms.query
	tdigest.add tdigest.byrank tdigest.byrevrank tdigest.cdf tdigest.create tdigest.info tdigest.max
	tdigest.merge tdigest.min tdigest.quantile tdigest.rank tdigest.reset tdigest.revrank tdigest.trimmed_mean
	topk.add topk.count topk.incrby topk.info topk.list topk.query topk.reserve`)

// MODULE LIST advertises RedisBloom 8.4 ("bf", 80400) and nothing else,
// and that is honest: the module commands probly registers (besides its
// internal "_"-prefixed log records) are exactly RedisBloom 8.4's.
func TestModuleListMatchesCommands(t *testing.T) {
	tab, cfg := Tables()
	var got []string
	for _, s := range tab.All() {
		if s.Flags&command.FlagModule != 0 && !strings.HasPrefix(s.Name, "_") {
			got = append(got, s.Name)
		}
	}
	slices.Sort(got)
	want := slices.Clone(redisBloom84)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("module commands:\n got %v\nwant %v", got, want)
	}
	store := keyspace.New(&commandtest.Logger{})
	reply, _ := commandtest.Run(tab, store, cfg, 2, commandtest.Argv("MODULE", "LIST"))
	const list = "*1\r\n*8\r\n$4\r\nname\r\n$2\r\nbf\r\n$3\r\nver\r\n:80400\r\n$4\r\npath\r\n$0\r\n\r\n$4\r\nargs\r\n*0\r\n"
	if reply != list {
		t.Fatalf("MODULE LIST = %q", reply)
	}
}
