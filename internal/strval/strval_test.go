package strval

import (
	"bytes"
	"testing"
)

func TestAppendBinary(t *testing.T) {
	s := New([]byte("value"))
	m, _ := s.MarshalBinary()
	a, err := s.AppendBinary([]byte("pre-"))
	if err != nil || string(a) != "pre-"+string(m) {
		t.Fatalf("AppendBinary %q, %v; MarshalBinary %q", a, err, m)
	}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf, _ = s.AppendBinary(buf[:0]) }); n != 0 {
		t.Errorf("AppendBinary into a large enough buffer: %v allocations", n)
	}
	if !bytes.Equal(buf, m) {
		t.Fatalf("%q", buf)
	}
}
