package app

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/probly/probly/internal/command/cf"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/follow"
	"github.com/probly/probly/internal/metrics"
	"github.com/probly/probly/internal/testutil"
)

// served is an in-process `probly serve` started by runApp.
type served struct {
	addr       string // RESP
	metricsURL string // http://127.0.0.1:port
	done       chan error
	cancel     context.CancelFunc
}

// runApp runs Run in-process on loopback listeners. It returns once the
// server accepts connections unless wait is false. stop (also registered
// as a cleanup) shuts it down and checks Run's result.
func runApp(t *testing.T, o Options, wait bool) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Listener, o.MetricsListener = ln, mln
	ready := make(chan struct{})
	o.Ready = func(net.Addr) { close(ready) }
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{addr: ln.Addr().String(), metricsURL: "http://" + mln.Addr().String(), done: make(chan error, 1), cancel: cancel}
	go func() { s.done <- Run(ctx, o) }()
	t.Cleanup(func() { s.stop(t) })
	if wait {
		select {
		case <-ready:
		case err := <-s.done:
			t.Fatalf("Run: %v", err)
		case <-time.After(20 * time.Second):
			t.Fatal("server did not start")
		}
	}
	return s
}

func (s *served) stop(t *testing.T) {
	t.Helper()
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("Run returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("Run did not return after cancel")
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// scrape reads /metrics and returns series → value, series written as in
// the text format (`name{a="x",b="y"}`), plus the HELP lines by name.
func scrape(t *testing.T, s *served) (map[string]float64, map[string]string) {
	t.Helper()
	code, body := httpGet(t, s.metricsURL+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics = %d: %s", code, body)
	}
	vals, help := map[string]float64{}, map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, text, _ := strings.Cut(rest, " ")
			help[name] = text
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad metrics line %q", line)
		}
		vals[line[:i]] = v
	}
	return vals, help
}

func newClient(t *testing.T, addr string, mod func(*redis.Options)) *redis.Client {
	t.Helper()
	o := &redis.Options{Addr: addr, Protocol: 2, MaxRetries: -1, DialTimeout: 5 * time.Second}
	if mod != nil {
		mod(o)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// /healthz answers and /readyz is 503 while recovery runs; /readyz turns
// 200 once recovery is done and the RESP listener accepts.
func TestReadyzDuringSlowRecovery(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	o := Options{beforeRecovery: func() { close(entered); <-release }}
	s := runApp(t, o, false)
	select {
	case <-entered:
	case err := <-s.done:
		t.Fatalf("Run: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("recovery never started")
	}
	for i := 0; i < 3; i++ {
		if code, body := httpGet(t, s.metricsURL+"/readyz"); code != 503 || body != "not ready\n" {
			t.Fatalf("/readyz during recovery = %d %q", code, body)
		}
		if code, _ := httpGet(t, s.metricsURL+"/healthz"); code != 200 {
			t.Fatalf("/healthz during recovery = %d", code)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, _ := httpGet(t, s.metricsURL+"/metrics"); code != 200 {
		t.Fatalf("/metrics during recovery = %d", code)
	}
	close(release)
	code := 0
	if !testutil.Eventually(t, 20*time.Second, func() bool {
		code, _ = httpGet(t, s.metricsURL+"/readyz")
		return code == 200
	}) {
		t.Fatalf("/readyz stayed %d after recovery", code)
	}
	if err := newClient(t, s.addr, nil).Ping(context.Background()).Err(); err != nil {
		t.Fatalf("PING once ready: %v", err)
	}
}

// The per-filter gauges follow a Bloom and a cuckoo filter being filled
// past their capacity: items and capacity rise, the fill ratio rises while
// the first sub-filter fills, sub-filters are added, the estimated FPR
// never falls.
func TestMetricsTrackFilterFill(t *testing.T) {
	s := runApp(t, Options{AppendFsync: "always"}, true)
	ctx := context.Background()
	c := newClient(t, s.addr, nil)
	if err := c.Do(ctx, "BF.RESERVE", "users", "0.01", "1000").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "CF.RESERVE", "sessions", "1000").Err(); err != nil {
		t.Fatal(err)
	}
	type point struct{ fill, fpr, items, capacity, subs float64 }
	read := func(key, typ string) point {
		t.Helper()
		vals, _ := scrape(t, s)
		l := fmt.Sprintf(`{key=%q,type=%q}`, key, typ)
		get := func(name string) float64 {
			v, ok := vals[name+l]
			if !ok {
				t.Fatalf("no series %s%s", name, l)
			}
			return v
		}
		return point{get("probly_filter_fill_ratio"), get("probly_filter_estimated_fpr_ratio"),
			get("probly_filter_items"), get("probly_filter_capacity"), get("probly_filter_sub_filters")}
	}
	added := 0
	fill := func(n int) {
		pipe := c.Pipeline()
		for i := 0; i < n; i++ {
			k := "user-" + strconv.Itoa(added+i)
			pipe.Do(ctx, "BF.ADD", "users", k)
			pipe.Do(ctx, "CF.ADD", "sessions", k)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		added += n
	}
	for _, typ := range []struct{ key, typ string }{{"users", "bf"}, {"sessions", "cf"}} {
		p := read(typ.key, typ.typ)
		if p.items != 0 || p.fill != 0 || p.subs != 1 || p.capacity < 1000 {
			t.Fatalf("%s empty: %+v", typ.typ, p)
		}
	}
	var prev [2]point
	stages := []int{300, 300, 300, 1100, 2000}
	for i, n := range stages {
		fill(n)
		for j, typ := range []struct{ key, typ string }{{"users", "bf"}, {"sessions", "cf"}} {
			p := read(typ.key, typ.typ)
			t.Logf("%s after %5d adds: %+v", typ.typ, added, p)
			// BF.CARD (items) skips adds that were false positives.
			card := c.Do(ctx, map[string]string{"bf": "BF.CARD", "cf": "CF.INFO"}[typ.typ], typ.key)
			want := float64(added)
			if typ.typ == "bf" {
				n, err := card.Int64()
				if err != nil {
					t.Fatal(err)
				}
				want = float64(n)
			}
			if p.items != want || p.items < 0.99*float64(added) {
				t.Errorf("%s items = %v, want %v (of %d added)", typ.typ, p.items, want, added)
			}
			if i > 0 {
				q := prev[j]
				if p.fpr < q.fpr || p.subs < q.subs || p.capacity < q.capacity {
					t.Errorf("%s went backwards: %+v after %+v", typ.typ, p, q)
				}
				if p.subs == 1 && p.fill <= q.fill {
					t.Errorf("%s fill ratio did not rise: %v after %v", typ.typ, p.fill, q.fill)
				}
			}
			prev[j] = p
		}
	}
	for j, typ := range []string{"bf", "cf"} {
		if p := prev[j]; p.subs < 2 || p.items <= 1000 || p.capacity <= 1000 {
			t.Errorf("%s filled past its capacity shows %+v: expected more sub-filters and capacity", typ, p)
		}
	}

	// The other families are there too, with help text.
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	vals, help := scrape(t, s)
	for _, series := range []string{
		`probly_commands_total{command="bf.add",outcome="ok"}`,
		`probly_command_duration_seconds_count{command="cf.add"}`,
		`probly_connected_clients`,
		`probly_net_input_bytes_total`, `probly_net_output_bytes_total`,
		`probly_keys{type="MBbloom--"}`, `probly_keys{type="MBbloomCF"}`,
		`probly_used_memory_bytes`, `probly_maxmemory_bytes`,
		`probly_aof_size_bytes`, `probly_aof_fsyncs_total`,
		`probly_last_snapshot_timestamp_seconds`, `probly_last_snapshot_success`,
		`probly_filter_metrics_dropped`,
		`probly_aof_fsync_duration_seconds_count`, `probly_aof_rewrites_total`,
		`probly_snapshots_total{trigger="manual"}`,
	} {
		if v, ok := vals[series]; !ok || (v <= 0 && series != "probly_filter_metrics_dropped" && series != "probly_aof_fsyncs_total") {
			t.Errorf("%s = %v (present %v)", series, v, ok)
		}
	}
	if v := vals[`probly_commands_total{command="bf.add",outcome="ok"}`]; v != float64(added) {
		t.Errorf("bf.add ok = %v, want %d", v, added)
	}
	for name := range vals {
		base := name
		if i := strings.IndexByte(base, '{'); i >= 0 {
			base = base[:i]
		}
		if !strings.HasPrefix(base, "probly_") {
			continue
		}
		for _, suf := range []string{"_bucket", "_count", "_sum"} {
			if b, ok := strings.CutSuffix(base, suf); ok && help[b] != "" {
				base = b
			}
		}
		if help[base] == "" {
			t.Errorf("%s has no help text", base)
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "probly test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TLS and AUTH with go-redis as the client.
func TestTLSAndAuthGoRedis(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	s := runApp(t, Options{TLSCert: certFile, TLSKey: keyFile, RequirePass: "s3cret"}, true)
	ctx := context.Background()
	tlsConf := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}

	good := newClient(t, s.addr, func(o *redis.Options) { o.TLSConfig = tlsConf; o.Password = "s3cret"; o.Protocol = 3 })
	if err := good.Ping(ctx).Err(); err != nil {
		t.Fatalf("TLS + AUTH PING: %v", err)
	}
	if ok, err := good.BFAdd(ctx, "tls-filter", "x").Result(); err != nil || !ok {
		t.Fatalf("BF.ADD over TLS: %v %v", ok, err)
	}
	if ok, err := good.BFExists(ctx, "tls-filter", "x").Result(); err != nil || !ok {
		t.Fatalf("BF.EXISTS over TLS: %v %v", ok, err)
	}

	noPass := newClient(t, s.addr, func(o *redis.Options) { o.TLSConfig = tlsConf })
	if err := noPass.Get(ctx, "k").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOAUTH Authentication required.") {
		t.Fatalf("without AUTH: %v", err)
	}
	wrong := newClient(t, s.addr, func(o *redis.Options) { o.TLSConfig = tlsConf; o.Password = "nope" })
	if err := wrong.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("wrong password: %v", err)
	}
	// A plaintext client cannot talk to the TLS listener.
	plain := newClient(t, s.addr, func(o *redis.Options) { o.Password = "s3cret"; o.ReadTimeout = 2 * time.Second })
	if err := plain.Ping(ctx).Err(); err == nil {
		t.Fatal("plaintext client was served by the TLS listener")
	}
	// A client that does not trust the certificate is refused by go-redis.
	untrusting := newClient(t, s.addr, func(o *redis.Options) {
		o.TLSConfig = &tls.Config{ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
		o.Password = "s3cret"
	})
	if err := untrusting.Ping(ctx).Err(); err == nil {
		t.Fatal("unverified certificate accepted")
	}
	if err := good.Ping(ctx).Err(); err != nil {
		t.Fatalf("good client after the others: %v", err)
	}

	// An incomplete pair is an option error.
	err := Run(ctx, Options{Dir: t.TempDir(), TLSCert: certFile})
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("--tls-cert alone: %v", err)
	}
	err = Run(ctx, Options{Dir: t.TempDir(), TLSCert: keyFile, TLSKey: certFile})
	if err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("swapped TLS files: %v", err)
	}
}

func TestProtectedMode(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	err := Run(ctx, Options{Addr: "0.0.0.0:0", Dir: dir})
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "protected mode") ||
		!strings.Contains(err.Error(), "--protected-mode=no") {
		t.Fatalf("non-loopback without password: %v", err)
	}
	err = Run(ctx, Options{Addr: "127.0.0.1:0", MetricsAddr: ":0", Dir: dir})
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Fatalf("non-loopback metrics: %v", err)
	}
	// --follow's embedded NATS server has no authentication: it must not
	// listen beyond loopback either.
	followCfg := filepath.Join(t.TempDir(), "follow.json")
	if err := os.WriteFile(followCfg, []byte(`{"stream": "S", "embedded": {"listen": "0.0.0.0:0"},
	  "keys": [{"key": "k", "type": "bf", "add": ["s.add"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	err = Run(ctx, Options{Addr: "127.0.0.1:0", Dir: dir, Follow: followCfg})
	if !errors.Is(err, ErrInvalidOptions) || !errors.Is(err, follow.ErrProtectedMode) ||
		!strings.Contains(err.Error(), "embedded NATS") || !strings.Contains(err.Error(), "--protected-mode=no") {
		t.Fatalf("non-loopback embedded NATS: %v", err)
	}
	// Refused before touching the data directory.
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("data directory touched: %v", entries)
	}
	// With a password, or with protected mode off, it starts.
	for _, o := range []Options{
		{Addr: "0.0.0.0:0", RequirePass: "pw"},
		{Addr: "0.0.0.0:0", ProtectedModeOff: true},
		{Addr: "127.0.0.1:0", Follow: followCfg, ProtectedModeOff: true},
	} {
		o.Dir = t.TempDir()
		ready := make(chan struct{})
		o.Ready = func(net.Addr) { close(ready) }
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- Run(cctx, o) }()
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("%+v: %v", o, err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:6379": true, "127.8.9.10:1": true, "[::1]:6379": true, "localhost:6379": true,
		"[::ffff:127.0.0.1]:1": true,
		":6379":                false, "0.0.0.0:6379": false, "[::]:6379": false, "10.1.2.3:6379": false,
		"192.168.0.1:1": false, "nonsense": false, "[fe80::1%lo]:1": false,
	} {
		if got := isLoopback(addr); got != want {
			t.Errorf("isLoopback(%q) = %v", addr, got)
		}
	}
}

// No log line, at any level, carries a key's or a value's content: a
// session of commands (successes, errors, protocol errors, snapshots, a
// restart with recovery) with distinctive keys and values is logged at
// debug level and the log is searched for them.
func TestNoKeyOrValueInLogs(t *testing.T) {
	const secret = "Zq7SECRETx"
	logs := &commandtest.LogSink{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := t.TempDir()
	ctx := context.Background()
	s := runApp(t, Options{Dir: dir, Logger: logger, AppendFsync: "always"}, true)
	c := newClient(t, s.addr, nil)
	k, v := "key-"+secret, "value-"+secret
	for _, args := range [][]any{
		{"SET", k, v}, {"GET", k}, {"APPEND", k, v}, {"SETRANGE", k, 3, v},
		{"BF.ADD", "bf-" + k, v}, {"BF.MADD", "bf-" + k, v, v + "2"}, {"BF.EXISTS", "bf-" + k, v},
		{"BF.RESERVE", "bf2-" + k, "0.01", "100"}, {"BF.INSERT", "bf-" + k, "ITEMS", v},
		{"CF.ADD", "cf-" + k, v}, {"CF.DEL", "cf-" + k, v}, {"CF.INSERT", "cf-" + k, "ITEMS", v},
		{"PFADD", "pf-" + k, v}, {"PFCOUNT", "pf-" + k}, {"PFMERGE", "pf2-" + k, "pf-" + k},
		{"BF.ADD", k, v},                       // wrong type
		{"BF.RESERVE", "x-" + k, v, v},         // bad arguments
		{"CF.RESERVE", k, v},                   // bad arguments
		{"NOSUCHCMD-" + secret, k, v},          // unknown command
		{"CONFIG", "SET", "bf-error-rate", v},  // bad value
		{"CONFIG", "SET", "maxmemory-" + k, v}, // unknown parameter
		{"HELLO", "3", "AUTH", k, v},           // AUTH without a password
		{"AUTH", k, v},
		{"KEYS", "*" + secret + "*"}, {"SCAN", "0", "MATCH", "*" + secret}, {"TYPE", k}, {"EXISTS", k},
		{"BF.SCANDUMP", "bf-" + k, 0}, {"BF.LOADCHUNK", "bad-" + k, 1, v},
		{"SAVE"}, {"BGSAVE"}, {"DEL", "pf2-" + k},
	} {
		_ = c.Do(ctx, args...).Err()
	}
	// Protocol errors carrying the secret.
	for _, raw := range []string{
		"*2\r\n$3\r\nGET\r\n" + secret + "\r\n",
		"*1\r\n$4\r\nPING\r\n$" + secret + "\r\n",
		strings.Repeat(secret, 10000) + "\r\n",
	} {
		nc, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = nc.Write([]byte(raw))
		_ = nc.(*net.TCPConn).CloseWrite()
		_ = nc.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, _ = io.ReadAll(nc)
		nc.Close()
	}
	// A scrape logs nothing with key names either (they are labels there).
	scrape(t, s)
	s.stop(t)

	// Recovery from the snapshot and the AOF, at debug level.
	s2 := runApp(t, Options{Dir: dir, Logger: logger}, true)
	if got, err := newClient(t, s2.addr, nil).Exists(ctx, k, "bf-"+k, "cf-"+k, "pf-"+k).Result(); err != nil || got != 4 {
		t.Fatalf("after restart EXISTS = %d, %v", got, err)
	}
	s2.stop(t)

	out := logs.String()
	if !strings.Contains(out, "recovered") || !strings.Contains(out, "protocol error") {
		t.Fatalf("the log did not capture the session:\n%s", out)
	}
	if strings.Contains(out, secret) {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, secret) {
				t.Errorf("log line holds key/value content: %s", line)
			}
		}
	}
}

// Limits through the full stack: maxmemory on BF/CF/PF/string writes and
// the per-filter byte caps, each crossed with the documented error while
// the connection and other clients keep working; start-up values from
// Options.Config; INFO and CONFIG GET show them.
func TestLimitsFullStack(t *testing.T) {
	ctx := context.Background()
	s := runApp(t, Options{Config: [][2]string{{"maxmemory", "64mb"}, {"bf-max-filter-bytes", "65536"}, {"metrics-max-filters", "7"}}}, true)
	c := newClient(t, s.addr, nil)
	other := newClient(t, s.addr, func(o *redis.Options) { o.PoolSize = 1 })
	if err := other.Ping(ctx).Err(); err != nil { // connected before any limit is crossed
		t.Fatal(err)
	}
	// otherFine: the other, already-connected client writes and reads a
	// filter of its own (one connection: PoolSize 1).
	otherN := 0
	otherFine := func(when string) {
		t.Helper()
		otherN++
		item := "o" + strconv.Itoa(otherN)
		if added, err := other.BFAdd(ctx, "other", item).Result(); err != nil || !added {
			t.Fatalf("other client's BF.ADD %s: %v %v", when, added, err)
		}
		if ok, err := other.BFExists(ctx, "other", item).Result(); err != nil || !ok {
			t.Fatalf("other client's BF.EXISTS %s: %v %v", when, ok, err)
		}
	}
	cfg := func(name string) string {
		t.Helper()
		m, err := c.ConfigGet(ctx, name).Result()
		if err != nil {
			t.Fatal(err)
		}
		return m[name]
	}
	if cfg("maxmemory") != "67108864" || cfg("bf-max-filter-bytes") != "65536" || cfg("metrics-max-filters") != "7" {
		t.Fatalf("start-up CONFIG values not applied: %v %v %v", cfg("maxmemory"), cfg("bf-max-filter-bytes"), cfg("metrics-max-filters"))
	}
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"maxmemory:67108864\r\n", "bf_max_filter_bytes:65536\r\n", "cf_max_filter_bytes:" + strconv.FormatUint(cf.DefaultFilterBytes, 10) + "\r\n"} {
		if !strings.Contains(info, w) {
			t.Errorf("INFO memory lacks %q:\n%s", w, info)
		}
	}

	// Per-filter cap (Bloom): creating beyond it fails; growing beyond it fails.
	if err := c.Do(ctx, "BF.RESERVE", "big", "0.001", "1000000").Err(); err == nil || err.Error() != "ERR Insufficient memory to create filter" {
		t.Fatalf("BF.RESERVE over bf-max-filter-bytes: %v", err)
	}
	otherFine("after BF.RESERVE over the cap")
	if err := c.Do(ctx, "BF.RESERVE", "grow", "0.01", "20000").Err(); err != nil {
		t.Fatal(err)
	}
	var growErr error
	for i := 0; i < 200000 && growErr == nil; i += 1000 {
		pipe := c.Pipeline()
		for j := i; j < i+1000; j++ {
			pipe.Do(ctx, "BF.ADD", "grow", j)
		}
		cmds, _ := pipe.Exec(ctx)
		for _, cmd := range cmds {
			if cmd.Err() != nil {
				growErr = cmd.Err()
				break
			}
		}
	}
	if growErr == nil || growErr.Error() != "ERR problem inserting into filter" {
		t.Fatalf("growing past bf-max-filter-bytes: %v", growErr)
	}
	otherFine("after growing past the cap")
	// The same connection still works, on the capped filter too: the items
	// it holds answer.
	if ok, err := c.BFExists(ctx, "grow", 5).Result(); err != nil || !ok {
		t.Fatalf("BF.EXISTS on the capped filter: %v %v", ok, err)
	}
	// Cuckoo cap, set at run time.
	if err := c.ConfigSet(ctx, "cf-max-filter-bytes", "4096").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "CF.RESERVE", "bigcf", "100000").Err(); err == nil || err.Error() != "ERR Insufficient memory to create filter" {
		t.Fatalf("CF.RESERVE over cf-max-filter-bytes: %v", err)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("connection after the cap errors: %v", err)
	}
	if err := c.Do(ctx, "CF.RESERVE", "smallcf", "64").Err(); err != nil {
		t.Fatalf("CF.RESERVE within the cap on the same connection: %v", err)
	}
	if err := c.Do(ctx, "CF.ADD", "smallcf", "x").Err(); err != nil {
		t.Fatalf("CF.ADD on the same connection: %v", err)
	}
	otherFine("after CF.RESERVE over the cap")

	// maxmemory: lower it below what is used; every family's writes get the
	// OOM error, reads and DEL work, on this and other connections.
	for _, kv := range [][2]string{{"s", "v"}} {
		if err := c.Set(ctx, kv[0], kv[1], 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ConfigSet(ctx, "maxmemory", "1kb").Err(); err != nil {
		t.Fatal(err)
	}
	const oom = "OOM command not allowed when used memory > 'maxmemory'."
	for _, args := range [][]any{
		{"SET", "s2", "v"}, {"APPEND", "s", "x"}, {"BF.ADD", "grow", "new"}, {"BF.RESERVE", "n", "0.01", "10"},
		{"CF.ADD", "c", "x"}, {"PFADD", "h", "x"},
	} {
		if err := c.Do(ctx, args...).Err(); err == nil || err.Error() != oom {
			t.Errorf("%v over maxmemory: %v", args, err)
		}
		if err := other.Do(ctx, args...).Err(); err == nil || err.Error() != oom {
			t.Errorf("other client %v over maxmemory: %v", args, err)
		}
	}
	if v, err := c.Get(ctx, "s").Result(); err != nil || v != "v" {
		t.Fatalf("GET over maxmemory: %q %v", v, err)
	}
	if ok, err := other.BFExists(ctx, "grow", 5).Result(); err != nil || !ok {
		t.Fatalf("BF.EXISTS over maxmemory: %v %v", ok, err)
	}
	if n, err := c.Del(ctx, "grow").Result(); err != nil || n != 1 {
		t.Fatalf("DEL over maxmemory: %v %v", n, err)
	}
	// Freed: writes pass again at once (used memory is accounted exactly).
	var serr error
	testutil.Eventually(t, 5*time.Second, func() bool {
		serr = c.Set(ctx, "s2", "v", 0).Err()
		return serr == nil || serr.Error() != oom
	})
	if serr != nil {
		t.Fatalf("SET after DEL: %v", serr)
	}

	// Bad start-up values are option errors, found before recovery.
	for _, kv := range [][2]string{{"maxmemory", "lots"}, {"no-such-param", "1"}, {"proto-max-bulk-len", "10"}} {
		err := Run(ctx, Options{Dir: t.TempDir(), Config: [][2]string{kv}})
		if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), kv[0]) {
			t.Errorf("Config %v: %v", kv, err)
		}
	}
}

// probly_aof_fsyncs_total and the fsync histogram's count agree: the
// histogram sees every fsync the counter counts, including the ones
// recovery makes at start, before the server serves.
func TestFsyncMetricsAgree(t *testing.T) {
	dirA := t.TempDir()
	for round, r := range []struct {
		fsync, dir string
		atStart    float64
	}{
		{"always", dirA, 1},          // a new directory: Open creates and fsyncs the AOF
		{"everysec", t.TempDir(), 1}, // the same with everysec
		{"everysec", dirA, 0},        // restart: recovery of dump.pdb and the AOF
	} {
		fsync := r.fsync
		s := runApp(t, Options{Dir: r.dir, AppendFsync: fsync}, true)
		c := newClient(t, s.addr, nil)
		ctx := context.Background()
		check := func(when string, min float64) {
			t.Helper()
			var count, hist float64
			// A scrape reads the two at slightly different moments; an
			// fsync in between (everysec) makes them differ once, a
			// miscount makes them differ always.
			for try := 0; try < 20; try++ {
				vals, _ := scrape(t, s)
				count, hist = vals["probly_aof_fsyncs_total"], vals["probly_aof_fsync_duration_seconds_count"]
				if count == hist {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if count != hist {
				t.Fatalf("%s, %s (round %d): probly_aof_fsyncs_total %v, probly_aof_fsync_duration_seconds_count %v", fsync, when, round, count, hist)
			}
			if count < min {
				t.Fatalf("%s, %s: %v fsyncs, want at least %v", fsync, when, count, min)
			}
		}
		check("after start", r.atStart)
		for i := 0; i < 20; i++ {
			// New items each round, so that every round logs records (a
			// snapshot after no record reuses the empty generation and
			// fsyncs less).
			if err := c.Do(ctx, "BF.ADD", "f", round*1000+i).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		min := 2.0
		if fsync == "always" {
			min = 21 // one per acknowledged write, plus start-up
		}
		check("after writes and SAVE", min)
		s.stop(t)
	}
}

// Every probly_ metric a running server exports, --follow's included (they
// share the registry), follows the naming rule of docs/OPERATIONS.md
// (metrics.CheckName), and the metrics table there lists exactly the
// exported probly_ metrics.
func TestMetricNames(t *testing.T) {
	dir := t.TempDir()
	followCfg := filepath.Join(t.TempDir(), "follow.json")
	if err := os.WriteFile(followCfg, []byte(`{"stream": "S", "embedded": {"listen": "off"},
	  "keys": [{"key": "k", "type": "bf", "add": ["s.add"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := runApp(t, Options{Dir: dir, Follow: followCfg}, true)
	c := newClient(t, s.addr, nil)
	ctx := context.Background()
	for _, args := range [][]any{{"BF.ADD", "b", "x"}, {"CF.ADD", "c", "x"}, {"PFADD", "h", "x"}, {"SAVE"}} {
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	code, body := httpGet(t, s.metricsURL+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	help, typ := map[string]string{}, map[string]string{}
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, text, _ := strings.Cut(rest, " ")
			help[name] = text
		} else if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, ty, _ := strings.Cut(rest, " ")
			typ[name] = ty
		}
	}
	exported := map[string]bool{}
	for name, ty := range typ {
		if !strings.HasPrefix(name, "probly_") {
			continue
		}
		exported[name] = true
		if err := metrics.CheckName(name, ty, help[name]); err != nil {
			t.Error(err)
		}
	}
	for _, want := range []string{"probly_follow_lag_messages", "probly_filter_items", "probly_aof_fsync_duration_seconds"} {
		if !exported[want] {
			t.Fatalf("%s not exported; the test does not see what it should", want)
		}
	}

	// The table in docs/OPERATIONS.md ("Metrics and health").
	doc, err := os.ReadFile("../../docs/OPERATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## Metrics and health")
	section, _, _ = strings.Cut(section, "\n## ")
	documented := map[string]bool{}
	name := regexp.MustCompile("`(probly_[a-z_]+)`")
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `probly_") {
			continue
		}
		first, _, _ := strings.Cut(line[1:], "|")
		for _, m := range name.FindAllStringSubmatch(first, -1) {
			documented[m[1]] = true
		}
	}
	for n := range exported {
		if !documented[n] {
			t.Errorf("%s is exported but not in the metrics table of docs/OPERATIONS.md", n)
		}
	}
	for n := range documented {
		if !exported[n] {
			t.Errorf("%s is in the metrics table of docs/OPERATIONS.md but not exported", n)
		}
	}
}

// Every byte-sized setting accepts Redis memory values, at start-up
// (Options.Config: the flags of `probly serve`) and in CONFIG SET; CONFIG
// GET and INFO show bytes, as Redis does; the value takes effect.
func TestByteSettingsAcceptUnits(t *testing.T) {
	ctx := context.Background()
	start := [][2]string{
		{"maxmemory", "64mb"}, {"proto-max-bulk-len", "2mb"}, {"client-query-buffer-limit", "4mb"},
		{"auto-aof-rewrite-min-size", "1mb"}, {"hll-sparse-max-bytes", "2kb"},
		{"bf-max-filter-bytes", "64kb"}, {"cf-max-filter-bytes", "4kb"},
	}
	bytes := map[string]string{"maxmemory": "67108864", "proto-max-bulk-len": "2097152", "client-query-buffer-limit": "4194304",
		"auto-aof-rewrite-min-size": "1048576", "hll-sparse-max-bytes": "2048", "bf-max-filter-bytes": "65536", "cf-max-filter-bytes": "4096"}
	s := runApp(t, Options{Config: start}, true)
	c := newClient(t, s.addr, nil)
	for _, kv := range start {
		m, err := c.ConfigGet(ctx, kv[0]).Result()
		if err != nil || m[kv[0]] != bytes[kv[0]] {
			t.Errorf("CONFIG GET %s = %v %v, want %q (set as %s)", kv[0], m, err, bytes[kv[0]], kv[1])
		}
	}
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"maxmemory:67108864\r\n", "bf_max_filter_bytes:65536\r\n", "cf_max_filter_bytes:4096\r\n"} {
		if !strings.Contains(info, w) {
			t.Errorf("INFO memory lacks %q:\n%s", w, info)
		}
	}
	// The budgets apply in bytes: a 1% filter of 100,000 items needs
	// ~117 KiB, over 64kb; 10,000 items (~12 KiB) fit.
	const insufficient = "ERR Insufficient memory to create filter"
	if err := c.Do(ctx, "BF.RESERVE", "big", "0.01", "100000").Err(); err == nil || err.Error() != insufficient {
		t.Fatalf("BF.RESERVE over bf-max-filter-bytes 64kb: %v", err)
	}
	if err := c.Do(ctx, "BF.RESERVE", "small", "0.01", "10000").Err(); err != nil {
		t.Fatalf("BF.RESERVE under bf-max-filter-bytes 64kb: %v", err)
	}
	if err := c.Do(ctx, "CF.RESERVE", "bigcf", "100000").Err(); err == nil || err.Error() != insufficient {
		t.Fatalf("CF.RESERVE over cf-max-filter-bytes 4kb: %v", err)
	}
	// CONFIG SET with units, every byte-sized parameter.
	for _, kv := range [][2]string{
		{"maxmemory", "1gb"}, {"proto-max-bulk-len", "1MB"}, {"client-query-buffer-limit", "1g"},
		{"auto-aof-rewrite-min-size", "64mb"}, {"hll-sparse-max-bytes", "3k"},
		{"bf-max-filter-bytes", "1mb"}, {"cf-max-filter-bytes", "1mb"},
	} {
		if err := c.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Errorf("CONFIG SET %s %s: %v", kv[0], kv[1], err)
		}
	}
	if err := c.Do(ctx, "BF.RESERVE", "big", "0.01", "100000").Err(); err != nil {
		t.Fatalf("BF.RESERVE under bf-max-filter-bytes 1mb: %v", err)
	}
	if err := c.Do(ctx, "CF.RESERVE", "bigcf", "100000").Err(); err != nil {
		t.Fatalf("CF.RESERVE under cf-max-filter-bytes 1mb: %v", err)
	}
	// Not a memory value, or out of range: Redis's messages.
	for _, kv := range [][3]string{
		{"bf-max-filter-bytes", "lots", "argument must be a memory value"},
		{"cf-max-filter-bytes", "1.5mb", "argument must be a memory value"},
		{"bf-max-filter-bytes", "1b", "argument must be between 64 and"},
		{"cf-max-filter-bytes", "1tb", "argument must be a memory value"},
	} {
		err := c.ConfigSet(ctx, kv[0], kv[1]).Err()
		if err == nil || !strings.Contains(err.Error(), kv[2]) {
			t.Errorf("CONFIG SET %s %s: %v, want %q", kv[0], kv[1], err, kv[2])
		}
	}
	// And at start-up: a usage error naming the parameter.
	err = Run(ctx, Options{Dir: t.TempDir(), Config: [][2]string{{"bf-max-filter-bytes", "1.5mb"}}})
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "bf-max-filter-bytes") ||
		!strings.Contains(err.Error(), "memory value") {
		t.Errorf("bf-max-filter-bytes 1.5mb at start-up: %v", err)
	}
}
