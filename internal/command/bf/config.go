package bf

import (
	"fmt"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/argparse"
	"math"
	"sync/atomic"

	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/redisbloom"
	"github.com/probly/probly/internal/sysmem"
)

// Limits from RedisBloom 8.x (spec §1.2, §3).
const (
	maxCapacity  = 1 << 30
	maxExpansion = 32768
	maxErrorRate = 0.25 // larger error rates are silently capped
)

// settings are the live values of the bf-* parameters. They are read on
// every autocreate without a lock.
type settings struct {
	errorRate   atomic.Uint64 // float64 bits, already capped at 0.25
	initialSize atomic.Uint64
	expansion   atomic.Uint64
	maxBytes    atomic.Uint64 // per-filter budget
}

func newSettings() *settings {
	s := &settings{}
	s.errorRate.Store(math.Float64bits(0.01))
	s.initialSize.Store(100)
	s.expansion.Store(2)
	s.maxBytes.Store(DefaultFilterBytes)
	return s
}

func (s *settings) defaults() (errorRate float64, capacity uint64, expansion uint32) {
	return math.Float64frombits(s.errorRate.Load()), s.initialSize.Load(), uint32(s.expansion.Load())
}

// MaxFilterBytes is the largest value of bf-max-filter-bytes: the memory
// available to the process (sysmem.Available), and at least 128 GiB.
// Read once at start-up.
var MaxFilterBytes = max(uint64(1<<37), sysmem.Available())

// DefaultFilterBytes is the default of bf-max-filter-bytes: a quarter of
// the memory available to the process (sysmem.FilterCap), at least
// redisbloom.DefaultBudget (128 MiB, also the value where the memory
// cannot be read). Read once at start-up.
var DefaultFilterBytes = sysmem.FilterCap(sysmem.Available(), redisbloom.DefaultBudget)

func (s *settings) budget() uint64 { return s.maxBytes.Load() }

// budgetFor is the per-filter byte budget that applies to a call: the
// configured bf-max-filter-bytes for live commands, the parameter's maximum
// while recovery replays the log (see command.Ctx.Replay).
func (s *settings) budgetFor(c *command.Ctx) uint64 {
	if c.Replay {
		return MaxFilterBytes
	}
	return s.budget()
}

// params returns the configuration parameters (spec §3) plus probly's
// per-filter memory budget:
//
//	bf-error-rate        0.01  (0, 1)        > 0.25 is used as 0.25
//	bf-initial-size      100   [1, 2^30]
//	bf-expansion-factor  2     [0, 32768]    0 ⇒ new filters are non-scaling
//	bf-max-filter-bytes  DefaultFilterBytes [64, MaxFilterBytes]  probly
//	                     only: the most bytes one Bloom key may hold (a
//	                     quarter of the machine's or cgroup's memory by
//	                     default); creating, growing or loading beyond it
//	                     is refused with RedisBloom's out-of-memory strings.
func (s *settings) params() []config.Param {
	errRate := config.Param{
		Name:    "bf-error-rate",
		Default: "0.01",
		Set: func(v string) error {
			// RedisBloom's texts (src/config.c, setFloatValue).
			f, ok := argparse.Float([]byte(v))
			if !ok {
				return config.Reason("Invalid value for `bf-error-rate`")
			}
			if !(f > 0 && f < 1) {
				return config.Reason("Value for `bf-error-rate` must be in the range (0.000000, 1.000000)")
			}
			s.errorRate.Store(math.Float64bits(min(f, maxErrorRate)))
			return nil
		},
		// RedisBloom keeps a value over the cap as the cap ("0.25").
		Show: func(v string) string {
			if f, ok := argparse.Float([]byte(v)); ok && f > maxErrorRate {
				return "0.25"
			}
			return v
		},
	}
	store := func(a *atomic.Uint64) func(int64) { return func(n int64) { a.Store(uint64(n)) } }
	initial := config.ModuleIntParam("bf-initial-size", "100", config.Const(1), config.Const(maxCapacity), store(&s.initialSize))
	expansion := config.ModuleIntParam("bf-expansion-factor", "2", config.Const(0), config.Const(maxExpansion), store(&s.expansion))
	// probly's own setting: Redis's wording.
	budget := config.IntParam("bf-max-filter-bytes", fmt.Sprint(DefaultFilterBytes), 64, int64(min(MaxFilterBytes, 1<<62)), store(&s.maxBytes))
	return []config.Param{errRate, initial, expansion, budget}
}
