package generic

import (
	"strconv"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/keyspace"
)

var delRecord = []byte("DEL")

func dbsize(c *command.Ctx) { c.R.Int(int64(c.Store.Len())) }

// del implements DEL and UNLINK: each key is removed under its own lock and
// logged as "DEL key". If logging fails for a key, that key is kept and the
// command answers the error (keys already removed stay removed).
func del(c *command.Ctx) {
	var n int64
	var firstErr error
	for _, key := range c.Args[1:] {
		seq, err := c.Store.Update(key, func(tx *keyspace.Txn) {
			if tx.Value == nil {
				return
			}
			if tx.Log(delRecord, key) != nil {
				return
			}
			tx.Delete()
			n++
		})
		c.Seq = max(c.Seq, seq)
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		c.R.Error("ERR " + firstErr.Error())
		return
	}
	c.R.Int(n)
}

func exists(c *command.Ctx) {
	var n int64
	for _, key := range c.Args[1:] {
		c.Store.View(key, func(v keyspace.Value) {
			if v != nil {
				n++
			}
		})
	}
	c.R.Int(n)
}

func typeCmd(c *command.Ctx) {
	name := "none"
	c.Store.View(c.Args[1], func(v keyspace.Value) {
		if v != nil {
			name = v.TypeName()
		}
	})
	c.R.SimpleString(name)
}

func keys(c *command.Ctx) {
	ks := c.Store.Keys(string(c.Args[1]))
	c.R.Array(len(ks))
	for _, k := range ks {
		c.R.BulkString(k)
	}
}

// scan implements SCAN cursor [MATCH pattern] [COUNT count] [TYPE type].
// Cursors are shard indexes; see keyspace.Store.Scan for the guarantees.
func scan(c *command.Ctx) {
	cursor, err := strconv.ParseUint(string(c.Args[1]), 10, 64)
	if err != nil {
		c.R.Error("ERR invalid cursor")
		return
	}
	pattern, typeName, count := "", "", 10
	for i := 2; i < len(c.Args); i += 2 {
		if i+1 >= len(c.Args) {
			c.R.Error(errSyntax)
			return
		}
		val := c.Args[i+1]
		switch lower(c.Args[i]) {
		case "match":
			pattern = string(val)
			if pattern == "*" {
				pattern = ""
			}
		case "count":
			n, err := strconv.ParseInt(string(val), 10, 64)
			if err != nil {
				c.R.Error(errNotInteger)
				return
			}
			if n < 1 {
				c.R.Error(errSyntax)
				return
			}
			count = int(min(n, 1<<30))
		case "type":
			typeName = string(val)
		default:
			c.R.Error(errSyntax)
			return
		}
	}
	next, ks := c.Store.Scan(cursor, pattern, typeName, count)
	c.R.Array(2)
	c.R.BulkString(strconv.FormatUint(next, 10))
	c.R.Array(len(ks))
	for _, k := range ks {
		c.R.BulkString(k)
	}
}

// flush implements FLUSHALL and FLUSHDB [ASYNC|SYNC] (always synchronous;
// logged as FLUSHALL since there is one database).
func flush(c *command.Ctx) {
	if len(c.Args) > 2 {
		c.R.Error(errSyntax)
		return
	}
	if len(c.Args) == 2 {
		if m := lower(c.Args[1]); m != "async" && m != "sync" {
			c.R.Error(errSyntax)
			return
		}
	}
	seq, err := c.Server.Flush()
	c.Seq = max(c.Seq, seq)
	if err != nil {
		c.R.Error("ERR " + err.Error())
		return
	}
	c.R.OK()
}

// memoryUsage implements MEMORY USAGE key [SAMPLES count]: the value's
// MemoryUsage plus the key length, or nil for a missing key.
func memoryUsage(c *command.Ctx) {
	switch len(c.Args) {
	case 3:
	case 5:
		if lower(c.Args[3]) != "samples" {
			c.R.Error(errSyntax)
			return
		}
		if _, err := strconv.ParseInt(string(c.Args[4]), 10, 64); err != nil {
			c.R.Error(errNotInteger)
			return
		}
	default:
		c.R.Error(errSyntax)
		return
	}
	key := c.Args[2]
	found := false
	var n uint64
	c.Store.View(key, func(v keyspace.Value) {
		if v != nil {
			found, n = true, uint64(len(key))+v.MemoryUsage()
		}
	})
	if !found {
		c.R.Null()
		return
	}
	c.R.Int(int64(n))
}

var memoryHelp = []string{
	"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"USAGE <key> [SAMPLES <count>]",
	"    Return memory in bytes used by <key> and its value.",
	"HELP",
	"    Print this help.",
}

var moduleHelp = []string{
	"MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"LIST",
	"    Return a list of loaded modules.",
	"HELP",
	"    Print this help.",
}
