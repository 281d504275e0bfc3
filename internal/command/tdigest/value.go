package tdigest

import (
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/tdigest"
)

// TypeName is what TYPE answers for a t-digest key (RedisBloom's module
// type name).
const TypeName = "TDIS-TYPE"

// valueOverhead is the Go memory of a Value and its Digest beyond the
// node array.
const valueOverhead = 128

// Value is a t-digest stored under a key.
type Value struct{ D *tdigest.Digest }

// TypeName implements keyspace.Value.
func (v *Value) TypeName() string { return TypeName }

// MemoryUsage implements keyspace.Value: the node array as allocated now
// (it grows up to 16·capacity bytes) and the fixed overhead.
func (v *Value) MemoryUsage() uint64 { return valueOverhead + v.D.Stats().Bytes }

// Clone implements keyspace.Value.
func (v *Value) Clone() keyspace.Value { return &Value{D: v.D.Clone()} }

// MarshalBinary is the snapshot form: the digest's PRBL encoding, its
// whole state (buffer included), so a restart answers bit-identically.
func (v *Value) MarshalBinary() ([]byte, error) { return v.D.MarshalBinary() }

// Decode is the snapshot decoder of TypeName (internal/app.Decode). It
// allocates only what data backs.
func Decode(data []byte) (keyspace.Value, error) {
	var d tdigest.Digest
	if err := d.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	return &Value{D: &d}, nil
}

// fullBytes is the memory of a digest of compression c once its node
// array is full: what creating one may grow to.
func fullBytes(c int) uint64 {
	return valueOverhead + uint64(tdigest.Capacity(c))*tdigest.NodeBytes
}
