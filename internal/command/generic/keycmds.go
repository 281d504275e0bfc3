package generic

import (
	"bytes"
	"strconv"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/argparse"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/strval"
)

// Key commands of issue 15: RENAME, RENAMENX, COPY, TOUCH, RANDOMKEY and
// OBJECT (DUMP and RESTORE are in dump.go). RENAME and COPY change both
// keys under both shard locks at once (keyspace.Store.UpdateKeys), so a
// concurrent reader sees the destination's old value or its new one,
// never a missing key, and log one record. RENAME moves the source's
// expire time to the destination (dropping the destination's), COPY
// copies it, as Redis:
//
//	RENAME src dst            (RENAME, and RENAMENX when it renamed)
//	COPY src dst [REPLACE]    (REPLACE when dst existed; DB 0 dropped)

// Replies (Redis 7).
const (
	errNoSuchKey  = "ERR no such key"
	errSameObject = "ERR source and destination objects are the same"
	errDBRange    = "ERR DB index is out of range"
	errIntRange   = "ERR value is out of range, value must between -2147483648 and 2147483647"
	errNoLFU      = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
)

var (
	renameRecord = []byte("RENAME")
	copyRecord   = []byte("COPY")
	replaceWord  = []byte("REPLACE")
)

// keyExists reports whether key holds a value.
func keyExists(c *command.Ctx, key []byte) bool {
	found := false
	c.Store.View(key, func(v keyspace.Value) { found = v != nil })
	return found
}

// RENAME key newkey
func rename(c *command.Ctx) { renameGeneric(c, false) }

// RENAMENX key newkey
func renamenx(c *command.Ctx) { renameGeneric(c, true) }

func renameGeneric(c *command.Ctx, nx bool) {
	src, dst := c.Args[1], c.Args[2]
	if bytes.Equal(src, dst) {
		switch {
		case !keyExists(c, src):
			c.R.Error(errNoSuchKey)
		case nx:
			c.R.Int(0)
		default:
			c.R.OK()
		}
		return
	}
	renamed := false
	if !c.UpdateKeys([][]byte{src, dst}, func(txs []*keyspace.Txn) string {
		from, to := txs[0], txs[1]
		if from.Value == nil {
			return errNoSuchKey
		}
		if nx && to.Value != nil {
			return ""
		}
		if from.Log(renameRecord, src, dst) != nil {
			return "" // answered by Ctx.UpdateKeys
		}
		ttl := from.Expire()
		to.Set(from.Value)
		to.SetExpire(ttl) // the source's, or none: the destination's own goes
		from.Delete()
		renamed = true
		return ""
	}) {
		return
	}
	switch {
	case !nx:
		c.R.OK()
	case renamed:
		c.R.Int(1)
	default:
		c.R.Int(0)
	}
}

// COPY source destination [DB destination-db] [REPLACE]. probly has one
// database: DB 0 is the source's, any other index answers Redis's
// "ERR DB index is out of range" (what Redis answers with databases 1).
func copyCmd(c *command.Ctx) {
	src, dst := c.Args[1], c.Args[2]
	replace := false
	for j := 3; j < len(c.Args); j++ {
		switch {
		case lower(c.Args[j]) == "replace":
			replace = true
		case lower(c.Args[j]) == "db" && j+1 < len(c.Args):
			db, ok := argparse.Int(c.Args[j+1])
			if !ok {
				c.R.Error(errNotInteger)
				return
			}
			if db < -1<<31 || db > 1<<31-1 {
				c.R.Error(errIntRange)
				return
			}
			if db != 0 {
				c.R.Error(errDBRange)
				return
			}
			j++
		default:
			c.R.Error(errSyntax)
			return
		}
	}
	if bytes.Equal(src, dst) {
		c.R.Error(errSameObject)
		return
	}
	copied := false
	if !c.UpdateKeys([][]byte{src, dst}, func(txs []*keyspace.Txn) string {
		from, to := txs[0], txs[1]
		if from.Value == nil || (to.Value != nil && !replace) {
			return ""
		}
		var old uint64
		if to.Value != nil {
			old = uint64(len(dst)) + to.Value.MemoryUsage()
		}
		if n := uint64(len(dst)) + from.Value.MemoryUsage(); n > old && !c.Reserve(n-old) {
			return command.ErrOOM
		}
		rec := [][]byte{copyRecord, src, dst}
		if to.Value != nil {
			rec = append(rec, replaceWord)
		}
		// Logged on the destination: only it changes, so only its
		// watchers (WATCH) are told, as in Redis.
		if to.Log(rec...) != nil {
			return "" // answered by Ctx.UpdateKeys
		}
		to.Set(from.Value.Clone())
		to.SetExpire(from.Expire())
		copied = true
		return ""
	}) {
		return
	}
	if copied {
		c.R.Int(1)
	} else {
		c.R.Int(0)
	}
}

// TOUCH key [key ...]: the number of the keys that exist (a key named
// twice counts twice). probly keeps no access times, so it changes
// nothing.
func touch(c *command.Ctx) { exists(c) }

// RANDOMKEY
func randomKey(c *command.Ctx) {
	if k, ok := c.Store.RandomKey(); ok {
		c.R.BulkString(k)
		return
	}
	c.R.Null()
}

// objectLookup runs fn on key's value, answering null when it is missing.
func objectLookup(c *command.Ctx, fn func(v keyspace.Value)) {
	c.Store.View(c.Args[2], func(v keyspace.Value) {
		if v == nil {
			c.R.Null()
			return
		}
		fn(v)
	})
}

// OBJECT ENCODING key: for strings Redis's encoding as it follows from
// the bytes (see stringEncoding); every other type is "raw", as Redis
// reports a module value.
func objectEncoding(c *command.Ctx) {
	objectLookup(c, func(v keyspace.Value) {
		if s, ok := v.(*strval.String); ok {
			c.R.BulkString(stringEncoding(s.B))
			return
		}
		c.R.BulkString("raw")
	})
}

// stringEncoding is the encoding Redis gives a string it stores with
// SET: "int" for the canonical decimal form of a 64-bit integer of at
// most 20 bytes, "embstr" up to 44 bytes, "raw" beyond. A HyperLogLog
// ("HYLL" header) is "raw", as PFADD creates it. Redis also answers "raw"
// for a short string changed in place (APPEND, SETRANGE); probly does
// not record that history.
func stringEncoding(b []byte) string {
	switch {
	case len(b) >= 16 && string(b[:4]) == "HYLL":
		return "raw"
	case len(b) <= 20 && isCanonicalInt(b):
		return "int"
	case len(b) <= 44:
		return "embstr"
	}
	return "raw"
}

func isCanonicalInt(b []byte) bool {
	v, err := strconv.ParseInt(string(b), 10, 64)
	return err == nil && strconv.FormatInt(v, 10) == string(b)
}

// OBJECT REFCOUNT key: 1. probly shares no values between keys (Redis
// answers 2147483647 for its shared integers 0-9999).
func objectRefcount(c *command.Ctx) { objectLookup(c, func(keyspace.Value) { c.R.Int(1) }) }

// OBJECT IDLETIME key: 0. probly does not track access times (it has no
// LRU eviction), so every key counts as just used.
func objectIdletime(c *command.Ctx) { objectLookup(c, func(keyspace.Value) { c.R.Int(0) }) }

// OBJECT FREQ key: Redis's error for a server whose maxmemory-policy is
// not LFU, which probly's never is.
func objectFreq(c *command.Ctx) { objectLookup(c, func(keyspace.Value) { c.R.Error(errNoLFU) }) }

var objectHelp = help([]string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
})
