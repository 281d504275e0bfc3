// Package rdb reads and writes the parts of Redis's RDB format that
// DUMP and RESTORE exchange for strings: the DUMP payload frame (object
// type, body, RDB version, CRC-64 trailer), RDB length and string
// encodings (raw, integer-encoded int8/16/32, LZF-compressed), LZF
// compression and decompression, and Redis's CRC-64 (Jones polynomial).
//
// A HyperLogLog is a Redis string, so its DUMP payload is a string
// payload too. Other Redis types (lists, sets, hashes, sorted sets,
// streams, modules) are not decoded: ObjectType reports them and callers
// refuse them.
//
// Source: Redis 7 rdb.c (rdbSaveLen, rdbSaveRawString,
// rdbTryIntegerEncoding, rdbLoadLen, rdbGenericLoadStringObject),
// cluster.c (createDumpPayload, verifyDumpPayload), crc64.c, and Marc
// Lehmann's LZF format description (lzf_d.c); this is a fresh
// implementation, not a copy.
//
// Every decoder here validates lengths before it allocates, never
// allocates more than the limit its caller passes, and returns an error
// wrapping ErrBadData (or ErrChecksum for the frame) for any malformed
// input; none panics.
package rdb

import "errors"

var (
	// ErrBadData reports malformed RDB data (Redis: "Bad data format").
	ErrBadData = errors.New("rdb: bad data format")
	// ErrChecksum reports a payload whose version or CRC-64 trailer is
	// wrong (Redis: "DUMP payload version or checksum are wrong").
	ErrChecksum = errors.New("rdb: payload version or checksum are wrong")
	// ErrTooLarge reports a value longer than the caller's limit.
	ErrTooLarge = errors.New("rdb: value exceeds the size limit")
)

// Version is the RDB version DUMP writes: Redis 7.0's (RDB 10), so that
// every Redis 7 server restores it (a server refuses payloads newer than
// its own version).
const Version = 10

// MaxVersion is the newest RDB version RESTORE accepts: Redis 7.4's
// (12). The string encoding is the same in versions 1 to 12.
const MaxVersion = 12

// Object types (the first byte of a DUMP payload) this package names.
const (
	TypeString = 0 // RDB_TYPE_STRING
	TypeModule = 7 // RDB_TYPE_MODULE_2 (RedisBloom's BF and CF payloads)
)

// IsRedisType reports whether t is an object type byte Redis 7 defines
// (0-7, 9-21): a payload of such a type other than TypeString comes from
// Redis and holds a type probly does not implement.
func IsRedisType(t byte) bool { return t <= 21 && t != 8 }
