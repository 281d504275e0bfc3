package str

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/argparse"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/strval"
)

// The string commands clients use in their pipeline and transaction
// examples: MGET, MSET, MSETNX, SETNX, INCR, INCRBY, INCRBYFLOAT, DECR,
// DECRBY and GETSET, with Redis 7's replies and errors.
//
// MSET and MSETNX set all their keys under all the keys' shard locks at
// once (keyspace.Store.UpdateKeys) and MGET reads them under all their
// read locks, so no reader sees part of an MSET.
//
// Expiry: MSET, MSETNX, SETNX and GETSET give the key a new value without
// a TTL (as SET does); INCR, INCRBY, DECR, DECRBY and INCRBYFLOAT keep the
// key's TTL (as Redis; INCRBYFLOAT's record says KEEPTTL).
//
// Persistence (canonical records):
//
//	SET key value              (SETNX, GETSET)
//	MSET key value …           (MSET, MSETNX when it set)
//	INCRBY key delta           (INCR, INCRBY, DECR, DECRBY)
//	SET key value KEEPTTL      (INCRBYFLOAT, as Redis propagates it)
//
// INCRBYFLOAT computes in x87 80-bit extended precision (a 64-bit
// mantissa, Redis's long double on amd64) with math/big, so its results
// and its "%.17Lf" formatting match Redis digit for digit.

// Reply strings (Redis 7).
const (
	errOverflow    = "ERR increment or decrement would overflow"
	errDecOverflow = "ERR decrement would overflow"
	errNotFloat    = "ERR value is not a valid float"
	errNaNInf      = "ERR increment would produce NaN or Infinity"
)

var (
	recMSet   = []byte("MSET")
	recIncrBy = []byte("INCRBY")
	keepTTL   = []byte("KEEPTTL")
)

// stringAt returns the string v holds and what the key holds.
func stringAt(v keyspace.Value) (*strval.String, command.KeyState) {
	return command.As[*strval.String](v)
}

// MGET key [key ...]: nil for a missing key or one of another type.
func mget(c *command.Ctx) {
	keys := c.Args[1:]
	c.Store.ViewKeys(keys, func(vals []keyspace.Value) {
		c.R.Array(len(keys))
		for _, v := range vals {
			if s, st := stringAt(v); st == command.KeyOK {
				c.R.Bulk(s.B)
			} else {
				c.R.Null()
			}
		}
	})
}

// MSET key value [key value ...]
func mset(c *command.Ctx) { msetGeneric(c, false) }

// MSETNX key value [key value ...]: sets nothing if any key exists.
func msetnx(c *command.Ctx) { msetGeneric(c, true) }

func msetGeneric(c *command.Ctx, nx bool) {
	if len(c.Args)%2 == 0 {
		c.R.Error(command.ArityError(strings.ToLower(string(c.Args[0]))))
		return
	}
	n := (len(c.Args) - 1) / 2
	keys := make([][]byte, n)
	vals := make([]*strval.String, n)
	for i := range n {
		keys[i] = c.Args[1+2*i]
		if len(c.Args[2+2*i]) > strval.MaxLen {
			c.R.Error(errTooBig)
			return
		}
		vals[i] = strval.New(c.Args[2+2*i]) // copied outside the locks
	}
	set := false
	if !c.UpdateKeys(keys, func(txs []*keyspace.Txn) string {
		if nx {
			for _, tx := range txs {
				if tx.Value != nil {
					return ""
				}
			}
		}
		// The growth of every distinct key, from its value now to the
		// last value the command gives it.
		last := map[*keyspace.Txn]int{}
		for i, tx := range txs {
			last[tx] = i
		}
		var before, after uint64
		for tx, i := range last {
			before += usageOf(tx.Key, tx.Value)
			after += usage(tx.Key, cap(vals[i].B))
		}
		if !reserve(c, before, after) {
			return ""
		}
		rec := make([][]byte, 0, len(c.Args))
		rec = append(rec, recMSet)
		rec = append(rec, c.Args[1:]...)
		if txs[0].Log(rec...) != nil {
			return "" // answered by Ctx.UpdateKeys
		}
		for tx, i := range last {
			tx.Set(vals[i])
			tx.SetExpire(0) // MSET clears a TTL, as SET does
		}
		set = true
		return ""
	}) {
		return
	}
	switch {
	case !nx:
		if set {
			c.R.OK()
		}
	case set:
		c.R.Int(1)
	default:
		c.R.Int(0)
	}
}

// SETNX key value
func setnx(c *command.Ctx) {
	storeString(c, func(old keyspace.Value) (string, bool) { return "", old == nil },
		func(_ keyspace.Value, set bool) {
			if set {
				c.R.Int(1)
			} else {
				c.R.Int(0)
			}
		})
}

// GETSET key value: SET key value GET.
func getset(c *command.Ctx) {
	storeString(c, func(old keyspace.Value) (string, bool) {
		if _, st := stringAt(old); st == command.KeyWrongType {
			return errWrongType, false
		}
		return "", true
	}, func(old keyspace.Value, _ bool) {
		if s, _ := stringAt(old); s != nil {
			c.R.Bulk(s.B)
		} else {
			c.R.Null()
		}
	})
}

// storeString sets key (Args[1]) to the string Args[2], logged as
// "SET key value", when decide, given the key's value, says so; a status
// from decide is the error reply. reply answers, with the value before
// and whether it was replaced.
func storeString(c *command.Ctx, decide func(old keyspace.Value) (status string, set bool), reply func(old keyspace.Value, set bool)) {
	key, val := c.Args[1], c.Args[2]
	if len(val) > strval.MaxLen {
		c.R.Error(errTooBig)
		return
	}
	nv := strval.New(val) // copied outside the lock
	c.Update(key, func(tx *keyspace.Txn) string {
		old := tx.Value
		status, set := decide(old)
		if status != "" {
			return status
		}
		if set {
			if !reserve(c, usageOf(key, old), usage(key, cap(nv.B))) {
				return ""
			}
			if tx.Log(recSet, key, val) != nil {
				return "" // answered by Ctx.Update
			}
			tx.Set(nv)
			tx.SetExpire(0) // as SET: the new value has no TTL
		}
		reply(old, set)
		return ""
	})
}

// INCR key
func incr(c *command.Ctx) { incrBy(c, 1) }

// DECR key
func decr(c *command.Ctx) { incrBy(c, -1) }

// INCRBY key increment
func incrby(c *command.Ctx) {
	d, ok := argparse.Int(c.Args[2])
	if !ok {
		c.R.Error(errNotInteger)
		return
	}
	incrBy(c, d)
}

// DECRBY key decrement
func decrby(c *command.Ctx) {
	d, ok := argparse.Int(c.Args[2])
	switch {
	case !ok:
		c.R.Error(errNotInteger)
	case d == -1<<63:
		c.R.Error(errDecOverflow)
	default:
		incrBy(c, -d)
	}
}

// incrBy adds delta to the integer at key (0 if missing), as Redis's
// incrDecrCommand.
func incrBy(c *command.Ctx, delta int64) {
	key := c.Args[1]
	c.Update(key, func(tx *keyspace.Txn) string {
		s, st := stringAt(tx.Value)
		var old int64
		switch st {
		case command.KeyWrongType:
			return errWrongType
		case command.KeyOK:
			v, ok := argparse.Int(s.B)
			if !ok {
				return errNotInteger
			}
			old = v
		}
		if (delta < 0 && old < 0 && delta < -1<<63-old) || (delta > 0 && old > 0 && delta > 1<<63-1-old) {
			return errOverflow
		}
		n := old + delta
		nv := &strval.String{B: strconv.AppendInt(nil, n, 10)}
		if !reserve(c, usageOf(key, tx.Value), usage(key, cap(nv.B))) {
			return ""
		}
		if tx.Log(recIncrBy, key, strconv.AppendInt(nil, delta, 10)) != nil {
			return "" // answered by Ctx.Update
		}
		tx.Set(nv)
		c.R.Int(n)
		return ""
	})
}

// x87 extended precision: a 64-bit mantissa and binary exponents such
// that big.Float's MantExp lies in [minExp, maxExp] (maxExp: the largest
// finite value, about 1.19e4932; minExp: the smallest subnormal, about
// 3.6e-4951).
const (
	ldPrec   = 64
	ldMaxExp = 16384
	ldMinExp = -16444
	// ldMaxChars is Redis's MAX_LONG_DOUBLE_CHARS: longer input is not
	// a valid float.
	ldMaxChars = 5 * 1024
)

// parseLongDouble parses b as Redis's string2ld does (C strtold over the
// whole string): no leading space, no trailing garbage (a NUL byte
// included), NaN refused, overflow and underflow to zero refused, infinity
// accepted (inf reports it). The value is rounded to 64 mantissa bits.
func parseLongDouble(b []byte) (x *big.Float, inf bool, ok bool) {
	if len(b) == 0 || len(b) >= ldMaxChars {
		return nil, false, false
	}
	s := string(b)
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return nil, false, false
	}
	switch strings.ToLower(body) {
	case "inf", "infinity":
		return nil, true, true
	}
	if strings.ContainsAny(s, "_ \t\n\v\f\r\x00") {
		return nil, false, false
	}
	base := 10
	if len(body) > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		base = 0 // hexadecimal mantissa, optional 'p' exponent
	}
	x, _, err := big.ParseFloat(s, base, ldPrec, big.ToNearestEven)
	if err != nil || x.IsInf() {
		return nil, false, false
	}
	if x.Sign() != 0 {
		if e := x.MantExp(nil); e > ldMaxExp || e < ldMinExp {
			return nil, false, false
		}
	}
	return x, false, true
}

// formatLongDouble formats x as Redis's ld2string in human-friendly mode:
// "%.17Lf" with the trailing zeros (and a trailing '.') removed, "-0" as
// "0".
func formatLongDouble(x *big.Float) []byte {
	s := x.Text('f', 17)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return []byte(s)
}

// INCRBYFLOAT key increment
func incrbyfloat(c *command.Ctx) {
	key := c.Args[1]
	c.Update(key, func(tx *keyspace.Txn) string {
		s, st := stringAt(tx.Value)
		cur := new(big.Float).SetPrec(ldPrec)
		curInf := false
		switch st {
		case command.KeyWrongType:
			return errWrongType
		case command.KeyOK:
			v, inf, ok := parseLongDouble(s.B)
			if !ok {
				return errNotFloat
			}
			cur, curInf = v, inf
		}
		incr, incrInf, ok := parseLongDouble(c.Args[2])
		if !ok {
			return errNotFloat
		}
		if curInf || incrInf {
			return errNaNInf // inf + x is inf or NaN
		}
		sum := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven).Add(cur, incr)
		if sum.Sign() != 0 && sum.MantExp(nil) > ldMaxExp {
			return errNaNInf
		}
		nv := &strval.String{B: formatLongDouble(sum)}
		if !reserve(c, usageOf(key, tx.Value), usage(key, cap(nv.B))) {
			return ""
		}
		if tx.Log(recSet, key, nv.B, keepTTL) != nil {
			return "" // answered by Ctx.Update
		}
		tx.Set(nv)
		c.R.Bulk(nv.B)
		return ""
	})
}
