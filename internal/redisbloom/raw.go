package redisbloom

import (
	"github.com/probly/probly/bloom"
	"github.com/probly/probly/internal/bloomraw"
)

// raw is package bloom's server-only operations (docs/LIBRARY.md, "How
// the server uses the library").
var raw = bloomraw.Get[bloomraw.Hooks[bloom.Filter, bloom.SBBF, bloom.Scalable, bloom.Stable, bloom.ScalableConfig]]()

// hashMurmur64A is the hash ID of RedisBloomPair.
const hashMurmur64A = bloom.HashID(bloomraw.HashMurmur64A)

// link is one sub-filter of a chain's bloom.Scalable.
type link = bloomraw.Link[bloom.Filter]
