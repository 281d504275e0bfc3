// Package strval is the server's plain string value: a binary-safe byte
// string, as Redis stores for SET/GET. Redis HyperLogLogs are such strings
// (spec §4.2), so the PF* commands read and write String values too.
package strval

import (
	"fmt"

	"github.com/probly/probly/internal/keyspace"
)

// TypeName is the TYPE reply for strings.
const TypeName = "string"

// MaxLen is the longest string a command may create (Redis's
// proto-max-bulk-len default, 512 MiB). SETRANGE/APPEND beyond it fail with
// "ERR string exceeds maximum allowed size (proto-max-bulk-len)".
const MaxLen = 512 << 20

// String is a binary-safe byte string. It is not safe for concurrent use;
// the key space's per-key lock guards it.
type String struct {
	B []byte
}

// New returns a String holding a copy of b.
func New(b []byte) *String { return &String{B: append([]byte(nil), b...)} }

// TypeName implements keyspace.Value.
func (s *String) TypeName() string { return TypeName }

// MemoryUsage implements keyspace.Value: the byte length plus a header.
func (s *String) MemoryUsage() uint64 { return uint64(cap(s.B)) + 24 }

// Clone implements keyspace.Value.
func (s *String) Clone() keyspace.Value { return New(s.B) }

// MarshalBinary returns the raw bytes (the snapshot record of a string).
func (s *String) MarshalBinary() ([]byte, error) { return append([]byte(nil), s.B...), nil }

// AppendBinary appends MarshalBinary's bytes to b (encoding.BinaryAppender),
// so that a snapshot writer reuses one buffer for every string.
func (s *String) AppendBinary(b []byte) ([]byte, error) { return append(b, s.B...), nil }

// Unmarshal decodes a snapshot record. Any byte string is valid, up to
// MaxLen bytes.
func Unmarshal(data []byte) (*String, error) {
	if len(data) > MaxLen {
		return nil, fmt.Errorf("strval: string of %d bytes exceeds %d", len(data), MaxLen)
	}
	return New(data), nil
}
