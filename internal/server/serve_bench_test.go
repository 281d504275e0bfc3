package server

import (
	"io"
	"strconv"
	"testing"
)

// batchConn delivers the same request bytes on each of its first n reads,
// then EOF, and discards what is written.
type batchConn struct {
	discardConn
	req []byte
	n   int
}

func (c *batchConn) Read(p []byte) (int, error) {
	if c.n == 0 {
		return 0, io.EOF
	}
	c.n--
	return copy(p, c.req), nil
}

// BenchmarkServe measures the server's whole per-connection path (read,
// parse, dispatch, reply, write) for batches of 1 and 16 pipelined
// commands over a connection that replays the same batch, without a
// socket; ns/op is per command. The items repeat (a replayed batch),
// so BF.ADD and CF.ADD add few new items.
func BenchmarkServe(b *testing.B) {
	noScrub(b)
	for _, p := range []int{1, 16} {
		for _, tc := range []struct {
			name string
			args []string
		}{
			{"BFAdd", []string{"BF.ADD", "bf", "item"}},
			{"BFExists", []string{"BF.EXISTS", "bf", "item"}},
			{"CFExists", []string{"CF.EXISTS", "cf", "item"}},
			{"PFAdd", []string{"PFADD", "hll", "item"}},
			{"Set", []string{"SET", "s", "value"}},
			{"Get", []string{"GET", "s"}},
			{"Ping", []string{"PING"}},
		} {
			b.Run(tc.name+"/P"+strconv.Itoa(p), func(b *testing.B) {
				s := pathServer(b)
				setup := &batchConn{n: 1, req: []byte(cmd("BF.RESERVE", "bf", "0.01", "1000000") +
					cmd("CF.RESERVE", "cf", "1000000") + cmd("SET", "s", "value"))}
				s.admit(setup).serve()
				var req []byte
				for range p {
					req = append(req, cmd(tc.args...)...)
				}
				b.ResetTimer()
				conn := &batchConn{req: req, n: b.N/p + 1}
				s.admit(conn).serve()
			})
		}
	}
}
