package generic

// Key expiry commands: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with NX, XX,
// GT, LT), TTL, PTTL, EXPIRETIME, PEXPIRETIME and PERSIST, with Redis 7's
// replies and errors (expireGenericCommand, ttlGenericCommand,
// persistCommand). Expire times are kept by the key space
// (keyspace.Txn.SetExpire) as absolute Unix milliseconds.
//
// Persistence, as Redis propagates them:
//
//	PEXPIREAT key unix-ms   (every EXPIRE form that sets a time; options dropped: decided)
//	DEL key                 (a time not in the future deletes the key)
//	PERSIST key             (only when it removed a time)
//
// During replay (Ctx.Replay) a time in the past is stored, not a deletion,
// as Redis does while loading: the key is dropped when loading ends.

import (
	"math"
	"strconv"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/argparse"
	"github.com/probly/probly/internal/keyspace"
)

var (
	recPexpireAt = []byte("PEXPIREAT")
	recPersist   = []byte("PERSIST")
)

// expireFlags are EXPIRE's NX, XX, GT and LT options.
type expireFlags struct{ nx, xx, gt, lt bool }

// cword returns a up to its first NUL byte (Redis compares options as C
// strings).
func cword(a []byte) string {
	for i, b := range a {
		if b == 0 {
			return string(a[:i])
		}
	}
	return string(a)
}

// parseExpireFlags is Redis's parseExtendedExpireArgumentsOrReply: it
// returns the options or the error reply.
func parseExpireFlags(args [][]byte) (expireFlags, string) {
	var f expireFlags
	for _, a := range args {
		switch lower([]byte(cword(a))) {
		case "nx":
			f.nx = true
		case "xx":
			f.xx = true
		case "gt":
			f.gt = true
		case "lt":
			f.lt = true
		default:
			return f, "ERR Unsupported option " + cword(a)
		}
	}
	if f.nx && (f.xx || f.gt || f.lt) {
		return f, "ERR NX and XX, GT or LT options at the same time are not compatible"
	}
	if f.gt && f.lt {
		return f, "ERR GT and LT options at the same time are not compatible"
	}
	return f, ""
}

// ErrExpireTime is Redis's reply to an expire time that overflows (or, for
// SET and its relatives, is not positive), for the command named name.
func ErrExpireTime(name string) string {
	return "ERR invalid expire time in '" + name + "' command"
}

// expireCmd returns the handler of EXPIRE (seconds, relative), PEXPIRE,
// EXPIREAT and PEXPIREAT.
func expireCmd(name string, seconds, relative bool) func(c *command.Ctx) {
	return func(c *command.Ctx) {
		key := c.Args[1]
		f, msg := parseExpireFlags(c.Args[3:])
		if msg != "" {
			c.R.Error(msg)
			return
		}
		when, ok := argparse.Int(c.Args[2])
		if !ok {
			c.R.Error(errNotInteger)
			return
		}
		if seconds {
			if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
				c.R.Error(ErrExpireTime(name))
				return
			}
			when *= 1000
		}
		if relative {
			base := c.Store.Now()
			if when > math.MaxInt64-base {
				c.R.Error(ErrExpireTime(name))
				return
			}
			when += base
		}
		var reply int64
		if c.Update(key, func(tx *keyspace.Txn) string {
			if tx.Value == nil {
				return ""
			}
			cur := tx.Expire() // 0: none (Redis's -1)
			switch {
			case f.nx && cur != 0, f.xx && cur == 0,
				f.gt && (cur == 0 || when <= cur),
				f.lt && cur != 0 && when >= cur:
				return ""
			}
			reply = 1
			if when <= tx.Now() && !c.Replay {
				if tx.Log(delRecord, key) == nil {
					tx.Delete()
				}
				return ""
			}
			if tx.Log(recPexpireAt, key, strconv.AppendInt(nil, when, 10)) == nil {
				tx.SetExpire(max(when, 1)) // 0 would mean none
			}
			return ""
		}) {
			c.R.Int(reply)
		}
	}
}

// ttlCmd returns the handler of TTL (seconds, relative), PTTL, EXPIRETIME
// and PEXPIRETIME: -2 for a missing key, -1 for a key without a time.
func ttlCmd(seconds, relative bool) func(c *command.Ctx) {
	return func(c *command.Ctx) {
		ms, ok := c.Store.ExpireOf(c.Args[1])
		switch {
		case !ok:
			c.R.Int(-2)
			return
		case ms == 0:
			c.R.Int(-1)
			return
		}
		if relative {
			ms -= c.Store.Now()
		}
		ms = max(ms, 0)
		if seconds {
			ms = (ms + 500) / 1000
		}
		c.R.Int(ms)
	}
}

// PERSIST key
func persist(c *command.Ctx) {
	key := c.Args[1]
	var reply int64
	if c.Update(key, func(tx *keyspace.Txn) string {
		if tx.Expire() == 0 {
			return ""
		}
		if tx.Log(recPersist, key) == nil {
			tx.SetExpire(0)
			reply = 1
		}
		return ""
	}) {
		c.R.Int(reply)
	}
}

// expireSpecs declares the expiry commands (Redis 7's COMMAND INFO and
// COMMAND DOCS).
func expireSpecs() []*command.Spec {
	const (
		w    = command.FlagWrite
		ro   = command.FlagReadonly
		fast = command.FlagFast
	)
	condition := command.Arg{Name: "condition", Type: command.ArgOneOf, Since: "7.0.0", Flags: command.ArgOptional, Args: []command.Arg{
		{Name: "nx", Type: command.ArgPureToken, Token: "NX"},
		{Name: "xx", Type: command.ArgPureToken, Token: "XX"},
		{Name: "gt", Type: command.ArgPureToken, Token: "GT"},
		{Name: "lt", Type: command.ArgPureToken, Token: "LT"},
	}}
	setSpec := func(name, summary, since, arg string, argType command.ArgType, seconds, relative bool) *command.Spec {
		return &command.Spec{Name: name, Arity: -3, Flags: w | fast, ACL: command.ACLKeyspace, Handler: expireCmd(name, seconds, relative),
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyUpdate, Begin: 1}},
			Doc: command.Doc{Summary: summary, Since: since, Group: command.GroupGeneric, Complexity: "O(1)",
				History: []command.History{{Version: "7.0.0", Change: "Added options: `NX`, `XX`, `GT` and `LT`."}},
				Args:    []command.Arg{{Name: "key", Type: command.ArgKey}, {Name: arg, Type: argType}, condition}}}
	}
	getSpec := func(name, summary, since string, seconds, relative bool) *command.Spec {
		s := &command.Spec{Name: name, Arity: 2, Flags: ro | fast, ACL: command.ACLKeyspace, Handler: ttlCmd(seconds, relative),
			Keys: []command.KeySpec{{Flags: command.KeyRO | command.KeyAccess, Begin: 1}},
			Doc: command.Doc{Summary: summary, Since: since, Group: command.GroupGeneric, Complexity: "O(1)",
				Args: []command.Arg{{Name: "key", Type: command.ArgKey}}}}
		if relative {
			s.Tips = []string{"nondeterministic_output"}
			s.Doc.History = []command.History{{Version: "2.8.0", Change: "Added the -2 reply."}}
		}
		return s
	}
	return []*command.Spec{
		setSpec("expire", "Set a key's time to live in seconds", "1.0.0", "seconds", command.ArgInteger, true, true),
		setSpec("pexpire", "Set a key's time to live in milliseconds", "2.6.0", "milliseconds", command.ArgInteger, false, true),
		setSpec("expireat", "Set the expiration for a key as a UNIX timestamp", "1.2.0", "unix-time-seconds", command.ArgUnixTime, true, false),
		setSpec("pexpireat", "Set the expiration for a key as a UNIX timestamp specified in milliseconds", "2.6.0", "unix-time-milliseconds", command.ArgUnixTime, false, false),
		getSpec("ttl", "Get the time to live for a key in seconds", "1.0.0", true, true),
		getSpec("pttl", "Get the time to live for a key in milliseconds", "2.6.0", false, true),
		getSpec("expiretime", "Get the expiration Unix timestamp for a key", "7.0.0", true, false),
		getSpec("pexpiretime", "Get the expiration Unix timestamp for a key in milliseconds", "7.0.0", false, false),
		{Name: "persist", Arity: 2, Flags: w | fast, ACL: command.ACLKeyspace, Handler: persist,
			Keys: []command.KeySpec{{Flags: command.KeyRW | command.KeyUpdate, Begin: 1}},
			Doc: command.Doc{Summary: "Remove the expiration from a key", Since: "2.2.0", Group: command.GroupGeneric,
				Complexity: "O(1)", Args: []command.Arg{{Name: "key", Type: command.ArgKey}}}},
	}
}
