// Package cms implements RedisBloom's count-min sketch commands (CMS.*) on
// top of the cms library package (with RedisBloom's MurmurHash2 rows),
// byte-exact to spec redis-sketches.md §1 in RESP2 and RESP3.
//
// Persistence: every successful mutation logs its effect in canonical
// form, so that replaying the records through this command table against
// the previous state reproduces the state exactly:
//
//	CMS.INITBYDIM key <width> <depth>
//	    logged by CMS.INITBYDIM and by CMS.INITBYPROB (with the dimensions
//	    it computed).
//	_CMS.INCRBY key item increment [item increment …]
//	    CMS.INCRBY's arguments, once they all parsed; it applies them as
//	    CMS.INCRBY does and answers +OK, since a saturated item's reply
//	    element is an error that replay would take for a failure.
//	_CMS.LOAD key <encoding>
//	    the destination of a CMS.MERGE after the merge, in the cms
//	    package's encoding (docs/FORMATS.md, "Count-min sketch"): the
//	    sources are read one at a time, each under its own key's lock, so
//	    the result, not the command, is what replays to the same state.
//
// Failed commands log nothing. The internal records are unknown to
// clients (command.IsInternal).
package cms

import (
	"bytes"
	"math"
	"strconv"

	"github.com/probly/probly/cms"
	"github.com/probly/probly/internal/cmsraw"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/argparse"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
)

// Reply strings (RedisBloom 8.0–8.10; spec §1.1).
const (
	errNotFound     = "CMS: key does not exist"
	errExists       = "CMS: key already exists"
	errWidth        = "CMS: invalid width"
	errDepth        = "CMS: invalid depth"
	errOverEst      = "CMS: invalid overestimation value"
	errProb         = "CMS: invalid prob value"
	errInitArgs     = "CMS: invalid init arguments"
	errNoMemory     = "CMS: Insufficient memory to create the key"
	errParseNum     = "CMS: Cannot parse number"
	errNegative     = "CMS: Number cannot be negative"
	errIncrOverflow = "CMS: INCRBY overflow"
	errNumKeys      = "CMS: invalid numkeys"
	errKeysPositive = "CMS: Number of keys must be positive"
	errWrongKeys    = "CMS: wrong number of keys"
	errKeysWeights  = "CMS: wrong number of keys/weights"
	errWeight       = "CMS: invalid weight value"
	errDims         = "CMS: width/depth is not equal"
	errMergeOver    = "CMS: MERGE overflow"
	errLoad         = "ERR invalid _cms.load payload"
)

// Canonical record names.
var (
	recInitByDim = []byte("CMS.INITBYDIM")
	recIncrBy    = []byte("_CMS.INCRBY")
	recLoad      = []byte("_CMS.LOAD")
)

var raw = cmsraw.Get[cmsraw.Hooks[cms.Sketch]]()

// Register adds every CMS.* command (and the internal records) to t. CMS
// has no configuration parameters; cfg is accepted for symmetry with the
// other families.
func Register(t *command.Table, _ *config.Registry) {
	t.Add(specs()...)
}

// view runs fn on the sketch at key, answering the key errors.
func view(c *command.Ctx, key []byte, fn func(v *Value)) bool {
	return command.View(c, key, errNotFound, fn)
}

// ---- CMS.INITBYDIM / CMS.INITBYPROB ----

func initByDim(c *command.Ctx)  { initSketch(c, false) }
func initByProb(c *command.Ctx) { initSketch(c, true) }

// initSketch is RedisBloom's shared handler of the two create commands,
// its checks in its order (spec §1.1).
func initSketch(c *command.Ctx, byProb bool) {
	key := c.Args[1]
	exists := false
	c.Store.View(key, func(v keyspace.Value) { exists = v != nil })
	if exists {
		c.R.Error(errExists)
		return
	}
	var width, depth int64
	if byProb {
		eps, ok := argparse.Float(c.Args[2])
		if !ok || !(eps > 0 && eps < 1) {
			c.R.Error(errOverEst)
			return
		}
		delta, ok := argparse.Float(c.Args[3])
		if !ok || !(delta > 0 && delta < 1) {
			c.R.Error(errProb)
			return
		}
		if width, depth, ok = dimsByProb(eps, delta); !ok {
			c.R.Error(errInitArgs)
			return
		}
	} else {
		var ok bool
		if width, ok = argparse.Int(c.Args[2]); !ok || width < 1 {
			c.R.Error(errWidth)
			return
		}
		if depth, ok = argparse.Int(c.Args[3]); !ok || depth < 1 {
			c.R.Error(errDepth)
			return
		}
	}
	if width < 1 || depth < 1 || width > math.MaxInt64/depth {
		c.R.Error(errInitArgs)
		return
	}
	cells := uint64(width) * uint64(depth)
	if cells > cms.MaxCells || depth > math.MaxUint32 || !c.Reserve(uint64(len(key))+memoryUsage(cells)) {
		c.R.Error(errNoMemory)
		return
	}
	v, err := newValue(uint64(width), uint32(depth))
	if err != nil {
		c.R.Error(errNoMemory)
		return
	}
	if c.Update(key, func(tx *keyspace.Txn) string {
		if tx.Value != nil { // created by another client meanwhile
			return errExists
		}
		tx.Set(v)
		_ = tx.Log(recInitByDim, key, strconv.AppendInt(nil, width, 10), strconv.AppendInt(nil, depth, 10))
		return ""
	}) {
		c.R.OK()
	}
}

// ---- CMS.INCRBY ----

func incrBy(c *command.Ctx)    { incr(c, true) }
func incrByRec(c *command.Ctx) { incr(c, false) }

// incr is CMS.INCRBY (each, true: one reply element per pair) and its
// record _CMS.INCRBY (+OK).
func incr(c *command.Ctx, each bool) {
	if len(c.Args)%2 != 0 {
		name := "cms.incrby"
		if !each {
			name = "_cms.incrby"
		}
		c.R.Error(command.ArityError(name))
		return
	}
	key := c.Args[1]
	if !view(c, key, func(*Value) {}) {
		return
	}
	pairs := c.Args[2:]
	var buf [8]uint64
	incs := buf[:0]
	if len(pairs)/2 > len(buf) {
		incs = make([]uint64, 0, len(pairs)/2)
	}
	for i := 1; i < len(pairs); i += 2 {
		n, ok := argparse.Int(pairs[i])
		switch {
		case !ok:
			c.R.Error(errParseNum)
			return
		case n < 0:
			c.R.Error(errNegative)
			return
		}
		incs = append(incs, uint64(n))
	}
	ests := incs // each estimate replaces its increment once applied
	if !c.Update(key, func(tx *keyspace.Txn) string {
		v, st := command.As[*Value](tx.Value)
		switch st {
		case command.KeyMissing:
			return errNotFound
		case command.KeyWrongType:
			return command.ErrWrongType
		}
		for i := range incs {
			ests[i] = v.S.AddN(pairs[2*i], incs[i])
		}
		v.touch()
		_ = logArgs(tx, recIncrBy, c.Args[1:])
		return ""
	}) {
		return
	}
	if !each {
		c.R.OK()
		return
	}
	c.R.Array(len(ests))
	for _, e := range ests {
		if e == cms.MaxCount {
			c.R.Error(errIncrOverflow)
		} else {
			c.R.Int(int64(e))
		}
	}
}

// logArgs logs name followed by args (without allocating for up to 15
// args: Txn.Log copies the vector).
func logArgs(tx *keyspace.Txn, name []byte, args [][]byte) error {
	var buf [16][]byte
	return tx.Log(append(append(buf[:0], name), args...)...)
}

// ---- CMS.QUERY ----

func query(c *command.Ctx) {
	items := c.Args[2:]
	view(c, c.Args[1], func(v *Value) {
		c.R.Array(len(items))
		for _, it := range items {
			c.R.Int(int64(v.S.Count(it)))
		}
	})
}

// ---- CMS.INFO ----

func info(c *command.Ctx) {
	view(c, c.Args[1], func(v *Value) {
		st := v.S.Stats()
		c.R.Map(3)
		c.R.SimpleString("width")
		c.R.Int(int64(st.Width))
		c.R.SimpleString("depth")
		c.R.Int(int64(st.Depth))
		c.R.SimpleString("count")
		c.R.Int(int64(st.N)) // unsigned, sent as signed (spec §1.1)
	})
}

// ---- CMS.MERGE ----

// merge is CMS.MERGE dest numKeys src… [WEIGHTS w…], its checks in
// RedisBloom's order (spec §1.1). Each source is validated and added to
// the weighted sums under its own read lock; the destination is then
// replaced under its write lock and logged as _CMS.LOAD. The sums and the
// record take 12 bytes a counter for the duration of the call, reserved
// like a growth (command.ErrOOM when maxmemory or the allocation limit
// refuses them).
//
// When the destination is also a source, a write to it between its read
// and the replacement would be lost; the merge then starts over (a value's
// generation tells), up to mergeAttempts times, and answers
// errMergeBusy if the destination kept changing.
func merge(c *command.Ctx) {
	reserved := false
	for range mergeAttempts {
		if !mergeOnce(c, &reserved) {
			return
		}
	}
	c.R.Error(errMergeBusy)
}

const (
	mergeAttempts = 8
	errMergeBusy  = "ERR CMS.MERGE: the destination kept changing during the merge, try again"
)

// mergeOnce runs one attempt of merge; it answers and reports false, or
// reports true (nothing answered, nothing changed) when the destination,
// read as a source, changed before it could be replaced.
func mergeOnce(c *command.Ctx, reserved *bool) (again bool) {
	dest := c.Args[1]
	var shape cms.Stats
	if !view(c, dest, func(v *Value) { shape = v.S.Stats() }) {
		return false
	}
	n, ok := argparse.Int(c.Args[2])
	if !ok {
		c.R.Error(errNumKeys)
		return false
	}
	if n <= 0 {
		c.R.Error(errKeysPositive)
		return false
	}
	rest := c.Args[3:]
	p := -1
	for i, a := range rest {
		if bytes.EqualFold(a, []byte("WEIGHTS")) {
			p = i
			break
		}
	}
	var weights [][]byte
	switch {
	case p < 0 && int64(len(rest)) != n:
		c.R.Error(errWrongKeys)
		return false
	case p >= 0 && (int64(p) != n || int64(len(rest)) != 2*n+1):
		c.R.Error(errKeysWeights)
		return false
	case p >= 0:
		weights = rest[p+1:]
	}
	var sum cmsraw.Sum
	destGen, destRead := uint64(0), false
	for i := range int(n) {
		w := int64(1)
		if weights != nil {
			if w, ok = argparse.Int(weights[i]); !ok {
				c.R.Error(errWeight)
				return false
			}
		}
		status := ""
		if !view(c, rest[i], func(v *Value) {
			if st := v.S.Stats(); st.Width != shape.Width || st.Depth != shape.Depth {
				status = errDims
				return
			}
			if sum == nil {
				// The sums (8 bytes a counter) and the logged encoding (4)
				// live until the call returns: admit them as a growth.
				if !*reserved && !c.Reserve(12*shape.M) {
					status = command.ErrOOM
					return
				}
				*reserved = true
				sum = raw.NewSum(v.S)
			}
			raw.Add(sum, v.S, w)
			if bytes.Equal(rest[i], dest) {
				if destRead && v.gen != destGen {
					status = "again"
				}
				destGen, destRead = v.gen, true
			}
		}) {
			return false
		}
		switch status {
		case "":
		case "again":
			return true
		default:
			c.R.Error(status)
			return false
		}
	}
	changed := false
	if c.Update(dest, func(tx *keyspace.Txn) string {
		v, st := command.As[*Value](tx.Value)
		switch {
		case st == command.KeyMissing:
			return errNotFound
		case st == command.KeyWrongType:
			return command.ErrWrongType
		case v.S.Stats().Width != shape.Width || v.S.Stats().Depth != shape.Depth:
			return errDims // replaced by another sketch meanwhile
		case destRead && v.gen != destGen:
			changed = true // written since it was read: start over
			return ""
		case !raw.Apply(sum, v.S):
			return errMergeOver
		}
		v.touch()
		enc, _ := v.MarshalBinary()
		_ = tx.Log(recLoad, dest, enc)
		return ""
	}) {
		if changed {
			return true
		}
		c.R.OK()
	}
	return false
}

// loadRec is _CMS.LOAD key <encoding>: key becomes the encoded sketch.
func loadRec(c *command.Ctx) {
	v, err := Unmarshal(c.Args[2])
	if err != nil {
		c.R.Error(errLoad)
		return
	}
	command.Load(c, recLoad, v, command.ErrOOM)
}
