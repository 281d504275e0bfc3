package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probly/probly/internal/command/commandtest"
)

// TestRESPAgainstRedis is the request parser's differential test: the same
// raw bytes go to redis-server and to probly, and the replies and whether
// the server closed the connection must be the same. It covers every RESP
// type prefix (as a command's first byte and in place of '$'), negative,
// zero and huge lengths, numbers Redis refuses ("$+4", "$04"), missing or
// wrong CRLF, inline commands with quotes and escapes, a 70 KB inline
// line, NUL bytes, and a pipeline split into two writes at every byte.
//
// How a case is observed, on each server: the bytes are written, replies
// are read until the server closes the connection or 300 ms pass without
// one; then the client half-closes (Redis and probly both close on EOF)
// and the rest is read to the end. So "closed" is "closed before the
// client's EOF".
func TestRESPAgainstRedis(t *testing.T) {
	redisAddr := commandtest.StartRedis(t)
	e := start(t, func(o *Options) { o.MaxArgs = maxMaxArgs }) // Redis allows INT_MAX arguments
	prefixes := "+-:$*_,#!=(%~>|"
	var cases []string
	for _, p := range prefixes {
		cases = append(cases, string(p)+"PING\r\n", "*1\r\n"+string(p)+"4\r\nPING\r\n")
	}
	cases = append(cases,
		// counts and lengths
		"*0\r\nPING\r\n", "*-1\r\nPING\r\n", "*-5\r\nPING\r\n", "*-0\r\n", "*+1\r\n$4\r\nPING\r\n",
		"*01\r\n$4\r\nPING\r\n", "*\r\n", "*1x\r\n", "*2147483647\r\n", "*2147483648\r\n",
		"*99999999999999999999\r\n", "*-9223372036854775808\r\n", "*9223372036854775808\r\n",
		"*1\r\n$+4\r\nPING\r\n", "*1\r\n$04\r\nPING\r\n", "*1\r\n$-0\r\n", "*1\r\n$-1\r\n", "*1\r\n$\r\n",
		"*1\r\n$9223372036854775807\r\n", "*1\r\n$9223372036854775806\r\nab", "*1\r\n$536870912\r\nab",
		"*1\r\n$536870913\r\n", "*1\r\n$"+strings.Repeat("0", 100)+"\r\n", "*1\r\n$0\r\n\r\n",
		"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", "*2\r\n$4\r\nECHO\r\n$-7\r\n",
		// CRLF
		"PING", "PING\r", "PING\n", "PING\r\r\n", "*1\n$4\nPING\n", "*1\r\n$4\r\nPING", "*1\r\n$4\r\nPINGxx",
		"*1\rx$4\rxPING\r\n", "*1\r\n$4\r\nPINGxxPING\r\n", "*2\r\n$4\r\nPING\r\nXX\r\n",
		"*1\r\n$4\r\nPING\r\n*3\r\nfoo\r\n",
		// NUL bytes
		"PING\x00\r\n", "*1\x00\r\n$4\r\nPING\r\n", "*1\r\x00$4\r\nPING\r\n", "*2\r\n$4\r\nECHO\r\n$3\r\na\x00b\r\n",
		// inline commands
		"\r\n\r\nPING\r\n", "   PING   \r\n", "ECHO a\"b\"\r\n", "ECHO \"a\"b\r\n", "ECHO \"a b\"\r\n",
		"ECHO \"\\x41\\x4a\\x4\"\r\n", "ECHO \"\\a\\b\\n\\r\\t\\q\\\\\\\"\"\r\n", "ECHO 'a\\nb'\r\n",
		"ECHO 'it\\'s'\r\n", "ECHO 'a'b\r\n", "ECHO 'a\r\n", "ECHO \"a\r\n", "ECHO \"a\\\r\n", "ECHO \"\"\r\n",
		"ECHO ''\r\n", "ECHO a\tb\r\n", "ECHO a\vb\r\n", "ECHO \"a\"\vb\r\n", "ECHO \xff\xfe\r\n",
		"ECHO "+strings.Repeat("x", 70000)+"\r\n", "ECHO "+strings.Repeat("x", 200000),
		"*1"+strings.Repeat("1", 70000), "*1\r\n$1"+strings.Repeat("1", 70000),
		// the cross-protocol refusal
		"POST / HTTP/1.1\r\nHost: x\r\n\r\n", "PING\r\nHost: x\r\n",
	)
	type probe struct {
		name      string
		in        [][]byte
		want, got string
	}
	var probes []*probe
	for _, c := range cases {
		probes = append(probes, &probe{name: fmt.Sprintf("%.60q", c), in: [][]byte{[]byte(c)}})
	}
	// A pipeline split into two writes at every byte (Redis sees it whole).
	in := []byte(cmd("ECHO", "v") + "ECHO \"a\\x41\" 'b'\r\n*0\r\n" + cmd("ECHO", "xyz") + "PING\n")
	whole := &probe{name: "pipeline", in: [][]byte{in}}
	for i := 1; i < len(in); i++ {
		probes = append(probes, &probe{name: fmt.Sprintf("pipeline split at %d", i), in: [][]byte{in[:i], in[i:]}})
	}
	// Each probe waits for a quiet period: run them all at once.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); whole.want = observe(t, redisAddr, whole.in) }()
	for _, p := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if len(p.in) == 1 {
				p.want = observe(t, redisAddr, p.in)
			}
			p.got = observe(t, e.addr, p.in)
		}()
	}
	wg.Wait()
	for _, p := range probes {
		if len(p.in) > 1 {
			p.want = whole.want
		}
		if p.got != p.want {
			t.Errorf("%s:\nprobly %.200q\nredis  %.200q", p.name, p.got, p.want)
		}
	}
}

// observe sends parts (one write each) on a new connection and returns
// the server's replies and whether it closed the connection before the
// client's EOF.
func observe(t *testing.T, addr string, parts [][]byte) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Error(err)
		return ""
	}
	defer c.Close()
	for i, p := range parts {
		if i > 0 {
			time.Sleep(time.Millisecond) // lets the first part arrive alone; never decides the outcome
		}
		if _, err := c.Write(p); err != nil {
			t.Error(err)
			return ""
		}
	}
	var out bytes.Buffer
	closed := false
	buf := make([]byte, 64<<10)
	for {
		_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := c.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				break
			}
			closed = true
			break
		}
	}
	if !closed {
		_ = c.(*net.TCPConn).CloseWrite()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		rest, err := io.ReadAll(c)
		out.Write(rest)
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && !isReset(err) {
			t.Errorf("reading after EOF: %v", err)
		}
	}
	if closed {
		return out.String() + " [closed]"
	}
	return out.String() + " [open]"
}

func isReset(err error) bool { return strings.Contains(err.Error(), "connection reset") }
