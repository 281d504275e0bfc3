package guard

import "context"

// Op is the kind of a Change.
type Op uint8

// Change kinds.
const (
	OpAdd    Op = 1 // the key now exists in the system of record
	OpDelete Op = 2 // the key no longer exists
)

// String returns "add", "delete", or "unknown" for any other value.
func (o Op) String() string {
	switch o {
	case OpAdd:
		return "add"
	case OpDelete:
		return "delete"
	}
	return "unknown"
}

// Change is one committed change of the system of record, as the change
// stream delivers it.
type Change struct {
	// Pos is the change's position in the stream. Positions increase
	// strictly along the stream (gaps are allowed, as in a JetStream stream
	// that also holds other subjects). A position must be assigned no
	// earlier than the commit it describes (publish after commit, or an
	// outbox written in the same transaction).
	Pos uint64
	Op  Op
	// Key is the key that was added or deleted. The Guard does not modify
	// it; it must stay valid after the Next call that returned it.
	Key []byte
	// Pending is the number of changes the stream held after this one when
	// it was delivered: 0 means the subscriber has reached the head. The
	// Guard reports it as the change-stream lag.
	Pending uint64
}

// Snapshot yields the keys of the system of record at one consistent point
// and the stream position that point corresponds to.
type Snapshot interface {
	// Scan calls fn for every key present at the snapshot point and returns
	// the stream position pos of that point: the scan reflects every change
	// at or before pos. An error from fn aborts the scan and is returned.
	//
	// With a filter that cannot delete (Bloom), the scan may also reflect
	// some changes after pos (a "fuzzy" snapshot, for example: read the
	// stream head, then scan the table without a transaction): re-applying
	// an add is harmless and a delete is not applied to the filter anyway.
	// With a filter that deletes (cuckoo) the scan must reflect exactly the
	// changes up to pos: a delete applied twice could remove another key.
	Scan(ctx context.Context, fn func(key []byte) error) (pos uint64, err error)
}

// SnapshotFunc adapts a function to Snapshot.
type SnapshotFunc func(ctx context.Context, fn func(key []byte) error) (uint64, error)

// Scan calls f.
func (f SnapshotFunc) Scan(ctx context.Context, fn func(key []byte) error) (uint64, error) {
	return f(ctx, fn)
}

// Stream is the change stream of the system of record.
type Stream interface {
	// Subscribe starts delivering, in position order and without gaps,
	// every change with a position after `after`. pending is the number of
	// such changes already in the stream (0: the subscriber starts at the
	// head). The subscription ends when ctx ends or Close is called.
	Subscribe(ctx context.Context, after uint64) (sub Subscription, pending uint64, err error)
}

// Subscription delivers changes in order. Next and Close are called from
// one goroutine at a time, except that Close may interrupt a blocked Next.
type Subscription interface {
	// Next blocks until the next change arrives, ctx ends or the
	// subscription fails. After an error the Guard closes the subscription
	// and subscribes again after the last change it applied.
	Next(ctx context.Context) (Change, error)
	Close() error
}
