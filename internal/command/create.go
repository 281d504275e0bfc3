package command

import "github.com/probly/probly/internal/keyspace"

// Key-status replies shared by the RedisBloom families.
const (
	ErrWrongType  = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrItemExists = "ERR item exists"
)

// Creator describes a value that a create command (BF.RESERVE, CF.RESERVE
// and their internal _CREATE records) installs under a new key.
type Creator struct {
	// TypeName is the TYPE of the value to create; an existing key of this
	// type answers ErrItemExists, of another type ErrWrongType.
	TypeName string
	// Size returns the bytes the value will take, to reserve against
	// maxmemory before it is allocated; ok=false when the parameters are
	// invalid (Build then reports the error, and nothing is reserved).
	Size func() (n uint64, ok bool)
	// Build allocates the value; its error text is the reply.
	Build func() (keyspace.Value, error)
	// Record is the canonical AOF record of the creation.
	Record [][]byte
	// NoRoom is the reply when the value does not fit maxmemory's room
	// (or the memory the process can have): the family's own
	// insufficient-memory error; "" = ErrOOM.
	NoRoom string
}

// CreateKey installs the value described by cr under key unless the key
// exists, and answers +OK or the error. The key's status is checked first
// under a read lock; the value is reserved against maxmemory (Creator.NoRoom) and
// built outside any lock, then installed and logged under the write lock
// after checking the status again (another client may have created the key
// in between). A logging failure answers "ERR <error>" (the value stays in
// memory; the log refuses further writes). Sets c.Seq.
func CreateKey(c *Ctx, key []byte, cr Creator) {
	status := func(v keyspace.Value) string {
		switch {
		case v == nil:
			return ""
		case v.TypeName() == cr.TypeName:
			return ErrItemExists
		default:
			return ErrWrongType
		}
	}
	var st string
	c.Store.View(key, func(v keyspace.Value) { st = status(v) })
	if st != "" {
		c.R.Error(st)
		return
	}
	if n, ok := cr.Size(); ok && !c.Reserve(uint64(len(key))+n) {
		msg := cr.NoRoom
		if msg == "" {
			msg = ErrOOM
		}
		c.R.Error(msg)
		return
	}
	v, err := cr.Build()
	if err != nil {
		c.R.Error(err.Error())
		return
	}
	if c.Update(key, func(tx *keyspace.Txn) string {
		if st := status(tx.Value); st != "" {
			return st
		}
		tx.Set(v)
		_ = tx.Log(cr.Record...) // error returned by Update
		return ""
	}) {
		c.R.OK()
	}
}
