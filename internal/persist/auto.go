package persist

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/probly/probly/internal/keyspace"
)

// Trigger says what started a snapshot.
type Trigger uint8

// Snapshot triggers.
const (
	TriggerManual   Trigger = iota // SAVE, BGSAVE
	TriggerSave                    // a save rule: enough changes and time (Redis "save")
	TriggerRewrite                 // the AOF grew (Redis auto-aof-rewrite-*)
	TriggerResync                  // an AOF write failed; the snapshot lets writes resume
	TriggerShutdown                // the final snapshot of a shutdown: SIGTERM, SIGINT, SHUTDOWN
	numTriggers
)

var triggerNames = [numTriggers]string{"manual", "save", "aof-rewrite", "resync", "shutdown"}

// String returns "manual", "save", "aof-rewrite", "resync" or "shutdown".
func (t Trigger) String() string {
	if t < numTriggers {
		return triggerNames[t]
	}
	return "trigger(" + strconv.Itoa(int(t)) + ")"
}

// Defaults of the automatic snapshot settings, as in Redis 7.
const (
	// DefaultSave is Redis 7's default "save" setting: a snapshot after
	// 3600 s if at least 1 change, after 300 s if at least 100, after 60 s
	// if at least 10000.
	DefaultSave = "3600 1 300 100 60 10000"
	// DefaultRewritePercent is auto-aof-rewrite-percentage.
	DefaultRewritePercent = 100
	// DefaultRewriteMinSize is auto-aof-rewrite-min-size (64 MiB).
	DefaultRewriteMinSize = 64 << 20
)

const (
	// retryDelay is how long the scheduler waits after a failed snapshot
	// before an automatic one is tried again (Redis's
	// CONFIG_BGSAVE_RETRY_DELAY). Each further consecutive failure doubles
	// the wait, up to retryMaxDelay; a success resets it.
	retryDelay    = 5 * time.Second
	retryMaxDelay = 30 * time.Second
	// autoInterval is how often the scheduler looks (Redis's hz 10).
	autoInterval = 100 * time.Millisecond
)

// SaveRule is one "<seconds> <changes>" pair of the save setting: a
// snapshot is due when at least Changes writes happened and more than
// Seconds elapsed since the last successful snapshot.
type SaveRule struct {
	Seconds int64
	Changes int64
}

// ErrSaveRules reports an invalid save setting. The server answers it with
// Redis's CONFIG SET reason "Invalid save parameters" (internal/app maps it).
var ErrSaveRules = errors.New("persist: invalid save parameters")

// ParseSaveRules parses Redis's save syntax: pairs "<seconds> <changes>"
// separated by spaces, seconds ≥ 1 and changes ≥ 0. "" (or only spaces)
// means no automatic snapshots and returns nil.
func ParseSaveRules(s string) ([]SaveRule, error) {
	f := strings.Fields(s)
	if len(f)%2 != 0 {
		return nil, ErrSaveRules
	}
	var out []SaveRule
	for i := 0; i < len(f); i += 2 {
		sec, err1 := strconv.ParseInt(f[i], 10, 64)
		ch, err2 := strconv.ParseInt(f[i+1], 10, 64)
		if err1 != nil || err2 != nil || sec < 1 || ch < 0 {
			return nil, ErrSaveRules
		}
		out = append(out, SaveRule{Seconds: sec, Changes: ch})
	}
	return out, nil
}

// FormatSaveRules renders rules as CONFIG GET save shows them
// ("3600 1 300 100"); nil renders as "".
func FormatSaveRules(rules []SaveRule) string {
	var b strings.Builder
	for i, r := range rules {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(r.Seconds, 10))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(r.Changes, 10))
	}
	return b.String()
}

// autoState is the automatic snapshot configuration.
type autoState struct {
	mu      sync.Mutex
	save    []SaveRule
	pct     int64 // auto-aof-rewrite-percentage; 0 disables
	minSize int64 // auto-aof-rewrite-min-size
	started atomic.Bool
	// retryBase and retryMax are retryDelay and retryMaxDelay (tests
	// shorten them before StartAuto).
	retryBase, retryMax time.Duration
}

func (a *autoState) init() {
	a.mu.Lock()
	a.save, a.pct, a.minSize = nil, 0, DefaultRewriteMinSize
	a.retryBase, a.retryMax = retryDelay, retryMaxDelay
	a.mu.Unlock()
}

// RetryDelay returns how long after the last failed snapshot attempt the
// scheduler waits before it tries an automatic one again: 0 after a
// success, 5 s after one failure, doubling with each further consecutive
// failure (10 s, 20 s) up to 30 s.
func (d *DB) RetryDelay() time.Duration {
	n := d.consecFail.Load()
	if n == 0 {
		return 0
	}
	d.auto.mu.Lock()
	delay, most := d.auto.retryBase, d.auto.retryMax
	d.auto.mu.Unlock()
	for i := uint64(1); i < n && delay < most; i++ {
		delay *= 2
	}
	return min(delay, most)
}

// ConsecutiveFailures returns the number of snapshots that failed since
// the last successful one (0 after a success or before any attempt):
// Redis's aof_rewrites_consecutive_failures.
func (d *DB) ConsecutiveFailures() uint64 { return d.consecFail.Load() }

// SetSaveRules replaces the save rules (nil disables snapshots by changes
// and time). Safe to call at any time (CONFIG SET save).
func (d *DB) SetSaveRules(rules []SaveRule) {
	d.auto.mu.Lock()
	d.auto.save = append([]SaveRule(nil), rules...)
	d.auto.mu.Unlock()
}

// SaveRules returns the current save rules.
func (d *DB) SaveRules() []SaveRule {
	d.auto.mu.Lock()
	defer d.auto.mu.Unlock()
	return append([]SaveRule(nil), d.auto.save...)
}

// SetAutoRewrite sets Redis's auto-aof-rewrite-percentage (0 disables) and
// auto-aof-rewrite-min-size. In probly an AOF rewrite is a snapshot: it
// writes dump.pdb and deletes the AOF generations it covers. It is due
// when dump.pdb plus the AOF to replay exceed minSize bytes and have grown
// by at least percent % over the size of dump.pdb at the last snapshot,
// that is, when the AOF alone reaches percent % of the snapshot (exactly
// Redis 7's rule, with dump.pdb as the base file). Without a snapshot the
// base counts as 1 byte, so the first rewrite happens at minSize. Negative
// values are treated as 0.
func (d *DB) SetAutoRewrite(percent, minSize int64) {
	d.auto.mu.Lock()
	d.auto.pct, d.auto.minSize = max(percent, 0), max(minSize, 0)
	d.auto.mu.Unlock()
}

// AutoRewrite returns the settings of SetAutoRewrite.
func (d *DB) AutoRewrite() (percent, minSize int64) {
	d.auto.mu.Lock()
	defer d.auto.mu.Unlock()
	return d.auto.pct, d.auto.minSize
}

// StartAuto starts the scheduler of automatic snapshots for store: ten
// times a second it checks the save rules, the AOF growth and, after a
// failed AOF write, whether writes can be resumed, and starts a background
// snapshot when one is due (never while one runs). After a failed attempt
// it waits RetryDelay before the next automatic one: 5 s (Redis's retry
// delay), doubling with each consecutive failure up to 30 s, reset by a
// success; SAVE and BGSAVE are not delayed. A retry after a failed AOF
// write reuses the generation the failed attempt switched to, so retries
// on a full disk create at most one new AOF file. It stops at Close.
// Calling it twice is an error.
func (d *DB) StartAuto(store *keyspace.Store) error {
	if store == nil {
		return fmt.Errorf("%w: nil store", ErrInvalidOptions)
	}
	if !d.auto.started.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: StartAuto called twice", ErrInvalidOptions)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing {
		return ErrClosed
	}
	d.bgWG.Add(1)
	go func() {
		defer d.bgWG.Done()
		t := time.NewTicker(autoInterval)
		defer t.Stop()
		for {
			select {
			case <-d.stop:
				return
			case now := <-t.C:
				d.autoCheck(store, now)
			}
		}
	}()
	return nil
}

// due reports which automatic snapshot, if any, is due at now.
func (d *DB) due(now time.Time) (Trigger, bool) {
	if d.snapping.Load() || d.failure() != nil {
		return 0, false
	}
	if wait := d.RetryDelay(); wait > 0 && now.Sub(time.Unix(0, d.lastTry.Load())) < wait {
		return 0, false
	}
	if d.outOfSync() != nil {
		return TriggerResync, true
	}
	d.auto.mu.Lock()
	rules, pct, minSize := d.auto.save, d.auto.pct, d.auto.minSize
	d.auto.mu.Unlock()
	changes := d.Changes()
	since := now.Sub(d.LastSave())
	for _, r := range rules {
		if changes >= uint64(r.Changes) && since > time.Duration(r.Seconds)*time.Second {
			return TriggerSave, true
		}
	}
	if pct > 0 {
		base := d.baseSize.Load()
		cur := base + d.AOFSize()
		if cur > minSize && (cur*100/max(base, 1))-100 >= pct {
			return TriggerRewrite, true
		}
	}
	return 0, false
}

// autoCheck starts the snapshot that is due at now, if any, and returns
// its trigger.
func (d *DB) autoCheck(store *keyspace.Store, now time.Time) (Trigger, bool) {
	trig, ok := d.due(now)
	if !ok {
		return 0, false
	}
	err := d.bgSnapshot(store, trig)
	switch {
	case err == nil:
		d.log.Info("persist: automatic snapshot started", "trigger", trig.String(),
			"changes", d.Changes(), "aof_bytes", d.AOFSize())
		return trig, true
	case errors.Is(err, ErrSnapshotInProgress), errors.Is(err, ErrClosed):
	default:
		d.log.Error("persist: cannot start automatic snapshot", "trigger", trig.String(), "err", err)
	}
	return 0, false
}

// snapStats counts snapshots.
type snapStats struct {
	ok, failed atomic.Uint64
	byTrigger  [numTriggers]atomic.Uint64
	lastDur    atomic.Int64
	lastStall  atomic.Int64
	maxStall   atomic.Int64
}

func (s *snapStats) record(t Trigger, took, stall time.Duration) {
	s.ok.Add(1)
	if t < numTriggers {
		s.byTrigger[t].Add(1)
	}
	s.lastDur.Store(int64(took))
	s.lastStall.Store(int64(stall))
	for {
		m := s.maxStall.Load()
		if int64(stall) <= m || s.maxStall.CompareAndSwap(m, int64(stall)) {
			break
		}
	}
}

// SnapshotStats describes the snapshots since Open, for metrics and INFO.
type SnapshotStats struct {
	// Succeeded counts completed snapshots; each one also compacted the
	// AOF, so this is the number of AOF rewrites (see Rewrites).
	Succeeded uint64
	// Failed counts snapshots that failed (the previous files stayed).
	Failed uint64
	// ConsecutiveFailures counts the snapshots that failed since the last
	// success (see DB.ConsecutiveFailures).
	ConsecutiveFailures uint64
	// ByTrigger counts completed snapshots by Trigger.String():
	// "manual", "save", "aof-rewrite", "resync", "shutdown".
	ByTrigger map[string]uint64
	// LastDuration is how long the last completed snapshot took, from
	// its start to dump.pdb being durable.
	LastDuration time.Duration
	// LastStall and MaxStall are how long writers were blocked while the
	// cut was taken (all shard locks held), last and worst.
	LastStall, MaxStall time.Duration
	// BaseSize is the size of dump.pdb (0 if there is none): the base of
	// the AOF growth rule.
	BaseSize int64
}

// SnapshotStats returns the snapshot counters.
func (d *DB) SnapshotStats() SnapshotStats {
	st := SnapshotStats{
		Succeeded:           d.stats.ok.Load(),
		Failed:              d.stats.failed.Load(),
		ConsecutiveFailures: d.consecFail.Load(),
		ByTrigger:           make(map[string]uint64, numTriggers),
		LastDuration:        time.Duration(d.stats.lastDur.Load()),
		LastStall:           time.Duration(d.stats.lastStall.Load()),
		MaxStall:            time.Duration(d.stats.maxStall.Load()),
		BaseSize:            d.baseSize.Load(),
	}
	for t := range numTriggers {
		st.ByTrigger[t.String()] = d.stats.byTrigger[t].Load()
	}
	return st
}

// Rewrites returns the number of AOF rewrites since Open. Every completed
// snapshot rewrites the AOF (the generations it covers are deleted), so
// this counts completed snapshots of every trigger; SnapshotStats splits
// them by trigger.
func (d *DB) Rewrites() uint64 { return d.stats.ok.Load() }
