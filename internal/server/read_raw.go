//go:build unix

package server

import (
	"io"
	"net"
	"syscall"

	"github.com/probly/probly/internal/resp"
)

// rawReader reads a connection through its descriptor (fill).
type rawReader struct {
	raw syscall.RawConn // nil: read through net.Conn.Read
	in  *resp.Parser
	try func(fd uintptr) bool // attempt, made once (a method value allocates)
	fd  fdReader
	n   int
	err error
	// pipelined: the last batch had more than one command (yieldPipelined).
	pipelined bool
}

// init sets r up for nc if nc has a descriptor (*net.TCPConn,
// *net.UnixConn).
func (r *rawReader) init(nc net.Conn, in *resp.Parser) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	r.raw, r.in = raw, in
	r.try = r.attempt
}

// attempt is called by RawConn.Read, at once and then each time the
// poller reports the descriptor readable: one read(2) into a buffer taken
// from the pool; on EAGAIN the buffer goes back and attempt reports false
// (wait).
func (r *rawReader) attempt(fd uintptr) bool {
	r.fd = fdReader(fd)
	r.n, r.err = r.in.Fill(&r.fd)
	if r.err == syscall.EAGAIN {
		r.in.Release()
		r.n, r.err = 0, nil
		return false
	}
	return true
}

// fdReader reads a descriptor with read(2), as net.Conn's Read: 0 bytes
// read from a non-empty buffer is io.EOF, EINTR is retried.
type fdReader uintptr

func (f *fdReader) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(*f), p)
		if err == syscall.EINTR {
			continue
		}
		if n < 0 {
			n = 0
		}
		if n == 0 && err == nil && len(p) > 0 {
			return 0, io.EOF
		}
		return n, err
	}
}
