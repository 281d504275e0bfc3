package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestDataDirFromAe2a351: a data directory written by the server of commit
// ae2a351 (testdata/bfcf-ae2a351, see its README), with BF, CF and HLL keys
// in the snapshot and in the AOF after it, loads, and the server answers
// the recorded queries exactly as that server did.
func TestDataDirFromAe2a351(t *testing.T) {
	src := filepath.Join("testdata", "bfcf-ae2a351")
	dir := t.TempDir()
	for _, name := range []string{"dump.pdb", "appendonly.2.aof"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	queries, err := os.ReadFile(filepath.Join(src, "queries.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(src, "expected.txt"))
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cmd := startChild(t, addr, dir, "everysec")
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	var got strings.Builder
	for _, q := range strings.Split(strings.TrimSpace(string(queries)), "\n") {
		fmt.Fprintf(&got, "> %s\n", q)
		var args []any
		for _, f := range strings.Fields(q) {
			args = append(args, f)
		}
		v, err := c.Do(context.Background(), args...).Result()
		if err != nil && err != redis.Nil {
			t.Fatalf("%s: %v", q, err)
		}
		for _, line := range cliLines(v) {
			fmt.Fprintln(&got, line)
		}
	}
	if got.String() != string(want) {
		t.Fatalf("answers differ from ae2a351's:\n got:\n%s\nwant:\n%s", got.String(), want)
	}
}

// cliLines renders a reply as redis-cli prints it when not on a terminal:
// one line per element, nil as an empty line.
func cliLines(v any) []string {
	switch v := v.(type) {
	case nil:
		return []string{""}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, cliLines(e)...)
		}
		return out
	}
	return []string{fmt.Sprint(v)}
}
