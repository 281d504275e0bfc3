package cms

import (
	"fmt"
	"sync/atomic"

	"github.com/probly/probly/cms"
	"github.com/probly/probly/internal/keyspace"
)

// TypeName is what TYPE answers for a count-min sketch (RedisBloom's
// module type name).
const TypeName = "CMSk-TYPE"

// valueOverhead is the heap a Value takes besides its counters: the
// Value, the cms.Sketch and its slice header, rounded up.
const valueOverhead = 96

// Value is a CMS key: a cms.Sketch with RedisBloom's hashing (HashMurmur2,
// seed 0), so its counters equal RedisBloom's for the same commands.
type Value struct {
	S     *cms.Sketch
	cells uint64 // S's Width·Depth, for MemoryUsage (read after every write)
	// gen changes with every write (a number no other value has had):
	// CMS.MERGE tells by it whether its destination changed while it read
	// it as a source. A clone (copy-on-write for snapshots) keeps it.
	gen uint64
}

// gens numbers the generations of all values.
var gens atomic.Uint64

func wrap(s *cms.Sketch) *Value { return &Value{S: s, cells: s.Stats().M, gen: gens.Add(1)} }

// touch marks a write to v (under its key's write lock).
func (v *Value) touch() { v.gen = gens.Add(1) }

func newValue(width uint64, depth uint32) (*Value, error) {
	s, err := cms.NewWithConfig(cms.Config{Width: width, Depth: depth, Hash: cms.HashMurmur2})
	if err != nil {
		return nil, err
	}
	return wrap(s), nil
}

// TypeName implements keyspace.Value.
func (v *Value) TypeName() string { return TypeName }

// MemoryUsage implements keyspace.Value: the counters (4 bytes each) and
// the fixed overhead.
func (v *Value) MemoryUsage() uint64 { return memoryUsage(v.cells) }

func memoryUsage(cells uint64) uint64 { return valueOverhead + 4*cells }

// Clone implements keyspace.Value.
func (v *Value) Clone() keyspace.Value {
	c := wrap(v.S.Clone())
	c.gen = v.gen
	return c
}

// MarshalBinary is the snapshot (and _CMS.LOAD) payload: the cms
// package's encoding (docs/FORMATS.md, "Count-min sketch").
func (v *Value) MarshalBinary() ([]byte, error) { return v.S.MarshalBinary() }

// Unmarshal decodes a snapshot payload (app.Decode). Only sketches with
// the server's hashing are accepted. The decoder allocates only what data
// backs.
func Unmarshal(data []byte) (*Value, error) {
	var s cms.Sketch
	if err := s.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	if st := s.Stats(); st.Hash != cms.HashMurmur2 || st.Seed != 0 {
		return nil, fmt.Errorf("cms: server sketch with hash %v seed %d, want %v seed 0", st.Hash, st.Seed, cms.HashMurmur2)
	}
	return wrap(&s), nil
}
