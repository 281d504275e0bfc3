//go:build !unix

package server

import (
	"net"
	"syscall"

	"github.com/probly/probly/internal/resp"
)

// rawReader: without read(2) on the descriptor, connections read through
// net.Conn.Read with their buffer held (fill).
type rawReader struct {
	raw syscall.RawConn
	try func(fd uintptr) bool
	n   int
	err error
	// pipelined: the last batch had more than one command (yieldPipelined).
	pipelined bool
}

func (r *rawReader) init(net.Conn, *resp.Parser) {}
