package cf

import (
	"fmt"
	"github.com/probly/probly/internal/command"
	"sync/atomic"

	"github.com/probly/probly/internal/command/argparse"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/rediscuckoo"
	"github.com/probly/probly/internal/sysmem"
)

// settings are the live values of the cf-* parameters, read without a lock
// on every autocreate.
type settings struct {
	bucketSize    atomic.Uint64
	initialSize   atomic.Uint64
	maxIterations atomic.Uint64
	expansion     atomic.Uint64
	maxExpansions atomic.Uint64
	maxBytes      atomic.Uint64 // per-filter budget
}

func newSettings() *settings {
	s := &settings{}
	s.bucketSize.Store(2)
	s.initialSize.Store(1024)
	s.maxIterations.Store(20)
	s.expansion.Store(1)
	s.maxExpansions.Store(32)
	s.maxBytes.Store(DefaultFilterBytes)
	return s
}

// defaults returns the parameters of an autocreated filter with the given
// capacity.
func (s *settings) defaults(capacity uint64) rediscuckoo.Params {
	return rediscuckoo.Params{
		Capacity:      capacity,
		BucketSize:    uint16(s.bucketSize.Load()),
		MaxIterations: uint16(s.maxIterations.Load()),
		Expansion:     uint16(s.expansion.Load()),
	}
}

// DefaultFilterBytes is the default of cf-max-filter-bytes: a quarter of
// the memory available to the process (sysmem.FilterCap), at least
// rediscuckoo.DefaultBudget (128 MiB, also the value where the memory
// cannot be read). Read once at start-up.
var DefaultFilterBytes = sysmem.FilterCap(sysmem.Available(), rediscuckoo.DefaultBudget)

func (s *settings) budget() uint64 { return s.maxBytes.Load() }

// budgetFor is the per-filter byte budget for a call: cf-max-filter-bytes
// for live commands, rediscuckoo.MaxBudget while recovery replays the log
// (records were accepted under the budget in force when they were written;
// see command.Ctx.Replay).
func (s *settings) budgetFor(c *command.Ctx) uint64 {
	if c.Replay {
		return rediscuckoo.MaxBudget
	}
	return s.budget()
}

func (s *settings) maxFilters() int { return int(s.maxExpansions.Load()) }

// intParam is a parameter whose value is an integer in [lo(), hi()] (the
// bounds may depend on other parameters; Set runs under the registry's
// lock, so they are read consistently).
func intParam(name, def string, lo, hi func() int64, store func(int64)) config.Param {
	return config.Param{
		Name:    name,
		Default: def,
		Set: func(v string) error {
			n, ok := argparse.Int([]byte(v))
			if !ok {
				return fmt.Errorf("argument couldn't be parsed into an integer")
			}
			if l, h := lo(), hi(); n < l || n > h {
				return fmt.Errorf("argument must be between %d and %d inclusive", l, h)
			}
			store(n)
			return nil
		},
	}
}

func constant(n int64) func() int64 { return func() int64 { return n } }

// params returns the configuration parameters (spec §3) plus probly's
// per-filter memory budget:
//
//	cf-bucket-size       2        [1, min(255, cf-initial-size/2)]
//	cf-initial-size      1024     [2·cf-bucket-size, 2^30]
//	cf-max-iterations    20       [1, 65535]
//	cf-expansion-factor  1        [0, 32768]   0 ⇒ new filters never grow
//	cf-max-expansions    32       [1, 65536]   CF.ADD/INSERT refuse a filter
//	                                           with this many sub-filters
//	cf-max-filter-bytes  DefaultFilterBytes  [64, rediscuckoo.MaxBudget]
//	                     probly only: the most bytes one cuckoo key may
//	                     hold (a quarter of the machine's or cgroup's
//	                     memory by default; at most that memory, and at
//	                     least 2^32−1); creating, growing or loading beyond
//	                     it is refused with RedisBloom's out-of-memory
//	                     strings.
func (s *settings) params() []config.Param {
	u := func(a *atomic.Uint64) func(int64) { return func(n int64) { a.Store(uint64(n)) } }
	return []config.Param{
		intParam("cf-bucket-size", "2", constant(1),
			func() int64 { return min(rediscuckoo.MaxBucketSize, int64(s.initialSize.Load())/2) }, u(&s.bucketSize)),
		intParam("cf-initial-size", "1024", func() int64 { return 2 * int64(s.bucketSize.Load()) },
			constant(rediscuckoo.MaxCapacity), u(&s.initialSize)),
		intParam("cf-max-iterations", "20", constant(1), constant(rediscuckoo.MaxIterations), u(&s.maxIterations)),
		intParam("cf-expansion-factor", "1", constant(0), constant(rediscuckoo.MaxExpansion), u(&s.expansion)),
		intParam("cf-max-expansions", "32", constant(1), constant(rediscuckoo.MaxMaxExpansions), u(&s.maxExpansions)),
		intParam("cf-max-filter-bytes", fmt.Sprint(DefaultFilterBytes), constant(64), constant(int64(min(rediscuckoo.MaxBudget, 1<<62))), u(&s.maxBytes)),
	}
}
