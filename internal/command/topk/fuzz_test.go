package topk_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/keyspace"
)

// FuzzCommands: any TOPK.* argument vector gets a reply (never a panic),
// and replaying what was logged reproduces the key.
func FuzzCommands(f *testing.F) {
	for _, s := range []string{
		"TOPK.RESERVE k 3 8 2 0.5|TOPK.ADD k a b a c|TOPK.LIST k W",
		"TOPK.RESERVE k 1 1 1 1|TOPK.INCRBY k a 100000 b 99999|TOPK.COUNT k a b",
		"TOPK.RESERVE k 0x10 1e1 2 .9|TOPK.INCRBY k a 5 b -1 c 1|TOPK.INFO k",
		"TOPK.RESERVE k 4294967295 1 1 1e-320|TOPK.QUERY k a",
	} {
		f.Add(s)
	}
	tab, cfg := app.Tables()
	f.Fuzz(func(t *testing.T, script string) {
		if len(script) > 2000 {
			return
		}
		log := &commandtest.Logger{}
		store := keyspace.New(log)
		for _, line := range strings.Split(script, "|") {
			args := strings.Fields(line)
			if len(args) == 0 {
				continue
			}
			args[0] = "TOPK." + strings.TrimPrefix(strings.ToUpper(args[0]), "TOPK.")
			if args[0] == "TOPK.RESERVE" && len(args) > 2 {
				// keep sketches small and fast: k and width of at most 3
				// digits, depth of at most 2 (INCRBY makes up to 100000
				// decay trials per row)
				for i, a := range args[2:min(5, len(args))] {
					if len(a) > 3 || i == 2 && len(a) > 2 {
						return
					}
				}
			}
			reply, _ := commandtest.Run(tab, store, cfg, 3, commandtest.Argv(args...))
			if reply == "" {
				t.Fatalf("%q: no reply", args)
			}
		}
		replay := keyspace.New(nil)
		for _, rec := range log.Records() {
			if r, _ := commandtest.Run(tab, replay, cfg, 2, rec, commandtest.Replay(true)); strings.HasPrefix(r, "-") {
				t.Fatalf("replay %q: %q", rec, r)
			}
		}
		store.View([]byte("k"), func(v keyspace.Value) {
			var a, b []byte
			if m, ok := v.(interface{ MarshalBinary() ([]byte, error) }); ok {
				a, _ = m.MarshalBinary()
			}
			replay.View([]byte("k"), func(w keyspace.Value) {
				if m, ok := w.(interface{ MarshalBinary() ([]byte, error) }); ok {
					b, _ = m.MarshalBinary()
				}
			})
			if !bytes.Equal(a, b) {
				t.Fatal("replayed key differs")
			}
		})
	})
}
