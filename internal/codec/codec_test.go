package codec

import (
	"errors"
	"testing"

	"github.com/probly/probly/internal/keyspace"
)

type val struct{ b []byte }

func (v *val) TypeName() string      { return "test-type" }
func (v *val) MemoryUsage() uint64   { return uint64(len(v.b)) }
func (v *val) Clone() keyspace.Value { return &val{b: append([]byte(nil), v.b...)} }

func TestRegistry(t *testing.T) {
	if _, err := Decode("no-such-type", nil); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("unknown type: %v", err)
	}
	var gotBudget uint64 = 99
	Register("test-type", Decoder{BudgetParam: "p", Decode: func(data []byte, budget uint64) (keyspace.Value, error) {
		gotBudget = budget
		return &val{b: data}, nil
	}})
	d, ok := Lookup("test-type")
	if !ok || d.BudgetParam != "p" {
		t.Fatalf("Lookup: %v %+v", ok, d)
	}
	v, err := Decode("test-type", []byte("xy"))
	if err != nil || v.MemoryUsage() != 2 || gotBudget != 0 {
		t.Fatalf("Decode: %v %v budget %d", v, err, gotBudget)
	}
}
