package command_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/resp"
	"github.com/probly/probly/internal/strval"
)

type otherValue struct{}

func (otherValue) TypeName() string      { return "other" }
func (otherValue) MemoryUsage() uint64   { return 1 }
func (otherValue) Clone() keyspace.Value { return otherValue{} }

// TestAsViewUpdate: As tells missing, right and wrong types apart; View
// answers the missing and wrong-type errors itself; Update answers the
// status fn returns, else a logging failure, raises Seq to what it wrote
// and leaves the success reply to its caller.
func TestAsViewUpdate(t *testing.T) {
	s := &strval.String{B: []byte("v")}
	if v, st := command.As[*strval.String](nil); v != nil || st != command.KeyMissing {
		t.Errorf("As(nil) = %v, %v", v, st)
	}
	if v, st := command.As[*strval.String](s); v != s || st != command.KeyOK {
		t.Errorf("As(string) = %v, %v", v, st)
	}
	if v, st := command.As[*strval.String](otherValue{}); v != nil || st != command.KeyWrongType {
		t.Errorf("As(other) = %v, %v", v, st)
	}

	log := &commandtest.Logger{}
	store := keyspace.New(log)
	var buf bytes.Buffer
	w := resp.NewWriter(&buf)
	c := &command.Ctx{R: resp.New(w, 2), Store: store}
	reply := func() string {
		t.Helper()
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		buf.Reset()
		return out
	}
	store.Update([]byte("s"), func(tx *keyspace.Txn) { tx.Set(s) })
	store.Update([]byte("o"), func(tx *keyspace.Txn) { tx.Set(otherValue{}) })

	var seen []byte
	for _, tc := range []struct {
		key, reply string
		ran        bool
	}{{"s", "", true}, {"o", "-" + command.ErrWrongType + "\r\n", false}, {"none", "-ERR nope\r\n", false}} {
		seen = nil
		ran := command.View(c, []byte(tc.key), "ERR nope", func(v *strval.String) { seen = v.B })
		if got := reply(); ran != tc.ran || got != tc.reply || (ran && string(seen) != "v") {
			t.Errorf("View(%s) = %v, %q, saw %q", tc.key, ran, got, seen)
		}
	}

	set := func(tx *keyspace.Txn) string {
		_ = tx.Log([]byte("SET"), tx.Key, []byte("x"))
		tx.Set(&strval.String{B: []byte("x")})
		return ""
	}
	c.Seq = 0
	if !c.Update([]byte("a"), set) || reply() != "" || c.Seq != 1 {
		t.Errorf("a successful Update: seq %d", c.Seq)
	}
	c.Seq = 5
	if !c.Update([]byte("b"), set) || c.Seq != 5 {
		t.Errorf("Update lowered Seq to %d", c.Seq)
	}
	c.Seq = 0
	if c.Update([]byte("a"), func(*keyspace.Txn) string { return "ERR status" }) || reply() != "-ERR status\r\n" || c.Seq != 0 {
		t.Errorf("Update with a status: seq %d", c.Seq)
	}
	log.SetFail(errors.New("disk full"))
	if c.Update([]byte("c"), set) || reply() != "-ERR disk full\r\n" {
		t.Error("a logging failure is not answered")
	}
	log.SetFail(nil)
	if n := len(log.Records()); n != 2 {
		t.Errorf("%d records logged, want 2", n)
	}
	key := []byte("s")
	if a := testing.AllocsPerRun(100, func() { c.Update(key, func(tx *keyspace.Txn) string { return "" }) }); a != 0 {
		t.Errorf("Update allocates %v times", a)
	}
	if a := testing.AllocsPerRun(100, func() {
		command.View(c, key, "ERR nope", func(v *strval.String) { seen = v.B })
	}); a != 0 {
		t.Errorf("View allocates %v times", a)
	}
}
