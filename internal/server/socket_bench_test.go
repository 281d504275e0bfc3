package server

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"testing"
	"time"
)

// BenchmarkSocket measures commands over a loopback TCP connection to a
// served Server (the client's work included): batches of 1 and 16
// pipelined commands, each with a new item; ns/op is per command.
func BenchmarkSocket(b *testing.B) {
	noScrub(b)
	s := pathServer(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(ln)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 64<<10)
	roundTrip := func(req []byte, replies int) {
		if _, err := nc.Write(req); err != nil {
			b.Fatal(err)
		}
		for range replies {
			line, err := br.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			if line[0] == '-' {
				b.Fatalf("error reply %q", line)
			}
			if line[0] == '$' && line[1] != '-' {
				n, _ := strconv.Atoi(string(line[1 : len(line)-2]))
				if _, err := br.Discard(n + 2); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	for _, setup := range [][]string{{"BF.RESERVE", "bf", "0.01", "1000000"}, {"CF.RESERVE", "cf", "1000000"}, {"SET", "s", "value"}} {
		roundTrip([]byte(cmd(setup...)), 1)
	}
	for _, p := range []int{1, 16} {
		for _, tc := range []struct {
			name string
			args []string
		}{
			{"BFAdd", []string{"BF.ADD", "bf", "item%"}},
			{"BFExists", []string{"BF.EXISTS", "bf", "item%"}},
			{"CFAdd", []string{"CF.ADD", "cf", "item%"}},
			{"PFAdd", []string{"PFADD", "hll", "item%"}},
			{"Set", []string{"SET", "s", "v%"}},
			{"Get", []string{"GET", "s"}},
			{"Ping", []string{"PING"}},
		} {
			b.Run(tc.name+"/P"+strconv.Itoa(p), func(b *testing.B) {
				n := 0
				var req []byte
				for b.Loop() {
					n++
					if n%p != 0 {
						continue
					}
					req = req[:0]
					for j := range p {
						args := make([]string, len(tc.args))
						for i, a := range tc.args {
							if a != "" && a[len(a)-1] == '%' {
								a = a[:len(a)-1] + strconv.Itoa(n*p+j)
							}
							args[i] = a
						}
						req = append(req, cmd(args...)...)
					}
					roundTrip(req, p)
				}
			})
		}
	}
}
