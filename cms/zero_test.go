package cms

import (
	"bytes"
	"strings"
	"testing"
)

// Every method of the zero Sketch panics with a message naming the
// constructors; decoding into a zero Sketch works.
func TestZeroSketch(t *testing.T) {
	key := []byte("k")
	ok, _ := NewWithConfig(Config{Width: 10, Depth: 2})
	for name, f := range map[string]func(s *Sketch){
		"Add": func(s *Sketch) { s.Add(key) }, "AddN": func(s *Sketch) { s.AddN(key, 2) },
		"AddHash": func(s *Sketch) { s.AddHash(1, 2, 3) }, "Count": func(s *Sketch) { s.Count(key) },
		"CountHash": func(s *Sketch) { s.CountHash(1, 2) }, "Merge": func(s *Sketch) { _ = s.Merge(ok) },
		"MergeWeighted": func(s *Sketch) { _ = s.MergeWeighted([]*Sketch{ok}, []int64{1}) },
		"Reset":         func(s *Sketch) { s.Reset() }, "Stats": func(s *Sketch) { s.Stats() }, "Clone": func(s *Sketch) { s.Clone() },
		"MarshalBinary": func(s *Sketch) { _, _ = s.MarshalBinary() }, "AppendBinary": func(s *Sketch) { _, _ = s.AppendBinary(nil) },
		"WriteTo": func(s *Sketch) { _, _ = s.WriteTo(&bytes.Buffer{}) },
	} {
		func() {
			defer func() {
				if r, _ := recover().(string); !strings.Contains(r, "cms.New") {
					t.Errorf("%s on the zero Sketch: panic %q", name, r)
				}
			}()
			f(new(Sketch))
		}()
	}
	enc, _ := ok.MarshalBinary()
	var z Sketch
	if err := z.UnmarshalBinary(enc); err != nil || z.Stats() != ok.Stats() {
		t.Fatalf("decoding into a zero Sketch: %v", err)
	}
}
