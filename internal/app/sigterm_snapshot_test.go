package app

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/probly/probly/internal/persist"
)

// SIGTERM writes a snapshot before exit when save points are configured,
// as Redis does (and SHUTDOWN without NOSAVE), and none with save "": the
// server process is started, written to and sent SIGTERM; then the data
// directory shows dump.pdb holding every key and an AOF with no record
// left to replay (or, without save points, no dump.pdb and the records),
// and a restart serves every key. The save point (3600 s) cannot fire
// during the test, so only the shutdown can have written the snapshot.
// The same holds for the SHUTDOWN command, and both log the snapshot as
// trigger=shutdown.
func TestSIGTERMSnapshotWithSavePoints(t *testing.T) {
	const keys = 50
	for _, c := range []struct {
		save     string
		snapshot bool
		command  bool // SHUTDOWN instead of SIGTERM
	}{{"3600 1", true, false}, {"", false, false}, {"3600 1", true, true}, {"", false, true}} {
		dir := t.TempDir()
		addr := freeAddr(t)
		ctx := context.Background()
		cmd := startChildWith(t, addr, dir, "everysec", [2]string{"save", c.save})
		rc := redis.NewClient(&redis.Options{Addr: addr})
		for i := range keys {
			if err := rc.BFAdd(ctx, fmt.Sprintf("bf%d", i), "item").Err(); err != nil {
				t.Fatal(err)
			}
		}
		if rep, err := persist.CheckDir(dir, Decode); err != nil || rep.Snapshot != "" {
			t.Fatalf("save %q: before SIGTERM: snapshot %q, %v; want none yet", c.save, rep.Snapshot, err)
		}
		if c.command {
			// Success closes the connection without a reply.
			if err := rc.Do(ctx, "SHUTDOWN").Err(); err == nil {
				t.Fatalf("save %q: SHUTDOWN answered OK; want the connection closed", c.save)
			}
		} else if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		rc.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("save %q: exit after SIGTERM: %v", c.save, err)
		}
		// The final snapshot is logged as a shutdown's, not as SAVE's.
		if log := cmd.Stderr.(*prefixWriter).String(); c.snapshot != strings.Contains(log, "trigger=shutdown") || strings.Contains(log, "trigger=manual") {
			t.Errorf("save %q: log after SIGTERM does not show the shutdown snapshot (trigger=shutdown) alone:\n%s", c.save, log)
		}
		rep, err := persist.CheckDir(dir, Decode)
		if err != nil || !rep.OK() {
			t.Fatalf("save %q: check after SIGTERM: %v %+v", c.save, err, rep)
		}
		var records uint64
		for _, f := range rep.Files {
			records += f.Records
		}
		switch {
		case c.snapshot && (rep.Snapshot == "" || rep.SnapshotKeys != keys || records != 0):
			t.Errorf("save %q: after SIGTERM: snapshot %q with %d keys, %d AOF records to replay; want dump.pdb with %d keys and none",
				c.save, rep.Snapshot, rep.SnapshotKeys, records, keys)
		case !c.snapshot && (rep.Snapshot != "" || records < keys):
			t.Errorf("save %q: after SIGTERM: snapshot %q, %d AOF records; want no snapshot and the %d records",
				c.save, rep.Snapshot, records, keys)
		}
		cmd = startChildWith(t, addr, dir, "everysec", [2]string{"save", c.save})
		rc = redis.NewClient(&redis.Options{Addr: addr})
		for i := range keys {
			if ok, err := rc.BFExists(ctx, fmt.Sprintf("bf%d", i), "item").Result(); err != nil || !ok {
				t.Errorf("save %q: after the restart, bf%d: %v %v", c.save, i, ok, err)
			}
		}
		rc.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("save %q: second exit: %v", c.save, err)
		}
	}
}
