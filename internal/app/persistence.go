package app

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/persist"
)

// Defaults of the automatic snapshot settings (Redis 7's); the CONFIG
// parameters save, auto-aof-rewrite-percentage and
// auto-aof-rewrite-min-size start with them unless Options.Config sets
// them.
const (
	DefaultSave                     = persist.DefaultSave
	DefaultAutoAOFRewritePercentage = "100"
	DefaultAutoAOFRewriteMinSize    = "64mb"
)

// autoSettings holds the automatic snapshot settings from the moment the
// CONFIG parameters are registered (before recovery, so that
// Options.Config can set them) and forwards them to the DB once it is
// open.
type autoSettings struct {
	mu      sync.Mutex
	db      *persist.DB
	save    []persist.SaveRule
	pct     int64
	minSize int64
}

// errSaveReply is Redis's reason for an invalid save setting.
const errSaveReply = config.Reason("Invalid save parameters")

func (a *autoSettings) setSave(v string) error {
	rules, err := persist.ParseSaveRules(v)
	if errors.Is(err, persist.ErrSaveRules) {
		return errSaveReply
	}
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.save = rules
	if a.db != nil {
		a.db.SetSaveRules(rules)
	}
	return nil
}

func (a *autoSettings) setRewrite(pct, minSize *int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if pct != nil {
		a.pct = *pct
	}
	if minSize != nil {
		a.minSize = *minSize
	}
	if a.db != nil {
		a.db.SetAutoRewrite(a.pct, a.minSize)
	}
}

// start hands the settings to db and starts its snapshot scheduler.
func (a *autoSettings) start(db *persist.DB, store *keyspace.Store) error {
	a.mu.Lock()
	a.db = db
	db.SetSaveRules(a.save)
	db.SetAutoRewrite(a.pct, a.minSize)
	a.mu.Unlock()
	return db.StartAuto(store)
}

// registerPersistenceConfig exposes the persistence settings to CONFIG
// GET/SET (redis-benchmark and other tools read "save" and "appendonly").
// appendonly, appendfsync and dir are fixed for the life of the process:
// CONFIG SET refuses a different value. save, auto-aof-rewrite-percentage
// and auto-aof-rewrite-min-size change the automatic snapshots at once.
func registerPersistenceConfig(cfg *config.Registry, o Options) *autoSettings {
	// Fixed for the process: a value of the wrong form gets Redis's
	// reply, a different valid one Redis's refusal of a protected
	// setting (CONFIG SET dir) or this one's.
	fixed := func(name, value, form string, valid ...string) {
		cfg.Register(config.Param{Name: name, Default: value, Set: func(s string) error {
			switch {
			case s == value:
				return nil
			case len(valid) > 0 && !slices.Contains(valid, strings.ToLower(s)):
				return config.Reason(form)
			case name == "dir":
				return config.Reason("can't set protected config")
			case name == "appendonly":
				return errors.New("the AOF is always on: appendonly can only be yes")
			}
			return fmt.Errorf("%s can only be set at start-up", name)
		}})
	}
	fixed("appendonly", "yes", "argument must be 'yes' or 'no'", "yes", "no")
	fixed("appendfsync", o.AppendFsync, "argument(s) must be one of the following: everysec, always, no", "everysec", "always", "no")
	fixed("dir", o.Dir, "")

	a := &autoSettings{}
	cfg.Register(config.Param{Name: "save", Default: DefaultSave, Set: a.setSave, Lines: saveLines})
	cfg.Register(config.Param{Name: "auto-aof-rewrite-percentage", Default: DefaultAutoAOFRewritePercentage,
		Set: func(s string) error {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return errors.New("argument couldn't be parsed into an integer")
			}
			if n < 0 || n > math.MaxInt32 {
				return fmt.Errorf("argument must be between 0 and %d inclusive", math.MaxInt32)
			}
			a.setRewrite(&n, nil)
			return nil
		}})
	cfg.Register(config.Param{Name: "auto-aof-rewrite-min-size", Default: DefaultAutoAOFRewriteMinSize, Memory: true,
		Set: func(s string) error {
			n, err := config.ParseMemory(s)
			if err != nil {
				return errors.New("argument must be a memory value")
			}
			if n > math.MaxInt64 {
				return fmt.Errorf("argument must be between 0 and %d inclusive", int64(math.MaxInt64))
			}
			m := int64(n)
			a.setRewrite(nil, &m)
			return nil
		}})
	return a
}

// saveLines writes save one pair per line in CONFIG REWRITE, as Redis
// does ("900 1 300 10" → "900 1", "300 10"; "" stays one line).
func saveLines(v string) []string {
	f := strings.Fields(v)
	if len(f) == 0 || len(f)%2 != 0 {
		return []string{v}
	}
	out := make([]string, 0, len(f)/2)
	for i := 0; i < len(f); i += 2 {
		out = append(out, f[i]+" "+f[i+1])
	}
	return out
}
