package server

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/str"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/testutil"
)

// strSpecs returns the string commands (SET, GET, STRLEN …).
func strSpecs() []*command.Spec {
	t := command.NewTable()
	str.Register(t, config.New())
	return t.All()
}

// closedWithin reports whether the server closes r's connection within d,
// without sending anything; it returns what it read otherwise.
func (r *raw) closedWithin(d time.Duration) (bool, string) {
	_ = r.c.SetReadDeadline(time.Now().Add(d))
	rest, err := io.ReadAll(r.br)
	return err == nil && len(rest) == 0, fmt.Sprintf("%q %v", rest, err)
}

// The HTTP request of issue 13: its header lines must not run as
// commands, nor its body (FLUSHALL, SET pwned yes); the connection is
// closed without a reply, as redis-server does.
func TestCrossProtocolHTTPRequest(t *testing.T) {
	e := start(t, nil, strSpecs()...)
	probe := e.client(t, 2, "")
	if err := probe.Set(ctx, "kept", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	port := e.addr[strings.LastIndexByte(e.addr, ':')+1:]
	r := e.raw(t)
	// printf 'POST /x HTTP/1.1\r\nHost: 127.0.0.1:P\r\n…' | nc 127.0.0.1 P
	r.send("POST /x HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nContent-Type: text/plain\r\nContent-Length: 26\r\n\r\n" +
		"FLUSHALL\r\nSET pwned yes\r\n")
	if closed, got := r.closedWithin(5 * time.Second); !closed {
		t.Fatalf("connection not closed silently: %s", got)
	}
	if err := probe.Get(ctx, "pwned").Err(); err != redis.Nil {
		t.Fatalf("GET pwned: %v (want nil)", err)
	}
	if v, err := probe.Get(ctx, "kept").Result(); err != nil || v != "1" {
		t.Fatalf("FLUSHALL ran: GET kept = %q %v", v, err)
	}
	logs := e.logs.String()
	if !strings.Contains(logs, "level=WARN msg=\"possible cross-protocol attack") {
		t.Fatalf("no warning logged: %s", logs)
	}
	// Nothing of the request in the log (the listening line names the
	// server's own address).
	var lines []string
	for _, l := range strings.Split(logs, "\n") {
		if !strings.Contains(l, "msg=listening") {
			lines = append(lines, l)
		}
	}
	for _, secret := range []string{"pwned", "FLUSHALL", "/x", "HTTP/1.1", "Content-Type", "text/plain", "127.0.0.1:" + port} {
		if strings.Contains(strings.Join(lines, "\n"), secret) {
			t.Fatalf("log holds request content %q: %s", secret, logs)
		}
	}

	// As redis-server 7: commands before the HTTP line in the same batch
	// run, but their replies are not sent; commands after it do not run.
	// Both names, any case, inline or multibulk.
	for i, req := range []string{
		"SET before1 x\r\nPOST / HTTP/1.1\r\nSET after1 x\r\n",
		cmd("SET", "before2", "x") + cmd("host:", "example.com") + cmd("SET", "after2", "x"),
		"SET before3 x\r\npOsT\r\nSET after3 x\r\n",
		cmd("SET", "before4", "x") + "HOST: x\r\n" + cmd("SET", "after4", "x"),
	} {
		r := e.raw(t)
		r.send(req)
		if closed, got := r.closedWithin(5 * time.Second); !closed {
			t.Fatalf("request %d: connection not closed silently: %s", i, got)
		}
		n := strconv.Itoa(i + 1)
		if v, _ := probe.Get(ctx, "before"+n).Result(); v != "x" {
			t.Fatalf("request %d: the command before the HTTP line did not run", i)
		}
		if err := probe.Get(ctx, "after"+n).Err(); err != redis.Nil {
			t.Fatalf("request %d: the command after the HTTP line ran (%v)", i, err)
		}
	}
	// Only the exact names: "Host" without the colon and "POSTX" are
	// unknown commands, and the connection stays open.
	r = e.raw(t)
	if got := r.do("Host", "x"); got != "-ERR unknown command 'Host', with args beginning with: 'x' \r\n" {
		t.Fatalf("Host: %q", got)
	}
	if got := r.do("POSTX"); got != "-ERR unknown command 'POSTX', with args beginning with: \r\n" {
		t.Fatalf("POSTX: %q", got)
	}
	if got := r.do("PING"); got != "+PONG\r\n" {
		t.Fatal(got)
	}
	// The warning is rate-limited: five requests, one line.
	if n := strings.Count(e.logs.String(), "possible cross-protocol"); n != 1 {
		t.Fatalf("%d warnings logged, want 1 (once a minute)", n)
	}
}

// Redis's limits for clients that have not authenticated, with its exact
// errors (checked against redis-server 7 --requirepass).
func TestUnauthenticatedLimits(t *testing.T) {
	e := start(t, func(o *Options) { o.RequirePass = "pw" }, strSpecs()...)
	for _, tc := range []struct{ name, send, want string }{
		{"11 arguments", "*11\r\n", "-ERR Protocol error: unauthenticated multibulk length\r\n"},
		{"16385-byte bulk", "*2\r\n$4\r\nAUTH\r\n$16385\r\n", "-ERR Protocol error: unauthenticated bulk length\r\n"},
		{"300 MB SET", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$314572800\r\n", "-ERR Protocol error: unauthenticated bulk length\r\n"},
		{"PING then 11 arguments", "*1\r\n$4\r\nPING\r\n*11\r\n",
			"-NOAUTH Authentication required.\r\n-ERR Protocol error: unauthenticated multibulk length\r\n"},
		{"failed AUTH then 11 arguments", "AUTH wrong\r\n*11\r\n",
			"-WRONGPASS invalid username-password pair or user is disabled.\r\n-ERR Protocol error: unauthenticated multibulk length\r\n"},
		// The general limits come first, as in Redis.
		{"negative bulk", "*2\r\n$4\r\nAUTH\r\n$-2\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
	} {
		r := e.raw(t)
		r.send(tc.send)
		_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(r.br)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %q (%v), want %q then close", tc.name, got, err, tc.want)
		}
	}
	// At the limits: 10 arguments and 16384-byte bulks are read.
	r := e.raw(t)
	if got := r.do("AUTH", strings.Repeat("p", 16384)); !strings.HasPrefix(got, "-WRONGPASS") {
		t.Fatalf("16384-byte AUTH: %q", got)
	}
	if got := r.do("AUTH", "a", "b", "c", "d", "e", "f", "g", "h", "i"); strings.Contains(got, "Protocol error") {
		t.Fatalf("10-argument AUTH: %q", got)
	}
	// An inline line is bounded by the inline limit only (64 KiB).
	r.send("GET " + strings.Repeat("z", 20000) + "\r\n")
	if got := r.read(); got != "-NOAUTH Authentication required.\r\n" {
		t.Fatalf("big key before AUTH: %q", got)
	}

	// AUTH followed in the same segment by a large command: the command
	// after AUTH is parsed after AUTH ran, so it is not limited.
	big := strings.Repeat("y", 200000)
	r = e.raw(t)
	r.send(cmd("AUTH", "pw") + cmd("SET", "k", big) + cmd("STRLEN", "k") + "*12\r\n" + strings.Repeat("$1\r\na\r\n", 12))
	for _, want := range []string{"+OK\r\n", "+OK\r\n", ":200000\r\n"} {
		if got := r.read(); got != want {
			t.Fatalf("pipelined after AUTH: %q, want %q", got, want)
		}
	}
	if got := r.read(); !strings.HasPrefix(got, "-ERR unknown command 'a'") {
		t.Fatalf("12 arguments after AUTH: %q", got)
	}
	// HELLO with AUTH authenticates too.
	r = e.raw(t)
	r.send(cmd("HELLO", "2", "AUTH", "default", "pw") + cmd("SET", "k2", big) + cmd("STRLEN", "k2"))
	r.read()
	for _, want := range []string{"+OK\r\n", ":200000\r\n"} {
		if got := r.read(); got != want {
			t.Fatalf("pipelined after HELLO AUTH: %q, want %q", got, want)
		}
	}
}

// One command per read before AUTH must not lose or reorder bytes: a
// pipeline of many commands, written in random pieces, gets every reply
// in order, before and after AUTH.
func TestUnauthenticatedPipeline(t *testing.T) {
	e := start(t, func(o *Options) { o.RequirePass = "pw" }, strSpecs()...)
	var req strings.Builder
	var want []string
	for i := 0; i < 200; i++ {
		req.WriteString(cmd("PING"))
		want = append(want, "-NOAUTH Authentication required.\r\n")
	}
	req.WriteString("AUTH pw\r\n")
	want = append(want, "+OK\r\n")
	for i := 0; i < 200; i++ {
		v := strings.Repeat("v", mrand.IntN(40000))
		req.WriteString(cmd("SET", "k"+strconv.Itoa(i), v) + "STRLEN k" + strconv.Itoa(i) + "\r\n")
		want = append(want, "+OK\r\n", ":"+strconv.Itoa(len(v))+"\r\n")
	}
	r := e.raw(t)
	go func() {
		b := []byte(req.String())
		for len(b) > 0 {
			n := min(len(b), 1+mrand.IntN(9000))
			if _, err := r.c.Write(b[:n]); err != nil {
				return
			}
			b = b[n:]
		}
	}()
	for i, w := range want {
		if got := r.read(); got != w {
			t.Fatalf("reply %d: %q, want %q", i, got, w)
		}
	}
}

// A large request's read buffer counts in used_memory and
// mem_clients_normal while it arrives, and is released after the command
// (the reader is replaced at the command boundary, without losing the
// pipelined commands behind it).
func TestInputBufferAccounting(t *testing.T) {
	e := start(t, nil, strSpecs()...)
	info := e.raw(t)
	r := e.raw(t)
	r.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n" + strings.Repeat("x", 2500000))
	if !testutil.Eventually(t, 5*time.Second, func() bool { return e.srv.ClientsMemory() >= 2500000 }) {
		t.Fatalf("mem_clients_normal = %d while a 3 MB request arrives", e.srv.ClientsMemory())
	}
	clients, _ := strconv.ParseUint(infoField(t, info, "memory", "mem_clients_normal"), 10, 64)
	used, _ := strconv.ParseUint(infoField(t, info, "memory", "used_memory"), 10, 64)
	if clients < 2500000 || used < clients {
		t.Fatalf("INFO: mem_clients_normal %d, used_memory %d", clients, used)
	}
	// The rest, with commands pipelined behind it in the same write.
	r.send(strings.Repeat("x", 500000) + "\r\n" + cmd("STRLEN", "k") + "PING\r\n")
	for _, want := range []string{"+OK\r\n", ":3000000\r\n", "+PONG\r\n"} {
		if got := r.read(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if !testutil.Eventually(t, 5*time.Second, func() bool { return e.srv.ClientsMemory() == 0 }) {
		t.Fatalf("mem_clients_normal = %d after the command", e.srv.ClientsMemory())
	}
	if got := r.do("STRLEN", "k"); got != ":3000000\r\n" {
		t.Fatal(got)
	}
	// A closed connection gives its share back.
	r2 := e.raw(t)
	r2.send("*3\r\n$3\r\nSET\r\n$1\r\nj\r\n$3000000\r\n" + strings.Repeat("x", 1000000))
	if !testutil.Eventually(t, 5*time.Second, func() bool { return e.srv.ClientsMemory() >= 1000000 }) {
		t.Fatal("second request not counted")
	}
	r2.c.Close()
	if !testutil.Eventually(t, 5*time.Second, func() bool { return e.srv.ClientsMemory() == 0 }) {
		t.Fatalf("mem_clients_normal = %d after the connection closed", e.srv.ClientsMemory())
	}
}

// Random mixes of large and small commands in random pieces: the reader
// replacement after large commands never drops or reorders a byte.
func TestReaderReplacementKeepsBytes(t *testing.T) {
	e := start(t, nil, strSpecs()...)
	for round := 0; round < 5; round++ {
		var req strings.Builder
		var want []string
		for i := 0; i < 60; i++ {
			n := mrand.IntN(100)
			if mrand.IntN(4) == 0 {
				n = 32<<10 + mrand.IntN(300000)
			}
			k := "r" + strconv.Itoa(i)
			req.WriteString(cmd("SET", k, strings.Repeat("v", n)) + cmd("STRLEN", k))
			want = append(want, "+OK\r\n", ":"+strconv.Itoa(n)+"\r\n")
			if mrand.IntN(3) == 0 {
				req.WriteString("PING\r\n")
				want = append(want, "+PONG\r\n")
			}
		}
		r := e.raw(t)
		go func() {
			b := []byte(req.String())
			for len(b) > 0 {
				n := min(len(b), 1+mrand.IntN(70000))
				if _, err := r.c.Write(b[:n]); err != nil {
					return
				}
				b = b[n:]
			}
		}()
		for i, w := range want {
			if got := r.read(); got != w {
				t.Fatalf("round %d reply %d: %q, want %q", round, i, got, w)
			}
		}
	}
	if !testutil.Eventually(t, 5*time.Second, func() bool { return e.srv.ClientsMemory() == 0 }) {
		t.Fatalf("mem_clients_normal = %d at the end", e.srv.ClientsMemory())
	}
}

// maxmemory-clients: CONFIG GET/SET as Redis 7 (bytes or a percentage of
// maxmemory; its errors); over it, the client with the largest input
// buffer is closed and the others are served. Input buffers count
// against maxmemory too.
func TestMaxMemoryClients(t *testing.T) {
	e := start(t, nil, strSpecs()...)
	a := e.raw(t)
	if got := configGet(t, a, "maxmemory-clients"); got != "0" {
		t.Fatalf("default %q", got)
	}
	for _, tc := range []struct{ v, want string }{
		{"10%", "+OK\r\n"}, {"100%", "+OK\r\n"}, {"0%", "+OK\r\n"}, {"1mb", "+OK\r\n"}, {"0", "+OK\r\n"},
		{"101%", "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - percentage argument must be less or equal to 100\r\n"},
		{"-1", "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - argument must be a memory or percent value\r\n"},
		{"5.5%", "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - argument must be a memory or percent value\r\n"},
		{"05%", "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - argument must be a memory or percent value\r\n"},
		{"%", "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - argument must be a memory or percent value\r\n"},
		{"abc", "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - argument must be a memory or percent value\r\n"},
	} {
		if got := a.do("CONFIG", "SET", "maxmemory-clients", tc.v); got != tc.want {
			t.Errorf("CONFIG SET maxmemory-clients %s: %q, want %q", tc.v, got, tc.want)
		}
	}
	a.do("CONFIG", "SET", "maxmemory", "100mb")
	a.do("CONFIG", "SET", "maxmemory-clients", "10%")
	if l := e.srv.clientsLimit(); l != 100<<20/100*10 {
		t.Fatalf("10%% of 100mb = %d", l)
	}
	a.do("CONFIG", "SET", "maxmemory", "0")
	if l := e.srv.clientsLimit(); l != 0 {
		t.Fatalf("a percentage without maxmemory is no limit: %d", l)
	}

	// Input buffers count against maxmemory: a 16 MiB buffer with
	// maxmemory 8mb makes writes OOM; reads work.
	big := e.raw(t)
	big.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000000\r\n" + strings.Repeat("x", 10<<20))
	if !testutil.Eventually(t, 5*time.Second, func() bool { return e.srv.ClientsMemory() >= 10<<20 }) {
		t.Fatalf("mem_clients_normal = %d", e.srv.ClientsMemory())
	}
	a.do("CONFIG", "SET", "maxmemory", "8mb")
	if got := a.do("SET", "w", "1"); got != oomReply {
		t.Fatalf("SET while input buffers exceed maxmemory: %q", got)
	}
	if got := a.do("GET", "w"); got != "$-1\r\n" {
		t.Fatalf("GET: %q", got)
	}
	a.do("CONFIG", "SET", "maxmemory", "0")

	// Over maxmemory-clients: the largest (big, 16 MiB) is closed, the
	// smaller one (8 MiB) completes its command.
	a.do("CONFIG", "SET", "maxmemory-clients", "20mb")
	small := e.raw(t)
	setS := cmd("SET", "s", strings.Repeat("s", 6<<20))
	small.send(setS[:5<<20]) // its buffer doubles to 8 MiB: 24 MiB in all
	_ = big.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if rest, err := io.ReadAll(big.br); err != nil || len(rest) != 0 {
		t.Fatalf("largest client not closed: %q %v", rest, err)
	}
	small.send(setS[5<<20:])
	if got := small.read(); got != "+OK\r\n" {
		t.Fatalf("smaller client: %q", got)
	}
	if got := infoField(t, a, "stats", "evicted_clients"); got != "1" {
		t.Fatalf("evicted_clients = %s", got)
	}
	if !testutil.Eventually(t, 5*time.Second, func() bool { return e.srv.ClientsMemory() == 0 }) {
		t.Fatalf("mem_clients_normal = %d after the eviction", e.srv.ClientsMemory())
	}
	if got := small.do("STRLEN", "s"); got != ":6291456\r\n" {
		t.Fatal(got)
	}
}

// timeout: CONFIG GET/SET as Redis; an idle client is closed after about
// the timeout; active clients, and clients whose command runs longer than
// the timeout, are not.
func TestIdleTimeout(t *testing.T) {
	slow := &command.Spec{Name: "slow", Arity: 1, Handler: func(c *command.Ctx) {
		time.Sleep(2500 * time.Millisecond)
		c.R.SimpleString("DONE")
	}}
	e := start(t, nil, slow)
	a := e.raw(t)
	if got := configGet(t, a, "timeout"); got != "0" {
		t.Fatalf("default timeout %q", got)
	}
	for _, tc := range []struct{ v, want string }{
		{"-1", "-ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be between 0 and 2147483647 inclusive\r\n"},
		{"2147483648", "-ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be between 0 and 2147483647 inclusive\r\n"},
		{"1.5", "-ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer\r\n"},
		{"2147483647", "+OK\r\n"},
	} {
		if got := a.do("CONFIG", "SET", "timeout", tc.v); got != tc.want {
			t.Errorf("CONFIG SET timeout %s: %q, want %q", tc.v, got, tc.want)
		}
	}
	idle := e.raw(t)
	idle.do("PING")
	busy := e.raw(t)
	active := e.raw(t)
	begin := time.Now()
	if got := a.do("CONFIG", "SET", "timeout", "2"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	busy.send(cmd("SLOW")) // runs 2.5 s, longer than the timeout
	done := make(chan error, 1)
	go func() {
		// Active: a command every 300 ms for 4 s.
		for time.Since(begin) < 4*time.Second {
			active.send(cmd("PING"))
			_ = active.c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if s, err := readReply(active.br); err != nil || s != "+PONG\r\n" {
				done <- fmt.Errorf("active client: %q %v", s, err)
				return
			}
			time.Sleep(300 * time.Millisecond)
		}
		done <- nil
	}()
	if closed, got := idle.closedWithin(10 * time.Second); !closed {
		t.Fatalf("idle client not closed: %s", got)
	}
	if d := time.Since(begin); d < 1500*time.Millisecond {
		t.Fatalf("idle client closed after %v with timeout 2", d)
	} else {
		t.Logf("idle client closed after %v", d)
	}
	if got := busy.read(); got != "+DONE\r\n" {
		t.Fatalf("client running a long command: %q", got)
	}
	if got := busy.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("client after a long command: %q", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A request that arrives slowly is interaction too: one byte every
	// 300 ms, 4 s in all.
	trickle := e.raw(t)
	for _, b := range []byte(cmd("PING")) {
		trickle.send(string(b))
		time.Sleep(300 * time.Millisecond)
	}
	_ = trickle.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, err := readReply(trickle.br); got != "+PONG\r\n" {
		t.Fatalf("trickling client: %q %v; log: %s", got, err, e.logs.String())
	}
	// The connection that set the timeout was idle too.
	if closed, got := a.closedWithin(5 * time.Second); !closed {
		t.Fatalf("idle client (the one that set the timeout) not closed: %s", got)
	}
	b := e.raw(t)
	if got := b.do("CONFIG", "SET", "timeout", "0"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := b.do("PING"); got != "+PONG\r\n" {
		t.Fatal(got)
	}
}

// selfSigned returns a server certificate for 127.0.0.1 and a pool
// trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "probly test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

func startTLS(t *testing.T, tweak func(*Options)) (*env, *tls.Config) {
	t.Helper()
	cert, pool := selfSigned(t)
	conf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	e := startOn(t, func(ln net.Listener) net.Listener { return tls.NewListener(ln, conf) }, tweak)
	return e, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// stall opens n TCP connections that never send a ClientHello.
func stall(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var cs []net.Conn
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		cs = append(cs, c)
	}
	return cs
}

// With maxclients 50, 50 connections that never send a ClientHello do not
// stop a real TLS client from connecting and running PING: connections in
// their handshake do not count against maxclients.
func TestTLSHandshakesOutsideMaxClients(t *testing.T) {
	e, client := startTLS(t, func(o *Options) { o.MaxClients = 50 })
	stall(t, e.addr, 50)
	c := redis.NewClient(&redis.Options{Addr: e.addr, TLSConfig: client, MaxRetries: -1,
		DialTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second})
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("TLS client behind 50 stalled handshakes: %v", err)
	}
	if n := e.srv.Stats().ConnectedClients; n != 1 {
		t.Fatalf("connected_clients = %d, want 1", n)
	}
	// Up to maxclients real clients fit.
	for i := 0; i < 49; i++ {
		conn, err := tls.Dial("tcp", e.addr, client)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		r := &raw{t: t, c: conn, br: bufio.NewReader(conn)}
		if got := r.do("PING"); got != "+PONG\r\n" {
			t.Fatalf("client %d: %q", i+2, got)
		}
	}
	conn, err := tls.Dial("tcp", e.addr, client)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, _ := io.ReadAll(conn); string(got) != "-ERR max number of clients reached\r\n" {
		t.Fatalf("client 51: %q", got)
	}
}

// A handshake that does not finish within HandshakeTimeout is closed;
// beyond MaxHandshakes the oldest unfinished one is closed to make room,
// so stalled handshakes never lock a real client out.
func TestTLSHandshakeDeadlineAndBound(t *testing.T) {
	e, client := startTLS(t, func(o *Options) {
		o.HandshakeTimeout = 300 * time.Millisecond
		o.MaxHandshakes = 4
	})
	cs := stall(t, e.addr, 1)
	begin := time.Now()
	_ = cs[0].SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(cs[0]); err != nil {
		t.Fatalf("stalled handshake not closed: %v", err)
	}
	t.Logf("stalled handshake closed after %v", time.Since(begin))

	// The deadline does not affect a handshake that completes.
	c1 := redis.NewClient(&redis.Options{Addr: e.addr, TLSConfig: client, MaxRetries: -1})
	defer c1.Close()
	if err := c1.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	e2, client2 := startTLS(t, func(o *Options) { o.MaxHandshakes = 4 })
	stall(t, e2.addr, 10)
	if !testutil.Eventually(t, 5*time.Second, func() bool { return e2.srv.Stats().DroppedHandshakes >= 6 }) {
		t.Fatalf("dropped handshakes = %d, want ≥ 6", e2.srv.Stats().DroppedHandshakes)
	}
	c := redis.NewClient(&redis.Options{Addr: e2.addr, TLSConfig: client2, MaxRetries: -1,
		DialTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second})
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("TLS client behind 10 stalled handshakes (bound 4): %v", err)
	}
}
