// Package codec is the registry of value decoders by keyspace type name
// (the TYPE reply: "MBbloom--", "MBbloomCF", "string", …). Snapshot
// loading (internal/app.Decode) and RESTORE decode through it, so a new
// value type registers its decoder once and both paths know it.
//
// A value's encoding is its MarshalBinary (the snapshot record); the
// decoder is its inverse and must validate its input completely, return
// an error for anything malformed (never panic) and allocate no more
// than the input backs or the budget allows.
//
// Concurrency: register at start-up (package init or before the server
// starts); Lookup is safe for concurrent use once registration is done.
package codec

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/probly/probly/internal/keyspace"
)

// ErrUnknownType reports a type name nothing registered.
var ErrUnknownType = errors.New("codec: unknown type")

// Decoder decodes one registered type.
type Decoder struct {
	// Decode turns data (the value's MarshalBinary) back into a value.
	// budget bounds the value's MemoryUsage and growth where the type has
	// a per-value budget; 0 means the largest the type allows (snapshot
	// loading and log replay, whose values were accepted when written).
	Decode func(data []byte, budget uint64) (keyspace.Value, error)
	// Read, if not nil, decodes the same encoding from r, which yields
	// exactly n bytes of it, in place: it allocates the value once and
	// streams the rest into it in bounded pieces, leaving the pages of
	// all-zero pieces untouched, so loading a large value never holds
	// the encoding and the value at once. It validates as Decode does,
	// reads exactly n bytes when it succeeds, and returns r's errors
	// wrapped. Snapshot loading (internal/persist) uses it for values
	// larger than a few pieces.
	Read func(r io.Reader, n, budget uint64) (keyspace.Value, error)
	// BudgetParam names the CONFIG parameter holding the per-value byte
	// budget that applies to a value arriving from a client (RESTORE), or
	// "" if the type has none.
	BudgetParam string
	// MaxSize is the longest encoding any valid value of the type has, in
	// bytes, or 0 if the type has no fixed bound (the memory available
	// bounds it). A loader refuses a larger value before it allocates
	// anything for it: a snapshot's sparse body stores zero runs in a
	// few bytes, so its size field is not backed by the file.
	MaxSize uint64
}

var (
	mu  sync.RWMutex
	reg = map[string]Decoder{}
)

// Register adds (or replaces) the decoder of typeName.
func Register(typeName string, d Decoder) {
	mu.Lock()
	defer mu.Unlock()
	reg[typeName] = d
}

// Lookup returns the decoder of typeName.
func Lookup(typeName string) (Decoder, bool) {
	mu.RLock()
	defer mu.RUnlock()
	d, ok := reg[typeName]
	return d, ok
}

// Decode decodes data as typeName's value with the largest budget (0):
// the snapshot path. An unregistered name is ErrUnknownType.
func Decode(typeName string, data []byte) (keyspace.Value, error) {
	d, ok := Lookup(typeName)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownType, typeName)
	}
	return d.Decode(data, 0)
}
