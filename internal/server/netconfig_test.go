//go:build linux

package server

import (
	"net"
	"syscall"
	"testing"
)

// keepAliveOpts returns SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL and
// TCP_KEEPCNT of the server's side of the connection r.
func keepAliveOpts(t *testing.T, e *env, r *raw) [4]int {
	t.Helper()
	var nc net.Conn
	e.srv.mu.Lock()
	for c := range e.srv.conns {
		if c.nc.RemoteAddr().String() == r.c.LocalAddr().String() {
			nc = c.nc
		}
	}
	e.srv.mu.Unlock()
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		t.Fatalf("no TCP connection of the server for %s", r.c.LocalAddr())
	}
	sc, err := tc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var out [4]int
	var gerr error
	err = sc.Control(func(fd uintptr) {
		for i, o := range [][2]int{{syscall.SOL_SOCKET, syscall.SO_KEEPALIVE}, {syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE},
			{syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL}, {syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT}} {
			if out[i], gerr = syscall.GetsockoptInt(int(fd), o[0], o[1]); gerr != nil {
				return
			}
		}
	})
	if err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	return out
}

// tcp-keepalive applies to the connections accepted after it is set, as
// Redis's anetKeepAlive sets them: idle = the value, interval = value/3
// (at least 1), 3 probes; 0 turns keepalives off. The default is Redis's
// 300.
func TestTCPKeepAlive(t *testing.T) {
	e := start(t, nil)
	admin := e.raw(t)
	admin.do("PING")
	if got := keepAliveOpts(t, e, admin); got != [4]int{1, 300, 100, 3} {
		t.Errorf("default: SO_KEEPALIVE, idle, interval, count = %v, want [1 300 100 3]", got)
	}
	for _, tc := range []struct {
		value string
		want  [4]int
	}{
		{"60", [4]int{1, 60, 20, 3}},
		{"2", [4]int{1, 2, 1, 3}},
		{"0", [4]int{0, 0, 0, 0}},
	} {
		if got := admin.do("CONFIG", "SET", "tcp-keepalive", tc.value); got != "+OK\r\n" {
			t.Fatalf("CONFIG SET tcp-keepalive %s: %q", tc.value, got)
		}
		r := e.raw(t)
		r.do("PING")
		got := keepAliveOpts(t, e, r)
		if tc.want[0] == 0 {
			got[1], got[2], got[3] = 0, 0, 0 // unused when off
		}
		if got != tc.want {
			t.Errorf("tcp-keepalive %s: SO_KEEPALIVE, idle, interval, count = %v, want %v", tc.value, got, tc.want)
		}
	}
	// The connection accepted before keeps its settings.
	if got := keepAliveOpts(t, e, admin); got != [4]int{1, 300, 100, 3} {
		t.Errorf("earlier connection: %v, want [1 300 100 3]", got)
	}
}
