package app

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Issue 13, through Run as `probly serve` wires it (the TLS listener of
// ops.go, the start-up CONFIG values of the flags): with maxclients 50,
// 50 connections that never send a ClientHello do not stop a real TLS
// client; timeout closes an idle client; an HTTP request runs nothing.
func TestServeHardeningFullStack(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	s := runApp(t, Options{TLSCert: certFile, TLSKey: keyFile, RequirePass: "pw",
		Config: [][2]string{{"maxclients", "50"}, {"timeout", "2"}, {"maxmemory-clients", "64mb"}}}, true)
	ctx := context.Background()
	tlsConf := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}

	for i := 0; i < 50; i++ {
		c, err := net.DialTimeout("tcp", s.addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	// Pooled connections must not idle for longer than timeout.
	good := newClient(t, s.addr, func(o *redis.Options) {
		o.TLSConfig, o.Password, o.ConnMaxIdleTime = tlsConf, "pw", time.Second
	})
	if err := good.Ping(ctx).Err(); err != nil {
		t.Fatalf("TLS client behind 50 stalled handshakes: %v", err)
	}
	for name, want := range map[string]string{"timeout": "2", "maxmemory-clients": "67108864", "maxclients": "50"} {
		if got, err := good.ConfigGet(ctx, name).Result(); err != nil || got[name] != want {
			t.Fatalf("CONFIG GET %s = %v %v", name, got, err)
		}
	}

	// An idle TLS client is closed after about 2 s.
	idle, err := tls.Dial("tcp", s.addr, tlsConf)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	begin := time.Now()
	_ = idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	if rest, err := io.ReadAll(idle); err != nil || len(rest) != 0 {
		t.Fatalf("idle client not closed: %q %v", rest, err)
	}
	if d := time.Since(begin); d < 1500*time.Millisecond {
		t.Fatalf("idle client closed after %v with timeout 2", d)
	}

	// The HTTP request of issue 13, sent over TLS: nothing runs.
	if err := good.Set(ctx, "kept", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	h, err := tls.Dial("tcp", s.addr, tlsConf)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	_, _ = h.Write([]byte("POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 26\r\n\r\n" +
		"FLUSHALL\r\nSET pwned yes\r\n"))
	_ = h.SetReadDeadline(time.Now().Add(5 * time.Second))
	if rest, err := io.ReadAll(h); err != nil || len(rest) != 0 {
		t.Fatalf("HTTP request: %q %v", rest, err)
	}
	if err := good.Get(ctx, "pwned").Err(); err != redis.Nil {
		t.Fatalf("GET pwned: %v", err)
	}
	if v, err := good.Get(ctx, "kept").Result(); err != nil || v != "1" {
		t.Fatalf("GET kept: %q %v", v, err)
	}
	if info, err := good.Info(ctx, "memory").Result(); err != nil || !strings.Contains(info, "mem_clients_normal:") {
		t.Fatalf("INFO memory: %v", err)
	}
}
