package topk

import (
	"bytes"
	"testing"
)

// FuzzUnmarshal: any input either fails to decode or decodes to a sketch
// that re-encodes to the same bytes and survives use; ReadFrom accepts what UnmarshalBinary accepts.
func FuzzUnmarshal(f *testing.F) {
	s := busy(f)
	feed(s, 7, 50)
	f.Add(enc(f, s))
	f.Add(enc(f, busy(f)))
	f.Add([]byte("PRBL\x01\x08"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var x Sketch
		err := x.UnmarshalBinary(data)
		var r Sketch
		_, rerr := r.ReadFrom(bytes.NewReader(data))
		if err != nil {
			return // ReadFrom may accept it: it ignores bytes after the encoding
		}
		if rerr != nil {
			t.Fatalf("ReadFrom refused what UnmarshalBinary accepted: %v", rerr)
		}
		if !bytes.Equal(enc(t, &x), data) {
			t.Fatal("re-encoding differs")
		}
		if x.Stats().M > 1<<16 {
			return
		}
		x.Add([]byte("fuzz"))
		x.List()
		x.Count([]byte("fuzz"))
	})
}
