package bloom

import (
	"encoding/binary"
	"strconv"
)

// Structured test keys. Every family yields unique keys for distinct i, and
// the families never collide with one another (different lengths/prefixes).

// userKey appends "user-<i>" to dst.
func userKey(dst []byte, i uint64) []byte {
	return strconv.AppendUint(append(dst[:0], "user-"...), i, 10)
}

// counterKey appends the 8-byte little-endian counter i to dst.
func counterKey(dst []byte, i uint64) []byte {
	return binary.LittleEndian.AppendUint64(dst[:0], i)
}

// prefixKey appends a 16-byte key: a fixed 8-byte prefix then big-endian i.
func prefixKey(dst []byte, i uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst[:0], "pfx/key:"...), i)
}

// splitmix64 is a tiny deterministic PRNG for reproducible "random" keys.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// randomKey appends a 16-byte pseudo-random key.
func (s *splitmix64) randomKey(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint64(dst[:0], s.next())
	return binary.LittleEndian.AppendUint64(dst, s.next())
}

type keyFamily struct {
	name string
	key  func(dst []byte, i uint64) []byte
}

var keyFamilies = []keyFamily{
	{"user", userKey},
	{"counter", counterKey},
	{"prefix", prefixKey},
}

// newStableMDP makes a stable filter of m cells of d bits whose
// stable-point rate is about p (stableSizing's k and P): the sizing of
// the tests written for a fixed memory.
func newStableMDP(m uint64, d uint8, p float64) (*Stable, error) {
	k, dec, err := stableSizing(m, d, p)
	if err != nil {
		return nil, err
	}
	s := newStable(StableConfig{M: m, CellBits: d, K: k, Decrements: dec})
	s.targetP = p
	return s, nil
}

// newly turns TestAndAdd's answer into "the add set a new bit" (the old
// bool of Add), failing on an error.
func newly(present bool, err error) bool {
	if err != nil {
		panic(err)
	}
	return !present
}

// was is TestAndAdd's present answer, failing on an error.
func was(present bool, err error) bool {
	if err != nil {
		panic(err)
	}
	return present
}
