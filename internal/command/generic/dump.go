package generic

import (
	"encoding"
	"errors"
	"fmt"
	"strconv"

	"github.com/probly/probly/internal/codec"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/argparse"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/rdb"
	"github.com/probly/probly/internal/strval"
)

// DUMP and RESTORE.
//
// A string (and so a HyperLogLog) is dumped as Redis 7.0 dumps it (RDB
// string encoding, RDB version 10, CRC-64 trailer: internal/rdb), so
// redis-server restores it, and RESTORE accepts every string payload
// Redis writes (raw, integer, LZF; RDB versions up to 12). Every other
// type is dumped in probly's own payload (docs/FORMATS.md, "DUMP
// payload"): the object type byte problyType, a format version, the type
// name and the value's snapshot encoding (MarshalBinary), framed with the
// same RDB-version and CRC-64 trailer. Redis refuses it ("Bad data
// format"); probly decodes it through the codec registry.
//
// RESTORE validates the whole payload and decodes the value before it
// changes anything; the decoded value's memory is reserved against
// maxmemory, and filters are bounded by their per-filter budget
// (bf-max-filter-bytes, cf-max-filter-bytes). It is logged as
//
//	RESTORE key 0 payload REPLACE                  (no TTL)
//	RESTORE key <unix ms> payload REPLACE ABSTTL   (with one)
//	DEL key                                        (REPLACE with a TTL already past)
//
// DUMP carries no TTL, as in Redis.

// Replies (Redis 7).
const (
	errBusyKey      = "BUSYKEY Target key name already exists."
	errPayloadCheck = "ERR DUMP payload version or checksum are wrong"
	errBadData      = "ERR Bad data format"
	errTTL          = "ERR Invalid TTL value, must be >= 0"
	errIdle         = "ERR Invalid IDLETIME value, must be >= 0"
	errFreq         = "ERR Invalid FREQ value, must be >= 0 and <= 255"
)

// probly's DUMP payload: an object type byte no Redis version defines,
// then payloadFormat.
const (
	problyType    = 'P'
	payloadFormat = 1
)

var (
	restoreRecord = []byte("RESTORE")
	absTTLWord    = []byte("ABSTTL")
	delWord       = []byte("DEL")
)

// dumpValue returns v's DUMP payload.
func dumpValue(v keyspace.Value) ([]byte, error) {
	if s, ok := v.(*strval.String); ok {
		return rdb.DumpString(s.B), nil
	}
	m, ok := v.(encoding.BinaryMarshaler)
	if !ok {
		return nil, fmt.Errorf("type %s cannot be dumped", v.TypeName())
	}
	data, err := m.MarshalBinary()
	if err != nil {
		return nil, err
	}
	name := v.TypeName()
	b := make([]byte, 0, len(data)+len(name)+16)
	b = append(b, problyType, payloadFormat)
	b = rdb.AppendLen(b, uint64(len(name)))
	b = append(b, name...)
	b = append(b, data...)
	return rdb.Frame(b, rdb.Version), nil
}

// DUMP key
func dump(c *command.Ctx) {
	var p []byte
	var err error
	found := false
	c.Store.View(c.Args[1], func(v keyspace.Value) {
		if v != nil {
			found = true
			p, err = dumpValue(v)
		}
	})
	switch {
	case !found:
		c.R.Null()
	case err != nil:
		c.R.Error("ERR " + err.Error())
	default:
		c.R.Bulk(p)
	}
}

// loadPayload validates p completely and decodes its value (a filter
// within its per-filter budget, see budget).
// It reserves the value's memory (plus keyLen) against maxmemory before
// allocating a string and before keeping a decoded value (ErrOOM). Errors
// are the Redis reply to give.
func loadPayload(c *command.Ctx, p []byte, keyLen int) (keyspace.Value, string) {
	typ, obj, _, err := rdb.Unframe(p)
	if errors.Is(err, rdb.ErrChecksum) {
		return nil, errPayloadCheck
	}
	if err != nil {
		return nil, errBadData
	}
	switch typ {
	case rdb.TypeString:
		// As Redis, read the string from the payload's buffer as a whole
		// (its length may reach into the trailer) and ignore what follows.
		obj = p[1:]
		n, err := rdb.StringLen(obj)
		if err != nil || n > strval.MaxLen {
			return nil, errBadData
		}
		if !c.Reserve(uint64(keyLen) + (&strval.String{}).MemoryUsage() + n) {
			return nil, command.ErrOOM
		}
		s, _, err := rdb.ReadString(obj, int(n))
		if err != nil {
			return nil, errBadData
		}
		return &strval.String{B: s}, ""
	case problyType:
		return loadProbly(c, obj, keyLen)
	}
	// A Redis list, set, hash, sorted set, stream or module value
	// (RedisBloom's own BF/CF payloads are module values), or garbage.
	return nil, errBadData
}

// loadProbly decodes the object of a probly payload.
func loadProbly(c *command.Ctx, obj []byte, keyLen int) (keyspace.Value, string) {
	if len(obj) < 2 || obj[0] != payloadFormat {
		return nil, errBadData
	}
	nameLen, used, err := rdb.ReadLen(obj[1:])
	if err != nil || nameLen > uint64(len(obj)-1-used) {
		return nil, errBadData
	}
	name := string(obj[1+used : 1+used+int(nameLen)])
	data := obj[1+used+int(nameLen):]
	d, ok := codec.Lookup(name)
	if !ok || name == strval.TypeName {
		return nil, errBadData
	}
	// Decoders allocate no more than their input backs before they have
	// validated it: reserve that much first, the rest once it is known.
	if !c.Reserve(uint64(keyLen + len(data))) {
		return nil, command.ErrOOM
	}
	v, err := d.Decode(data, budget(c, d.BudgetParam))
	if err != nil || v == nil || v.TypeName() != name {
		return nil, errBadData
	}
	if n := uint64(keyLen) + v.MemoryUsage(); n > uint64(keyLen+len(data)) && !c.Reserve(n-uint64(keyLen+len(data))) {
		return nil, command.ErrOOM
	}
	return v, ""
}

// budget is the per-value byte budget the configuration parameter param
// sets for a live RESTORE; 0 (the type's largest) for replay or none.
func budget(c *command.Ctx, param string) uint64 {
	if param == "" || c.Replay || c.Config == nil {
		return 0
	}
	v, ok := c.Config.Get(param)
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds]
// [FREQ frequency], checked in Redis's order: options, BUSYKEY, ttl, the
// payload. IDLETIME and FREQ are validated and ignored (probly tracks
// neither). ttl is relative milliseconds, or with ABSTTL a Unix time in
// milliseconds; 0 is none. A time already past (also one whose sum
// overflows, as in Redis) stores nothing and answers +OK; with REPLACE it
// deletes the existing key. During replay a past time is stored (the key
// then expires), as Redis does while loading.
func restore(c *command.Ctx) {
	key, payload := c.Args[1], c.Args[3]
	replace, absTTL, idle, freq := false, false, false, false
	for j := 4; j < len(c.Args); j++ {
		more := j+1 < len(c.Args)
		switch a := lower(c.Args[j]); {
		case a == "replace":
			replace = true
		case a == "absttl":
			absTTL = true
		case a == "idletime" && more && !freq:
			n, ok := argparse.Int(c.Args[j+1])
			if !ok {
				c.R.Error(errNotInteger)
				return
			}
			if n < 0 {
				c.R.Error(errIdle)
				return
			}
			idle = true
			j++
		case a == "freq" && more && !idle:
			n, ok := argparse.Int(c.Args[j+1])
			if !ok {
				c.R.Error(errNotInteger)
				return
			}
			if n < 0 || n > 255 {
				c.R.Error(errFreq)
				return
			}
			freq = true
			j++
		default:
			c.R.Error(errSyntax)
			return
		}
	}
	if !replace && keyExists(c, key) {
		c.R.Error(errBusyKey)
		return
	}
	ttl, ok := argparse.Int(c.Args[2])
	switch {
	case !ok:
		c.R.Error(errNotInteger)
		return
	case ttl < 0:
		c.R.Error(errTTL)
		return
	}
	v, status := loadPayload(c, payload, len(key))
	if status != "" {
		c.R.Error(status)
		return
	}
	if c.Update(key, func(tx *keyspace.Txn) string {
		if tx.Value != nil && !replace {
			return errBusyKey
		}
		when := ttl
		if when != 0 && !absTTL {
			when += tx.Now() // wraps on overflow, as in Redis: then already past
		}
		if when != 0 && when <= tx.Now() && !c.Replay {
			if tx.Value != nil {
				if tx.Log(delWord, key) != nil {
					return "" // answered by Ctx.Update
				}
				tx.Delete()
			}
			return ""
		}
		var err error
		if when == 0 {
			err = tx.Log(restoreRecord, key, zeroTTL, payload, replaceWord)
		} else {
			err = tx.Log(restoreRecord, key, strconv.AppendInt(nil, when, 10), payload, replaceWord, absTTLWord)
		}
		if err != nil {
			return "" // answered by Ctx.Update
		}
		tx.Set(v)
		tx.SetExpire(when) // 0: none (also removes the old key's)
		return ""
	}) {
		c.R.OK()
	}
}

var zeroTTL = []byte("0")
