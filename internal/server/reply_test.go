package server

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/command/str"
	"github.com/probly/probly/internal/testutil"
)

// clientField returns the value of field in the CLIENT LIST line of the
// connection with the given id ("" if there is none).
func clientField(list, id, field string) string {
	for _, line := range strings.Split(list, "\n") {
		if !strings.HasPrefix(line, "id="+id+" ") {
			continue
		}
		for _, kv := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(kv, field+"="); ok {
				return v
			}
		}
	}
	return ""
}

// clientInts returns obl, oll, omem and tot-mem of connection id.
func clientInts(t *testing.T, list, id string) (obl, oll, omem, tot int64) {
	t.Helper()
	var out [4]int64
	for i, f := range []string{"obl", "oll", "omem", "tot-mem"} {
		v, err := strconv.ParseInt(clientField(list, id, f), 10, 64)
		if err != nil {
			t.Fatalf("no %s for id=%s in %q", f, id, list)
		}
		out[i] = v
	}
	return out[0], out[1], out[2], out[3]
}

// bulkBody returns the payload of a raw bulk or verbatim reply.
func bulkBody(t *testing.T, reply string) string {
	t.Helper()
	_, body, ok := strings.Cut(reply, "\r\n")
	if !ok || len(body) < 2 {
		t.Fatalf("not a bulk reply: %q", reply)
	}
	return body[:len(body)-2]
}

// TestClientListOutputBuffer: a client that pipelines large GETs and does
// not read its replies shows them in CLIENT LIST (obl, oll, omem,
// tot-mem) and INFO clients (client_recent_max_output_buffer) while the
// server cannot send them; an idle client shows 0; once the client reads
// everything, so does it.
func TestClientListOutputBuffer(t *testing.T) {
	e := start(t, func(o *Options) { str.Register(o.Table, o.Config) })
	admin := e.raw(t)
	const size = 1 << 20
	value := strings.Repeat("v", size)
	if got := admin.do("SET", "big", value); got != "+OK\r\n" {
		t.Fatalf("SET: %q", got)
	}
	idle := e.raw(t)
	idleID := strings.TrimSuffix(strings.TrimPrefix(idle.do("CLIENT", "ID"), ":"), "\r\n")

	// The stuck client: 32 MiB of replies asked for (more than the
	// socket buffers hold), nothing read.
	nc, err := net.DialTimeout("tcp", e.addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	if _, err := nc.Write([]byte(cmd("CLIENT", "ID"))); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	stuckID := strings.TrimSuffix(strings.TrimPrefix(line, ":"), "\r\n")
	const gets = 32
	if _, err := nc.Write([]byte(strings.Repeat(cmd("GET", "big"), gets))); err != nil {
		t.Fatal(err)
	}

	var list string
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		list = bulkBody(t, admin.do("CLIENT", "LIST"))
		_, _, omem, _ := clientInts(t, list, stuckID)
		return omem > 0
	}) {
		t.Fatalf("the stuck client's pending replies never showed in CLIENT LIST: %q", list)
	}
	obl, oll, omem, tot := clientInts(t, list, stuckID)
	t.Logf("stuck client: obl=%d oll=%d omem=%d tot-mem=%d", obl, oll, omem, tot)
	// Redis, for the same client: obl=0 oll=30 omem=31458000 (it runs
	// every GET and holds every reply; probly holds the part of the
	// batch it is writing and runs the rest after).
	if obl != 0 || oll != 1 || omem <= replyStatic || omem > gets*size || tot < omem {
		t.Errorf("stuck client: obl=%d oll=%d omem=%d tot-mem=%d; want obl=0 oll=1, %d < omem ≤ %d, tot-mem ≥ omem",
			obl, oll, omem, tot, replyStatic, gets*size)
	}
	if o, l, m, _ := clientInts(t, list, idleID); o|l|m != 0 {
		t.Errorf("idle client: obl=%d oll=%d omem=%d, want 0", o, l, m)
	}
	// Redis 7.0 for the same clients: events=rw (a write handler waits
	// for the socket) and events=r.
	if ev := clientField(list, stuckID, "events"); ev != "rw" {
		t.Errorf("stuck client: events=%s, want rw", ev)
	}
	if ev := clientField(list, idleID, "events"); ev != "r" {
		t.Errorf("idle client: events=%s, want r", ev)
	}
	info := bulkBody(t, admin.do("INFO", "clients"))
	if v := infoInt(t, info, "client_recent_max_output_buffer"); v < omem {
		t.Errorf("INFO clients with a stuck client: client_recent_max_output_buffer %d < omem %d", v, omem)
	}

	// The client reads its replies: every byte arrives, and its buffer
	// shows empty again.
	_ = nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	want := "$" + strconv.Itoa(size) + "\r\n" + value + "\r\n"
	got := make([]byte, len(want))
	for i := range gets {
		if _, err := io.ReadFull(br, got); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if string(got) != want {
			t.Fatalf("reply %d is not the value (%q…)", i, got[:20])
		}
	}
	if !testutil.Eventually(t, 10*time.Second, func() bool {
		list = bulkBody(t, admin.do("CLIENT", "LIST"))
		o, l, m, _ := clientInts(t, list, stuckID)
		return o|l|m == 0
	}) {
		t.Fatalf("the drained client still shows an output buffer: %q", list)
	}
	if ev := clientField(list, stuckID, "events"); ev != "r" {
		t.Errorf("drained client: events=%s, want r", ev)
	}
}

// infoInt returns the integer value of field in an INFO reply.
func infoInt(t *testing.T, info, field string) int64 {
	t.Helper()
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			return n
		}
	}
	t.Fatalf("no %s in %q", field, info)
	return 0
}

// client_recent_max_output_buffer keeps a second's largest value until
// the reaper's first tick 7 seconds later clears its slot for the coming
// second, as Redis's clientsCron does (CLIENTS_PEAK_MEM_USAGE_SLOTS = 8).
func TestOutputPeakSlots(t *testing.T) {
	var p peakSlots
	p.note(500, 100)
	p.note(900, 50) // smaller, same second
	if got := p.max(); got != 100 {
		t.Fatalf("max %d, want 100", got)
	}
	for now := int64(1000); now < 7000; now += 250 { // the reaper's ticks
		p.advance(now)
		if got := p.max(); got != 100 {
			t.Fatalf("at %d ms: max %d, want 100 (still recent)", now, got)
		}
	}
	p.note(6500, 70)
	p.advance(7000) // clears second 8's slot, which held second 0's
	if got := p.max(); got != 70 {
		t.Fatalf("at 7000 ms: max %d, want 70", got)
	}
}

// CLIENT INFO shows the replies of the earlier commands of its own batch,
// still buffered (Redis shows its own unsent replies the same way), and
// none when it is the first command of its batch.
func TestClientInfoOwnReplies(t *testing.T) {
	e := start(t, nil)
	r := e.raw(t)
	info := bulkBody(t, r.do("CLIENT", "INFO"))
	if id := clientField(info, strings.TrimPrefix(strings.Fields(info)[0], "id="), "obl"); id != "0" {
		t.Errorf("CLIENT INFO alone: obl=%s in %q", id, info)
	}
	r.send(cmd("PING") + cmd("CLIENT", "INFO"))
	if got := r.read(); got != "+PONG\r\n" {
		t.Fatalf("PING: %q", got)
	}
	info = bulkBody(t, r.read())
	id := strings.TrimPrefix(strings.Fields(info)[0], "id=")
	if got := clientField(info, id, "obl"); got != strconv.Itoa(len("+PONG\r\n")) {
		t.Errorf("CLIENT INFO after PING in one batch: obl=%s, want 7 (%q)", got, info)
	}
	if got := clientField(info, id, "omem"); got != "0" {
		t.Errorf("omem=%s, want 0", got)
	}
	// Redis 7.0 too: its own unsent replies wait for no write handler.
	if got := clientField(info, id, "events"); got != "r" {
		t.Errorf("events=%s, want r", got)
	}
	// More than the 16 KiB static buffer: the rest is one block.
	arg := strings.Repeat("x", 20000)
	r.send(cmd("ECHO", arg) + cmd("CLIENT", "INFO"))
	if got := r.read(); got != "$20000\r\n"+arg+"\r\n" {
		t.Fatalf("ECHO: %d bytes", len(got))
	}
	info = bulkBody(t, r.read())
	n := int64(len("$20000\r\n") + 20000 + 2)
	if obl, oll, omem, tot := clientInts(t, info, id); obl != replyStatic || oll != 1 || omem != n-replyStatic || tot < n {
		t.Errorf("CLIENT INFO after a 20000-byte ECHO: obl=%d oll=%d omem=%d tot-mem=%d; want %d 1 %d, tot-mem ≥ %d",
			obl, oll, omem, tot, replyStatic, n-replyStatic, n)
	}
}

// The reply buffer is kept from batch to batch while it stays within
// countedBuf, and dropped after a batch whose replies grew it past that
// (the read buffers' policy); one of 1 MiB or more counts toward
// returning memory to the OS.
func TestReplyBufferShrinks(t *testing.T) {
	conn := &replayConn{}
	c := pathClient(t, conn)
	conn.req = []byte(cmd("PING"))
	if !c.batch() {
		t.Fatal("batch ended the connection")
	}
	small := c.wr.Cap()
	if small == 0 || small > countedBuf {
		t.Fatalf("reply buffer after PING: cap %d", small)
	}
	big := strings.Repeat("x", 2<<20)
	c.exec(commandtest.Argv("SET", "big", big))
	c.wr.Reset()
	conn.req = []byte(cmd("GET", "big"))
	released := c.s.released.Load()
	if !c.batch() {
		t.Fatal("batch ended the connection")
	}
	if got := string(conn.out); got != "$"+strconv.Itoa(len(big))+"\r\n"+big+"\r\n" {
		t.Fatalf("GET reply: %d bytes", len(got))
	}
	if c.wr.Cap() != 0 {
		t.Errorf("reply buffer after a 2 MiB reply: cap %d, want dropped", c.wr.Cap())
	}
	if c.s.released.Load()-released < 2<<20 {
		t.Errorf("released grew by %d, want ≥ 2 MiB", c.s.released.Load()-released)
	}
	conn.req = []byte(cmd("PING"))
	for range 2 {
		if !c.batch() {
			t.Fatal("batch ended the connection")
		}
	}
	if c.wr.Cap() == 0 || c.wr.Cap() > countedBuf || string(conn.out) != "+PONG\r\n" {
		t.Errorf("after PINGs: cap %d, reply %q", c.wr.Cap(), conn.out)
	}
}
