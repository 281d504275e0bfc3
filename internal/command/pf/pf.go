// Package pf implements Redis's HyperLogLog commands PFADD, PFCOUNT,
// PFMERGE, PFDEBUG and PFSELFTEST, and the hll-sparse-max-bytes setting,
// byte-exact to spec redis-compat.md §4 on top of the public hll package.
//
// An HLL is an ordinary string value (*strval.String): the PF commands read
// and write the exact bytes Redis would hold, so GET/SET/SETRANGE (package
// str) see them and HLLs move between Redis and probly with GET/SET.
// Corrupted or crafted strings are answered as Redis does ("WRONGTYPE Key is
// not a valid HyperLogLog string value.", "INVALIDOBJ Corrupted HLL object
// detected"), never with a crash.
//
// Persistence: every change is logged as a record that, replayed through
// the command table against the previous state, reproduces the bytes
// exactly, whatever hll-sparse-max-bytes is at replay time:
//
//	SET key <bytes> KEEPTTL
//	    the whole new value, logged *before* it is installed (KEEPTTL: the
//	    key keeps its expire time, as in Redis, where these commands change
//	    the value in place). Used whenever
//	    the result depends on hll-sparse-max-bytes or is a new buffer: PFADD
//	    on a missing or sparse key (including a sparse→dense promotion and
//	    the partial change before an INVALIDOBJ), PFMERGE, and the
//	    sparse→dense conversion of PFDEBUG GETREG/TODENSE.
//	PFADD key elem…
//	    PFADD on a dense key that changed a register, logged as received
//	    after the in-place change: dense updates do not depend on any
//	    setting. (Logging the 12 KiB value instead would write 12 KiB to the
//	    AOF per PFADD.)
//	PFCOUNT key
//	    a single-key PFCOUNT that wrote the cached cardinality (in place,
//	    then logged); the estimator is deterministic, so replay writes the
//	    same cache bytes. Redis propagates PFCOUNT the same way.
//
// If logging an in-place change fails, the change stays in memory (other
// clients may already have seen it) and the client gets "ERR <log error>",
// as in package bf. Commands that change nothing log nothing.
//
// Differences from Redis (7.0.15, the differential oracle; see
// redis_test.go):
//
//   - CONFIG GET hll-sparse-max-bytes returns the value as it was set
//     ("1kb"); Redis prints the byte count (1024). Parsing, ranges, unit
//     handling, 64-bit wrap-around and error texts are Redis's memtoull.
//   - A corrupted sparse string whose last opcode is the first byte of an
//     XZERO: Redis reads the byte after its string there (its sds
//     terminator), and when it splits such an opcode it writes the missing
//     byte over that terminator, where its next command on the key reads it.
//     probly follows those writes within one command but starts every
//     command with a zero terminator, so a later command on such a value can
//     differ from Redis. Only crafted values end that way.
//   - PFSELFTEST draws different random registers and elements (same checks,
//     same replies); there are no keyspace notifications.
package pf

import (
	"bytes"
	"errors"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/redishll"
	"github.com/probly/probly/internal/strval"
)

// Reply strings (Redis 7, spec §4.1).
const (
	errWrongType  = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNotHLL     = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errInvalidObj = "INVALIDOBJ Corrupted HLL object detected"
	errNoKey      = "ERR The specified key does not exist"
	errNotSparse  = "ERR HLL encoding is not sparse"
)

// Canonical record names.
var (
	recSet     = []byte("SET")
	recKeepTTL = []byte("KEEPTTL")
	recPFAdd   = []byte("PFADD")
	recPFCount = []byte("PFCOUNT")
)

// selfTestElems is the number of elements PFSELFTEST adds (Redis: 10M);
// tests lower it.
var selfTestElems = 10_000_000

type handlers struct{ s *settings }

// Register adds the PF* commands to t and hll-sparse-max-bytes to cfg (cfg
// may be nil: the default 3000 is then fixed).
func Register(t *command.Table, cfg *config.Registry) {
	h := &handlers{s: newSettings()}
	if cfg != nil {
		cfg.Register(h.s.param())
	}
	t.Add(h.specs()...)
}

// hllError maps an hll error to its Redis reply.
func hllError(err error) string {
	switch {
	case errors.Is(err, redishll.ErrNotHLL):
		return errNotHLL
	case errors.Is(err, redishll.ErrNotSparse):
		return errNotSparse
	default:
		return errInvalidObj
	}
}

// reserveBuf reserves, against maxmemory, the growth of key's memory when
// out replaces old's bytes (old nil: the key is created), as a sparse→dense
// promotion does (about 12 KiB). It reports false when refused; the
// caller then changes nothing and answers command.ErrOOM.
func reserveBuf(c *command.Ctx, key []byte, old *strval.String, out []byte) bool {
	after := uint64(len(key)) + (&strval.String{B: out}).MemoryUsage()
	var before uint64
	if old != nil {
		before = uint64(len(key)) + old.MemoryUsage()
	}
	return after <= before || c.Reserve(after-before)
}

// workCopy copies a (small, sparse) value with room to grow.
func workCopy(b []byte) []byte {
	return append(make([]byte, 0, len(b)+len(b)/4+16), b...)
}

// PFADD key [element …]
func (h *handlers) pfadd(c *command.Ctx) {
	key, elems := c.Args[1], c.Args[2:]
	maxBytes := h.s.sparseMax()
	changed := false
	ok := c.Update(key, func(tx *keyspace.Txn) string {
		s, st := command.As[*strval.String](tx.Value)
		switch st {
		case command.KeyWrongType:
			return errWrongType
		case command.KeyMissing:
			out, _, _ := redishll.Add(nil, elems, maxBytes) // a new HLL cannot be corrupt
			if !reserveBuf(c, key, nil, out) {
				return command.ErrOOM
			}
			if tx.Log(recSet, key, out) != nil {
				return ""
			}
			tx.Set(&strval.String{B: out})
			changed = true
			return ""
		}
		if redishll.IsDense(s.B) {
			out, ch, _ := redishll.Add(s.B, elems, maxBytes) // in place; dense cannot fail
			s.B = out
			if ch {
				changed = true
				// The record's vector lives on the stack up to 8 arguments
				// (Log copies it), so a PFADD of a few elements allocates
				// nothing.
				var small [8][]byte
				rec := append(small[:0], recPFAdd)
				_ = tx.Log(append(rec, c.Args[1:]...)...) // error returned by Update
			}
			return ""
		}
		if err := redishll.Validate(s.B); err != nil {
			return errNotHLL
		}
		out, ch, err := redishll.Add(s.B, elems, maxBytes) // a sparse s.B is not modified
		if ch {
			if !reserveBuf(c, key, s, out) {
				return command.ErrOOM
			}
			if tx.Log(recSet, key, out, recKeepTTL) != nil {
				return ""
			}
			s.B = out
		}
		if err != nil {
			return hllError(err)
		}
		changed = ch
		return ""
	})
	switch {
	case !ok:
	case changed:
		c.R.Int(1)
	default:
		c.R.Int(0)
	}
}

// PFCOUNT key [key …]
func (h *handlers) pfcount(c *command.Ctx) {
	if len(c.Args) > 2 {
		h.pfcountMany(c)
		return
	}
	key := c.Args[1]
	var (
		n      uint64
		status string
		done   bool
	)
	// Fast path under the shared lock: missing key, wrong type, valid cache.
	c.Store.View(key, func(v keyspace.Value) {
		s, st := command.As[*strval.String](v)
		switch st {
		case command.KeyMissing:
			done = true
		case command.KeyWrongType:
			status, done = errWrongType, true
		default:
			if redishll.Validate(s.B) != nil {
				status, done = errNotHLL, true
			} else {
				n, done = redishll.Cached(s.B)
			}
		}
	})
	if !done {
		ok := c.Update(key, func(tx *keyspace.Txn) string {
			s, st := command.As[*strval.String](tx.Value)
			switch st {
			case command.KeyMissing:
				n = 0
				return ""
			case command.KeyWrongType:
				return errWrongType
			}
			var upd []byte
			var err error
			n, upd, err = redishll.Count(s.B) // writes the cache in place
			if err != nil {
				return hllError(err)
			}
			if upd != nil {
				s.B = upd
				_ = tx.Log(recPFCount, key)
			}
			return ""
		})
		if !ok {
			return
		}
	}
	if status != "" {
		c.R.Error(status)
		return
	}
	c.R.Int(int64(n))
}

// pfcountMany is PFCOUNT with several keys: the union's estimate; missing
// keys are skipped; keys are checked in order; no cache is touched.
func (h *handlers) pfcountMany(c *command.Ctx) {
	var u redishll.Union
	for _, key := range c.Args[1:] {
		status := ""
		c.Store.View(key, func(v keyspace.Value) {
			switch s, st := command.As[*strval.String](v); st {
			case command.KeyWrongType:
				status = errWrongType
			case command.KeyOK:
				if err := u.Merge(s.B); err != nil {
					status = hllError(err)
				}
			}
		})
		if status != "" {
			c.R.Error(status)
			return
		}
	}
	c.R.Int(int64(u.Count()))
}

// PFMERGE destkey [sourcekey …]
func (h *handlers) pfmerge(c *command.Ctx) {
	dest := c.Args[1]
	var u redishll.Union
	// Check and merge every key in order, the destination first.
	for _, key := range c.Args[1:] {
		status := ""
		c.Store.View(key, func(v keyspace.Value) {
			switch s, st := command.As[*strval.String](v); st {
			case command.KeyWrongType:
				status = errWrongType
			case command.KeyOK:
				if err := u.Merge(s.B); err != nil {
					status = hllError(err)
				}
			}
		})
		if status != "" {
			c.R.Error(status)
			return
		}
	}
	maxBytes := h.s.sparseMax()
	ok := c.Update(dest, func(tx *keyspace.Txn) string {
		s, st := command.As[*strval.String](tx.Value)
		var cur []byte
		switch st {
		case command.KeyWrongType: // changed type since it was checked
			return errWrongType
		case command.KeyOK:
			// Merge the destination again: it may have changed since.
			if err := u.Merge(s.B); err != nil {
				return hllError(err)
			}
			cur = workCopy(s.B)
		}
		out, err := u.Store(cur, maxBytes)
		if err != nil {
			return hllError(err)
		}
		if !reserveBuf(c, dest, s, out) {
			return command.ErrOOM
		}
		if tx.Log(recSet, dest, out, recKeepTTL) != nil {
			return ""
		}
		if s != nil {
			s.B = out
		} else {
			tx.Set(&strval.String{B: out})
		}
		return ""
	})
	if ok {
		c.R.OK()
	}
}

// cstr returns a up to its first NUL byte (Redis prints the subcommand
// with %s).
func cstr(a []byte) []byte {
	if i := bytes.IndexByte(a, 0); i >= 0 {
		return a[:i]
	}
	return a
}

// asciiLower lowercases ASCII letters only (C's strcasecmp; Unicode
// folding would accept e.g. the Kelvin sign for 'k').
func asciiLower(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return string(out)
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key
func (h *handlers) pfdebug(c *command.Ctx) {
	sub, key := c.Args[1], c.Args[2]
	var (
		regs    []uint8
		text    string
		simple  string
		integer int64
	)
	kind := asciiLower(cstr(sub)) // strcasecmp on a C string
	ok := c.Update(key, func(tx *keyspace.Txn) string {
		s, st := command.As[*strval.String](tx.Value)
		switch st {
		case command.KeyMissing:
			return errNoKey
		case command.KeyWrongType:
			return errWrongType
		}
		if redishll.Validate(s.B) != nil {
			return errNotHLL
		}
		switch kind {
		case "getreg", "todense":
			var dense []byte
			var err error
			if kind == "getreg" {
				regs, dense, err = redishll.GetReg(s.B)
			} else {
				var conv bool
				dense, conv, err = redishll.ToDense(s.B)
				if !conv {
					dense = nil
				} else {
					integer = 1
				}
			}
			if err != nil {
				return hllError(err)
			}
			if dense != nil {
				if !reserveBuf(c, key, s, dense) {
					return command.ErrOOM
				}
				if tx.Log(recSet, key, dense, recKeepTTL) != nil {
					return ""
				}
				s.B = dense
			}
		case "decode":
			var err error
			if text, err = redishll.Decode(s.B); err != nil {
				return hllError(err)
			}
		case "encoding":
			simple, _ = redishll.Encoding(s.B)
		default:
			return "ERR Unknown PFDEBUG subcommand '" + string(cstr(sub)) + "'"
		}
		return ""
	})
	switch {
	case !ok:
	case kind == "getreg":
		c.R.Array(len(regs))
		for _, r := range regs {
			c.R.Int(int64(r))
		}
	case kind == "decode":
		c.R.BulkString(text)
	case kind == "encoding":
		c.R.SimpleString(simple)
	default: // todense
		c.R.Int(integer)
	}
}

// PFSELFTEST
func (h *handlers) pfselftest(c *command.Ctx) {
	if msg := redishll.SelfTest(1000, selfTestElems, h.s.nextSeed()); msg != "" {
		c.R.Error(msg)
		return
	}
	c.R.OK()
}
