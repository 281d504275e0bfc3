package tdigest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	tdcmd "github.com/probly/probly/internal/command/tdigest"
	"github.com/probly/probly/internal/keyspace"
)

type step struct {
	cmd   string // space-separated arguments
	want  string // reply in the transcript JSON encoding (both protocols)
	want3 string // RESP3 reply when it differs
}

func run(t *testing.T, steps []step) {
	t.Helper()
	tab, cfg := table()
	for _, proto := range []int{2, 3} {
		store := keyspace.New(nil)
		for i, s := range steps {
			got, _ := commandtest.Run(tab, store, cfg, proto, commandtest.Argv(strings.Fields(s.cmd)...))
			want := s.want
			if proto == 3 && s.want3 != "" {
				want = s.want3
			}
			if err := commandtest.MatchReply(json.RawMessage(want), got, proto); err != nil {
				t.Errorf("RESP%d step %d %q: %v\n  want %s\n  got  %q", proto, i, s.cmd, err, want, got)
			}
		}
	}
}

const ok = `{"simple":"OK"}`

func e(msg string) string { return fmt.Sprintf(`{"err":%q}`, msg) }

// ds encodes doubles ("nan", "inf", "-inf" or numbers) as a reply array.
func ds(vs ...string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		if v == "nan" || v == "inf" || v == "-inf" {
			out[i] = fmt.Sprintf(`{"d":%q}`, v)
		} else {
			out[i] = fmt.Sprintf(`{"d":%s}`, v)
		}
	}
	return "[" + strings.Join(out, ",") + "]"
}

func is(vs ...int64) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf(`{"i":%d}`, v)
	}
	return "[" + strings.Join(out, ",") + "]"
}

func d(v string) string { return strings.TrimSuffix(strings.TrimPrefix(ds(v), "["), "]") }

func rng(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		b.WriteString(" " + strconv.Itoa(i))
	}
	return b.String()
}

// info returns the INFO reply of the nine values (RESP2, RESP3).
func info(v ...int64) (string, string) {
	names := []string{"Compression", "Capacity", "Merged nodes", "Unmerged nodes", "Merged weight",
		"Unmerged weight", "Observations", "Total compressions", "Memory usage"}
	var flat, pairs []string
	for i, n := range names {
		flat = append(flat, fmt.Sprintf(`{"simple":%q},{"i":%d}`, n, v[i]))
		pairs = append(pairs, fmt.Sprintf(`[{"simple":%q},{"i":%d}]`, n, v[i]))
	}
	return "[" + strings.Join(flat, ",") + "]", `{"map":[` + strings.Join(pairs, ",") + "]}"
}

func infoStep(key string, v ...int64) step {
	r2, r3 := info(v...)
	return step{"TDIGEST.INFO " + key, r2, r3}
}

// Spec redis-sketches.md §4.4, on the wire.
func TestVectors(t *testing.T) {
	run(t, []step{
		{"TDIGEST.CREATE tdigest", ok, ""},
		{"TDIGEST.ADD tdigest" + rng(1, 10000), ok, ""},
		infoStep("tdigest", 100, 610, 51, 422, 9578, 422, 10000, 17, 9840),
		{"TDIGEST.CREATE h", ok, ""},
		{"TDIGEST.ADD h" + rng(1, 100), ok, ""},
		infoStep("h", 100, 610, 0, 100, 0, 100, 100, 0, 9840),
		{"TDIGEST.ADD h" + rng(1, 10000), ok, ""},
		infoStep("h", 100, 610, 51, 522, 9578, 522, 10100, 17, 9840),
		{"TDIGEST.CREATE u", ok, ""},
		{"TDIGEST.ADD u" + strings.Repeat(" 1.0", 100), ok, ""},
		{"TDIGEST.QUANTILE u 0.5", ds("1"), ""},
		infoStep("u", 100, 610, 36, 0, 100, 0, 100, 1, 9840),
		{"TDIGEST.CREATE t COMPRESSION 1000", ok, ""},
		{"TDIGEST.ADD t 1 2 2 3 3 3 4 4 4 4 5 5 5 5 5", ok, ""},
		{"TDIGEST.QUANTILE t 0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1", ds("1", "2", "3", "3", "4", "4", "4", "5", "5", "5", "5"), ""},
		{"TDIGEST.CDF t 0 1 2 3 4 5 6", ds("0", "0.03333333333333333", "0.13333333333333333", "0.3", "0.5333333333333333", "0.8333333333333334", "1"), ""},
		{"TDIGEST.BYRANK t" + rng(0, 15), ds("1", "2", "2", "3", "3", "3", "4", "4", "4", "4", "5", "5", "5", "5", "5", "inf"), ""},
		{"TDIGEST.BYREVRANK t" + rng(0, 15), ds("5", "5", "5", "5", "5", "4", "4", "4", "4", "3", "3", "3", "2", "2", "1", "-inf"), ""},
		{"TDIGEST.RANK t 0 1 2 3 4 5 6", is(-1, 0, 2, 4, 8, 12, 15), ""},
		{"TDIGEST.REVRANK t 0 1 2 3 4 5 6", is(15, 14, 13, 10, 7, 2, -1), ""},
		infoStep("t", 1000, 6010, 15, 0, 15, 0, 15, 1, 96240),
		{"TDIGEST.CREATE s COMPRESSION 1000", ok, ""},
		{"TDIGEST.RANK s 0 1", is(-2, -2), ""},
		{"TDIGEST.REVRANK s 0 1", is(-2, -2), ""},
		{"TDIGEST.ADD s 10 20 30 40 50 60", ok, ""},
		{"TDIGEST.RANK s 0 10 20 30 40 50 60 70", is(-1, 0, 1, 2, 3, 4, 5, 6), ""},
		{"TDIGEST.REVRANK s 0 10 20 30 40 50 60 70", is(6, 5, 4, 3, 2, 1, 0, -1), ""},
		{"TDIGEST.CREATE r COMPRESSION 500", ok, ""},
		{"TDIGEST.ADD r" + rng(0, 19), ok, ""},
		{"TDIGEST.RANK r -1 0 19 20 18 10 1", is(-1, 0, 19, 20, 18, 10, 1), ""},
		{"TDIGEST.RANK r -20 20 9", is(-1, 20, 9), ""},
		{"TDIGEST.REVRANK r 20 0 19 50 18 10 1", is(-1, 19, 0, -1, 1, 9, 18), ""},
		{"TDIGEST.REVRANK r 21 0 10", is(-1, 19, 9), ""},
		{"TDIGEST.TRIMMED_MEAN r 0.1 0.9", d("9.5"), ""},
		{"TDIGEST.TRIMMED_MEAN r 0 1", d("9.5"), ""},
		{"TDIGEST.TRIMMED_MEAN r 0.2 0.8", d("9.5"), ""},
		{"TDIGEST.CREATE b COMPRESSION 500", ok, ""},
		{"TDIGEST.ADD b" + rng(1, 10), ok, ""},
		{"TDIGEST.BYRANK b 0 10 100 9", ds("1", "inf", "inf", "10"), ""},
		{"TDIGEST.BYREVRANK b 0 10 100 9", ds("10", "-inf", "-inf", "1"), ""},
		{"TDIGEST.BYRANK b -1", e("ERR T-Digest: rank needs to be non negative"), ""},
		{"TDIGEST.CREATE s1", ok, ""},
		{"TDIGEST.CREATE s2", ok, ""},
		{"TDIGEST.ADD s1 10.0 20.0", ok, ""},
		{"TDIGEST.ADD s2 30.0 40.0", ok, ""},
		{"TDIGEST.MERGE sM 2 s1 s2", ok, ""},
		{"TDIGEST.BYRANK sM 0 1 2 3 4", ds("10", "20", "30", "40", "inf"), ""},
		// single observation
		{"TDIGEST.CREATE one", ok, ""},
		{"TDIGEST.ADD one 5", ok, ""},
		infoStep("one", 100, 610, 0, 1, 0, 1, 1, 0, 9840),
		{"TDIGEST.QUANTILE one 0 0.5 1", ds("nan", "nan", "nan"), ""},
		{"TDIGEST.CDF one 5", ds("nan"), ""},
		{"TDIGEST.TRIMMED_MEAN one 0.1 0.9", d("nan"), ""},
		{"TDIGEST.RANK one 4 5 6", is(-1, -9223372036854775808, 1), ""},
		{"TDIGEST.REVRANK one 4 5 6", is(1, -9223372036854775808, -1), ""},
		{"TDIGEST.BYRANK one 0 1 2", ds("5", "inf", "inf"), ""},
		{"TDIGEST.MIN one", d("5"), ""},
		{"TDIGEST.ADD one 7", ok, ""},
		{"TDIGEST.QUANTILE one 0 0.25 0.5 0.75 1", ds("5", "5", "7", "7", "7"), ""},
		{"TDIGEST.CDF one 4 5 6 7 8", ds("0", "0.25", "0.5", "0.75", "1"), ""},
		{"TDIGEST.RANK one 4 5 6 7 8", is(-1, 0, 1, 1, 2), ""},
		{"TDIGEST.REVRANK one 4 5 6 7 8", is(2, 1, 1, 0, -1), ""},
		{"TDIGEST.TRIMMED_MEAN one 0.1 0.9", d("6"), ""},
		{"TDIGEST.CREATE neg", ok, ""},
		{"TDIGEST.ADD neg -0.0", ok, ""},
		{"TDIGEST.MIN neg", `{"d":-0.0}`, ""},
		// empty
		{"TDIGEST.CREATE e", ok, ""},
		{"TDIGEST.MIN e", d("nan"), ""},
		{"TDIGEST.MAX e", d("nan"), ""},
		{"TDIGEST.TRIMMED_MEAN e 0.1 0.6", d("nan"), ""},
		{"TDIGEST.QUANTILE e 0.1 0.5", ds("nan", "nan"), ""},
		{"TDIGEST.BYREVRANK e 0 1", ds("nan", "nan"), ""},
		{"TDIGEST.RESET t", ok, ""},
		infoStep("t", 1000, 6010, 0, 0, 0, 0, 0, 0, 96240),
	})
}

func TestVectorsMerge(t *testing.T) {
	run(t, []step{
		{"TDIGEST.CREATE tdigest1", ok, ""},
		{"TDIGEST.CREATE tdigest2", ok, ""},
		{"TDIGEST.CREATE tdigest3", ok, ""},
		{"TDIGEST.ADD tdigest1 10 20 30 40 50 60 70 80 90 100", ok, ""},
		{"TDIGEST.ADD tdigest2 15 25 35 45 55 65 75 85 95 105", ok, ""},
		{"TDIGEST.ADD tdigest3 50 60 70 80 90 100 110 120 130 140", ok, ""},
		{"TDIGEST.MERGE tdigest1 2 tdigest2 tdigest3 COMPRESSION 1000", ok, ""},
		infoStep("tdigest1", 1000, 6010, 20, 10, 20, 10, 30, 2, 96240),
		{"TDIGEST.MAX tdigest1", d("140"), ""},
		{"TDIGEST.QUANTILE tdigest1 0 0.25 0.5 0.75 1", ds("10", "45", "70", "95", "140"), ""},
		{"TDIGEST.CREATE a COMPRESSION 50", ok, ""},
		{"TDIGEST.CREATE b COMPRESSION 200", ok, ""},
		{"TDIGEST.ADD a 1 2 3", ok, ""},
		{"TDIGEST.ADD b 10 20", ok, ""},
		{"TDIGEST.MERGE d 2 a b", ok, ""},
		infoStep("d", 200, 1210, 3, 2, 3, 2, 5, 1, 19440),
		{"TDIGEST.MERGE d 2 a b", ok, ""},
		infoStep("d", 200, 1210, 8, 2, 8, 2, 10, 2, 19440),
		{"TDIGEST.MERGE d 1 a OVERRIDE", ok, ""},
		infoStep("d", 50, 310, 0, 3, 0, 3, 3, 0, 5040),
		{"TDIGEST.MERGE d 1 a OVERRIDE foo", ok, ""},
		{"TDIGEST.MERGE d 1 a foo", e("ERR T-Digest: wrong keyword"), ""},
		{"TDIGEST.MERGE d 1 a compression", e("ERR wrong number of arguments for 'tdigest.merge' command"), ""},
		{"TDIGEST.MERGE z 2 z a", e("ERR T-Digest: key does not exist"), ""},
		{"TDIGEST.MERGE d x a", e("ERR T-Digest: error parsing numkeys"), ""},
		{"TDIGEST.MERGE d 0 a", e("ERR T-Digest: numkeys needs to be a positive integer"), ""},
		{"TDIGEST.MERGE d 3 a b", e("ERR wrong number of arguments for 'tdigest.merge' command"), ""},
		{"TDIGEST.MERGE d 1 a COMPRESSION 100000000000000000", e("ERR T-Digest: allocation of destination digest failed"), ""},
	})
	tab, cfg := table()
	store := keyspace.New(nil)
	do := func(cmd string) string {
		r, _ := commandtest.Run(tab, store, cfg, 2, commandtest.Argv(strings.Fields(cmd)...))
		return r
	}
	obs := func(key string) string {
		r := do("TDIGEST.INFO " + key)
		i := strings.Index(r, "Observations\r\n:")
		return r[i+15 : i+15+strings.Index(r[i+15:], "\r")]
	}
	comp := func(key string) string {
		r := do("TDIGEST.INFO " + key)
		i := strings.Index(r, "Compression\r\n:")
		return r[i+14 : i+14+strings.Index(r[i+14:], "\r")]
	}
	do("TDIGEST.CREATE x COMPRESSION 100")
	do("TDIGEST.CREATE y COMPRESSION 200")
	do("TDIGEST.ADD x 1 2")
	do("TDIGEST.ADD y 3 4")
	do("TDIGEST.MERGE new 2 x y")
	do("TDIGEST.CREATE c55 COMPRESSION 55")
	do("TDIGEST.MERGE c55 2 x y")
	if comp("new") != "200" || comp("c55") != "55" {
		t.Fatalf("compression %s %s", comp("new"), comp("c55"))
	}
	do("TDIGEST.MERGE c55 2 x y COMPRESSION 50")
	if comp("c55") != "50" {
		t.Fatal(comp("c55"))
	}
	do("TDIGEST.MERGE c55 2 x y OVERRIDE")
	if comp("c55") != "200" || obs("c55") != "4" {
		t.Fatal(comp("c55"), obs("c55"))
	}
	do("TDIGEST.CREATE self")
	do("TDIGEST.ADD self" + rng(1, 100))
	for _, want := range []string{"200", "400", "800"} {
		if r := do("TDIGEST.MERGE self 1 self"); r != "+OK\r\n" || obs("self") != want {
			t.Fatalf("self-merge: %q, observations %s, want %s", r, obs("self"), want)
		}
	}
	do("TDIGEST.MERGE z5 1 x")
	if do("TDIGEST.MERGE z5 5 z5 z5 z5 z5 z5"); obs("z5") != "12" {
		t.Fatalf("MERGE z 5 z z z z z: observations %s, want 12 (the old z six times)", obs("z5"))
	}
}

func TestErrors(t *testing.T) {
	ar := func(n string) string { return e("ERR wrong number of arguments for '" + n + "' command") }
	run(t, []step{
		{"SET str v", ok, ""},
		{"TDIGEST.CREATE str", e(command.ErrWrongType), ""},
		{"TDIGEST.ADD str 1", e(command.ErrWrongType), ""},
		{"TDIGEST.MERGE str 1 x", e(command.ErrWrongType), ""},
		{"TDIGEST.QUANTILE missing a", e("ERR T-Digest: key does not exist"), ""},
		{"TDIGEST.CREATE t", ok, ""},
		{"TDIGEST.CREATE t", e("ERR T-Digest: key already exists"), ""},
		{"TDIGEST.CREATE t2 compression x", e("ERR T-Digest: error parsing compression parameter"), ""},
		{"TDIGEST.CREATE t2 compression 0", e("ERR T-Digest: compression parameter needs to be a positive integer"), ""},
		{"TDIGEST.CREATE t2 compression -1", e("ERR T-Digest: compression parameter needs to be a positive integer"), ""},
		{"TDIGEST.CREATE t2 string 100", e("ERR T-Digest: wrong keyword"), ""},
		{"TDIGEST.CREATE t2 100 compression", e("ERR T-Digest: error parsing compression parameter"), ""},
		{"TDIGEST.CREATE t2 COMPRESSION 100000000000000000", e("ERR T-Digest: allocation failed"), ""},
		{"TDIGEST.CREATE t2 COMPRESSION", ar("tdigest.create"), ""},
		{"TDIGEST.ADD t nan", e("ERR T-Digest: error parsing val parameter"), ""},
		{"TDIGEST.ADD t inf", e("ERR T-Digest: val parameter needs to be a finite number"), ""},
		{"TDIGEST.ADD t -inf", e("ERR T-Digest: val parameter needs to be a finite number"), ""},
		{"TDIGEST.ADD t 1 inf a", e("ERR T-Digest: val parameter needs to be a finite number"), ""},
		{"TDIGEST.ADD t 0x10 1e-320", ok, ""},
		{"TDIGEST.MAX t", d("16"), ""},
		{"TDIGEST.QUANTILE t 1.1", e("ERR T-Digest: quantile should be in [0,1]"), ""},
		{"TDIGEST.QUANTILE t 0.5 a", e("ERR T-Digest: error parsing quantile"), ""},
		{"TDIGEST.QUANTILE t 1.1 a", e("ERR T-Digest: quantile should be in [0,1]"), ""},
		{"TDIGEST.CDF t a", e("ERR T-Digest: error parsing cdf"), ""},
		{"TDIGEST.CDF t nan", e("ERR T-Digest: error parsing cdf"), ""},
		{"TDIGEST.CDF t inf -inf", ds("1", "0"), ""},
		{"TDIGEST.RANK t nan", e("ERR T-Digest: error parsing value"), ""},
		{"TDIGEST.BYRANK t 0.5", e("ERR T-Digest: error parsing rank"), ""},
		{"TDIGEST.TRIMMED_MEAN t a a", e("ERR T-Digest: error parsing low_cut_percentile"), ""},
		{"TDIGEST.TRIMMED_MEAN t 0.1 a", e("ERR T-Digest: error parsing high_cut_percentile"), ""},
		{"TDIGEST.TRIMMED_MEAN t 10 20", e("ERR T-Digest: low_cut_percentile and high_cut_percentile should be in [0,1]"), ""},
		{"TDIGEST.TRIMMED_MEAN t 0.9 0.1", e("ERR T-Digest: low_cut_percentile should be lower than high_cut_percentile"), ""},
		{"TDIGEST.TRIMMED_MEAN t 0.1 0.1", e("ERR T-Digest: low_cut_percentile should be lower than high_cut_percentile"), ""},
		{"TDIGEST.TRIMMED_MEAN t 0.1", ar("tdigest.trimmed_mean"), ""},
		{"TDIGEST.MIN t x", ar("tdigest.min"), ""},
		{"TDIGEST.ADD t", ar("tdigest.add"), ""},
		{"TYPE t", `{"simple":"TDIS-TYPE"}`, ""},
	})
}

// TestAOFReplay: a random workload's log, replayed on an empty key
// space, rebuilds every digest bit for bit (centroids, buffer, counters),
// and every read after the replay answers the same bytes.
func TestAOFReplay(t *testing.T) {
	tab, cfg := table()
	var log commandtest.Logger
	store := keyspace.New(&log)
	r := rand.New(rand.NewPCG(3, 4))
	keys := []string{"a", "b", "c"}
	do := func(s *keyspace.Store, args ...string) string {
		out, _ := commandtest.Run(tab, s, cfg, 3, commandtest.Argv(args...))
		return out
	}
	for _, k := range keys {
		do(store, "TDIGEST.CREATE", k, "COMPRESSION", strconv.Itoa(10+r.IntN(50)))
	}
	sawCompress := false
	for i := range 3000 {
		k := keys[r.IntN(len(keys))]
		switch op := r.IntN(20); {
		case op < 12:
			args := []string{"TDIGEST.ADD", k}
			for range 1 + r.IntN(30) {
				args = append(args, strconv.FormatFloat(r.NormFloat64()*100, 'g', -1, 64))
			}
			do(store, args...)
		case op < 15:
			do(store, "TDIGEST.QUANTILE", k, "0.5", "0.9", "0.1")
		case op < 16:
			do(store, "TDIGEST.RANK", k, "0")
		case op < 17:
			do(store, "TDIGEST.TRIMMED_MEAN", k, "0.1", "0.9")
		case op < 18:
			do(store, "TDIGEST.MERGE", keys[r.IntN(3)], "2", k, keys[r.IntN(3)])
		case op < 19 && i%7 == 0:
			do(store, "TDIGEST.RESET", k)
		default:
			do(store, "TDIGEST.MERGE", "m", "1", k, "COMPRESSION", "30")
		}
	}
	recs := log.Records()
	replayed := keyspace.New(nil)
	for _, rec := range recs {
		if bytes.Equal(rec[0], []byte("_TDIGEST.COMPRESS")) {
			sawCompress = true
		}
		if out, _ := commandtest.Run(tab, replayed, cfg, 2, rec, commandtest.Replay(true)); out[0] == '-' {
			t.Fatalf("replaying %q: %s", rec, out)
		}
	}
	if !sawCompress {
		t.Fatal("no read logged its compression")
	}
	for _, k := range append(keys, "m") {
		var a, b []byte
		store.View([]byte(k), func(v keyspace.Value) { a, _ = v.(*tdcmd.Value).MarshalBinary() })
		replayed.View([]byte(k), func(v keyspace.Value) { b, _ = v.(*tdcmd.Value).MarshalBinary() })
		if a == nil || !bytes.Equal(a, b) {
			t.Fatalf("key %s: replayed digest differs (%d vs %d bytes)", k, len(a), len(b))
		}
		// The snapshot form decodes to the same digest.
		v, err := tdcmd.Decode(a)
		if err != nil {
			t.Fatal(err)
		}
		if c, _ := v.(*tdcmd.Value).MarshalBinary(); !bytes.Equal(c, a) {
			t.Fatalf("key %s: snapshot round trip differs", k)
		}
		q := []string{"TDIGEST.QUANTILE", k, "0.01", "0.5", "0.99"}
		if x, y := do(store, q...), do(replayed, q...); x != y {
			t.Fatalf("key %s: %q vs %q after replay", k, x, y)
		}
	}
	t.Logf("%d records replayed", len(recs))
}
