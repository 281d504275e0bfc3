package tdigest

import (
	"bytes"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/argparse"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/tdigest"
)

var tokOverride = []byte("OVERRIDE")

// mergeOptions parses what follows MERGE's sources (spec §3.1 step 4):
// the first COMPRESSION and OVERRIDE tokens, anywhere, in any order.
func mergeOptions(c *command.Ctx, rest [][]byte) (comp int64, override bool, ok bool) {
	if len(rest) == 0 {
		return 0, false, true
	}
	ci, oi := -1, -1
	for i, a := range rest {
		if ci < 0 && bytes.EqualFold(a, tokComp) {
			ci = i
		}
		if oi < 0 && bytes.EqualFold(a, tokOverride) {
			oi = i
		}
	}
	if ci < 0 && oi < 0 {
		c.R.Error(errKeyword)
		return 0, false, false
	}
	if ci >= 0 {
		if ci == len(rest)-1 {
			arity(c, "tdigest.merge")
			return 0, false, false
		}
		var e string
		if comp, e = parseCompression(rest[ci+1]); e != "" {
			c.R.Error(e)
			return 0, false, false
		}
	}
	return comp, oi >= 0, true
}

// keyStatus returns the digest at key (nil when missing) and the key
// error, if any, under the read lock. It does not copy the digest.
func keyStatus(c *command.Ctx, key []byte) (compression int, exists bool, status string) {
	c.Store.View(key, func(v keyspace.Value) {
		switch t, st := command.As[*Value](v); st {
		case command.KeyWrongType:
			status = command.ErrWrongType
		case command.KeyOK:
			compression, exists = t.D.Compression(), true
		}
	})
	return
}

// compressed compresses the digest at key (logging it when that changed
// it, as a read does) and returns a copy; "" status unless the key is
// missing or of another type.
func compressed(c *command.Ctx, key []byte) (*tdigest.Digest, bool) {
	var cp *tdigest.Digest
	ok := write(c, key, func(tx *keyspace.Txn, d *tdigest.Digest) string {
		before := d.Stats().Compressions
		d.Compress()
		if d.Stats().Compressions != before {
			_ = tx.Log(recCompress, key)
		}
		cp = d.Clone()
		return ""
	})
	return cp, ok
}

// TDIGEST.MERGE destination numkeys source [source …] [COMPRESSION c] [OVERRIDE]
//
// The checks run in RedisBloom's order (spec §3.1); then every source is
// compressed in place, as RedisBloom does (logged like a read), and
// copied; the result is a fresh digest built from the copies and installed
// under the destination, logged as its whole state (_TDIGEST.LOAD).
func (h *handlers) merge(c *command.Ctx) {
	args := c.Args
	dest := args[1]
	destComp, destExists, st := keyStatus(c, dest)
	if st != "" {
		c.R.Error(st)
		return
	}
	numkeys, ok := argparse.Int(args[2])
	switch {
	case !ok:
		c.R.Error(errParseNumkeys)
		return
	case numkeys <= 0:
		c.R.Error(errNumkeysPos)
		return
	case numkeys > int64(len(args)-3):
		arity(c, "tdigest.merge")
		return
	}
	srcs := args[3 : 3+numkeys]
	comp, override, ok := mergeOptions(c, args[3+numkeys:])
	if !ok {
		return
	}
	maxComp := 0
	for _, s := range srcs {
		sc, exists, st := keyStatus(c, s)
		if st == "" && !exists {
			st = errNotExist
		}
		if st != "" {
			c.R.Error(st)
			return
		}
		maxComp = max(maxComp, sc)
	}
	switch {
	case comp > 0:
	case override || !destExists:
		comp = int64(maxComp)
	default:
		comp = int64(destComp)
	}
	if !reserve(c, dest, comp) {
		c.R.Error(errAllocDest)
		return
	}
	// Compress and copy each distinct input once (a digest is the same
	// however often it is named), the destination first when it counts.
	copies := map[string]*tdigest.Digest{}
	var inputs []*tdigest.Digest
	get := func(key []byte) bool {
		d, seen := copies[string(key)]
		if !seen {
			if d, ok = compressed(c, key); !ok {
				return false
			}
			copies[string(key)] = d
		}
		inputs = append(inputs, d)
		return true
	}
	if destExists && !override && !get(dest) {
		return
	}
	for _, s := range srcs {
		if !get(s) {
			return
		}
	}
	out, err := tdigest.MergeAll(int(comp), inputs...)
	if err != nil {
		c.R.Error(errOverflow)
		return
	}
	enc, _ := out.MarshalBinary()
	if c.Update(dest, func(tx *keyspace.Txn) string {
		if _, st := command.As[*Value](tx.Value); st == command.KeyWrongType {
			return command.ErrWrongType
		}
		tx.Set(&Value{D: out})
		_ = tx.Log(recLoad, dest, enc)
		return ""
	}) {
		c.R.OK()
	}
}
