package command

import "github.com/probly/probly/internal/keyspace"

// KeyState is what a key holds, as a command of one family sees it.
type KeyState int

const (
	KeyMissing   KeyState = iota // no value
	KeyOK                        // a value of the family's type
	KeyWrongType                 // a value of another type (ErrWrongType)
)

// As returns v as a T and what the key holds: KeyMissing for nil (T's
// zero value), KeyOK when v is a T, KeyWrongType otherwise. It does not
// allocate.
func As[T keyspace.Value](v keyspace.Value) (T, KeyState) {
	var zero T
	if v == nil {
		return zero, KeyMissing
	}
	if t, ok := v.(T); ok {
		return t, KeyOK
	}
	return zero, KeyWrongType
}

// View runs fn on the T at key under the key's read lock
// (keyspace.Store.View), answering notFound when the key is missing and
// ErrWrongType when it holds another type; it reports whether fn ran.
func View[T keyspace.Value](c *Ctx, key []byte, notFound string, fn func(T)) bool {
	status := ""
	c.Store.View(key, func(v keyspace.Value) {
		switch t, st := As[T](v); st {
		case KeyMissing:
			status = notFound
		case KeyWrongType:
			status = ErrWrongType
		default:
			fn(t)
		}
	})
	if status != "" {
		c.R.Error(status)
		return false
	}
	return true
}

// Update runs fn in a write transaction on key (keyspace.Store.Update)
// and does the bookkeeping that follows every write: it raises c.Seq to
// the AOF sequence number written (the server waits for it before
// replying) and answers the failure, if any — the error reply fn returned
// (non-empty: nothing is logged after it), else a logging failure
// (LogFailed). It reports whether there was none; the caller then writes
// its reply. It allocates nothing itself.
func (c *Ctx) Update(key []byte, fn func(tx *keyspace.Txn) (status string)) bool {
	status := ""
	seq, err := c.Store.Update(key, func(tx *keyspace.Txn) { status = fn(tx) })
	return c.settle(seq, err, status)
}

// settle is the bookkeeping after a write (Update, UpdateKeys): it raises
// c.Seq to seq and answers status, else err; it reports neither.
func (c *Ctx) settle(seq uint64, err error, status string) bool {
	c.Seq = max(c.Seq, seq)
	switch {
	case status != "":
		c.R.Error(status)
		return false
	case err != nil:
		c.LogFailed(err)
		return false
	}
	return true
}

// Load stores v, decoded from a state record `rec key <encoding>`
// (c.Args[1] and c.Args[2]), under the key, as the sketch families' load
// records do (a MERGE logged as its result): it reserves the value's
// memory (answering oom if refused), answers WRONGTYPE for a key holding
// another type, replaces a key of type T, logs the record again and
// answers OK.
func Load[T keyspace.Value](c *Ctx, rec []byte, v T, oom string) {
	key := c.Args[1]
	if !c.Reserve(uint64(len(key)) + v.MemoryUsage()) {
		c.R.Error(oom)
		return
	}
	if c.Update(key, func(tx *keyspace.Txn) string {
		if _, st := As[T](tx.Value); st == KeyWrongType {
			return ErrWrongType
		}
		tx.Set(v)
		_ = tx.Log(rec, key, c.Args[2])
		return ""
	}) {
		c.R.OK()
	}
}
