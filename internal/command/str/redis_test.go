package str

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/probly/probly/internal/command/commandtest"
)

// startRedis starts a real redis-server (the differential oracle, spec
// redis-compat.md; .ci/run installs the Debian package) on a free loopback
// port without persistence and returns its address. Without redis-server
// on PATH the test is skipped, unless PROBLY_REQUIRE_REDIS=1.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("PROBLY_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server not found and PROBLY_REQUIRE_REDIS=1")
		}
		t.Skip("redis-server not found")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir(), "--daemonize", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
	}
	t.Fatal("redis-server did not start")
	return ""
}

// rawClient sends commands as RESP arrays and returns each reply's exact
// bytes.
type rawClient struct {
	c net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, addr string, proto int) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rc := &rawClient{c: c, r: bufio.NewReader(c)}
	if proto == 3 {
		if _, err := rc.do(commandtest.Argv("HELLO", "3")); err != nil {
			t.Fatal(err)
		}
	}
	return rc
}

func (rc *rawClient) do(args [][]byte) (string, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n", len(a))
		b.Write(a)
		b.WriteString("\r\n")
	}
	rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := rc.c.Write(b.Bytes()); err != nil {
		return "", err
	}
	var out bytes.Buffer
	err := readReply(rc.r, &out)
	return out.String(), err
}

// readReply copies one RESP2/RESP3 reply from r to out.
func readReply(r *bufio.Reader, out *bytes.Buffer) error {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return err
	}
	out.Write(line)
	if len(line) < 3 {
		return fmt.Errorf("short line %q", line)
	}
	n, _ := strconv.Atoi(string(line[1 : len(line)-2]))
	switch line[0] {
	case '$', '=', '!':
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return err
		}
		out.Write(buf)
	case '*', '~', '>':
		for i := 0; i < n; i++ {
			if err := readReply(r, out); err != nil {
				return err
			}
		}
	case '%', '|':
		for i := 0; i < 2*n; i++ {
			if err := readReply(r, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// diffScript is every string-command case whose reply probly shares with
// Redis (everything but a valid expiry, which probly refuses).
func diffScript() [][]string {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	s := [][]string{
		{"GET", "k"}, {"STRLEN", "k"}, {"GETRANGE", "k", "0", "-1"},
		{"SET", "k", "v1"}, {"GET", "k"}, {"SET", "k", "v2", "NX"}, {"SET", "k", "v3", "XX"},
		{"SET", "m", "x", "XX"}, {"GET", "m"}, {"SET", "k", "v4", "GET"}, {"SET", "n", "v", "GET"},
		{"SET", "k", "v5", "NX", "GET"}, {"SET", "o", "v", "NX", "GET"}, {"SET", "p", "v", "XX", "GET"},
		{"SET", "k", "v6", "KEEPTTL", "GET", "xx"}, {"SET", "k", "v", "nx\x00zz"},
		{"SET", "k", "v", "NX", "XX"}, {"SET", "k", "v", "XX", "NX"}, {"SET", "k", "v", "FOO"},
		{"SET", "k", "v", "EX"}, {"SET", "k", "v", "EX", "1", "PX", "1"}, {"SET", "k", "v", "KEEPTTL", "EX", "1"},
		{"SET", "k", "v", "EX", "1", "KEEPTTL"}, {"SET", "k", "v", "PXAT", "1", "EXAT", "1"},
		{"SET", "k", "v", "EX", "abc"}, {"SET", "k", "v", "EX", "0"}, {"SET", "k", "v", "PX", "-1"},
		{"SET", "k", "v", "EX", "9223372036854776"}, {"SET", "k", "v", "PX", "9223372036854775807"},
		{"SET", "k", "v", "EX", "+1"}, {"SET", "k", "v", "EX", "01"}, {"SET", "k", "v", "EX", "abc", "FOO"},
		{"GET", "k"},
		{"SET", "bin", "a\r\nb\x00c"}, {"GET", "bin"}, {"STRLEN", "bin"},
		{"SET", "all", string(all)}, {"GET", "all"}, {"GETRANGE", "all", "100", "120"},
		{"SET", "\r\n\x00", "key"}, {"GET", "\r\n\x00"},
		{"SET", "e", ""}, {"GET", "e"}, {"STRLEN", "e"},
		{"APPEND", "a", "hello"}, {"APPEND", "a", " world\x00"}, {"APPEND", "a", ""}, {"GET", "a"},
		{"APPEND", "ae", ""}, {"GET", "ae"}, {"STRLEN", "ae"},
		{"SETRANGE", "r", "5", ""}, {"GET", "r"}, {"SETRANGE", "r", "3", "abc"}, {"GET", "r"},
		{"SETRANGE", "r", "0", "XY"}, {"SETRANGE", "r", "10", ""}, {"SETRANGE", "r", "6", "\r\n"}, {"GET", "r"},
		{"SETRANGE", "r", "-1", "x"}, {"SETRANGE", "r", "-1", ""}, {"SETRANGE", "r", "x", "x"},
		{"SETRANGE", "r", "1.5", "x"}, {"SETRANGE", "r", "-0", "x"}, {"SETRANGE", "r", "9223372036854775808", "x"},
		{"SETRANGE", "r", "536870912", "x"}, {"SETRANGE", "r", "536870911", "xy"},
		{"SETRANGE", "r", "9223372036854775807", "x"}, {"SETRANGE", "r", "536870912", ""},
		{"SETRANGE", "big", "536870912", "x"}, {"GET", "big"},
		{"SET", "s", "This is a string"},
		{"GET", "k", "x"}, {"SET", "k"}, {"APPEND", "k"}, {"SETRANGE", "k", "1"}, {"GETRANGE", "k", "1"},
		{"SUBSTR", "k", "1", "2", "3"}, {"STRLEN"},
	}
	idx := []string{"0", "1", "3", "-1", "-3", "-100", "15", "16", "100", "-16", "-17",
		"9223372036854775807", "-9223372036854775808", "x", "01", "9223372036854775808"}
	for _, key := range []string{"s", "e", "missing"} {
		for _, a := range idx {
			for _, b := range idx {
				s = append(s, []string{"GETRANGE", key, a, b})
			}
		}
	}
	s = append(s, []string{"SUBSTR", "s", "-3", "-1"}, []string{"substr", "s", "2", "-100"})
	return s
}

// TestDifferentialRedis runs the same commands against a real redis-server
// and probly's table, in RESP2 and RESP3, and requires identical reply
// bytes.
func TestDifferentialRedis(t *testing.T) {
	addr := startRedis(t)
	script := diffScript()
	for _, proto := range []int{2, 3} {
		rc := dialRaw(t, addr, proto)
		if _, err := rc.do(commandtest.Argv("FLUSHALL")); err != nil {
			t.Fatal(err)
		}
		e := newEnv(t)
		mismatches := 0
		for _, cmd := range script {
			want, err := rc.do(commandtest.Argv(cmd...))
			if err != nil {
				t.Fatalf("redis %q: %v", cmd, err)
			}
			if got := e.do(proto, cmd...); got != want {
				t.Errorf("RESP%d %q:\n probly %q\n redis  %q", proto, cmd, got, want)
				if mismatches++; mismatches > 20 {
					t.FailNow()
				}
			}
		}
		t.Logf("RESP%d: %d commands compared", proto, len(script))
	}
}
