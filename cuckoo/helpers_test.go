package cuckoo

import (
	"encoding/binary"
	"strconv"
	"testing"
)

// Structured test keys: every family yields unique keys for distinct i.

func userKey(dst []byte, i uint64) []byte {
	return strconv.AppendUint(append(dst[:0], "user-"...), i, 10)
}

func counterKey(dst []byte, i uint64) []byte {
	return binary.LittleEndian.AppendUint64(dst[:0], i)
}

func prefixKey(dst []byte, i uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst[:0], "pfx/key:"...), i)
}

type keyFamily struct {
	name string
	key  func(dst []byte, i uint64) []byte
}

var keyFamilies = []keyFamily{{"user", userKey}, {"counter", counterKey}, {"prefix", prefixKey}}

// splitmix64 is a tiny deterministic PRNG.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (s *splitmix64) intn(n int) int { return int(s.next() % uint64(n)) }

// mustConfig builds a filter through the server's hook, so c.Expansion has
// its encoded meaning (0 = never grow) and any hash ID is accepted; tests
// of the public constructor call NewWithConfig.
func mustConfig(t testing.TB, c Config) *Filter {
	t.Helper()
	f, err := newWithConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
