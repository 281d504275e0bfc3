package follow

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/probly/probly/guard/natsstream"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/bf"
	"github.com/probly/probly/internal/command/cf"
	"github.com/probly/probly/internal/command/generic"
	"github.com/probly/probly/internal/command/pf"
	"github.com/probly/probly/internal/command/str"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
)

// snapNode is a key space with the server's command families (what
// app.Tables registers; package app imports this one, so the test cannot
// use it).
type snapNode struct {
	t  testing.TB
	r  *tableRunner
	st *keyspace.Store
}

func newSnapNode(t testing.TB) *snapNode {
	t.Helper()
	tab, cfg := command.NewTable(), config.New()
	generic.Register(tab, cfg)
	str.Register(tab, cfg)
	bf.Register(tab, cfg)
	pf.Register(tab, cfg)
	cf.Register(tab, cfg)
	st := keyspace.New(nil)
	return &snapNode{t: t, r: newTableRunner(tab, st, cfg, nil), st: st}
}

// do runs a command and returns its reply; an error reply fails the test.
func (n *snapNode) do(args ...string) string {
	n.t.Helper()
	a := make([][]byte, len(args))
	for i, s := range args {
		a[i] = []byte(s)
	}
	reply, err := n.r.run(a...)
	if err != nil {
		n.t.Fatalf("%s: %v", args[0], err)
	}
	return string(reply)
}

// scandump returns every chunk of BF/CF.SCANDUMP key.
func (n *snapNode) scandump(cmd, key string) []string {
	n.t.Helper()
	var out []string
	for iter := int64(0); ; {
		v, err := parseReply([]byte(n.do(cmd, key, strconv.FormatInt(iter, 10))))
		if err != nil {
			n.t.Fatal(err)
		}
		if v.elems[0].n == 0 {
			return out
		}
		iter = v.elems[0].n
		out = append(out, fmt.Sprintf("%d:%x", iter, v.elems[1].str))
	}
}

var snapKeys = []keyInfo{{"users", "bf"}, {"sessions", "cf"}, {"visitors", "pf"}, {"missing", "bf"}, {"scaled", "bf"}}

const snapPosKey = "probly:follow:USERS:probly"

func items(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

// fill creates real keys: a BF reserved small so it scales to several
// links, a non-scaling BF, a CF with repeated items, an HLL.
func (n *snapNode) fill() {
	n.do("BF.RESERVE", "users", "0.001", "5000")
	n.do(append([]string{"BF.MADD", "users"}, items("user", 3000)...)...)
	n.do("BF.RESERVE", "scaled", "0.01", "100", "EXPANSION", "2")
	n.do(append([]string{"BF.MADD", "scaled"}, items("s", 2000)...)...)
	n.do("CF.RESERVE", "sessions", "1000", "BUCKETSIZE", "2")
	for _, it := range items("session", 3000) {
		n.do("CF.ADD", "sessions", it)
	}
	n.do("CF.ADD", "sessions", "session-7")
	n.do(append([]string{"PFADD", "visitors"}, items("v", 5000)...)...)
	n.do("SET", snapPosKey, "42")
}

func TestSnapshotCaptureRestore(t *testing.T) {
	src := newSnapNode(t)
	src.fill()
	data, err := capture(src.r.run, "USERS", snapKeys, 42)
	if err != nil {
		t.Fatal(err)
	}
	s, err := decodeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	if s.stream != "USERS" || s.position != 42 || len(s.records) != 4 {
		t.Fatalf("decoded stream %q position %d, %d records", s.stream, s.position, len(s.records))
	}
	again, err := encodeSnapshot(s)
	if err != nil || !bytes.Equal(again, data) {
		t.Fatalf("re-encoding differs (err %v)", err)
	}

	dst := newSnapNode(t)
	pos, err := restore(dst.r.run, data, "USERS", snapKeys, snapPosKey)
	if err != nil {
		t.Fatal(err)
	}
	if pos != 42 || dst.do("GET", snapPosKey) != "$2\r\n42\r\n" {
		t.Fatalf("position %d, key %q", pos, dst.do("GET", snapPosKey))
	}
	for _, k := range []string{"users", "scaled"} {
		if a, b := src.scandump("BF.SCANDUMP", k), dst.scandump("BF.SCANDUMP", k); strings.Join(a, ",") != strings.Join(b, ",") || len(a) < 2 {
			t.Errorf("%s: SCANDUMP chunks differ or too few (%d, %d)", k, len(a), len(b))
		}
		if a, b := src.do("BF.INFO", k), dst.do("BF.INFO", k); a != b {
			t.Errorf("%s: BF.INFO differs:\n%q\n%q", k, a, b)
		}
	}
	if len(src.scandump("BF.SCANDUMP", "scaled")) < 4 {
		t.Error("the scaled filter should have several links")
	}
	for _, it := range items("user", 3000) {
		if dst.do("BF.EXISTS", "users", it) != ":1\r\n" {
			t.Fatalf("users: %s missing after restore", it)
		}
	}
	for _, it := range items("s", 2000) {
		if dst.do("BF.EXISTS", "scaled", it) != ":1\r\n" {
			t.Fatalf("scaled: %s missing after restore", it)
		}
	}
	if a, b := src.scandump("CF.SCANDUMP", "sessions"), dst.scandump("CF.SCANDUMP", "sessions"); strings.Join(a, ",") != strings.Join(b, ",") {
		t.Error("sessions: CF.SCANDUMP chunks differ")
	}
	for _, it := range items("session", 3000) {
		if a, b := src.do("CF.COUNT", "sessions", it), dst.do("CF.COUNT", "sessions", it); a != b || a == ":0\r\n" {
			t.Fatalf("sessions: CF.COUNT %s: %q then %q", it, a, b)
		}
	}
	if a, b := src.do("GET", "visitors"), dst.do("GET", "visitors"); a != b {
		t.Error("visitors: HLL bytes differ")
	}
	if a, b := src.do("PFCOUNT", "visitors"), dst.do("PFCOUNT", "visitors"); a != b {
		t.Errorf("PFCOUNT %q then %q", a, b)
	}
	if dst.do("EXISTS", "missing") != ":0\r\n" {
		t.Error("a key missing at capture exists after restore")
	}

	// Captures of both nodes now (PFCOUNT updated both HLLs' cached
	// cardinality) hold the same records.
	data1, err := capture(src.r.run, "USERS", snapKeys, 42)
	if err != nil {
		t.Fatal(err)
	}
	data2, err := capture(dst.r.run, "USERS", snapKeys, 42)
	if err != nil {
		t.Fatal(err)
	}
	h := snapFixedHeader + len("USERS") + 4
	if !bytes.Equal(data2[h:len(data2)-4], data1[h:len(data1)-4]) { // all but the time and the CRCs covering it
		t.Error("capturing the restored keys gives other records")
	}
}

func TestSnapshotRestoreRefusals(t *testing.T) {
	src := newSnapNode(t)
	src.fill()
	data, err := capture(src.r.run, "USERS", snapKeys, 42)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		stream string
		keys   []keyInfo
		setup  func(n *snapNode)
		want   error
	}{
		{"other stream", "ORDERS", snapKeys, nil, ErrSnapshotStream},
		{"key not followed", "USERS", snapKeys[:2], nil, ErrSnapshotKeys},
		{"other type", "USERS", []keyInfo{{"users", "cf"}, {"sessions", "cf"}, {"visitors", "pf"}, {"scaled", "bf"}}, nil, ErrSnapshotKeys},
		{"key exists", "USERS", snapKeys, func(n *snapNode) { n.do("PFADD", "visitors", "x") }, ErrSnapshotKeys},
		{"position exists", "USERS", snapKeys, func(n *snapNode) { n.do("SET", snapPosKey, "1") }, ErrSnapshotKeys},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := newSnapNode(t)
			if c.setup != nil {
				c.setup(dst)
			}
			before := dst.do("DBSIZE")
			if _, err := restore(dst.r.run, data, c.stream, c.keys, snapPosKey); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if dst.do("DBSIZE") != before {
				t.Error("a refused restore changed the key space")
			}
		})
	}
}

// A command that fails halfway (a chunk the command refuses, with valid
// checksums) leaves no key behind.
func TestSnapshotRestoreHalfway(t *testing.T) {
	src := newSnapNode(t)
	src.fill()
	data, err := capture(src.r.run, "USERS", snapKeys, 42)
	if err != nil {
		t.Fatal(err)
	}
	s, err := decodeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	// Break the last record's first chunk (its header): earlier keys load.
	last := &s.records[len(s.records)-1]
	bad := bytes.Clone(last.chunks[0].data)
	for i := range bad {
		bad[i] = 0xff
	}
	last.chunks[0].data = bad
	forged, err := encodeSnapshot(s)
	if err != nil {
		t.Fatal(err)
	}
	dst := newSnapNode(t)
	if _, err := restore(dst.r.run, forged, "USERS", snapKeys, snapPosKey); !errors.Is(err, ErrSnapshotRestore) {
		t.Fatalf("got %v, want ErrSnapshotRestore", err)
	}
	if got := dst.do("DBSIZE"); got != ":0\r\n" {
		t.Fatalf("DBSIZE after a failed restore: %q", got)
	}
}

// Every single-byte change and every truncation of a snapshot is refused
// with one of the named errors.
func TestSnapshotDecodeCorruption(t *testing.T) {
	src := newSnapNode(t)
	src.do("BF.RESERVE", "users", "0.01", "10")
	src.do("BF.MADD", "users", "a", "b")
	src.do("PFADD", "visitors", "a")
	data, err := capture(src.r.run, "USERS", snapKeys, 7)
	if err != nil {
		t.Fatal(err)
	}
	named := []error{ErrSnapshotMagic, ErrSnapshotVersion, ErrSnapshotTruncated, ErrSnapshotChecksum, ErrSnapshotCorrupt}
	isNamed := func(err error) bool {
		for _, e := range named {
			if errors.Is(err, e) {
				return true
			}
		}
		return false
	}
	for i := range data {
		b := bytes.Clone(data)
		b[i] ^= 0x01
		if _, err := decodeSnapshot(b); err == nil || !isNamed(err) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	for n := 0; n < len(data); n++ {
		if _, err := decodeSnapshot(data[:n]); err == nil || !isNamed(err) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	// The size places the trailer: a byte more shifts it.
	if _, err := decodeSnapshot(append(bytes.Clone(data), 0)); !isNamed(err) {
		t.Fatalf("a byte after the trailer: %v", err)
	}
	// A stream longer than the size it was announced with.
	d, err := newSnapReader(bytes.NewReader(append(bytes.Clone(data), 0)), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, _, ok, e := d.next()
		if err = e; !ok && e == nil {
			t.Fatal("a byte after the trailer was accepted")
		}
	}
	if !errors.Is(err, ErrSnapshotCorrupt) {
		t.Fatalf("a byte after the trailer: %v", err)
	}
}

// Records that pass their CRC but break a structural rule.
func TestSnapshotDecodeStructure(t *testing.T) {
	one := func(r snapRecord) []byte {
		b, err := encodeSnapshot(&snapshotFile{stream: "S", position: 1, records: []snapRecord{r}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ch := func(iter int64, d string) snapChunk { return snapChunk{iter, []byte(d)} }
	for name, r := range map[string]snapRecord{
		"unknown kind":       {kind: 9, key: []byte("kkkkkk"), chunks: []snapChunk{ch(1, "x")}},
		"empty key":          {kind: snapKindBF, key: nil, chunks: []snapChunk{ch(1, "x")}},
		"no chunks":          {kind: snapKindBF, key: []byte("kkkkkkkk")},
		"bf iterator 0":      {kind: snapKindBF, key: []byte("kkkkkk"), chunks: []snapChunk{ch(0, "x")}},
		"iterator decreases": {kind: snapKindCF, key: []byte("kkkkkk"), chunks: []snapChunk{ch(5, "x"), ch(5, "y")}},
		"pf two chunks":      {kind: snapKindPF, key: []byte("kkkkkk"), chunks: []snapChunk{ch(0, "x"), ch(0, "y")}},
		"pf iterator 1":      {kind: snapKindPF, key: []byte("kkkkkk"), chunks: []snapChunk{ch(1, "x")}},
	} {
		if _, err := decodeSnapshot(one(r)); !errors.Is(err, ErrSnapshotCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
	dup, err := encodeSnapshot(&snapshotFile{stream: "S", records: []snapRecord{
		{kind: snapKindPF, key: []byte("kkkkkk"), chunks: []snapChunk{ch(0, "x")}},
		{kind: snapKindBF, key: []byte("kkkkkk"), chunks: []snapChunk{ch(1, "x")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeSnapshot(dup); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Errorf("duplicate key: %v", err)
	}
	// Version 2: the header's count is 0 (the trailer counts).
	b := one(snapRecord{kind: snapKindPF, key: []byte("kkkkkk"), chunks: []snapChunk{ch(0, "")}})
	binary.LittleEndian.PutUint64(b[28:], 1)
	binary.LittleEndian.PutUint32(b[snapFixedHeader+1:], snapCRC(b[:snapFixedHeader+1]))
	if _, err := decodeSnapshot(b); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Errorf("version 2, count 1: %v", err)
	}
	// Version 1: a huge record count is refused before anything is
	// allocated.
	b, _ = hex.DecodeString(snapVectorV1)
	binary.LittleEndian.PutUint64(b[28:], 1<<60)
	binary.LittleEndian.PutUint32(b[snapFixedHeader+1:], snapCRC(b[:snapFixedHeader+1]))
	if _, err := decodeSnapshot(b); !errors.Is(err, ErrSnapshotTruncated) {
		t.Errorf("count 2^60: %v", err)
	}
	// Version 2: one key's records are consecutive, one chunk each.
	two := func(a, b snapRecord) []byte {
		var buf bytes.Buffer
		e, err := newSnapEncoder(&buf, "S", 1, time.Time{})
		if err == nil {
			err = e.record(a.kind, a.key, a.chunks)
		}
		if err == nil {
			err = e.record(b.kind, b.key, b.chunks)
		}
		if _, ferr := e.finish(); err != nil || ferr != nil {
			t.Fatal(err, ferr)
		}
		return buf.Bytes()
	}
	k, o := []byte("kkkkkk"), []byte("oooooo")
	for name, b := range map[string][]byte{
		"two chunks in a record": two(snapRecord{snapKindBF, k, []snapChunk{ch(1, "x"), ch(2, "y")}}, snapRecord{snapKindPF, o, []snapChunk{ch(0, "v")}}),
		"continuation, iterator": two(snapRecord{snapKindBF, k, []snapChunk{ch(3, "x")}}, snapRecord{snapKindBF, k, []snapChunk{ch(2, "y")}}),
		"continuation, kind":     two(snapRecord{snapKindBF, k, []snapChunk{ch(1, "x")}}, snapRecord{snapKindCF, k, []snapChunk{ch(2, "y")}}),
		"pf continued":           two(snapRecord{snapKindPF, k, []snapChunk{ch(0, "x")}}, snapRecord{snapKindPF, k, []snapChunk{ch(0, "y")}}),
	} {
		if _, err := decodeSnapshot(b); !errors.Is(err, ErrSnapshotCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
	s, err := decodeSnapshot(two(snapRecord{snapKindBF, k, []snapChunk{ch(1, "x")}}, snapRecord{snapKindBF, k, []snapChunk{ch(9, "y")}}))
	if err != nil || len(s.records) != 1 || len(s.records[0].chunks) != 2 || string(s.records[0].chunks[1].data) != "y" {
		t.Errorf("a continued key: %v %+v", err, s)
	}
}

// snapVector is the test vector of docs/FORMATS.md ("Follower snapshot"):
// stream "S", position 5, time 1700000000 s, one pf record for key "h"
// whose value is "v".
const snapVector = "5052424c5946534e02000000050000000000000000002a36fe9c971700000000000000000100" +
	"53" + "e5dc8e8e" +
	"0700000000000000" + "6e214b9c" + "030168010001" + "76" +
	"5052424c5946454e0100000000000000" + "070a20af"

// snapVectorV1 is the same snapshot in format version 1 (header count 1),
// as published before: still read.
const snapVectorV1 = "5052424c5946534e01000000050000000000000000002a36fe9c971701000000000000000100" +
	"53" + "b38a1690" +
	"0700000000000000" + "6e214b9c" + "030168010001" + "76" +
	"5052424c5946454e0100000000000000" + "070a20af"

func TestSnapshotVector(t *testing.T) {
	b, err := encodeSnapshot(&snapshotFile{stream: "S", position: 5, time: time.Unix(1700000000, 0),
		records: []snapRecord{{kind: snapKindPF, key: []byte("h"), chunks: []snapChunk{{0, []byte("v")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(b); got != snapVector {
		t.Fatalf("encoding:\n got  %s\n want %s", got, snapVector)
	}
	s, err := decodeSnapshot(b)
	if err != nil || s.position != 5 || s.stream != "S" || string(s.records[0].chunks[0].data) != "v" {
		t.Fatalf("decoding the vector: %v %+v", err, s)
	}
	v1, _ := hex.DecodeString(snapVectorV1)
	s1, err := decodeSnapshot(v1)
	if err != nil || s1.version != 1 || s1.position != 5 || s1.stream != "S" || len(s1.records) != 1 ||
		string(s1.records[0].key) != "h" || string(s1.records[0].chunks[0].data) != "v" {
		t.Fatalf("decoding the version 1 vector: %v %+v", err, s1)
	}
	n := newSnapNode(t)
	if pos, err := restore(n.r.run, v1, "S", []keyInfo{{"h", "pf"}}, "pos"); err != nil || pos != 5 || n.do("GET", "h") != "$1\r\nv\r\n" {
		t.Fatalf("restoring the version 1 vector: %d %v %q", pos, err, n.do("GET", "h"))
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "FORMATS.md"))
	if err != nil {
		t.Skipf("docs/FORMATS.md: %v", err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- test-vector: follow-snapshot -->")
	_, rest, ok2 := strings.Cut(rest, "```\n")
	block, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/FORMATS.md has no follow-snapshot test vector")
	}
	if got := strings.Join(strings.Fields(block), ""); got != snapVector {
		t.Errorf("docs/FORMATS.md vector differs:\n doc  %s\n code %s", got, snapVector)
	}
}

func FuzzDecodeSnapshot(f *testing.F) {
	n := newSnapNode(f)
	n.do("BF.RESERVE", "users", "0.01", "10")
	n.do("BF.MADD", "users", "a", "b")
	n.do("CF.ADD", "sessions", "a")
	n.do("PFADD", "visitors", "a")
	data, err := capture(n.r.run, "USERS", snapKeys, 3)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	v1, _ := hex.DecodeString(snapVectorV1)
	f.Add(v1)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSnapshot(b)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same bytes (version 2, the
		// one written), and restoring it never panics.
		if again, err := encodeSnapshot(s); s.version == 2 && (err != nil || !bytes.Equal(again, b)) {
			t.Fatalf("decoded snapshot re-encodes differently (err %v)", err)
		}
		keys := make([]keyInfo, 0, len(s.records))
		for _, r := range s.records {
			keys = append(keys, keyInfo{string(r.key), kindName(r.kind)})
		}
		dst := newSnapNode(t)
		_, _ = restore(dst.r.run, b, s.stream, keys, "\x00pos")
	})
}

// startUsersJS starts an embedded JetStream server with the stream USERS
// (subjects users.created, sessions.opened, sessions.closed) holding n
// users.created events "u0"…
func startUsersJS(t *testing.T, n int) jetstream.JetStream {
	t.Helper()
	ctx := context.Background()
	js := startJS(t)
	if err := natsstream.EnsureStream(ctx, js, "USERS", []string{"users.created", "sessions.opened", "sessions.closed"}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := js.Publish(ctx, "users.created", []byte(fmt.Sprint("u", i))); err != nil {
			t.Fatal(err)
		}
	}
	return js
}

// startJS starts an embedded JetStream server for the test.
func startJS(t *testing.T) jetstream.JetStream {
	t.Helper()
	_, js := startJSConn(t)
	return js
}

// startJSConn is startJS with the connection (for other JetStream
// handles on it).
func startJSConn(t *testing.T) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	e, err := natsstream.StartEmbedded(natsstream.EmbeddedOptions{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	nc, js, err := e.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, js
}

// getBytes reads stream's newest snapshot whole (getSnapshot's reader).
func getBytes(ctx context.Context, js jetstream.JetStream, bucket, stream string, maxBytes int64) ([]byte, error) {
	r, _, err := getSnapshot(ctx, js, bucket, stream, maxBytes)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// putBytes stores the snapshot data (position from its header).
func putBytes(ctx context.Context, js jetstream.JetStream, bucket, stream string, data []byte) (*jetstream.ObjectInfo, error) {
	s, err := decodeSnapshot(data)
	if err != nil {
		return nil, err
	}
	return putSnapshot(ctx, js, bucket, 1, stream, s.position, int64(len(data)), bytes.NewReader(data))
}

func TestSnapshotObjectStore(t *testing.T) {
	ctx := context.Background()
	js := startJS(t)
	src := newSnapNode(t)
	src.fill()
	data, err := capture(src.r.run, "USERS", snapKeys, 42)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := getBytes(ctx, js, "snaps", "USERS", 1<<30); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("no bucket: %v", err)
	}
	if _, err := publishedPosition(ctx, js, "snaps", "USERS"); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("no bucket: %v", err)
	}
	info, err := putBytes(ctx, js, "snaps", "USERS", data)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != uint64(len(data)) || info.Metadata[metaPosition] != "42" {
		t.Fatalf("object info: size %d, metadata %v", info.Size, info.Metadata)
	}
	if _, err := getBytes(ctx, js, "snaps", "ORDERS", 1<<30); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("no object: %v", err)
	}
	got, err := getBytes(ctx, js, "snaps", "USERS", 1<<30)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("get: %v (%d bytes, put %d)", err, len(got), len(data))
	}
	// The bucket was created with file storage.
	obs, err := js.ObjectStore(ctx, "snaps")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := obs.Status(ctx); err != nil || st.Storage() != jetstream.FileStorage || st.Replicas() != 1 {
		t.Fatalf("bucket status %v: %v", st, err)
	}

	// The newest object replaces the previous one.
	src.do("BF.ADD", "users", "one-more")
	data2, err := capture(src.r.run, "USERS", snapKeys, 43)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := putBytes(ctx, js, "snaps", "USERS", data2); err != nil {
		t.Fatal(err)
	}
	if got, err := getBytes(ctx, js, "snaps", "USERS", 1<<30); err != nil || !bytes.Equal(got, data2) {
		t.Fatalf("get after replace: %v", err)
	}
	if p, err := publishedPosition(ctx, js, "snaps", "USERS"); err != nil || p != 43 {
		t.Fatalf("published position %d, %v", p, err)
	}

	// Size limit: refused before reading.
	if _, err := getBytes(ctx, js, "snaps", "USERS", int64(len(data2)-1)); !errors.Is(err, ErrSnapshotTooLarge) {
		t.Fatalf("size limit: %v", err)
	}
	if _, err := getBytes(ctx, js, "snaps", "USERS", int64(len(data2))); err != nil {
		t.Fatalf("exactly at the size limit: %v", err)
	}
}

// An object whose chunk was replaced behind the object store's back
// (same size, other bytes) is refused by its digest; an object with a
// valid digest but damaged content is refused by the decoder.
func TestSnapshotCorruptObject(t *testing.T) {
	ctx := context.Background()
	js := startJS(t)
	src := newSnapNode(t)
	src.fill()
	data, err := capture(src.r.run, "USERS", snapKeys, 42)
	if err != nil {
		t.Fatal(err)
	}
	obs, err := ensureBucket(ctx, js, "snaps", 1)
	if err != nil {
		t.Fatal(err)
	}
	info, err := obs.Put(ctx, jetstream.ObjectMeta{Name: snapshotObjectName("USERS"),
		Opts: &jetstream.ObjectMetaOptions{ChunkSize: uint32(len(data) + 1)}}, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, "OBJ_snaps")
	if err != nil {
		t.Fatal(err)
	}
	chunks := "$O.snaps.C." + info.NUID
	if err := st.Purge(ctx, jetstream.WithPurgeSubject(chunks)); err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Clone(data)
	tampered[len(tampered)/2] ^= 0x40
	if _, err := js.Publish(ctx, chunks, tampered); err != nil {
		t.Fatal(err)
	}
	if _, err := getBytes(ctx, js, "snaps", "USERS", 1<<30); !errors.Is(err, ErrSnapshotChecksum) {
		t.Fatalf("tampered chunk: %v", err)
	}

	// Valid digest, damaged content: the download succeeds, restore
	// refuses it and loads nothing.
	if _, err := obs.PutBytes(ctx, snapshotObjectName("USERS"), tampered); err != nil {
		t.Fatal(err)
	}
	got, err := getBytes(ctx, js, "snaps", "USERS", 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	dst := newSnapNode(t)
	if _, err := restore(dst.r.run, got, "USERS", snapKeys, snapPosKey); !errors.Is(err, ErrSnapshotChecksum) {
		t.Fatalf("damaged content: %v", err)
	}
	if dst.do("DBSIZE") != ":0\r\n" {
		t.Fatal("a refused snapshot loaded keys")
	}
}

func TestSnapshotConfig(t *testing.T) {
	var c SnapshotConfig
	if err := c.normalize(); err != nil {
		t.Fatal(err)
	}
	if c.Bucket != DefaultSnapshotBucket || c.Every() != time.Minute || c.Publish || !*c.Bootstrap ||
		c.Replicas != 1 || c.MaxBytes != DefaultSnapshotMaxBytes {
		t.Fatalf("defaults: %+v", c)
	}
	c = SnapshotConfig{Interval: "5m", Replicas: 3, Publish: true}
	if err := c.normalize(); err != nil || c.Every() != 5*time.Minute {
		t.Fatalf("%v %v", err, c.Every())
	}
	for _, bad := range []SnapshotConfig{
		{Bucket: "a.b"}, {Bucket: "a b"}, {Interval: "soon"}, {Interval: "10ms"}, {Replicas: 6}, {Replicas: -1}, {MaxBytes: 10},
	} {
		if err := bad.normalize(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// snapFollower is a Follower of stream USERS over a fresh snapNode,
// connected to js, without its goroutine.
func snapFollower(t *testing.T, js jetstream.JetStream) (*Follower, *snapNode) {
	t.Helper()
	n := newSnapNode(t)
	c, err := ParseConfig([]byte(`{"url": "nats://127.0.0.1:1", "stream": "USERS", "keys": [
	  {"key": "users", "type": "bf", "add": ["users.created"]},
	  {"key": "sessions", "type": "cf", "add": ["sessions.opened"], "delete": ["sessions.closed"]}]}`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(c, Deps{Table: n.r.table, Config: n.r.ctx.Config, Store: n.st, Wait: func(uint64) error { return nil }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	f.js = js
	return f, n
}

func TestPublishAndBootstrap(t *testing.T) {
	ctx := context.Background()
	js := startUsersJS(t, 5)
	sc := &SnapshotConfig{Bucket: "snaps", Publish: true}
	if err := sc.normalize(); err != nil {
		t.Fatal(err)
	}

	// Nothing to bootstrap from yet.
	fresh, fn := snapFollower(t, js)
	if loaded, _, err := fresh.bootstrap(ctx, sc); loaded || err != nil {
		t.Fatalf("bootstrap without a snapshot: %v %v", loaded, err)
	}

	pub, pn := snapFollower(t, js)
	if err := pub.publishSnapshot(ctx, sc); err != nil { // no position yet: nothing
		t.Fatal(err)
	}
	if _, err := publishedPosition(ctx, js, "snaps", "USERS"); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("published without a position: %v", err)
	}
	pn.do(append([]string{"BF.MADD", "users"}, items("u", 5)...)...)
	pn.do("CF.ADD", "sessions", "s1")
	pn.do("SET", pub.cfg.PositionKey, "5")
	if err := pub.publishSnapshot(ctx, sc); err != nil {
		t.Fatal(err)
	}
	if p, err := publishedPosition(ctx, js, "snaps", "USERS"); err != nil || p != 5 {
		t.Fatalf("published position %d, %v", p, err)
	}
	// Not newer than the published one: nothing uploaded.
	obs, _ := js.ObjectStore(ctx, "snaps")
	before, _ := obs.GetInfo(ctx, snapshotObjectName("USERS"))
	if err := pub.publishSnapshot(ctx, sc); err != nil {
		t.Fatal(err)
	}
	if after, _ := obs.GetInfo(ctx, snapshotObjectName("USERS")); after.NUID != before.NUID {
		t.Error("an unchanged position was published again")
	}

	loaded, pos, err := fresh.bootstrap(ctx, sc)
	if err != nil || !loaded || pos != 5 {
		t.Fatalf("bootstrap: %v %d %v", loaded, pos, err)
	}
	if p, ok, err := readPositionKey(fn.st, fresh.cfg.PositionKey); err != nil || !ok || p != 5 {
		t.Fatalf("position key after bootstrap: %d %v %v", p, ok, err)
	}
	for _, it := range items("u", 5) {
		if fn.do("BF.EXISTS", "users", it) != ":1\r\n" {
			t.Fatalf("%s missing after bootstrap", it)
		}
	}
	if fn.do("CF.COUNT", "sessions", "s1") != ":1\r\n" {
		t.Fatal("cf item missing after bootstrap")
	}
	// A second bootstrap into the now loaded node is refused and changes
	// nothing.
	if loaded, _, err := fresh.bootstrap(ctx, sc); loaded || !errors.Is(err, ErrSnapshotKeys) {
		t.Fatalf("bootstrap into loaded keys: %v %v", loaded, err)
	}

	// Retention removed messages after the snapshot: refused.
	for range 3 {
		if _, err := js.Publish(ctx, "users.created", []byte("late")); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := js.Stream(ctx, "USERS")
	if err := st.Purge(ctx, jetstream.WithPurgeKeep(1)); err != nil {
		t.Fatal(err)
	}
	gap, gn := snapFollower(t, js)
	if loaded, _, err := gap.bootstrap(ctx, sc); loaded || !errors.Is(err, ErrSnapshotStream) {
		t.Fatalf("bootstrap over a gap: %v %v", loaded, err)
	}
	if gn.do("DBSIZE") != ":0\r\n" {
		t.Fatal("a refused bootstrap loaded keys")
	}
	off := false
	if loaded, _, err := gap.bootstrap(ctx, &SnapshotConfig{Bucket: "snaps", Bootstrap: &off}); loaded || err != nil {
		t.Fatalf("bootstrap off: %v %v", loaded, err)
	}
}

// TestUploadTimeout: a snapshot upload to a stalled NATS node is given up
// after seconds for a small snapshot (retried on the next cycle), and the
// bound grows with the size so that a large one on a slow link can finish.
func TestUploadTimeout(t *testing.T) {
	if d := uploadTimeout(1 << 20); d > 15*time.Second {
		t.Errorf("1 MiB snapshot: upload bound %v, want ≤ 15 s", d)
	}
	// A bootstrap past its bound is retried (transient), not given up.
	if !transient(fmt.Errorf("follow: snapshot: … (%w)", errBootstrapTimeout)) {
		t.Error("a bootstrap timeout is not transient")
	}
	if d := uploadTimeout(DefaultSnapshotMaxBytes); d < time.Duration(DefaultSnapshotMaxBytes/snapshotMinRate)*time.Second {
		t.Errorf("1 GiB snapshot: upload bound %v is below its transfer time at %d B/s", d, snapshotMinRate)
	}
}
