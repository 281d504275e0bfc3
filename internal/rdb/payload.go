package rdb

import (
	"encoding/binary"
	"fmt"
)

// TrailerLen is the length of a DUMP payload's trailer: the RDB version
// (2 bytes, little-endian) and the CRC-64 (8 bytes, little-endian) of
// everything before it.
const TrailerLen = 10

// Frame appends the DUMP trailer to body (an object type byte and its
// encoding) with the given RDB version (createDumpPayload).
func Frame(body []byte, version uint16) []byte {
	body = binary.LittleEndian.AppendUint16(body, version)
	return binary.LittleEndian.AppendUint64(body, CRC64(0, body))
}

// Unframe checks a DUMP payload's trailer as Redis's verifyDumpPayload
// does (at least 10 bytes, a version no newer than MaxVersion, the
// CRC-64) and returns the object type byte and the encoded object after
// it. A failed check is ErrChecksum; a payload that holds no type byte is
// ErrBadData.
func Unframe(p []byte) (typ byte, obj []byte, version uint16, err error) {
	if len(p) < TrailerLen {
		return 0, nil, 0, ErrChecksum
	}
	body, tr := p[:len(p)-TrailerLen], p[len(p)-TrailerLen:]
	version = binary.LittleEndian.Uint16(tr)
	if version > MaxVersion {
		return 0, nil, 0, fmt.Errorf("%w: RDB version %d", ErrChecksum, version)
	}
	if CRC64(0, p[:len(p)-8]) != binary.LittleEndian.Uint64(tr[2:]) {
		return 0, nil, 0, ErrChecksum
	}
	if len(body) == 0 {
		return 0, nil, 0, fmt.Errorf("%w: empty payload", ErrBadData)
	}
	return body[0], body[1:], version, nil
}

// DumpString returns the DUMP payload of a string value as Redis 7.0
// writes it (type 0, AppendString, RDB version 10).
func DumpString(s []byte) []byte {
	b := make([]byte, 0, len(s)+16)
	b = append(b, TypeString)
	return Frame(AppendString(b, s), Version)
}

// LoadString decodes the object of a string payload (what Unframe
// returns after TypeString): exactly one RDB string, nothing after it.
// limit bounds the decoded length (ErrTooLarge).
func LoadString(obj []byte, limit int) ([]byte, error) {
	s, used, err := ReadString(obj, limit)
	if err != nil {
		return nil, err
	}
	if used != len(obj) {
		return nil, fmt.Errorf("%w: %d bytes after the string", ErrBadData, len(obj)-used)
	}
	return s, nil
}
