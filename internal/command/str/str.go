// Package str implements the binary-safe Redis string commands GET, SET
// (with EX, PX, EXAT, PXAT, KEEPTTL, NX, XX, GET), SETEX, PSETEX, GETEX,
// GETDEL, APPEND, SETRANGE, GETRANGE (and its old name SUBSTR) and STRLEN
// with Redis 7 replies and error strings. A Redis HyperLogLog is an ordinary
// string (spec redis-compat.md §4.2), so these commands read and write HLL
// values too: GET returns an HLL's exact bytes, SET installs bytes taken
// from Redis, and SETRANGE/APPEND can corrupt one (the PF* commands detect
// that and answer INVALIDOBJ/WRONGTYPE).
//
// Values are *strval.String. SET replaces a value of any type, as Redis
// does; every other command answers WRONGTYPE on a key of another type.
//
// Differences from Redis:
//
//   - No string may grow past strval.MaxLen (512 MiB), nor past a lower
//     proto-max-bulk-len setting: APPEND and SETRANGE answer
//     "ERR string exceeds maximum allowed size (proto-max-bulk-len)" as
//     Redis does, and so does SET with a longer value (possible only after
//     raising proto-max-bulk-len; such a string could not be loaded back
//     from a snapshot).
//   - Integer-encoded strings do not exist: every value is raw bytes, which
//     Redis clients cannot observe.
//
// Persistence: a successful mutation is logged before it is applied (a
// failed log append changes nothing and answers "ERR <log error>"), in
// canonical form, so replaying the records through this same command table
// reproduces the state byte for byte:
//
//	SET key value            (options dropped: their effect is decided)
//	SET key value PXAT ms    (SET with EX/PX/EXAT/PXAT, SETEX, PSETEX: absolute time)
//	SET key value KEEPTTL    (SET … KEEPTTL: the key keeps its expire time)
//	PEXPIREAT key ms         (GETEX with a time)
//	PERSIST key              (GETEX PERSIST that removed a time)
//	DEL key                  (GETDEL; GETEX with an EXAT/PXAT time not in the future)
//	APPEND key chunk         (not logged when chunk is empty and the key exists)
//	SETRANGE key offset value (not logged when value is empty: no change)
//
// Commands that change nothing, or fail, log nothing.
package str

import (
	"math"
	"strconv"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/argparse"
	"github.com/probly/probly/internal/command/generic"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/strval"
)

// Reply strings (Redis 7).
const (
	errWrongType  = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errSyntax     = "ERR syntax error"
	errNotInteger = "ERR value is not an integer or out of range"
	errOffset     = "ERR offset is out of range"
	errTooBig     = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
)

// Canonical record names.
var (
	recSet      = []byte("SET")
	recAppend   = []byte("APPEND")
	recSetRange = []byte("SETRANGE")
	recPXAT     = []byte("PXAT")
	recKeepTTL  = []byte("KEEPTTL")
	recDel      = []byte("DEL")
	recPexpAt   = []byte("PEXPIREAT")
	recPersist  = []byte("PERSIST")
)

// Register adds the string commands to t. They have no settings; cfg is
// accepted for symmetry with the other families and may be nil (handlers
// read proto-max-bulk-len through Ctx.Config when it is registered).
func Register(t *command.Table, cfg *config.Registry) {
	_ = cfg
	t.Add(specs()...)
	t.Add(counterSpecs()...)
}

// maxLen is the longest string APPEND and SETRANGE may produce: the
// proto-max-bulk-len setting when it is registered and lower, else
// strval.MaxLen.
func maxLen(c *command.Ctx) int64 {
	limit := int64(strval.MaxLen)
	if c.Config != nil {
		if v, ok := c.Config.Get("proto-max-bulk-len"); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 && n < limit {
				limit = n
			}
		}
	}
	return limit
}

// fits reports whether a string of size+extra bytes is allowed (Redis's
// checkStringLength, overflow-safe).
func fits(size, extra, limit int64) bool {
	return size <= limit && extra <= limit-size
}

// grow returns b extended with zero bytes to length n (n ≥ len(b)). New
// room is reserved as Redis's sdsMakeRoomFor does (double below 1 MiB,
// else 1 MiB more), never beyond strval.MaxLen unless n itself is larger.
func grow(b []byte, n int) []byte {
	if n <= cap(b) {
		old := len(b)
		b = b[:n]
		clear(b[old:])
		return b
	}
	nb := make([]byte, n, grownCap(b, n))
	copy(nb, b)
	return nb
}

// grownCap is cap(grow(b, n)), computed without allocating.
func grownCap(b []byte, n int) int {
	if n <= cap(b) {
		return cap(b)
	}
	const prealloc = 1 << 20
	c := n + prealloc
	if n < prealloc {
		c = 2 * n
	}
	return max(min(c, strval.MaxLen), n)
}

// usage is what key holding a string of capacity capacity adds to the
// key space's memory (keyspace.Store.Used).
func usage(key []byte, capacity int) uint64 {
	return uint64(len(key)) + (&strval.String{}).MemoryUsage() + uint64(capacity)
}

// reserve reserves the growth of key's memory from before (0 for a
// missing key) to after, if it grows; on refusal it answers OOM and
// reports false (the caller then changes nothing).
func reserve(c *command.Ctx, before, after uint64) bool {
	if after <= before || c.Reserve(after-before) {
		return true
	}
	c.R.Error(command.ErrOOM)
	return false
}

// usageOf is key's current contribution to the key space's memory.
func usageOf(key []byte, v keyspace.Value) uint64 {
	if v == nil {
		return 0
	}
	return uint64(len(key)) + v.MemoryUsage()
}

// GET key
func get(c *command.Ctx) {
	c.Store.View(c.Args[1], func(v keyspace.Value) {
		switch s, st := command.As[*strval.String](v); st {
		case command.KeyMissing:
			c.R.Null()
		case command.KeyWrongType:
			c.R.Error(errWrongType)
		default:
			c.R.Bulk(s.B)
		}
	})
}

// STRLEN key
func strlen(c *command.Ctx) {
	c.Store.View(c.Args[1], func(v keyspace.Value) {
		switch s, st := command.As[*strval.String](v); st {
		case command.KeyMissing:
			c.R.Int(0)
		case command.KeyWrongType:
			c.R.Error(errWrongType)
		default:
			c.R.Int(int64(len(s.B)))
		}
	})
}

// setFlags are SET's options (and GETEX's: expire and persist).
type setFlags struct {
	nx, xx, get, keepTTL, persist bool
	expire                        []byte // EX/PX/EXAT/PXAT argument, nil if none
	unitSeconds                   bool   // EX or EXAT
	relative                      bool   // EX or PX
}

// cstr returns a up to its first NUL byte: Redis compares option names as
// C strings.
func cstr(a []byte) []byte {
	for i, b := range a {
		if b == 0 {
			return a[:i]
		}
	}
	return a
}

func isWord(a []byte, w string) bool {
	a = cstr(a)
	if len(a) != len(w) {
		return false
	}
	for i := range a {
		b := a[i]
		if b >= 'a' && b <= 'z' {
			b -= 'a' - 'A'
		}
		if b != w[i] {
			return false
		}
	}
	return true
}

// parseSetFlags is Redis 7's parseExtendedStringArgumentsOrReply for SET
// (getex false) or GETEX (getex true: only EX, PX, EXAT, PXAT and
// PERSIST): conflicting options, unknown words and an expiry without its
// argument are syntax errors.
func parseSetFlags(args [][]byte, getex bool) (setFlags, bool) {
	var f setFlags
	haveExpire := false
	for j := 0; j < len(args); j++ {
		hasNext := j < len(args)-1
		switch a := args[j]; {
		case isWord(a, "NX") && !f.xx && !getex:
			f.nx = true
		case isWord(a, "XX") && !f.nx && !getex:
			f.xx = true
		case isWord(a, "GET") && !getex:
			f.get = true
		case isWord(a, "KEEPTTL") && !haveExpire && !getex:
			f.keepTTL = true
		case isWord(a, "PERSIST") && !haveExpire && getex:
			f.persist = true
		case (isWord(a, "EX") || isWord(a, "PX") || isWord(a, "EXAT") || isWord(a, "PXAT")) && !f.keepTTL && !f.persist && hasNext:
			// Redis allows repeating the same expiry option (the last one
			// wins) but not mixing two different ones.
			sec := isWord(a, "EX") || isWord(a, "EXAT")
			rel := isWord(a, "EX") || isWord(a, "PX")
			if haveExpire && (sec != f.unitSeconds || rel != f.relative) {
				return f, false
			}
			haveExpire, f.unitSeconds, f.relative = true, sec, rel
			f.expire = args[j+1]
			j++
		default:
			return f, false
		}
	}
	return f, true
}

// expireAt converts an expiry argument into an absolute time in Unix
// milliseconds as Redis's getExpireMillisecondsOrReply does, or returns
// the error reply for the command named name (a time that is not
// positive or overflows).
func expireAt(c *command.Ctx, f setFlags, name string) (int64, string) {
	ms, ok := argparse.Int(f.expire)
	if !ok {
		return 0, errNotInteger
	}
	if ms <= 0 || (f.unitSeconds && ms > math.MaxInt64/1000) {
		return 0, generic.ErrExpireTime(name)
	}
	if f.unitSeconds {
		ms *= 1000
	}
	if f.relative {
		now := c.Store.Now()
		if ms > math.MaxInt64-now {
			return 0, generic.ErrExpireTime(name) // Redis: the sum overflows
		}
		ms += now
	}
	return ms, ""
}

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL]
func set(c *command.Ctx) {
	f, ok := parseSetFlags(c.Args[3:], false)
	if !ok {
		c.R.Error(errSyntax)
		return
	}
	setGeneric(c, "set", c.Args[1], c.Args[2], f)
}

// SETEX key seconds value and PSETEX key milliseconds value: SET key value
// EX seconds (PX milliseconds).
func setex(name string, seconds bool) func(c *command.Ctx) {
	return func(c *command.Ctx) {
		setGeneric(c, name, c.Args[1], c.Args[3], setFlags{expire: c.Args[2], unitSeconds: seconds, relative: true})
	}
}

// setGeneric is Redis's setGenericCommand for SET, SETEX and PSETEX (name
// names the command in errors). It is logged as "SET key value" plus
// "PXAT unix-ms" when it sets an expire time, or "KEEPTTL" when it keeps
// the key's.
func setGeneric(c *command.Ctx, name string, key, val []byte, f setFlags) {
	var when int64
	if f.expire != nil {
		var msg string
		if when, msg = expireAt(c, f, name); msg != "" {
			c.R.Error(msg)
			return
		}
	}
	if len(val) > strval.MaxLen {
		c.R.Error(errTooBig)
		return
	}
	c.Update(key, func(tx *keyspace.Txn) string {
		old, st := command.As[*strval.String](tx.Value)
		if f.get && st == command.KeyWrongType {
			return errWrongType
		}
		// replyOld answers GET's part: the previous string or null.
		replyOld := func() {
			if old == nil {
				c.R.Null()
			} else {
				c.R.Bulk(old.B)
			}
		}
		found := tx.Value != nil
		if (f.nx && found) || (f.xx && !found) {
			if f.get {
				replyOld()
			} else {
				c.R.Null()
			}
			return ""
		}
		// A string overwritten by one of about its size keeps its buffer
		// (as APPEND changes it in place): no allocation, and the map is
		// not written. Otherwise the new value gets a buffer of its own.
		// (SET ... GET answers with the old bytes: a new buffer.)
		var nv *strval.String
		inPlace := old != nil && !f.get && len(val) <= cap(old.B) && cap(old.B) <= 2*len(val)+inPlaceSlack
		if inPlace {
			nv = old
		} else {
			nv = strval.New(val)
		}
		after := usage(key, cap(nv.B))
		if when != 0 {
			after += keyspace.ExpireUsage(key) // counted in Used too
		}
		if !reserve(c, usageOf(key, tx.Value), after) {
			return ""
		}
		var err error
		switch {
		case f.expire != nil:
			err = tx.Log(recSet, key, val, recPXAT, strconv.AppendInt(nil, when, 10))
		case f.keepTTL:
			err = tx.Log(recSet, key, val, recKeepTTL)
		default:
			err = tx.Log(recSet, key, val)
		}
		if err != nil {
			return "" // answered by Ctx.Update
		}
		if inPlace {
			nv.B = append(nv.B[:0], val...) // Log marked the key changed
		} else {
			tx.Set(nv)
		}
		if !f.keepTTL {
			tx.SetExpire(when) // 0: none
		}
		if f.get {
			replyOld()
		} else {
			c.R.OK()
		}
		return ""
	})
}

// inPlaceSlack is how many bytes beyond twice the new length a string's
// buffer may have for SET to reuse it: a small string reuses any buffer
// of its size class, a large buffer is not kept for a much smaller value.
const inPlaceSlack = 32

// APPEND key value
func appendCmd(c *command.Ctx) {
	key, chunk := c.Args[1], c.Args[2]
	limit := maxLen(c)
	c.Update(key, func(tx *keyspace.Txn) string {
		s, st := command.As[*strval.String](tx.Value)
		switch st {
		case command.KeyWrongType:
			return errWrongType
		case command.KeyMissing:
			if len(chunk) > strval.MaxLen {
				return errTooBig
			}
			nv := strval.New(chunk)
			if !reserve(c, 0, usage(key, cap(nv.B))) {
				return ""
			}
			if tx.Log(recAppend, key, chunk) != nil {
				return "" // answered by Ctx.Update
			}
			tx.Set(nv)
			c.R.Int(int64(len(chunk)))
			return ""
		}
		if !fits(int64(len(s.B)), int64(len(chunk)), limit) {
			return errTooBig
		}
		if len(chunk) > 0 {
			if !reserve(c, uint64(cap(s.B)), uint64(grownCap(s.B, len(s.B)+len(chunk)))) {
				return ""
			}
			if tx.Log(recAppend, key, chunk) != nil {
				return "" // answered by Ctx.Update
			}
			n := len(s.B)
			s.B = grow(s.B, n+len(chunk))
			copy(s.B[n:], chunk)
		}
		c.R.Int(int64(len(s.B)))
		return ""
	})
}

// SETRANGE key offset value
func setRange(c *command.Ctx) {
	key, value := c.Args[1], c.Args[3]
	off, ok := argparse.Int(c.Args[2])
	if !ok {
		c.R.Error(errNotInteger)
		return
	}
	if off < 0 {
		c.R.Error(errOffset)
		return
	}
	limit := maxLen(c)
	c.Update(key, func(tx *keyspace.Txn) string {
		s, st := command.As[*strval.String](tx.Value)
		switch st {
		case command.KeyWrongType:
			return errWrongType
		case command.KeyMissing:
			if len(value) == 0 {
				c.R.Int(0) // setting nothing on a missing key creates nothing
				return ""
			}
		default:
			if len(value) == 0 {
				c.R.Int(int64(len(s.B)))
				return ""
			}
		}
		if !fits(off, int64(len(value)), limit) {
			return errTooBig
		}
		end := int(off) + len(value)
		if s == nil {
			if !reserve(c, 0, usage(key, end)) {
				return ""
			}
		} else if !reserve(c, uint64(cap(s.B)), uint64(grownCap(s.B, end))) {
			return ""
		}
		if tx.Log(recSetRange, key, strconv.AppendInt(nil, off, 10), value) != nil {
			return "" // answered by Ctx.Update
		}
		if s == nil {
			s = &strval.String{B: make([]byte, end)}
			tx.Set(s)
		} else if end > len(s.B) {
			s.B = grow(s.B, end)
		}
		copy(s.B[off:], value)
		c.R.Int(int64(len(s.B)))
		return ""
	})
}

// GETRANGE key start end (and SUBSTR): Redis 7's index rules. Negative
// indexes count from the end; the range is clamped to the string; an
// empty range (or a missing key) is the empty string.
func getRange(c *command.Ctx) {
	start, ok := argparse.Int(c.Args[2])
	if !ok {
		c.R.Error(errNotInteger)
		return
	}
	end, ok := argparse.Int(c.Args[3])
	if !ok {
		c.R.Error(errNotInteger)
		return
	}
	c.Store.View(c.Args[1], func(v keyspace.Value) {
		s, st := command.As[*strval.String](v)
		switch st {
		case command.KeyMissing:
			c.R.Bulk(nil)
			return
		case command.KeyWrongType:
			c.R.Error(errWrongType)
			return
		}
		lo, hi, ok := substrRange(int64(len(s.B)), start, end)
		if !ok {
			c.R.Bulk(nil)
			return
		}
		c.R.Bulk(s.B[lo : hi+1])
	})
}

// substrRange converts GETRANGE's start and end for a string of n bytes
// into an inclusive byte range, or reports that it is empty.
func substrRange(n, start, end int64) (lo, hi int64, ok bool) {
	if start < 0 && end < 0 && start > end {
		return 0, 0, false
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		return 0, 0, false
	}
	return start, end, true
}

// GETEX key [EX s|PX ms|EXAT t|PXAT t|PERSIST]: GET that also sets or
// removes the expire time. Logged as "PEXPIREAT key unix-ms", "DEL key"
// (an EXAT/PXAT time not in the future deletes the key) or "PERSIST key"
// (only when it removed a time); nothing when no option changed anything.
func getex(c *command.Ctx) {
	key := c.Args[1]
	f, ok := parseSetFlags(c.Args[2:], true)
	if !ok {
		c.R.Error(errSyntax)
		return
	}
	updateString(c, key, func(tx *keyspace.Txn, s *strval.String) string {
		var when int64
		if f.expire != nil {
			var msg string
			if when, msg = expireAt(c, f, "getex"); msg != "" {
				return msg
			}
		}
		switch {
		case f.expire != nil && !f.relative && when <= tx.Now() && !c.Replay:
			if tx.Log(recDel, key) != nil {
				return ""
			}
			c.R.Bulk(s.B) // before the value goes
			tx.Delete()
			return ""
		case f.expire != nil:
			if tx.Log(recPexpAt, key, strconv.AppendInt(nil, when, 10)) != nil {
				return ""
			}
			tx.SetExpire(when)
		case f.persist && tx.Expire() != 0:
			if tx.Log(recPersist, key) != nil {
				return ""
			}
			tx.SetExpire(0)
		}
		c.R.Bulk(s.B)
		return ""
	})
}

// updateString runs fn on the string at key in a write transaction
// (Ctx.Update); a missing key is answered nil and a key of another type
// WRONGTYPE, without calling fn.
func updateString(c *command.Ctx, key []byte, fn func(tx *keyspace.Txn, s *strval.String) string) {
	c.Update(key, func(tx *keyspace.Txn) string {
		s, st := command.As[*strval.String](tx.Value)
		switch st {
		case command.KeyMissing:
			c.R.Null()
			return ""
		case command.KeyWrongType:
			return errWrongType
		}
		return fn(tx, s)
	})
}

// GETDEL key: GET, then delete the key (logged as "DEL key").
func getdel(c *command.Ctx) {
	key := c.Args[1]
	updateString(c, key, func(tx *keyspace.Txn, s *strval.String) string {
		if tx.Log(recDel, key) != nil {
			return ""
		}
		c.R.Bulk(s.B)
		tx.Delete()
		return ""
	})
}
