package cf

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
)

// FuzzLoadChunk drives CF.LOADCHUNK through the command table with an
// arbitrary header and an arbitrary chunk at an arbitrary position, then
// uses the key. Nothing may panic, a refused header must leave no key, and
// a loaded filter must answer every command with a well-formed reply and
// find what is added to it.
func FuzzLoadChunk(f *testing.F) {
	le := binary.LittleEndian
	hdr := make([]byte, 0, 38)
	hdr = le.AppendUint64(hdr, 3)
	hdr = le.AppendUint64(hdr, 4)
	hdr = le.AppendUint64(hdr, 0)
	hdr = le.AppendUint64(hdr, 2)
	hdr = le.AppendUint16(hdr, 2)
	hdr = le.AppendUint16(hdr, 20)
	hdr = le.AppendUint16(hdr, 2)
	f.Add(hdr, int64(9), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(hdr, int64(25), []byte{9})
	huge := append([]byte(nil), hdr...)
	le.PutUint64(huge[8:], 1<<48)
	f.Add(huge, int64(2), []byte{1})
	f.Add([]byte("short"), int64(-1), []byte{})
	f.Fuzz(func(t *testing.T, header []byte, pos int64, data []byte) {
		e := newEnv(t)
		e.set("cf-max-filter-bytes", "65536")
		out := e.do(2, "CF.LOADCHUNK", "k", "1", string(header))
		if out != ok {
			if out != "-Invalid header\r\n" && out != "-Couldn't create filter!\r\n" {
				t.Fatalf("header: %q", out)
			}
			if e.do(2, "CF.EXISTS", "k", "a") != zero || e.do(2, "CF.INFO", "k") != notFound {
				t.Fatal("a refused header left a key")
			}
			return
		}
		out = e.do(2, "CF.LOADCHUNK", "k", strconv.FormatInt(pos, 10), string(data))
		if out != ok && out != "-Couldn't load chunk!\r\n" && out != "-Invalid position\r\n" && out != "-ERR item exists\r\n" {
			t.Fatalf("chunk: %q", out)
		}
		for _, args := range [][]string{{"CF.INFO", "k"}, {"CF.DEBUG", "k"}, {"CF.COUNT", "k", "x"}, {"CF.DEL", "k", "x"}, {"CF.COMPACT", "k"}} {
			if out := e.do(3, args...); strings.HasPrefix(out, "-") {
				t.Fatalf("%q: %q", args, out)
			}
		}
		dumpKey(t, e.tab, e.store, "k")
		out = e.do(2, "CF.ADD", "k", "probe")
		switch {
		case out == one:
			if e.do(2, "CF.EXISTS", "k", "probe") != one {
				t.Fatal("added item not found")
			}
		case out == "-Filter is full\r\n", out == "-Maximum expansions reached\r\n", out == "-ERR Insufficient memory\r\n":
		default:
			t.Fatalf("CF.ADD: %q", out)
		}
	})
}
