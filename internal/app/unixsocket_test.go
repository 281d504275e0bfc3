package app

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probly/probly/internal/command/commandtest"
)

// clientInfoField is the value of field in a raw CLIENT INFO reply.
func clientInfoField(reply, field string) string {
	for _, kv := range strings.Fields(reply) {
		if v, ok := strings.CutPrefix(kv, field+"="); ok {
			return v
		}
	}
	return ""
}

// TestUnixSocket: --unixsocket listens as well as TCP, with the
// unixsocketperm bits on the socket file. Compared with a redis-server on
// its own socket (paths of the same length, so the replies compare byte
// for byte once the path is swapped): CONFIG GET unixsocket and
// unixsocketperm, and a Unix client's addr, laddr ("<path>:0") and flags
// (U) in CLIENT INFO and its "unix:<path>" in MONITOR; a TCP client still
// shows flags=N. The socket file goes when the server stops; a stale one
// is replaced at start, while one a server accepts on, or a regular file,
// refuses the start.
func TestUnixSocket(t *testing.T) {
	dir := t.TempDir()
	ppath, rpath := filepath.Join(dir, "p.sock"), filepath.Join(dir, "r.sock")
	commandtest.StartRedisWith(t, "--unixsocket", rpath, "--unixsocketperm", "700")
	s := runApp(t, Options{UnixSocket: ppath, UnixSocketPerm: 0o700}, true)
	fi, err := os.Lstat(ppath)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket file: %v, %v", fi, err)
	}
	do := func(c *commandtest.RawClient, args ...string) string {
		t.Helper()
		r, err := c.Do(commandtest.Argv(args...))
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		return r
	}
	for _, proto := range []int{2, 3} {
		p, r := commandtest.DialRaw(t, ppath, proto), commandtest.DialRaw(t, rpath, proto)
		for _, st := range [][]string{{"CONFIG", "GET", "unixsocket"}, {"CONFIG", "GET", "unixsocketperm"}, {"PING"}} {
			if got, want := strings.ReplaceAll(do(p, st...), ppath, rpath), do(r, st...); got != want {
				t.Errorf("RESP%d %q over the socket:\nprobly: %q\nredis:  %q", proto, st, got, want)
			}
		}
		for i, c := range []*commandtest.RawClient{p, r} {
			info := do(c, "CLIENT", "INFO")
			path := []string{ppath, rpath}[i]
			for field, want := range map[string]string{"addr": path + ":0", "laddr": path + ":0", "flags": "U"} {
				if got := clientInfoField(info, field); got != want {
					t.Errorf("RESP%d server %d: CLIENT INFO %s=%q, want %q (%q)", proto, i, field, got, want, info)
				}
			}
		}
	}
	if got := clientInfoField(do(commandtest.DialRaw(t, s.addr, 2), "CLIENT", "INFO"), "flags"); got != "N" {
		t.Errorf("TCP client: flags=%q, want N", got)
	}
	for _, path := range []string{ppath, rpath} {
		mc, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		mr := bufio.NewReader(mc)
		mc.SetDeadline(time.Now().Add(10 * time.Second))
		mc.Write([]byte("*1\r\n$7\r\nMONITOR\r\n"))
		if l, err := mr.ReadString('\n'); l != "+OK\r\n" {
			t.Fatalf("MONITOR on %s: %q %v", path, l, err)
		}
		do(commandtest.DialRaw(t, path, 2), "PING")
		l, err := mr.ReadString('\n')
		if want := ` [0 unix:` + path + `] "PING"` + "\r\n"; err != nil || !strings.HasSuffix(strings.ToUpper(l), strings.ToUpper(want)) {
			t.Errorf("MONITOR on %s: %q (%v), want a line ending in %q", path, l, err, want)
		}
		mc.Close()
	}

	// A second server on the same socket does not start.
	err = Run(context.Background(), Options{Addr: "127.0.0.1:0", Dir: t.TempDir(), MetricsAddr: "off", UnixSocket: ppath})
	if err == nil || !strings.Contains(err.Error(), "another server listens on it") {
		t.Errorf("second server on the socket: %v", err)
	}
	s.stop(t)
	if _, err := os.Lstat(ppath); !os.IsNotExist(err) {
		t.Errorf("socket file after stop: %v", err)
	}

	// A stale socket file (its server died) is replaced.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: ppath, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	runApp(t, Options{UnixSocket: ppath}, true)
	if got := do(commandtest.DialRaw(t, ppath, 2), "PING"); got != "+PONG\r\n" {
		t.Errorf("PING after replacing a stale socket: %q", got)
	}

	// Any other file is left alone.
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), Options{Addr: "127.0.0.1:0", Dir: t.TempDir(), MetricsAddr: "off", UnixSocket: file})
	if b, _ := os.ReadFile(file); err == nil || string(b) != "data" {
		t.Errorf("unixsocket on a regular file: %v, file %q", err, b)
	}
}
