package pf

import (
	"errors"
	"math"
	"sync/atomic"
	"time"

	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/redishll"
)

// settings are the live values of the PF parameters, read without a lock.
type settings struct {
	maxBytes atomic.Int64 // hll-sparse-max-bytes
	seed     atomic.Uint64
}

func newSettings() *settings {
	s := &settings{}
	s.maxBytes.Store(redishll.DefaultSparseMaxBytes)
	s.seed.Store(uint64(time.Now().UnixNano()))
	return s
}

func (s *settings) sparseMax() int {
	n := s.maxBytes.Load()
	if n > math.MaxInt {
		return math.MaxInt
	}
	return int(n)
}

func (s *settings) nextSeed() uint64 { return s.seed.Add(0x9e3779b97f4a7c15) }

// param is hll-sparse-max-bytes: default 3000, range [0, LONG_MAX], a
// Redis memory value ("1kb", "2mb", "1g" …), validated with Redis's
// messages. CONFIG GET shows bytes, as Redis ("1kb" → "1024").
func (s *settings) param() config.Param {
	return config.Param{
		Name:    "hll-sparse-max-bytes",
		Default: "3000",
		Memory:  true,
		Set: func(v string) error {
			n, ok := memToULL(v)
			if !ok {
				return errors.New("argument must be a memory value")
			}
			if n > math.MaxInt64 {
				return errors.New("argument must be between 0 and 9223372036854775807 inclusive")
			}
			s.maxBytes.Store(int64(n))
			return nil
		},
	}
}

// memToULL parses a Redis memory value as memtoull does: decimal digits
// (none means 0) followed by an optional unit b, k, kb, m, mb, g, gb
// (case-insensitive; k = 1000, kb = 1024 …). A number too large for 64 bits
// saturates, and the multiplication wraps, as in C.
func memToULL(v string) (uint64, bool) {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	var mul uint64
	switch asciiLower([]byte(v[i:])) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	if i >= 128 {
		return 0, false
	}
	var n uint64
	for _, c := range v[:i] {
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			n = math.MaxUint64
			break
		}
		n = n*10 + d
	}
	return n * mul, true
}
