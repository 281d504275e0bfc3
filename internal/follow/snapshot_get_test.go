package follow

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A snapshot download may take longer than the NATS client's default
// timeout: the object store bounds a download without a deadline by it
// for the whole object (CI saw a 342 MiB bootstrap fail with "nats:
// timeout" under load), so getSnapshot gives the download the bound of a
// transfer at the slowest accepted rate. Here the client's default is 1 s
// and the reader takes over 2 s.
func TestSnapshotDownloadOutlastsDefaultTimeout(t *testing.T) {
	nc, js := startJSConn(t)
	ctx := context.Background()
	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "snaps"})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 4<<20/16)
	if _, err := obs.Put(ctx, jetstream.ObjectMeta{Name: snapshotObjectName("USERS")}, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	short, err := jetstream.New(nc, jetstream.WithDefaultTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	r, size, err := getSnapshot(ctx, short, "snaps", "USERS", 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if size != int64(len(data)) {
		t.Fatalf("size %d", size)
	}
	var got []byte
	buf := make([]byte, 64<<10)
	start := time.Now()
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %v and %d bytes: %v", time.Since(start).Round(time.Millisecond), len(got), err)
		}
		time.Sleep(35 * time.Millisecond) // 64 pieces: over 2 s in all
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, not the object's %d", len(got), len(data))
	}
	if d := time.Since(start); d < 2*time.Second {
		t.Fatalf("the download took %v: the test did not outlast the default timeout", d)
	}
}
