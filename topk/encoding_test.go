package topk

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"testing"

	"github.com/probly/probly/internal/binfmt"
)

// busy returns a small sketch with collisions, decays, an empty item, an
// item with a NUL and a free heap slot.
func busy(t testing.TB) *Sketch {
	s, err := NewWithConfig(Config{K: 6, Width: 4, Depth: 3, Decay: 0.8, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	s.Add([]byte(""))
	s.Add([]byte("a\x00b"))
	s.AddN([]byte("zero"), 0)
	return s
}

func feed(s *Sketch, seed int64, n int) {
	r := rand.New(rand.NewSource(seed))
	for range n {
		s.AddN([]byte(fmt.Sprint(r.Intn(40))), uint32(r.Intn(3)))
	}
}

func enc(t testing.TB, s *Sketch) []byte {
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A decoded sketch is the same sketch: same bytes, and it continues the
// same way (the generator state travels with it).
func TestEncodingRoundTrip(t *testing.T) {
	s := busy(t)
	feed(s, 1, 500)
	b := enc(t, s)
	var d Sketch
	if err := d.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc(t, &d), b) {
		t.Fatal("re-encoding differs")
	}
	var r Sketch
	n, err := r.ReadFrom(bytes.NewReader(append(b, "extra"...)))
	if err != nil || n != int64(len(b)) {
		t.Fatalf("ReadFrom = %d, %v; want %d, nil", n, err, len(b))
	}
	var w bytes.Buffer
	if _, err := s.WriteTo(&w); err != nil || !bytes.Equal(w.Bytes(), b) {
		t.Fatalf("WriteTo differs (%v)", err)
	}
	feed(s, 2, 500)
	feed(&d, 2, 500)
	feed(&r, 2, 500)
	if !bytes.Equal(enc(t, s), enc(t, &d)) || !bytes.Equal(enc(t, s), enc(t, &r)) {
		t.Fatal("decoded sketches diverge from the original after the same adds")
	}
	if s.Stats().N == 0 || s.Stats().N != d.Stats().N {
		t.Fatalf("N %d vs %d", s.Stats().N, d.Stats().N)
	}
	if app, _ := s.AppendBinary([]byte("xy")); !bytes.Equal(app[2:], enc(t, s)) {
		t.Fatal("AppendBinary differs from MarshalBinary")
	}
}

// Every truncation and every flipped byte is an error, and the receiver is
// unchanged.
func TestEncodingCorrupt(t *testing.T) {
	s := busy(t)
	feed(s, 3, 100)
	b := enc(t, s)
	keep := busy(t)
	before := enc(t, keep)
	for i := range len(b) {
		if err := keep.UnmarshalBinary(b[:i]); err == nil {
			t.Fatalf("truncation at %d accepted", i)
		}
		c := bytes.Clone(b)
		c[i] ^= 0x40
		if err := keep.UnmarshalBinary(c); err == nil {
			t.Fatalf("flip at %d accepted", i)
		}
	}
	if !bytes.Equal(enc(t, keep), before) {
		t.Fatal("a failed decode changed the receiver")
	}
	if err := keep.UnmarshalBinary(append(b, 0)); !errors.Is(err, ErrFormat) {
		t.Fatalf("trailing byte: %v", err)
	}
	if err := keep.UnmarshalBinary(b[:10]); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short: %v", err)
	}
}

// reseal rewrites both CRCs after an edit, so that the field checks are
// what rejects it.
func reseal(b []byte) []byte {
	le := binary.LittleEndian
	le.PutUint32(b[headerLen-4:], binfmt.CRC(b[:headerLen-4]))
	le.PutUint32(b[len(b)-4:], binfmt.CRC(b[headerLen:len(b)-4]))
	return b
}

func TestEncodingFields(t *testing.T) {
	s := busy(t)
	b := enc(t, s)
	le := binary.LittleEndian
	slot0 := headerLen + 8*4*3 // first heap slot
	cases := []struct {
		name string
		edit func(b []byte)
		want error
	}{
		{"version", func(b []byte) { b[4] = 2 }, ErrVersion},
		{"kind", func(b []byte) { b[5] = byte(binfmt.KindCuckoo) }, ErrFormat},
		{"hash ID", func(b []byte) { le.PutUint16(b[6:], 1) }, ErrFormat},
		{"k 0", func(b []byte) { le.PutUint32(b[8:], 0) }, ErrFormat},
		{"width 0", func(b []byte) { le.PutUint32(b[12:], 0) }, ErrFormat},
		{"depth huge", func(b []byte) { le.PutUint32(b[16:], 1<<31) }, ErrFormat},
		{"reserved", func(b []byte) { b[20] = 1 }, ErrFormat},
		{"decay 0", func(b []byte) { le.PutUint64(b[24:], 0) }, ErrFormat},
		{"decay 2", func(b []byte) { le.PutUint64(b[24:], 0x4000000000000000) }, ErrFormat},
		{"body short of k", func(b []byte) { le.PutUint32(b[8:], 1000) }, ErrFormat},
		{"fingerprint", func(b []byte) { b[slot0+4] ^= 1 }, ErrFormat},
		{"empty slot count", func(b []byte) {
			// slots are in heap order; find an empty one
			for off, i := slot0, 0; i < 6; i++ {
				n := le.Uint32(b[off+8:])
				if n == emptyLen {
					le.PutUint32(b[off:], 1)
					return
				}
				off += 12 + int(n)
			}
			panic("no empty slot")
		}, ErrFormat},
		{"item length", func(b []byte) { le.PutUint32(b[slot0+8:], 1<<20) }, ErrFormat},
	}
	for _, c := range cases {
		d := reseal(bytes.Clone(b))
		c.edit(d)
		reseal(d)
		var x Sketch
		if err := x.UnmarshalBinary(d); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if _, err := x.ReadFrom(bytes.NewReader(d)); !errors.Is(err, c.want) {
			t.Errorf("%s ReadFrom: %v, want %v", c.name, err, c.want)
		}
	}
}

func TestEncodingDuplicateItem(t *testing.T) {
	s, _ := NewWithConfig(Config{K: 2, Width: 8, Depth: 1, Decay: 1})
	s.Add([]byte("a"))
	s.Add([]byte("b"))
	b := enc(t, s)
	// make the second slot's item "a" as well
	i := bytes.LastIndex(b, []byte("b"))
	b[i] = 'a'
	off := i - 12
	binary.LittleEndian.PutUint32(b[off+4:], fingerprint([]byte("a")))
	var x Sketch
	if err := x.UnmarshalBinary(reseal(b)); !errors.Is(err, ErrFormat) {
		t.Fatalf("duplicate heap item: %v", err)
	}
}

func TestPeekKind(t *testing.T) {
	if k, err := binfmt.PeekKind(enc(t, busy(t))); err != nil || k != binfmt.KindTopK || k.String() != "topk" {
		t.Fatalf("PeekKind = %v, %v", k, err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{K: 0, Width: 1, Depth: 1, Decay: 1},
		{K: 1, Width: 0, Depth: 1, Decay: 1},
		{K: 1, Width: 1, Depth: 0, Decay: 1},
		{K: 1, Width: 1, Depth: 1, Decay: 0},
		{K: 1, Width: 1, Depth: 1, Decay: 1.0000001},
	} {
		if _, err := NewWithConfig(c); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if _, err := NewWithConfig(Config{K: 1, Width: 1 << 20, Depth: 1 << 20, Decay: 1}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("2^40 buckets: %v", err)
	}
	if _, err := New(1 << 30); !errors.Is(err, ErrTooLarge) {
		t.Errorf("New(2^30): %v", err)
	}
	if _, err := New(0); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("New(0): %v", err)
	}
}

func TestZeroPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("zero Sketch did not panic")
		}
	}()
	var s Sketch
	s.Add([]byte("x"))
}

func TestReset(t *testing.T) {
	s := busy(t)
	fresh := enc(t, busy(t))
	feed(s, 5, 200)
	s.Reset()
	s.Add([]byte(""))
	s.Add([]byte("a\x00b"))
	s.AddN([]byte("zero"), 0)
	if !bytes.Equal(enc(t, s), fresh) {
		t.Fatal("Reset did not restore the initial state")
	}
}

// The counters Stats reads are kept exactly by AddN, Reset and the decoder.
func TestStatsCounters(t *testing.T) {
	check := func(s *Sketch) {
		t.Helper()
		var set, items, ib uint64
		for _, b := range s.buckets {
			if b.count > 0 {
				set++
			}
		}
		for _, h := range s.heap {
			if h.item != nil {
				items++
				ib += uint64(len(h.item))
			}
		}
		st := s.Stats()
		if st.SetBits != set || st.Heap != items || st.Bytes != Bytes(s.cfg.K, s.cfg.Width, s.cfg.Depth)+ib {
			t.Fatalf("Stats %+v, recomputed set %d heap %d item bytes %d", st, set, items, ib)
		}
	}
	s := busy(t)
	check(s)
	feed(s, 9, 300)
	check(s)
	var d Sketch
	if err := d.UnmarshalBinary(enc(t, s)); err != nil {
		t.Fatal(err)
	}
	check(&d)
	s.Reset()
	check(s)
}
