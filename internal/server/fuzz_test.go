package server

import (
	"bytes"
	"io"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"github.com/tidwall/redcon"
)

// FuzzRequestParsing feeds arbitrary bytes through the guard into redcon's
// reader, in one read and in one-byte reads: parsing must never panic, and
// every parsed bulk must respect the limits.
func FuzzRequestParsing(f *testing.F) {
	for _, s := range []string{
		"*1\r\n$4\r\nPING\r\n",
		"*1\r\n$9223372036854775807\r\n",
		"*1\r\n$9223372036854775806\r\nab",
		"*-5\r\n", "*0\r\n", "PING\r\n", "echo \"a b\"\r\n",
		"*2\r\n$4\r\nECHO\r\n$-7\r\n",
		"*2\r\n$4\r\nPING\r\nXX",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*1\r\n$4\r\nPING\r\n",
		"\x00\xff*$\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, oneByte := range []bool{false, true} {
			var lim limits
			lim.maxBulk.Store(1 << 16)
			lim.maxArgs.Store(1 << 16) // inline lines (64 KiB) can carry 32Ki args
			lim.maxQuery.Store(1 << 20)
			var in atomic.Uint64
			var src io.Reader = bytes.NewReader(data)
			if oneByte {
				src = iotest.OneByteReader(src)
			}
			rd := redcon.NewReader(&guard{r: src, lim: &lim, in: &in})
			for {
				cmds, err := rd.ReadCommands()
				if err != nil {
					break
				}
				for _, c := range cmds {
					if int64(len(c.Args)) > lim.maxArgs.Load() {
						t.Fatalf("%d args", len(c.Args))
					}
					for _, a := range c.Args {
						if int64(len(a)) > lim.maxBulk.Load() {
							t.Fatalf("bulk of %d bytes", len(a))
						}
					}
				}
			}
		}
		// Before AUTH: one command per read, and the bytes after the first
		// command of a read are kept, not lost: the commands that come out
		// are those that come out when authenticated, up to where either
		// parse stops (at a refused header; when authenticated, a bad
		// inline line also discards the complete commands read with it).
		var all []string
		{
			var lim limits
			lim.maxBulk.Store(1 << 16)
			lim.maxArgs.Store(1 << 16)
			lim.maxQuery.Store(1 << 20)
			var in atomic.Uint64
			rd := redcon.NewReader(&guard{r: iotest.OneByteReader(bytes.NewReader(data)), lim: &lim, in: &in})
			for {
				cmds, err := rd.ReadCommands()
				if err != nil {
					break
				}
				for _, c := range cmds {
					all = append(all, string(c.Raw))
				}
			}
		}
		for _, oneByte := range []bool{false, true} {
			var lim limits
			lim.maxBulk.Store(1 << 16)
			lim.maxArgs.Store(1 << 16)
			lim.maxQuery.Store(1 << 20)
			var in atomic.Uint64
			var src io.Reader = bytes.NewReader(data)
			if oneByte {
				src = iotest.OneByteReader(src)
			}
			authed := false
			rd := redcon.NewReader(&guard{r: src, lim: &lim, in: &in, authed: &authed})
			for i := 0; ; i++ {
				cmds, err := rd.ReadCommands()
				if err != nil {
					break
				}
				if len(cmds) != 1 {
					t.Fatalf("%d commands in one read before AUTH", len(cmds))
				}
				if i < len(all) && string(cmds[0].Raw) != all[i] {
					t.Fatalf("command %d before AUTH is %q, authenticated %q", i, cmds[0].Raw, all[i])
				}
			}
		}
	})
}

// chunkReader returns at most n bytes per Read, like a network delivering
// MTU-sized segments.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

type countingReader struct {
	r     io.Reader
	calls int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.calls++
	return c.r.Read(p)
}

// TestManyArgsFewReparses guards against redcon's restart-from-scratch
// parsing turning a many-argument command that arrives in small segments
// into O(args²) work: the guard must hand redcon few, large reads.
func TestManyArgsFewReparses(t *testing.T) {
	const nargs = 100000
	var b bytes.Buffer
	b.WriteString("*" + strconv.Itoa(nargs) + "\r\n")
	for i := 0; i < nargs; i++ {
		b.WriteString("$3\r\nabc\r\n")
	}
	b.WriteString("*1\r\n$4\r\nPING\r\n")
	var lim limits
	lim.maxBulk.Store(DefaultMaxBulkLen)
	lim.maxArgs.Store(DefaultMaxArgs)
	lim.maxQuery.Store(DefaultMaxQueryBuffer)
	var in atomic.Uint64
	cr := &countingReader{r: &guard{r: chunkReader{bytes.NewReader(b.Bytes()), 1460}, lim: &lim, in: &in}}
	rd := redcon.NewReader(cr)
	var got []redcon.Command
	for len(got) < 2 {
		cmds, err := rd.ReadCommands()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, cmds...)
	}
	if len(got[0].Args) != nargs || string(got[1].Args[0]) != "PING" {
		t.Fatalf("parsed %d args, then %q", len(got[0].Args), got[1].Args)
	}
	// ~900 KB: redcon's buffer doubles from 4 KiB, so ~8 reads suffice; a
	// pass-through reader would need ~620.
	if cr.calls > 40 {
		t.Fatalf("redcon read %d times for one command", cr.calls)
	}
	t.Logf("%d reads for a %d-byte command", cr.calls, b.Len())
}
