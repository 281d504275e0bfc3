package pf_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/server"
	"github.com/probly/probly/internal/strval"
)

// probly is an in-process server with the production command table.
type probly struct {
	addr  string
	store *keyspace.Store
	log   *commandtest.Logger
}

func startProbly(t *testing.T) *probly {
	t.Helper()
	table, cfg := app.Tables()
	p := &probly{log: &commandtest.Logger{}}
	p.store = keyspace.New(p.log)
	srv, err := server.New(server.Options{
		Store: p.store, Config: cfg, Table: table,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	p.addr = ln.Addr().String()
	return p
}

// checkReplay replays the recorded log through a fresh production table
// (default settings: CONFIG SET is not logged) and requires every key to
// come back with identical bytes.
func (p *probly) checkReplay(t *testing.T) {
	t.Helper()
	table, cfg := app.Tables()
	fresh := keyspace.New(nil)
	replay := app.Replayer(table, cfg, fresh)
	recs := p.log.Records()
	for i, r := range recs {
		if err := replay(r); err != nil {
			t.Fatalf("replaying record %d %q: %v", i, r[0], err)
		}
	}
	want, _ := p.store.Freeze(nil)
	got, _ := fresh.Freeze(nil)
	if len(want) != len(got) {
		t.Fatalf("replay: %d keys, live %d", len(got), len(want))
	}
	sort.Slice(want, func(i, j int) bool { return want[i].Key < want[j].Key })
	sort.Slice(got, func(i, j int) bool { return got[i].Key < got[j].Key })
	for i := range want {
		w, wok := want[i].Value.(*strval.String)
		g, gok := got[i].Value.(*strval.String)
		if want[i].Key != got[i].Key || !wok || !gok || !bytes.Equal(w.B, g.B) {
			t.Fatalf("replay differs at key %q", want[i].Key)
		}
	}
	t.Logf("replayed %d AOF records: %d keys identical", len(recs), len(want))
}

// pair runs every command on Redis and on probly and requires identical
// reply bytes.
type pair struct {
	t        *testing.T
	redis    *commandtest.RawClient
	probly   *commandtest.RawClient
	p        *probly
	commands int
	context  string // printed with a mismatch
}

func newPair(t *testing.T) *pair {
	t.Helper()
	raddr := commandtest.StartRedis(t)
	p := startProbly(t)
	return &pair{t: t, redis: commandtest.DialRaw(t, raddr, 2), probly: commandtest.DialRaw(t, p.addr, 2), p: p}
}

func cmd(args ...any) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = []byte(v)
		case []byte:
			out[i] = v
		case int:
			out[i] = []byte(strconv.Itoa(v))
		default:
			panic(fmt.Sprintf("cmd: %T", a))
		}
	}
	return out
}

func show(args [][]byte) string {
	parts := make([]string, len(args))
	for i, a := range args {
		if len(a) > 40 {
			parts[i] = fmt.Sprintf("<%d bytes>", len(a))
		} else {
			parts[i] = strconv.Quote(string(a))
		}
	}
	return strings.Join(parts, " ")
}

func describeDiff(a, b string) string {
	if len(a) < 200 && len(b) < 200 {
		return fmt.Sprintf("redis  %q\nprobly %q", a, b)
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(i-16, 0)
	hiA, hiB := min(i+32, len(a)), min(i+32, len(b))
	return fmt.Sprintf("lengths %d vs %d, first difference at byte %d:\nredis  …%s\nprobly …%s",
		len(a), len(b), i, hex.EncodeToString([]byte(a[lo:hiA])), hex.EncodeToString([]byte(b[lo:hiB])))
}

// run sends cmds to both servers (pipelined) and compares every reply. It
// returns the replies.
func (d *pair) run(cmds ...[][]byte) []string {
	d.t.Helper()
	var (
		wg     sync.WaitGroup
		rr, pr []string
		re, pe error
	)
	wg.Add(2)
	go func() { defer wg.Done(); rr, re = d.redis.Pipeline(cmds) }()
	go func() { defer wg.Done(); pr, pe = d.probly.Pipeline(cmds) }()
	wg.Wait()
	if re != nil || pe != nil {
		d.t.Fatalf("pipeline: redis %v, probly %v", re, pe)
	}
	for i := range cmds {
		if rr[i] != pr[i] {
			d.t.Fatalf("command %d of batch (%d sent before): %s\n%s%s", i, d.commands, show(cmds[i]), describeDiff(rr[i], pr[i]), d.context)
		}
	}
	d.commands += len(cmds)
	return rr
}

// runEach sends cmds to both servers without comparing the replies.
func (d *pair) runEach(cmds ...[][]byte) {
	d.t.Helper()
	if _, err := d.redis.Pipeline(cmds); err != nil {
		d.t.Fatal(err)
	}
	if _, err := d.probly.Pipeline(cmds); err != nil {
		d.t.Fatal(err)
	}
}
