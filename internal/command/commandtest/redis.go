package commandtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// StartRedis starts a real redis-server (the differential oracle, spec
// redis-compat.md; .ci/run installs the Debian package) on a free loopback
// port without persistence, stops it when the test ends, and returns its
// address. Without redis-server on PATH the test is skipped, unless
// PROBLY_REQUIRE_REDIS=1, which makes it fail. A port taken between
// choosing and binding is retried (three attempts).
func StartRedis(t testing.TB) string {
	t.Helper()
	return StartRedisWith(t)
}

// StartRedisWith is StartRedis with extra redis-server arguments
// ("--unixsocket", path, …), given after the usual ones.
func StartRedisWith(t testing.TB, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("PROBLY_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server not found on PATH and PROBLY_REQUIRE_REDIS=1")
		}
		t.Skip("redis-server not found on PATH: skipping the differential test (install the redis-server package, or set PROBLY_REQUIRE_REDIS=1 to make this a failure)")
	}
	for attempt := 0; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		var stderr bytes.Buffer
		cmd := exec.Command(bin, append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", t.TempDir(), "--daemonize", "no"}, args...)...)
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			select {
			case <-exited:
				deadline = time.Time{}
				continue
			default:
			}
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				t.Cleanup(func() {
					cmd.Process.Kill()
					<-exited
				})
				return addr
			}
		}
		cmd.Process.Kill()
		<-exited
		if attempt == 2 {
			t.Fatalf("redis-server did not start: %s", stderr.String())
		}
	}
}

// RawClient sends commands as RESP arrays and returns each reply's exact
// bytes, for byte-for-byte comparisons of probly with Redis. Not safe for
// concurrent use.
type RawClient struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

// DialRaw connects to addr (closed when the test ends) and, for proto 3,
// switches the connection to RESP3 with HELLO 3. An addr starting with
// "/" is a Unix socket's path.
func DialRaw(t testing.TB, addr string, proto int) *RawClient {
	t.Helper()
	network := "tcp"
	if strings.HasPrefix(addr, "/") {
		network = "unix"
	}
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rc := &RawClient{c: c, r: bufio.NewReaderSize(c, 1<<16), w: bufio.NewWriterSize(c, 1<<16)}
	if proto == 3 {
		if _, err := rc.Do(Argv("HELLO", "3")); err != nil {
			t.Fatal(err)
		}
	}
	return rc
}

func (rc *RawClient) write(args [][]byte) {
	fmt.Fprintf(rc.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(rc.w, "$%d\r\n", len(a))
		rc.w.Write(a)
		rc.w.WriteString("\r\n")
	}
}

// Do sends one command and returns its reply's bytes (10 s deadline).
func (rc *RawClient) Do(args [][]byte) (string, error) {
	rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	rc.write(args)
	if err := rc.w.Flush(); err != nil {
		return "", err
	}
	var out bytes.Buffer
	err := ReadReply(rc.r, &out)
	return out.String(), err
}

// Pipeline sends every command (from a second goroutine, so a long
// pipeline cannot deadlock on full socket buffers), then reads every
// reply (60 s deadline).
func (rc *RawClient) Pipeline(cmds [][][]byte) ([]string, error) {
	rc.c.SetDeadline(time.Now().Add(60 * time.Second))
	errc := make(chan error, 1)
	go func() {
		for _, a := range cmds {
			rc.write(a)
		}
		errc <- rc.w.Flush()
	}()
	out := make([]string, len(cmds))
	var buf bytes.Buffer
	for i := range cmds {
		buf.Reset()
		if err := ReadReply(rc.r, &buf); err != nil {
			return nil, err
		}
		out[i] = buf.String()
	}
	return out, <-errc
}

// ReadReply copies one RESP2/RESP3 reply (nested aggregates included)
// from r to out.
func ReadReply(r *bufio.Reader, out *bytes.Buffer) error {
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
			if err := ReadReply(r, out); err != nil {
				return err
			}
		}
	case '%', '|':
		for i := 0; i < 2*n; i++ {
			if err := ReadReply(r, out); err != nil {
				return err
			}
		}
	}
	return nil
}
