package app

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/testutil"
)

// Differential test of transactions against redis-server 7: random
// sequences of MULTI, EXEC, DISCARD, WATCH, UNWATCH, RESET and string and
// key commands (some refused while queuing: unknown, wrong arity, no_multi;
// some failing at run time: WRONGTYPE-free string commands on a missing
// key, SETRANGE out of range) from two connections, so that one dirties
// the other's watched keys, give byte-identical replies, in RESP2 and
// RESP3. 3 × 400 steps per protocol; 20 × 2000 with PROBLY_FULL=1.
func TestTxDifferentialRedis(t *testing.T) {
	redisAddr := commandtest.StartRedis(t)
	s := runApp(t, Options{}, true)
	seqs, steps := 3, 400
	if testutil.FullEnabled() {
		seqs, steps = 20, 2000
	}
	for _, proto := range []int{2, 3} {
		for seq := range seqs {
			seed := uint64(proto*1000 + seq)
			rng := rand.New(rand.NewPCG(seed, 15))
			var conns [2][2]*commandtest.RawClient // [server][connection]
			for i, addr := range []string{s.addr, redisAddr} {
				for j := range 2 {
					conns[i][j] = commandtest.DialRaw(t, addr, proto)
				}
			}
			for _, srv := range conns {
				if _, err := srv[0].Do(commandtest.Argv("FLUSHALL")); err != nil {
					t.Fatal(err)
				}
			}
			var trace []string
			for step := range steps {
				who := 0
				if rng.IntN(4) == 0 {
					who = 1
				}
				args := txStep(rng)
				trace = append(trace, fmt.Sprintf("c%d %q", who, args))
				var got [2]string
				for i := range conns {
					r, err := conns[i][who].Do(commandtest.Argv(args...))
					if err != nil {
						t.Fatalf("RESP%d seed %d step %d %q: server %d: %v", proto, seed, step, args, i, err)
					}
					got[i] = r
				}
				if got[0] != got[1] {
					from := max(0, len(trace)-25)
					t.Fatalf("RESP%d seed %d step %d: c%d %q\nprobly: %q\nredis:  %q\nlast commands:\n%s",
						proto, seed, step, who, args, got[0], got[1], strings.Join(trace[from:], "\n"))
				}
			}
		}
	}
}

// txStep draws one command of the differential sequence.
func txStep(rng *rand.Rand) []string {
	keys := []string{"k1", "k2", "k3"}
	k := keys[rng.IntN(len(keys))]
	v := fmt.Sprintf("v%d", rng.IntN(5))
	switch rng.IntN(30) {
	case 0, 1, 2, 3:
		return []string{"MULTI"}
	case 4, 5, 6:
		return []string{"EXEC"}
	case 7:
		return []string{"DISCARD"}
	case 8, 9:
		return []string{"WATCH", k, keys[rng.IntN(len(keys))]}
	case 10:
		return []string{"UNWATCH"}
	case 11:
		return []string{"NOSUCHCOMMAND", k}
	case 12:
		return []string{"GET"} // wrong arity
	case 13:
		return []string{"EXEC", "extra"} // wrong arity (aborts inside MULTI)
	case 14:
		return []string{"SAVE", "now"} // wrong arity; SAVE itself would be no_multi
	case 15:
		return []string{"FLUSHALL"}
	case 16:
		return []string{"DEL", k}
	case 17:
		return []string{"EXISTS", k, keys[rng.IntN(len(keys))]}
	case 18:
		return []string{"STRLEN", k}
	case 19:
		return []string{"APPEND", k, v}
	case 20:
		return []string{"SETRANGE", k, "-1", v} // a runtime error
	case 21:
		return []string{"PING"}
	case 22:
		return []string{"WATCH"} // wrong arity
	case 23:
		return []string{"DISCARD", "x"}
	case 24:
		return []string{"RESET"}
	case 25:
		return []string{"GETRANGE", k, "0", "-1"}
	default:
		if rng.IntN(2) == 0 {
			return []string{"GET", k}
		}
		return []string{"SET", k, v}
	}
}
