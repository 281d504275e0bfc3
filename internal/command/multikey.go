package command

import "github.com/probly/probly/internal/keyspace"

// UpdateKeys is Update for a command that changes several keys as one
// step (RENAME, COPY, MSET …): fn runs with one transaction per key under
// all their shard locks at once (keyspace.Store.UpdateKeys), and the
// bookkeeping is Update's: c.Seq is raised to the sequence written, a
// non-empty status from fn is the error reply, else a logging failure is
// answered. It reports whether there was neither.
func (c *Ctx) UpdateKeys(keys [][]byte, fn func(txs []*keyspace.Txn) (status string)) bool {
	status := ""
	seq, err := c.Store.UpdateKeys(keys, func(txs []*keyspace.Txn) { status = fn(txs) })
	return c.settle(seq, err, status)
}
