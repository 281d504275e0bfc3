package topk

import (
	"encoding/hex"
	"testing"
)

// The test vector of docs/FORMATS.md, "Top-k sketch".
const formatVector = "5052424c0108060002000000020000000100000000000000000000000000f03f" +
	"0000000000000000010000000000000000000000000000002900000000000000cc8e0409" +
	"17f53cf20100000000000000000000000000000000000000ffffffff0100000017f53cf2" +
	"0100000061226e32f9"

func TestFormatVector(t *testing.T) {
	s, _ := NewWithConfig(Config{K: 2, Width: 2, Depth: 1, Decay: 1})
	s.Add([]byte("a"))
	if got := hex.EncodeToString(enc(t, s)); got != formatVector {
		t.Fatalf("encoding\n%s\nwant\n%s", got, formatVector)
	}
	b, _ := hex.DecodeString(formatVector)
	var d Sketch
	if err := d.UnmarshalBinary(b); err != nil || !d.Query([]byte("a")) || d.Count([]byte("a")) != 1 {
		t.Fatalf("decode: %v", err)
	}
}
