package bloom

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// refAddHash is SBChain_Add spelled out step by step (test every link,
// grow if the newest is full, then set): the reference for AddHash's
// one-pass path on a single link.
func refAddHash(s *Scalable, h1, h2 uint64) (bool, error) {
	for i := len(s.links) - 1; i >= 0; i-- {
		if s.links[i].Filter.TestHash(h1, h2) {
			return false, nil
		}
	}
	last := &s.links[len(s.links)-1]
	if last.Filter.items() >= last.Capacity {
		if s.cfg.Growth == 0 {
			return false, ErrFull
		}
		l, err := s.newLink(last.Capacity*s.cfg.Growth, max(last.ErrorRate*s.cfg.Tightening, s.cfg.MinErrorRate))
		if err != nil {
			return false, err
		}
		s.links = append(s.links, l)
		s.bytes += l.Filter.sizeBytes()
		last = &s.links[len(s.links)-1]
	}
	return last.Filter.addHash(h1, h2), nil
}

// TestAddHashMatchesReference: AddHash (with its one-pass single-link
// path) gives the reference's results, errors, links and bits, for a
// scaling chain that grows through several links and for a non-scaling
// filter that fills up, with many repeated items (including items that
// collide on all bits in a small filter).
func TestAddHashMatchesReference(t *testing.T) {
	for _, growth := range []uint64{0, 2} {
		cfg := ScalableConfig{Capacity: 50, ErrorRate: 0.05, Growth: growth}
		a, err := NewScalableWithConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewScalableWithConfig(cfg)
		r := rand.New(rand.NewPCG(9, growth))
		for i := range 20_000 {
			h1, h2 := r.Uint64N(3000), r.Uint64N(3000)
			got, gerr := a.addHash(h1, h2)
			want, werr := refAddHash(b, h1, h2)
			if got != want || (gerr == nil) != (werr == nil) || (werr != nil && !errors.Is(gerr, werr)) {
				t.Fatalf("growth %d, add %d: AddHash = %v, %v; reference %v, %v", growth, i, got, gerr, want, werr)
			}
		}
		if a.numLinks() != b.numLinks() || a.items() != b.items() {
			t.Fatalf("growth %d: %d links, N %d; reference %d links, N %d", growth, a.numLinks(), a.items(), b.numLinks(), b.items())
		}
		for i := range a.links {
			if !a.links[i].Filter.equal(b.links[i].Filter) {
				t.Fatalf("growth %d: link %d differs", growth, i)
			}
		}
		if growth != 0 && a.numLinks() < 3 {
			t.Fatalf("chain did not grow: %d links", a.numLinks())
		}
	}
}
