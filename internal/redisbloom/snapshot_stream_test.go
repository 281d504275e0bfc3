package redisbloom

import (
	"bytes"
	"io"
	"strconv"
	"testing"
	"testing/iotest"
)

// WriteTo writes MarshalBinary's bytes, and ReadChain decodes them from a
// stream of any piece size, for a chain of several links and one whose
// bit array spans many pages and pieces, most of them zero; a stream that
// ends early or holds a damaged byte is refused.
func TestSnapshotStreams(t *testing.T) {
	small := mustNew(t, Params{ErrorRate: 0.01, Capacity: 10, Expansion: 2})
	big := mustNew(t, Params{ErrorRate: 0.001, Capacity: 300000, Expansion: 2}) // ~540 KB
	for i := range 100 {
		small.Add([]byte(strconv.Itoa(i)))
		big.Add([]byte(strconv.Itoa(i)))
	}
	for name, c := range map[string]*Chain{"small": small, "big": big} {
		want, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var w bytes.Buffer
		if n, err := c.WriteTo(&w); err != nil || n != int64(len(want)) || !bytes.Equal(w.Bytes(), want) {
			t.Fatalf("%s: WriteTo wrote %d bytes (%v), equal to MarshalBinary: %v", name, n, err, bytes.Equal(w.Bytes(), want))
		}
		for _, r := range []io.Reader{iotest.OneByteReader(bytes.NewReader(want)), iotest.HalfReader(bytes.NewReader(want))} {
			d, err := ReadChain(r, uint64(len(want)), 0)
			if err != nil || !d.Equal(c) {
				t.Fatalf("%s: ReadChain: %v", name, err)
			}
		}
		if _, err := ReadChain(bytes.NewReader(want[:len(want)-1]), uint64(len(want)), 0); err == nil {
			t.Fatalf("%s: a stream one byte short accepted", name)
		}
		if _, err := ReadChain(bytes.NewReader(want), uint64(len(want))-1, 0); err == nil {
			t.Fatalf("%s: a length one short accepted", name)
		}
		for _, i := range []int{len(want) / 3, len(want) / 2, len(want) - 5} {
			x := bytes.Clone(want)
			x[i] ^= 0x01
			if _, err := ReadChain(bytes.NewReader(x), uint64(len(x)), 0); err == nil {
				t.Fatalf("%s: damaged byte %d accepted", name, i)
			}
		}
	}
}
