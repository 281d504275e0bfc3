package cf

import (
	"fmt"
	"github.com/probly/probly/internal/command"
	"sync/atomic"

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
		config.ModuleIntParam("cf-bucket-size", "2", config.Const(1),
			func() int64 { return min(rediscuckoo.MaxBucketSize, int64(s.initialSize.Load())/2) }, u(&s.bucketSize)),
		config.ModuleIntParam("cf-initial-size", "1024", func() int64 { return 2 * int64(s.bucketSize.Load()) },
			config.Const(rediscuckoo.MaxCapacity), u(&s.initialSize)),
		config.ModuleIntParam("cf-max-iterations", "20", config.Const(1), config.Const(rediscuckoo.MaxIterations), u(&s.maxIterations)),
		config.ModuleIntParam("cf-expansion-factor", "1", config.Const(0), config.Const(rediscuckoo.MaxExpansion), u(&s.expansion)),
		config.ModuleIntParam("cf-max-expansions", "32", config.Const(1), config.Const(rediscuckoo.MaxMaxExpansions), u(&s.maxExpansions)),
		// probly's own setting: Redis's wording.
		config.IntParam("cf-max-filter-bytes", fmt.Sprint(DefaultFilterBytes), 64, int64(min(rediscuckoo.MaxBudget, 1<<62)), u(&s.maxBytes)),
	}
}
