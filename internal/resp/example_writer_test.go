package resp_test

import (
	"fmt"
	"strings"

	"github.com/probly/probly/internal/resp"
)

// A Writer buffers a batch's replies and sends them in one write; a mark
// (Len) lets a reply be dropped again without a copy (Truncate), as the
// server does for CLIENT REPLY OFF.
func ExampleWriter() {
	var conn strings.Builder // stands for the connection
	w := resp.NewWriter(&conn)
	r := resp.New(w, 2)
	r.OK()
	mark := w.Len()
	r.BulkString("not sent")
	w.Truncate(mark)
	r.Array(2)
	r.Int(1)
	r.Null()
	fmt.Println(w.Len(), "bytes buffered")
	if err := w.Flush(); err != nil {
		fmt.Println(err)
	}
	fmt.Printf("sent %q, %d bytes buffered\n", conn.String(), w.Len())
	// Output:
	// 18 bytes buffered
	// sent "+OK\r\n*2\r\n:1\r\n$-1\r\n", 0 bytes buffered
}

// Reply writes RESP3 types, and their RESP2 forms to a RESP2 client.
func ExampleReply() {
	for _, proto := range []int{2, 3} {
		var w resp.Writer
		r := resp.New(&w, proto)
		r.Map(1)
		r.BulkString("ratio")
		r.Double(0.5)
		r.Bool(true)
		fmt.Printf("RESP%d %q\n", proto, w.Bytes())
	}
	// Output:
	// RESP2 "*2\r\n$5\r\nratio\r\n$3\r\n0.5\r\n:1\r\n"
	// RESP3 "%1\r\n$5\r\nratio\r\n,0.5\r\n#t\r\n"
}
