package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/probly/probly/guard/natsstream"
)

func TestFollowInit(t *testing.T) {
	e, err := natsstream.StartEmbedded(natsstream.EmbeddedOptions{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	url := e.ClientURL()
	args := []string{"follow", "init", "--url", url, "--stream", "USERS", "--subjects", "users.created,users.deleted",
		"--subjects", "sessions.opened", "--replicas", "1", "--max-age", "24h", "--bucket", "snaps"}

	code, out, errs := runCLI(t, "", args...)
	if code != ExitOK || !strings.Contains(out, "stream USERS: created") || !strings.Contains(out, "bucket snaps: created") {
		t.Fatalf("first init: exit %d\n%s%s", code, out, errs)
	}
	nc, js, err := e.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	st, err := js.Stream(ctx, "USERS")
	if err != nil {
		t.Fatal(err)
	}
	c := st.CachedInfo().Config
	if c.Storage != jetstream.FileStorage || c.Retention != jetstream.LimitsPolicy || c.MaxAge != 24*time.Hour ||
		c.Duplicates != 2*time.Minute || len(c.Subjects) != 3 || c.Replicas != 1 {
		t.Fatalf("stream config %+v", c)
	}
	obs, err := js.ObjectStore(ctx, "snaps")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := obs.Status(ctx); err != nil || s.Storage() != jetstream.FileStorage {
		t.Fatalf("bucket status: %v", err)
	}

	code, out, errs = runCLI(t, "", args...)
	if code != ExitOK || !strings.Contains(out, "stream USERS: exists with the recommended settings") ||
		!strings.Contains(out, "bucket snaps: exists with the recommended settings") {
		t.Fatalf("second init: exit %d\n%s%s", code, out, errs)
	}

	// Differences are reported, exit 3, nothing changed.
	diff := append(append([]string(nil), args[:len(args)-4]...), "--max-age", "1h", "--bucket", "snaps", "--subjects", "noise")
	code, out, errs = runCLI(t, "", diff...)
	if code != ExitDataFail || !strings.Contains(out, "max age 24h0m0s, want 1h0m0s") || !strings.Contains(out, "subject noise missing") ||
		!strings.Contains(errs, "differs") {
		t.Fatalf("init with other settings: exit %d\n%s%s", code, out, errs)
	}
	if st, _ := js.Stream(ctx, "USERS"); st.CachedInfo().Config.MaxAge != 24*time.Hour {
		t.Fatal("a differing init changed the stream")
	}

	for _, bad := range [][]string{
		{"follow", "init", "--stream", "USERS", "--subjects", "a"},
		{"follow", "init", "--url", url, "--subjects", "a"},
		{"follow", "init", "--url", url, "--stream", "USERS"},
		{"follow", "init", "--url", url, "--stream", "USERS", "--subjects", "a", "--replicas", "0"},
		{"follow", "init", "--url", url, "--stream", "USERS", "--subjects", "a", "--replicas", "1", "--max-age", "1m"},
		{"follow", "init", "--url", url, "--stream", "A.B", "--subjects", "a", "--replicas", "1"},
		{"follow", "init", "--url", url, "--stream", "USERS", "--subjects", "a", "--replicas", "1", "--bucket", "a.b"},
		{"follow"},
	} {
		if code, out, errs := runCLI(t, "", bad...); code != ExitUsage {
			t.Errorf("%v: exit %d\n%s%s", bad, code, out, errs)
		}
	}
	if code, _, errs := runCLI(t, "", "follow", "init", "--url", "nats://127.0.0.1:1", "--stream", "S", "--subjects", "a"); code != ExitDataFail {
		t.Errorf("unreachable server: exit %d %s", code, errs)
	}
}
