// Package bf implements RedisBloom's Bloom filter commands (BF.*) on top of
// internal/redisbloom, byte-exact to spec redis-compat.md §1.1–§1.4 and
// the bf-* configuration of §3.
//
// Persistence: every successful mutation logs its *effect* in canonical
// form, so replaying the records through this same command table against
// the previous state reproduces the state exactly, whatever the
// configuration at replay time:
//
//	_BF.CREATE key <error> <capacity> <expansion> SCALING|NONSCALING
//	    a new, empty chain with explicit parameters (error rate already
//	    capped, printed in shortest round-trip form). Logged by BF.RESERVE,
//	    and by BF.ADD / BF.MADD / BF.INSERT when they create the key.
//	BF.MADD key item…
//	    the items that were actually added (reply 1), in order. Items that
//	    were present change nothing and are not logged; a command that
//	    added nothing logs nothing.
//	BF.LOADCHUNK key <iter> <data>
//	    logged as received (after success).
//
// Failed commands log nothing. _BF.CREATE is an internal command with a
// fixed positional layout: BF.RESERVE cannot serve as the canonical record
// because its option scan also matches the key name (a key called
// NONSCALING or EXPANSION) and because it cannot express a non-scaling
// filter's recorded expansion. It is a normal entry of the command table
// (so it shows up in COMMAND); calling it by hand is harmless: it
// validates its arguments and behaves like BF.RESERVE.
package bf

import (
	"bytes"
	"errors"
	"github.com/probly/probly/internal/command/argparse"
	"strconv"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/redisbloom"
)

// Reply strings (RedisBloom 8.x; spec §1.1–§1.2).
const (
	errWrongType      = command.ErrWrongType
	errNotFound       = "ERR not found"
	errItemExists     = command.ErrItemExists
	errBadErrorRate   = "ERR bad error rate"
	errErrorRange     = "ERR error rate must be in the range (0.000000, 1.000000)"
	errBadCapacity    = "ERR bad capacity"
	errCapacityRange  = "ERR capacity must be in the range [1, 1073741824]"
	errNoExpansion    = "ERR no expansion"
	errBadExpansion   = "ERR bad expansion"
	errExpansionRange = "ERR expansion must be in the range [0, 32768]"
	errNonScalingExp  = "Nonscaling filters cannot expand"
	errInsBadError    = "Bad error rate"
	errInsBadExp      = "Bad expansion"
	errInsBadCapacity = "Bad capacity"
	errUnknownArg     = "Unknown argument received"
	errInvalidInfo    = "Invalid information value"
	errScanIter       = "Second argument must be numeric"
	errLoadIter       = "ERR Second argument must be numeric"
	errCreateArgs     = "ERR invalid _bf.create arguments"
)

// Canonical record names.
var (
	recCreate    = []byte("_BF.CREATE")
	recMAdd      = []byte("BF.MADD")
	recLoadChunk = []byte("BF.LOADCHUNK")
	tokScaling   = []byte("SCALING")
	tokNonScale  = []byte("NONSCALING")
)

type handlers struct{ s *settings }

// Register adds every BF.* command (and the internal _BF.CREATE) to t and
// the bf-* parameters to cfg (cfg may be nil: defaults are then fixed).
func Register(t *command.Table, cfg *config.Registry) {
	h := &handlers{s: newSettings()}
	if cfg != nil {
		for _, p := range h.s.params() {
			cfg.Register(p)
		}
	}
	t.Add(h.specs()...)
}

func arityError(c *command.Ctx, name string) { c.R.Error(command.ArityError(name)) }

func createRecord(key []byte, p redisbloom.Params) [][]byte {
	mode := tokScaling
	if p.NonScaling {
		mode = tokNonScale
	}
	return [][]byte{recCreate, key,
		[]byte(formatFloat(p.ErrorRate)),
		strconv.AppendUint(nil, p.Capacity, 10),
		strconv.AppendUint(nil, uint64(p.Expansion), 10),
		mode}
}

// defaultParams returns the parameters of an autocreated filter.
func (h *handlers) defaultParams() redisbloom.Params {
	e, c, x := h.s.defaults()
	return redisbloom.Params{ErrorRate: e, Capacity: c, Expansion: x, NonScaling: x == 0}
}

// ---- creation ----

// reserveNew reserves, against maxmemory, the memory of key holding the
// chain redisbloom.New(p, budget) would create, before it is allocated.
// On refusal (the filter does not fit maxmemory's room) it answers
// RedisBloom's "ERR Insufficient memory to create filter", as for a
// filter over the per-filter budget, and reports false. Parameters New rejects
// reserve nothing: New reports its own error.
func reserveNew(c *command.Ctx, key []byte, p redisbloom.Params, budget uint64) bool {
	n, ok := redisbloom.NewMemoryUsage(p, budget)
	if !ok || c.Reserve(uint64(len(key))+n) {
		return true
	}
	c.R.Error(string(redisbloom.ErrInsufficientMemory))
	return false
}

// createKey creates key with p unless it exists (BF.RESERVE,
// _BF.CREATE); see command.CreateKey.
func (h *handlers) createKey(c *command.Ctx, key []byte, p redisbloom.Params) {
	budget := h.s.budgetFor(c)
	command.CreateKey(c, key, command.Creator{
		TypeName: redisbloom.TypeName,
		Size:     func() (uint64, bool) { return redisbloom.NewMemoryUsage(p, budget) },
		Build:    func() (keyspace.Value, error) { return redisbloom.New(p, budget) },
		Record:   createRecord(key, p),
		NoRoom:   string(redisbloom.ErrInsufficientMemory), // does not fit maxmemory's room
	})
}

// argIndex is RMUtil_ArgIndex: the first argv position (0 = command name)
// whose whole token equals name case-insensitively, or -1.
func argIndex(args [][]byte, name string) int {
	for i, a := range args {
		if bytes.EqualFold(a, []byte(name)) {
			return i
		}
	}
	return -1
}

// BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING]
func (h *handlers) reserve(c *command.Ctx) {
	args := c.Args
	if len(args) < 4 || len(args) > 7 {
		arityError(c, "bf.reserve")
		return
	}
	er, ok := argparse.Float(args[2])
	if !ok {
		c.R.Error(errBadErrorRate)
		return
	}
	if !(er > 0 && er < 1) {
		c.R.Error(errErrorRange)
		return
	}
	capacity, ok := argparse.Int(args[3])
	if !ok {
		c.R.Error(errBadCapacity)
		return
	}
	if capacity < 1 || capacity > maxCapacity {
		c.R.Error(errCapacityRange)
		return
	}
	nonScaling := argIndex(args, "NONSCALING") >= 0
	_, _, expansion := h.s.defaults()
	if i := argIndex(args, "EXPANSION"); i >= 0 {
		if i == len(args)-1 {
			c.R.Error(errNoExpansion)
			return
		}
		x, ok := argparse.Int(args[i+1])
		if !ok {
			c.R.Error(errBadExpansion)
			return
		}
		if x == 0 {
			nonScaling = true
		} else if nonScaling {
			c.R.Error(errNonScalingExp)
			return
		}
		if x < 0 || x > maxExpansion {
			c.R.Error(errExpansionRange)
			return
		}
		expansion = uint32(x)
	}
	h.createKey(c, args[1], redisbloom.Params{
		ErrorRate:  min(er, maxErrorRate),
		Capacity:   uint64(capacity),
		Expansion:  expansion,
		NonScaling: nonScaling || expansion == 0,
	})
}

// _BF.CREATE key error capacity expansion SCALING|NONSCALING (internal; the
// canonical create record).
func (h *handlers) create(c *command.Ctx) {
	args := c.Args
	er, ok1 := argparse.Float(args[2])
	capacity, ok2 := argparse.Int(args[3])
	x, ok3 := argparse.Int(args[4])
	nonScaling := bytes.EqualFold(args[5], tokNonScale)
	if !ok1 || !ok2 || !ok3 || !(er > 0 && er < 1) || capacity < 1 || capacity > maxCapacity ||
		x < 0 || x > maxExpansion || (!nonScaling && !bytes.EqualFold(args[5], tokScaling)) ||
		(!nonScaling && x == 0) {
		c.R.Error(errCreateArgs)
		return
	}
	h.createKey(c, args[1], redisbloom.Params{
		ErrorRate:  min(er, maxErrorRate),
		Capacity:   uint64(capacity),
		Expansion:  uint32(x),
		NonScaling: nonScaling,
	})
}

// ---- adding ----

// addReply selects how addItems answers.
type addReply int

const (
	replySingle addReply = iota // BF.ADD: one boolean or the error
	replyArray                  // BF.MADD, BF.INSERT: array truncated at the first error
)

// addItems adds items to key, creating it with p if missing (unless
// noCreate). The chain is allocated outside the shard lock: the first pass
// finds the key missing, the filter is built, and a second pass installs it
// (or uses a chain another client created meanwhile). An item that makes
// the chain grow reserves the new link's memory first (under the shard
// lock: Reserve does not block); if maxmemory refuses it, that item gets
// the OOM error and, as for any item error, the items after it are not
// added (the reply array ends with the error).
func (h *handlers) addItems(c *command.Ctx, key []byte, items [][]byte, p redisbloom.Params, noCreate bool, mode addReply) {
	var (
		pre     *redisbloom.Chain
		results []bool
		itemErr error
		// BF.ADD's result and record fit these (no allocation).
		oneResult [1]bool
		oneRec    [3][]byte
	)
	for {
		needCreate := false
		ok := c.Update(key, func(tx *keyspace.Txn) string {
			ch, st := command.As[*redisbloom.Chain](tx.Value)
			switch st {
			case command.KeyWrongType:
				return errWrongType
			case command.KeyMissing:
				if noCreate {
					return errNotFound
				}
				if pre == nil {
					needCreate = true
					return ""
				}
				ch = pre
				tx.Set(ch)
				_ = tx.Log(createRecord(key, p)...)
			}
			ch.SetBudget(h.s.budgetFor(c))
			if len(items) <= len(oneResult) {
				results = oneResult[:0]
			} else {
				results = make([]bool, 0, len(items))
			}
			var rec [][]byte
			for _, it := range items {
				// A new link is reserved against maxmemory before it is
				// allocated; one that does not fit maxmemory's room gets
				// the error of a link over the per-filter budget, for
				// this item and the rest.
				added, err := ch.AddReserve(it, c.Reserve)
				if errors.Is(err, redisbloom.ErrOOM) {
					err = redisbloom.ErrProblemInserting
				}
				if err != nil {
					itemErr = err
					break
				}
				results = append(results, added)
				if added {
					if rec == nil {
						if 2+len(items) <= len(oneRec) {
							rec = oneRec[:2]
						} else {
							rec = make([][]byte, 2, 2+len(items))
						}
						rec[0], rec[1] = recMAdd, key
					}
					rec = append(rec, it)
				}
			}
			if rec != nil {
				_ = tx.Log(rec...)
			}
			return ""
		})
		if needCreate {
			budget := h.s.budgetFor(c)
			if !reserveNew(c, key, p, budget) {
				return
			}
			var err error
			if pre, err = redisbloom.New(p, budget); err != nil {
				c.R.Error(err.Error())
				return
			}
			continue
		}
		switch {
		case !ok:
		case mode == replySingle:
			if itemErr != nil {
				c.R.Error(itemErr.Error())
			} else {
				c.R.Bool(results[0])
			}
		default:
			n := len(results)
			if itemErr != nil {
				n++
			}
			c.R.Array(n)
			for _, b := range results {
				c.R.Bool(b)
			}
			if itemErr != nil {
				c.R.Error(itemErr.Error())
			}
		}
		return
	}
}

// BF.ADD key item
func (h *handlers) add(c *command.Ctx) {
	h.addItems(c, c.Args[1], c.Args[2:3], h.defaultParams(), false, replySingle)
}

// BF.MADD key item…
func (h *handlers) madd(c *command.Ctx) {
	h.addItems(c, c.Args[1], c.Args[2:], h.defaultParams(), false, replyArray)
}

func lower(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// letter returns the lowercased i-th byte of a, or 0 past its end (C's
// terminating NUL).
func letter(a []byte, i int) byte {
	if i < len(a) {
		return lower(a[i])
	}
	return 0
}

// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item…
//
// Options are recognised by their letters only, as RedisBloom does: i →
// ITEMS, e+r → ERROR, other e → EXPANSION, c → CAPACITY, n+?+c → NOCREATE,
// other n → NONSCALING.
func (h *handlers) insert(c *command.Ctx) {
	args := c.Args
	p := h.defaultParams()
	explicitNonScaling, noCreate := false, false
	var items [][]byte
	haveItems := false
	for i := 2; i < len(args) && !haveItems; {
		a := args[i]
		switch letter(a, 0) {
		case 'i':
			items, haveItems = args[i+1:], true
			continue
		case 'n':
			if letter(a, 2) == 'c' {
				noCreate = true
			} else {
				explicitNonScaling = true
			}
			i++
			continue
		case 'e', 'c':
		default:
			c.R.Error(errUnknownArg)
			return
		}
		if i+1 >= len(args) {
			arityError(c, "bf.insert")
			return
		}
		v := args[i+1]
		switch {
		case letter(a, 0) == 'c':
			n, ok := argparse.Int(v)
			if !ok || n < 1 || n > maxCapacity {
				c.R.Error(errInsBadCapacity)
				return
			}
			p.Capacity = uint64(n)
		case letter(a, 1) == 'r':
			f, ok := argparse.Float(v)
			if !ok || !(f > 0 && f < 1) {
				c.R.Error(errInsBadError)
				return
			}
			p.ErrorRate = min(f, maxErrorRate)
		default:
			n, ok := argparse.Int(v)
			if !ok || n < 0 || n > maxExpansion {
				c.R.Error(errInsBadExp)
				return
			}
			p.Expansion = uint32(n)
		}
		i += 2
	}
	if !haveItems || len(items) == 0 {
		arityError(c, "bf.insert")
		return
	}
	p.NonScaling = explicitNonScaling || p.Expansion == 0
	h.addItems(c, args[1], items, p, noCreate, replyArray)
}

// ---- reading ----

// BF.EXISTS key item: false for a missing key and for a key of another type.
func (h *handlers) exists(c *command.Ctx) {
	item := c.Args[2]
	found := false
	c.Store.View(c.Args[1], func(v keyspace.Value) {
		if ch, st := command.As[*redisbloom.Chain](v); st == command.KeyOK {
			found = ch.Exists(item)
		}
	})
	c.R.Bool(found)
}

// BF.MEXISTS key item…
func (h *handlers) mexists(c *command.Ctx) {
	items := c.Args[2:]
	found := make([]bool, len(items))
	c.Store.View(c.Args[1], func(v keyspace.Value) {
		if ch, st := command.As[*redisbloom.Chain](v); st == command.KeyOK {
			for i, it := range items {
				found[i] = ch.Exists(it)
			}
		}
	})
	c.R.Array(len(found))
	for _, f := range found {
		c.R.Bool(f)
	}
}

// view runs fn on the chain at key, answering ERR not found / WRONGTYPE
// itself; it reports whether fn ran.
func view(c *command.Ctx, fn func(ch *redisbloom.Chain)) bool {
	return command.View(c, c.Args[1], errNotFound, fn)
}

var infoFields = []struct {
	keyword, name string
}{
	{"capacity", "Capacity"},
	{"size", "Size"},
	{"filters", "Number of filters"},
	{"items", "Number of items inserted"},
	{"expansion", "Expansion rate"},
}

// BF.INFO key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION]
func (h *handlers) info(c *command.Ctx) {
	if len(c.Args) > 3 {
		arityError(c, "bf.info")
		return
	}
	var vals [5]uint64
	nonScaling := false
	if !view(c, func(ch *redisbloom.Chain) {
		vals = [5]uint64{ch.Capacity(), ch.InfoSize(), uint64(ch.NumFilters()), ch.Card(), uint64(ch.Expansion())}
		nonScaling = ch.NonScaling()
	}) {
		return
	}
	value := func(i int) {
		if i == 4 && nonScaling {
			c.R.Null()
			return
		}
		c.R.Int(int64(vals[i]))
	}
	if len(c.Args) == 3 {
		for i, f := range infoFields {
			if bytes.EqualFold(c.Args[2], []byte(f.keyword)) {
				if c.R.Proto >= 3 {
					c.R.Map(1)
					c.R.SimpleString(f.name)
				} else {
					c.R.Array(1)
				}
				value(i)
				return
			}
		}
		c.R.Error(errInvalidInfo)
		return
	}
	c.R.Map(len(infoFields))
	for i, f := range infoFields {
		c.R.SimpleString(f.name)
		value(i)
	}
}

// BF.CARD key: 0 for a missing key, WRONGTYPE for another type.
func (h *handlers) card(c *command.Ctx) {
	var n uint64
	wrong := false
	c.Store.View(c.Args[1], func(v keyspace.Value) {
		switch ch, st := command.As[*redisbloom.Chain](v); st {
		case command.KeyOK:
			n = ch.Card()
		case command.KeyWrongType:
			wrong = true
		}
	})
	if wrong {
		c.R.Error(errWrongType)
		return
	}
	c.R.Int(int64(n))
}

// BF.DEBUG key
func (h *handlers) debug(c *command.Ctx) {
	var lines []string
	if !view(c, func(ch *redisbloom.Chain) { lines = ch.DebugLines() }) {
		return
	}
	c.R.Array(len(lines))
	for _, l := range lines {
		c.R.BulkString(l)
	}
}

// ---- dump / load ----

// BF.SCANDUMP key iter → [next, chunk]
func (h *handlers) scandump(c *command.Ctx) {
	iter, ok := argparse.Int(c.Args[2])
	if !ok {
		c.R.Error(errScanIter)
		return
	}
	var next int64
	var data []byte
	if !view(c, func(ch *redisbloom.Chain) { next, data = ch.DumpChunk(iter) }) {
		return
	}
	c.R.Array(2)
	c.R.Int(next)
	c.R.Bulk(data)
}

// BF.LOADCHUNK key iter data
func (h *handlers) loadchunk(c *command.Ctx) {
	key, data := c.Args[1], c.Args[3]
	iter, ok := argparse.Int(c.Args[2])
	if !ok {
		c.R.Error(errLoadIter)
		return
	}
	var pre *redisbloom.Chain
	for {
		needHeader := false
		ok := c.Update(key, func(tx *keyspace.Txn) string {
			ch, st := command.As[*redisbloom.Chain](tx.Value)
			switch st {
			case command.KeyWrongType:
				return errWrongType
			case command.KeyMissing:
				if iter != 1 {
					return errNotFound
				}
				if pre == nil {
					needHeader = true
					return ""
				}
				tx.Set(pre)
			default:
				if err := ch.LoadChunk(iter, data); err != nil {
					return err.Error()
				}
			}
			_ = tx.Log(recLoadChunk, key, strconv.AppendInt(nil, iter, 10), data)
			return ""
		})
		if needHeader {
			budget := h.s.budgetFor(c)
			if n, ok := redisbloom.HeaderMemoryUsage(data, budget); ok && !c.Reserve(uint64(len(key))+n) {
				c.R.Error(string(redisbloom.ErrInsufficientMemory)) // does not fit maxmemory's room
				return
			}
			var err error
			if pre, err = redisbloom.DecodeHeader(data, budget); err != nil {
				c.R.Error(err.Error())
				return
			}
			continue
		}
		if ok {
			c.R.OK()
		}
		return
	}
}
