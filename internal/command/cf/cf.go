// Package cf implements RedisBloom's cuckoo filter commands (CF.*) on top
// of internal/rediscuckoo, byte-exact to spec redis-compat.md §1.1, §2 and
// the cf-* configuration of §3.
//
// Persistence: every successful mutation logs its *effect* in canonical
// form, so replaying the records through this same command table against
// the previous state reproduces the state exactly, whatever the
// configuration at replay time:
//
//	_CF.CREATE key <capacity> <bucketsize> <maxiterations> <expansion>
//	    a new, empty filter with explicit parameters. Logged by CF.RESERVE,
//	    and by CF.ADD / CF.ADDNX / CF.INSERT / CF.INSERTNX when they create
//	    the key (with the cf-* values of that moment).
//	_CF.ADD key item…
//	    the items that were actually inserted, in order (a plain insert of
//	    each, without the cf-max-expansions check, which already passed).
//	    Items that were present (NX), or found no room, changed nothing and
//	    are not logged; a command that inserted nothing logs nothing.
//	CF.DEL key item
//	    only when it deleted a fingerprint; replaying it repeats the delete
//	    and the automatic compaction that may follow, both deterministic.
//	CF.COMPACT key
//	    always (it resets the delete counter and may move fingerprints).
//	_CF.LOADHEADER key <38-byte header>
//	    CF.LOADCHUNK key 1 <header> that created the key, validated on
//	    replay against the fixed limits rather than cf-max-expansions.
//	CF.LOADCHUNK key <pos> <data>
//	    a data chunk, logged as received (after success).
//
// Failed commands log nothing, with one RedisBloom quirk: CF.ADD/INSERT on
// a missing key create it before the "Maximum expansions reached" check
// (only possible with cf-max-expansions 1), so that error still logs the
// _CF.CREATE of the key it left behind. The internal commands are normal
// entries of the command table; calling them by hand is harmless: they
// validate their arguments and are bounded by the same budgets.
package cf

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/argparse"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/rediscuckoo"
)

// Reply strings (RedisBloom 8.x; spec §1.1, §2.1).
const (
	errWrongType       = command.ErrWrongType
	errNotFound        = "ERR not found"
	errItemExists      = command.ErrItemExists
	errBadCapacity     = "Bad capacity"
	errParseMaxIter    = "Couldn't parse MAXITERATIONS"
	errMaxIterRange    = "MAXITERATIONS: value must be in the range [1, 65535]"
	errParseBucketSize = "Couldn't parse BUCKETSIZE"
	errBucketSizeRange = "BUCKETSIZE: value must be in the range [1, 255]"
	errParseExpansion  = "Couldn't parse EXPANSION"
	errExpansionRange  = "EXPANSION: value must be in the range [0, 32768]"
	errCapacityRange   = "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"
	errInsCapRange     = "Capacity must be in the range [cf-bucket-size * 2, 1073741824]"
	errUnknownArg      = "Unknown argument received"
	errMaxExpansions   = "Maximum expansions reached"
	errDelNotFound     = "Not found"
	errCompactNotFound = "Cuckoo filter was not found"
	errInvalidPosition = "Invalid position"
	errCreateArgs      = "ERR invalid _cf.create arguments"
)

// Canonical record names.
var (
	recCreate     = []byte("_CF.CREATE")
	recAdd        = []byte("_CF.ADD")
	recDel        = []byte("CF.DEL")
	recCompact    = []byte("CF.COMPACT")
	recLoadHeader = []byte("_CF.LOADHEADER")
	recLoadChunk  = []byte("CF.LOADCHUNK")
)

type handlers struct{ s *settings }

// Register adds every CF.* command (and the internal _CF.* records) to t
// and the cf-* parameters to cfg (cfg may be nil: defaults are then
// fixed).
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

func u64(n uint64) []byte { return strconv.AppendUint(nil, n, 10) }

func createRecord(key []byte, p rediscuckoo.Params) [][]byte {
	return [][]byte{recCreate, key, u64(p.Capacity), u64(uint64(p.BucketSize)),
		u64(uint64(p.MaxIterations)), u64(uint64(p.Expansion))}
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

func lower(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// ---- creation ----

// reserveNew reserves, against maxmemory, the memory of key holding the
// filter rediscuckoo.New(p, budget) would create, before it is allocated.
// On refusal (the filter does not fit maxmemory's room) it answers
// RedisBloom's "ERR Insufficient memory to create filter", as for a
// filter over the per-filter budget, and reports false. Parameters New rejects
// reserve nothing: New reports its own error.
func reserveNew(c *command.Ctx, key []byte, p rediscuckoo.Params, budget uint64) bool {
	n, ok := rediscuckoo.NewMemoryUsage(p, budget)
	if !ok || c.Reserve(uint64(len(key))+n) {
		return true
	}
	c.R.Error(string(rediscuckoo.ErrCreateMemory))
	return false
}

// createKey creates key with p unless it exists (CF.RESERVE,
// _CF.CREATE); see command.CreateKey.
func (h *handlers) createKey(c *command.Ctx, key []byte, p rediscuckoo.Params) {
	budget := h.s.budgetFor(c)
	command.CreateKey(c, key, command.Creator{
		TypeName: rediscuckoo.TypeName,
		Size:     func() (uint64, bool) { return rediscuckoo.NewMemoryUsage(p, budget) },
		Build:    func() (keyspace.Value, error) { return rediscuckoo.New(p, budget) },
		Record:   createRecord(key, p),
		NoRoom:   string(rediscuckoo.ErrCreateMemory), // does not fit maxmemory's room
	})
}

// reserveOption finds option name anywhere in argv (RMUtil_ArgIndex) and
// parses the token after it. found is false if the option is absent; ok
// is false if its value is missing or not an integer.
func reserveOption(args [][]byte, name string) (v int64, found, ok bool) {
	i := argIndex(args, name)
	if i < 0 {
		return 0, false, true
	}
	if i+1 >= len(args) {
		return 0, true, false
	}
	v, ok = argparse.Int(args[i+1])
	return v, true, ok
}

// CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]
//
// Options are found by RedisBloom's whole-argv scan, so a key named like an
// option also matches (CF.RESERVE EXPANSION 100 has expansion 100 → 128).
// Options that are not given take the cf-* configuration.
func (h *handlers) reserve(c *command.Ctx) {
	args := c.Args
	if len(args)%2 == 0 {
		arityError(c, "cf.reserve")
		return
	}
	capacity, ok := argparse.Int(args[2])
	if !ok {
		c.R.Error(errBadCapacity)
		return
	}
	p := h.s.defaults(0)
	// Checked in RedisBloom's order; each option's parse and range errors.
	for _, o := range []struct {
		name               string
		min, max           int64
		parseErr, rangeErr string
		dst                *uint16
	}{
		{"MAXITERATIONS", 1, rediscuckoo.MaxIterations, errParseMaxIter, errMaxIterRange, &p.MaxIterations},
		{"BUCKETSIZE", 1, rediscuckoo.MaxBucketSize, errParseBucketSize, errBucketSizeRange, &p.BucketSize},
		{"EXPANSION", 0, rediscuckoo.MaxExpansion, errParseExpansion, errExpansionRange, &p.Expansion},
	} {
		v, found, ok := reserveOption(args, o.name)
		switch {
		case !ok:
			c.R.Error(o.parseErr)
			return
		case !found:
			continue
		case v < o.min || v > o.max:
			c.R.Error(o.rangeErr)
			return
		}
		*o.dst = uint16(v)
	}
	if 2*int64(p.BucketSize) > capacity || capacity > rediscuckoo.MaxCapacity {
		c.R.Error(errCapacityRange)
		return
	}
	p.Capacity = uint64(capacity)
	h.createKey(c, args[1], p)
}

// _CF.CREATE key capacity bucketsize maxiterations expansion (internal; the
// canonical create record).
func (h *handlers) create(c *command.Ctx) {
	args := c.Args
	capacity, ok1 := argparse.Int(args[2])
	bs, ok2 := argparse.Int(args[3])
	iters, ok3 := argparse.Int(args[4])
	exp, ok4 := argparse.Int(args[5])
	if !ok1 || !ok2 || !ok3 || !ok4 || bs < 1 || bs > rediscuckoo.MaxBucketSize ||
		capacity < 2*bs || capacity > rediscuckoo.MaxCapacity ||
		iters < 1 || iters > rediscuckoo.MaxIterations || exp < 0 || exp > rediscuckoo.MaxExpansion {
		c.R.Error(errCreateArgs)
		return
	}
	h.createKey(c, args[1], rediscuckoo.Params{
		Capacity: uint64(capacity), BucketSize: uint16(bs), MaxIterations: uint16(iters), Expansion: uint16(exp),
	})
}

// ---- inserting ----

// addMode selects how addItems inserts and answers.
type addMode int

const (
	modeAdd      addMode = iota // CF.ADD: one boolean, or the error
	modeAddNX                   // CF.ADDNX: one boolean (false: exists), or the error
	modeInsert                  // CF.INSERT: array of booleans; no space is :-1 / #f
	modeInsertNX                // CF.INSERTNX: array of integers 1, 0, -1
)

func (m addMode) nx() bool    { return m == modeAddNX || m == modeInsertNX }
func (m addMode) multi() bool { return m == modeInsert || m == modeInsertNX }

// Per-item outcomes.
const (
	resNoSpace  = -1
	resExists   = 0
	resInserted = 1
	resError    = 2 // see itemErr
)

// addItems inserts items into key, creating it with p if missing (unless
// noCreate). The filter is allocated outside the shard lock: the first
// pass finds the key missing, the filter is built, and a second pass
// installs it (or uses a filter another client created meanwhile).
func (h *handlers) addItems(c *command.Ctx, key []byte, items [][]byte, p rediscuckoo.Params, noCreate bool, mode addMode) {
	var (
		pre     *rediscuckoo.Filter
		results []int
		errs    []error
		// CF.ADD's result and record fit these (no allocation).
		oneResult [1]int
		oneRec    [3][]byte
	)
	for {
		needCreate := false
		ok := c.Update(key, func(tx *keyspace.Txn) string {
			f, st := command.As[*rediscuckoo.Filter](tx.Value)
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
				f = pre
				tx.Set(f)
				_ = tx.Log(createRecord(key, p)...)
			}
			if f.NumFilters() >= h.s.maxFilters() {
				return errMaxExpansions
			}
			f.SetBudget(h.s.budgetFor(c))
			if len(items) <= len(oneResult) {
				results = oneResult[:len(items)]
			} else {
				results = make([]int, len(items))
			}
			var rec [][]byte
			for i, it := range items {
				var err error
				inserted := true
				// A new sub-filter is reserved against maxmemory
				// before it is allocated; one that does not fit
				// maxmemory's room gets the error of a sub-filter over
				// the per-filter budget, for this item.
				if mode.nx() {
					inserted, err = f.InsertNXReserve(it, c.Reserve)
				} else {
					err = f.InsertReserve(it, c.Reserve)
				}
				if errors.Is(err, rediscuckoo.ErrOOM) {
					err = rediscuckoo.ErrInsufficientMemory
				}
				switch {
				case errors.Is(err, rediscuckoo.ErrFull):
					results[i] = resNoSpace
				case err != nil:
					results[i] = resError
					errs = append(errs, err)
				case !inserted:
					results[i] = resExists
				default:
					results[i] = resInserted
					if rec == nil {
						if 2+len(items) <= len(oneRec) {
							rec = oneRec[:2]
						} else {
							rec = make([][]byte, 2, 2+len(items))
						}
						rec[0], rec[1] = recAdd, key
					}
					rec = append(rec, it)
				}
				if err != nil && !mode.multi() {
					break
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
			if pre, err = rediscuckoo.New(p, budget); err != nil {
				c.R.Error(err.Error())
				return
			}
			continue
		}
		switch {
		case !ok:
		case !mode.multi():
			switch results[0] {
			case resNoSpace:
				c.R.Error(rediscuckoo.ErrFull.Error())
			case resError:
				c.R.Error(errs[0].Error())
			default:
				c.R.Bool(results[0] == resInserted)
			}
		default:
			c.R.Array(len(results))
			for _, r := range results {
				switch {
				case r == resError:
					c.R.Error(errs[0].Error())
					errs = errs[1:]
				case mode == modeInsert && r != resNoSpace:
					c.R.Bool(r == resInserted)
				case mode == modeInsert && c.R.Proto >= 3:
					c.R.Bool(false)
				default:
					c.R.Int(int64(r))
				}
			}
		}
		return
	}
}

// CF.ADD key item
func (h *handlers) add(c *command.Ctx) {
	h.addItems(c, c.Args[1], c.Args[2:3], h.s.defaults(h.s.initialSize.Load()), false, modeAdd)
}

// CF.ADDNX key item
func (h *handlers) addnx(c *command.Ctx) {
	h.addItems(c, c.Args[1], c.Args[2:3], h.s.defaults(h.s.initialSize.Load()), false, modeAddNX)
}

// CF.INSERT key [CAPACITY c] [NOCREATE] ITEMS item…
func (h *handlers) insert(c *command.Ctx) { h.insertCommon(c, "cf.insert", modeInsert) }

// CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS item…
func (h *handlers) insertnx(c *command.Ctx) { h.insertCommon(c, "cf.insertnx", modeInsertNX) }

// insertCommon parses CF.INSERT/CF.INSERTNX. Options are recognised by
// their first letter only, as RedisBloom does: c → CAPACITY, i → ITEMS
// (the rest of argv are items), n → NOCREATE; anything else is unknown.
// The capacity is checked against cf-bucket-size; options only matter when
// the key is created.
func (h *handlers) insertCommon(c *command.Ctx, name string, mode addMode) {
	args := c.Args
	p := h.s.defaults(h.s.initialSize.Load())
	noCreate := false
	itemsAt := -1
	for i := 2; i < len(args) && itemsAt < 0; {
		var first byte
		if len(args[i]) > 0 {
			first = lower(args[i][0])
		}
		switch first {
		case 'i':
			itemsAt = i + 1
		case 'n':
			noCreate = true
			i++
		case 'c':
			if i+1 >= len(args) {
				arityError(c, name)
				return
			}
			n, ok := argparse.Int(args[i+1])
			if !ok {
				c.R.Error(errBadCapacity)
				return
			}
			if n < 2*int64(p.BucketSize) || n > rediscuckoo.MaxCapacity {
				c.R.Error(errInsCapRange)
				return
			}
			p.Capacity = uint64(n)
			i += 2
		default:
			c.R.Error(errUnknownArg)
			return
		}
	}
	if itemsAt < 0 || itemsAt >= len(args) {
		arityError(c, name)
		return
	}
	h.addItems(c, args[1], args[itemsAt:], p, noCreate, mode)
}

// _CF.ADD key item… (internal; the canonical insert record): inserts every
// item into the existing filter, without the cf-max-expansions check. It
// stops at the first item that fails (replying that error) and logs the
// items inserted before it.
func (h *handlers) addRecord(c *command.Ctx) {
	key, items := c.Args[1], c.Args[2:]
	var itemErr error
	ok := c.Update(key, func(tx *keyspace.Txn) string {
		f, st := command.As[*rediscuckoo.Filter](tx.Value)
		switch st {
		case command.KeyMissing:
			return errNotFound
		case command.KeyWrongType:
			return errWrongType
		}
		f.SetBudget(h.s.budgetFor(c))
		n := 0
		for _, it := range items {
			if itemErr = f.InsertReserve(it, c.Reserve); itemErr != nil {
				break
			}
			n++
		}
		if n > 0 {
			_ = tx.Log(append([][]byte{recAdd, key}, items[:n]...)...)
		}
		return ""
	})
	switch {
	case !ok:
	case itemErr != nil:
		c.R.Error(itemErr.Error())
	default:
		c.R.OK()
	}
}

// ---- reading ----

// check answers CF.EXISTS, CF.MEXISTS and CF.COUNT: 0/false for a missing
// key and for a key of another type. The results go to dst's storage when
// it is large enough (a caller's stack array: no allocation).
func (h *handlers) check(c *command.Ctx, dst []uint64, fn func(f *rediscuckoo.Filter, item []byte) uint64) []uint64 {
	items := c.Args[2:]
	var out []uint64
	if len(items) <= cap(dst) {
		out = dst[:len(items)]
		clear(out)
	} else {
		out = make([]uint64, len(items))
	}
	c.Store.View(c.Args[1], func(v keyspace.Value) {
		if f, st := command.As[*rediscuckoo.Filter](v); st == command.KeyOK {
			for i, it := range items {
				out[i] = fn(f, it)
			}
		}
	})
	return out
}

func exists(f *rediscuckoo.Filter, item []byte) uint64 {
	if f.Exists(item) {
		return 1
	}
	return 0
}

// CF.EXISTS key item
func (h *handlers) exists(c *command.Ctx) {
	var one [1]uint64
	c.R.Bool(h.check(c, one[:], exists)[0] == 1)
}

// CF.MEXISTS key item…
func (h *handlers) mexists(c *command.Ctx) {
	out := h.check(c, nil, exists)
	c.R.Array(len(out))
	for _, x := range out {
		c.R.Bool(x == 1)
	}
}

// CF.COUNT key item
func (h *handlers) count(c *command.Ctx) {
	var one [1]uint64
	c.R.Int(int64(h.check(c, one[:], func(f *rediscuckoo.Filter, item []byte) uint64 { return f.Count(item) })[0]))
}

// view runs fn on the filter at key, answering ERR not found / WRONGTYPE
// itself; it reports whether fn ran.
func view(c *command.Ctx, fn func(f *rediscuckoo.Filter)) bool {
	return command.View(c, c.Args[1], errNotFound, fn)
}

var infoFields = []string{
	"Size", "Number of buckets", "Number of filters", "Number of items inserted",
	"Number of items deleted", "Bucket size", "Expansion rate", "Max iterations",
}

// CF.INFO key
func (h *handlers) info(c *command.Ctx) {
	var vals [8]uint64
	if !view(c, func(f *rediscuckoo.Filter) {
		vals = [8]uint64{f.InfoSize(), f.NumBuckets(), uint64(f.NumFilters()), f.Items(), f.Deletes(),
			uint64(f.BucketSize()), uint64(f.Expansion()), uint64(f.MaxIterations())}
	}) {
		return
	}
	c.R.Map(len(infoFields))
	for i, name := range infoFields {
		c.R.SimpleString(name)
		c.R.Int(int64(vals[i]))
	}
}

// CF.DEBUG key
func (h *handlers) debug(c *command.Ctx) {
	var s string
	if view(c, func(f *rediscuckoo.Filter) { s = f.Debug() }) {
		c.R.BulkString(s)
	}
}

// ---- deleting and compacting ----

// CF.DEL key item: "Not found" for a missing key or another type.
func (h *handlers) del(c *command.Ctx) {
	key, item := c.Args[1], c.Args[2]
	deleted := false
	if c.Update(key, func(tx *keyspace.Txn) string {
		f, st := command.As[*rediscuckoo.Filter](tx.Value)
		if st != command.KeyOK {
			return errDelNotFound
		}
		if deleted = f.Delete(item); deleted {
			_ = tx.Log(recDel, key, item)
		}
		return ""
	}) {
		c.R.Bool(deleted)
	}
}

// CF.COMPACT key: "Cuckoo filter was not found" for a missing key or
// another type.
func (h *handlers) compact(c *command.Ctx) {
	key := c.Args[1]
	if c.Update(key, func(tx *keyspace.Txn) string {
		f, st := command.As[*rediscuckoo.Filter](tx.Value)
		if st != command.KeyOK {
			return errCompactNotFound
		}
		f.Compact()
		_ = tx.Log(recCompact, key)
		return ""
	}) {
		c.R.OK()
	}
}

// ---- dump / load ----

// CF.SCANDUMP key pos → [next, chunk]
func (h *handlers) scandump(c *command.Ctx) {
	pos, ok := argparse.Int(c.Args[2])
	if !ok || pos < 0 {
		c.R.Error(errInvalidPosition)
		return
	}
	var next int64
	var data []byte
	if !view(c, func(f *rediscuckoo.Filter) {
		if f.Items() != 0 {
			next, data = f.DumpChunk(pos)
		}
	}) {
		return
	}
	c.R.Array(2)
	if data == nil {
		c.R.Int(0)
		c.R.Null()
		return
	}
	c.R.Int(next)
	c.R.Bulk(data)
}

// CF.LOADCHUNK key pos data
func (h *handlers) loadchunk(c *command.Ctx) {
	key, data := c.Args[1], c.Args[3]
	pos, ok := argparse.Int(c.Args[2])
	if !ok || pos == 0 {
		c.R.Error(errInvalidPosition)
		return
	}
	if pos == 1 {
		h.loadHeaderCommon(c, key, data, h.s.maxFilters())
		return
	}
	ok = c.Update(key, func(tx *keyspace.Txn) string {
		f, st := command.As[*rediscuckoo.Filter](tx.Value)
		switch st {
		case command.KeyMissing:
			return errNotFound
		case command.KeyWrongType:
			return errWrongType
		}
		if err := f.LoadChunk(pos, data); err != nil {
			return err.Error()
		}
		_ = tx.Log(recLoadChunk, key, strconv.AppendInt(nil, pos, 10), data)
		return ""
	})
	switch {
	case !ok:
	default:
		c.R.OK()
	}
}

// _CF.LOADHEADER key header (internal; the canonical record of CF.LOADCHUNK
// key 1 header), with the fixed limit on sub-filters.
func (h *handlers) loadHeader(c *command.Ctx) {
	h.loadHeaderCommon(c, c.Args[1], c.Args[2], rediscuckoo.MaxMaxExpansions)
}

// loadHeaderCommon creates key from a CF.SCANDUMP header: the key must be
// missing, the header 38 bytes and valid. The filter is built outside the
// shard lock.
func (h *handlers) loadHeaderCommon(c *command.Ctx, key, data []byte, maxFilters int) {
	var pre *rediscuckoo.Filter
	for {
		needHeader := false
		ok := c.Update(key, func(tx *keyspace.Txn) string {
			switch _, st := command.As[*rediscuckoo.Filter](tx.Value); st {
			case command.KeyOK:
				return errItemExists
			case command.KeyWrongType:
				return errWrongType
			}
			if len(data) != rediscuckoo.HeaderSize {
				return rediscuckoo.ErrInvalidHeader.Error()
			}
			if pre == nil {
				needHeader = true
				return ""
			}
			tx.Set(pre)
			_ = tx.Log(recLoadHeader, key, data)
			return ""
		})
		if needHeader {
			budget := h.s.budgetFor(c)
			if n, ok := rediscuckoo.HeaderMemoryUsage(data, maxFilters, budget); ok && !c.Reserve(uint64(len(key))+n) {
				c.R.Error(string(rediscuckoo.ErrCreateMemory)) // does not fit maxmemory's room
				return
			}
			var err error
			if pre, err = rediscuckoo.DecodeHeader(data, maxFilters, budget); err != nil {
				c.R.Error(err.Error())
				return
			}
			continue
		}
		switch {
		case !ok:
		default:
			c.R.OK()
		}
		return
	}
}
