package resp_test

import (
	"fmt"
	"strings"

	"github.com/probly/probly/internal/resp"
)

// A Parser reads whatever the connection delivers and hands out complete
// commands; an incomplete one waits for the next read, and a protocol
// error ends the connection.
func ExampleParser() {
	conn := strings.NewReader("*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\nECHO \"a\\x41\" 'b c'\r\n*0\r\n*1\r\n$+4\r\n")
	var p resp.Parser
	for {
		if _, err := p.Fill(conn); err != nil {
			return
		}
		for {
			args, err := p.Next()
			if err != nil {
				fmt.Println("-ERR " + err.Error())
				return
			}
			if args == nil {
				break // read more
			}
			fmt.Printf("%q\n", args)
		}
	}
	// Output:
	// ["ECHO" "hi"]
	// ["ECHO" "aA" "b c"]
	// -ERR Protocol error: invalid bulk length
}
