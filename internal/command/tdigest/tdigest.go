// Package tdigest implements RedisBloom's t-digest commands (TDIGEST.*)
// on top of the public tdigest package, byte-exact to spec
// redis-sketches.md §3 (commands, errors, RESP2/RESP3 replies) and
// bit-exact in every double it answers (t-digest-c 5b89d70's arithmetic).
//
// Persistence: every change is logged in a form whose replay through this
// command table, against the state before it, reproduces the digest bit
// for bit — the floating-point centroids included:
//
//	TDIGEST.CREATE key COMPRESSION c   a new digest (explicit compression)
//	TDIGEST.ADD key v …                 the values that were added, as sent
//	                                    (the same bytes parse to the same
//	                                    doubles; after an overflow only the
//	                                    values added before it)
//	TDIGEST.RESET key
//	_TDIGEST.COMPRESS key               a read (QUANTILE, CDF, RANK …) that
//	                                    merged the buffer: reads change the
//	                                    digest, so they are logged when they
//	                                    do; a read that changed nothing is
//	                                    not
//	_TDIGEST.LOAD key <encoding>        TDIGEST.MERGE's result, as the
//	                                    destination's whole state (the
//	                                    sources' compressions are logged as
//	                                    _TDIGEST.COMPRESS)
//
// Snapshots hold the digest's full state (tdigest.Digest.MarshalBinary,
// docs/FORMATS.md "t-digest"), buffer included, unlike RedisBloom's RDB,
// which compresses first and drops a single buffered value.
//
// Memory: TDIGEST.CREATE and TDIGEST.MERGE reserve (command.Ctx.Reserve)
// the digest's full size, 128 + 16·(6·c + 10) bytes, before creating it,
// and a compression whose capacity passes a C int (spec open question 9)
// is refused: both answer RedisBloom's allocation errors. The node array
// grows with the values, so MemoryUsage is what is allocated now; ADD
// reserves the growth it may cause.
package tdigest

import (
	"bytes"
	"math"
	"strconv"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/argparse"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/tdigest"
)

// Reply strings (spec §3.1).
const (
	errPrefix         = "ERR T-Digest: "
	errNotExist       = errPrefix + "key does not exist"
	errExists         = errPrefix + "key already exists"
	errKeyword        = errPrefix + "wrong keyword"
	errParseComp      = errPrefix + "error parsing compression parameter"
	errCompPositive   = errPrefix + "compression parameter needs to be a positive integer"
	errAlloc          = errPrefix + "allocation failed"
	errAllocDest      = errPrefix + "allocation of destination digest failed"
	errParseVal       = errPrefix + "error parsing val parameter"
	errValFinite      = errPrefix + "val parameter needs to be a finite number"
	errOverflow       = errPrefix + "overflow detected"
	errParseNumkeys   = errPrefix + "error parsing numkeys"
	errNumkeysPos     = errPrefix + "numkeys needs to be a positive integer"
	errParseQuantile  = errPrefix + "error parsing quantile"
	errQuantileRange  = errPrefix + "quantile should be in [0,1]"
	errParseCDF       = errPrefix + "error parsing cdf"
	errParseValue     = errPrefix + "error parsing value"
	errParseRank      = errPrefix + "error parsing rank"
	errRankNegative   = errPrefix + "rank needs to be non negative"
	errParseLow       = errPrefix + "error parsing low_cut_percentile"
	errParseHigh      = errPrefix + "error parsing high_cut_percentile"
	errCutRange       = errPrefix + "low_cut_percentile and high_cut_percentile should be in [0,1]"
	errCutOrder       = errPrefix + "low_cut_percentile should be lower than high_cut_percentile"
	errLoadArgs       = "ERR invalid _tdigest.load arguments"
	defaultCompressed = tdigest.DefaultCompression
)

// Canonical record names.
var (
	recCreate   = []byte("TDIGEST.CREATE")
	recAdd      = []byte("TDIGEST.ADD")
	recReset    = []byte("TDIGEST.RESET")
	recCompress = []byte("_TDIGEST.COMPRESS")
	recLoad     = []byte("_TDIGEST.LOAD")
	tokComp     = []byte("COMPRESSION")
)

type handlers struct{}

// Register adds every TDIGEST.* command (and the internal _TDIGEST.*
// records) to t. cfg is unused: t-digest has no configuration.
func Register(t *command.Table, _ *config.Registry) {
	h := &handlers{}
	t.Add(h.specs()...)
}

func arity(c *command.Ctx, name string) { c.R.Error(command.ArityError(name)) }

// parseCompression parses a compression value as CREATE and MERGE do.
func parseCompression(b []byte) (int64, string) {
	v, ok := argparse.Int(b)
	if !ok {
		return 0, errParseComp
	}
	if v <= 0 {
		return 0, errCompPositive
	}
	return v, ""
}

// reserve reports whether a digest of compression c may be allocated for
// key: c within the library's range and its full size admitted.
func reserve(c *command.Ctx, key []byte, comp int64) bool {
	return comp <= tdigest.MaxCompression && c.Reserve(uint64(len(key))+fullBytes(int(comp)))
}

// TDIGEST.CREATE key [COMPRESSION compression]
func (h *handlers) create(c *command.Ctx) {
	args := c.Args
	if len(args) != 2 && len(args) != 4 {
		arity(c, "tdigest.create")
		return
	}
	key := args[1]
	status := func(v keyspace.Value) string {
		switch _, st := command.As[*Value](v); st {
		case command.KeyOK:
			return errExists
		case command.KeyWrongType:
			return command.ErrWrongType
		}
		return ""
	}
	var st string
	c.Store.View(key, func(v keyspace.Value) { st = status(v) })
	if st != "" {
		c.R.Error(st)
		return
	}
	comp := int64(defaultCompressed)
	if len(args) == 4 {
		if !bytes.EqualFold(args[2], tokComp) && !bytes.EqualFold(args[3], tokComp) {
			c.R.Error(errKeyword)
			return
		}
		var e string
		if comp, e = parseCompression(args[3]); e != "" {
			c.R.Error(e)
			return
		}
	}
	if !reserve(c, key, comp) {
		c.R.Error(errAlloc)
		return
	}
	d, err := tdigest.New(int(comp))
	if err != nil {
		c.R.Error(errAlloc)
		return
	}
	if c.Update(key, func(tx *keyspace.Txn) string {
		if st := status(tx.Value); st != "" {
			return st
		}
		tx.Set(&Value{D: d})
		_ = tx.Log(recCreate, key, tokComp, strconv.AppendInt(nil, comp, 10))
		return ""
	}) {
		c.R.OK()
	}
}

// write runs fn on the digest at key in a write transaction, answering
// the key errors; fn's status is the error reply.
func write(c *command.Ctx, key []byte, fn func(tx *keyspace.Txn, d *tdigest.Digest) string) bool {
	return c.Update(key, func(tx *keyspace.Txn) string {
		switch v, st := command.As[*Value](tx.Value); st {
		case command.KeyMissing:
			return errNotExist
		case command.KeyWrongType:
			return command.ErrWrongType
		default:
			return fn(tx, v.D)
		}
	})
}

// TDIGEST.RESET key
func (h *handlers) reset(c *command.Ctx) {
	key := c.Args[1]
	if write(c, key, func(tx *keyspace.Txn, d *tdigest.Digest) string {
		d.Reset()
		_ = tx.Log(recReset, key)
		return ""
	}) {
		c.R.OK()
	}
}

// TDIGEST.ADD key value [value …]
func (h *handlers) add(c *command.Ctx) {
	key, vals := c.Args[1], c.Args[2:]
	if write(c, key, func(tx *keyspace.Txn, d *tdigest.Digest) string {
		xs := make([]float64, len(vals))
		for i, b := range vals {
			x, ok := argparse.Float(b)
			switch {
			case !ok || math.IsNaN(x):
				return errParseVal
			case math.IsInf(x, 0):
				return errValFinite
			}
			xs[i] = x
		}
		s := d.Stats()
		if uint64(s.MergedNodes+s.UnmergedNodes+len(xs))*tdigest.NodeBytes > s.Bytes &&
			!c.Reserve(uint64(s.Capacity)*tdigest.NodeBytes-s.Bytes) {
			return command.ErrOOM
		}
		added := len(xs)
		var status string
		for i, x := range xs {
			if err := d.Add(x); err != nil {
				added, status = i, errOverflow
				break
			}
		}
		if added > 0 {
			rec := make([][]byte, 0, 2+added)
			_ = tx.Log(append(append(rec, recAdd, key), vals[:added]...)...)
		}
		return status
	}) {
		c.R.OK()
	}
}

// pending reports whether a query may compress d (a buffer to merge and
// a total weight above 1).
func pending(d *tdigest.Digest) bool {
	s := d.Stats()
	return s.UnmergedNodes > 0 && s.N > 1
}

// query runs fn, a read that may compress the digest at key: under the
// read lock when nothing is pending (fn then changes nothing), else in a
// write transaction that logs _TDIGEST.COMPRESS if fn compressed. fn
// parses its arguments before it queries, and returns the error reply.
func query(c *command.Ctx, fn func(d *tdigest.Digest) string) bool {
	key := c.Args[1]
	status, done := "", false
	c.Store.View(key, func(v keyspace.Value) {
		switch t, st := command.As[*Value](v); st {
		case command.KeyMissing:
			status, done = errNotExist, true
		case command.KeyWrongType:
			status, done = command.ErrWrongType, true
		default:
			if !pending(t.D) {
				status, done = fn(t.D), true
			}
		}
	})
	if done {
		if status != "" {
			c.R.Error(status)
			return false
		}
		return true
	}
	return write(c, key, func(tx *keyspace.Txn, d *tdigest.Digest) string {
		before := d.Stats().Compressions
		if st := fn(d); st != "" {
			return st
		}
		if d.Stats().Compressions != before {
			_ = tx.Log(recCompress, key)
		}
		return ""
	})
}

// view runs fn on the digest at key under the read lock (MIN, MAX, INFO:
// they never compress).
func view(c *command.Ctx, fn func(d *tdigest.Digest)) bool {
	return command.View(c, c.Args[1], errNotExist, func(v *Value) { fn(v.D) })
}

func replyDoubles(c *command.Ctx, xs []float64) {
	c.R.Array(len(xs))
	for _, x := range xs {
		c.R.Double(x)
	}
}

// TDIGEST.MIN key / TDIGEST.MAX key
func (h *handlers) min(c *command.Ctx) {
	var x float64
	if view(c, func(d *tdigest.Digest) { x = d.Min() }) {
		c.R.Double(x)
	}
}

func (h *handlers) max(c *command.Ctx) {
	var x float64
	if view(c, func(d *tdigest.Digest) { x = d.Max() }) {
		c.R.Double(x)
	}
}

// TDIGEST.INFO key
func (h *handlers) info(c *command.Ctx) {
	var s tdigest.Stats
	if !view(c, func(d *tdigest.Digest) { s = d.Stats() }) {
		return
	}
	fields := [...]struct {
		name string
		v    int64
	}{
		{"Compression", int64(s.Compression)}, {"Capacity", int64(s.Capacity)},
		{"Merged nodes", int64(s.MergedNodes)}, {"Unmerged nodes", int64(s.UnmergedNodes)},
		{"Merged weight", int64(s.MergedWeight)}, {"Unmerged weight", int64(s.UnmergedWeight)},
		{"Observations", int64(s.N)}, {"Total compressions", int64(s.Compressions)},
		// RedisBloom ≥ 8.6: sizeof(td_histogram_t) + 16·cap.
		{"Memory usage", 80 + tdigest.NodeBytes*int64(s.Capacity)},
	}
	c.R.Map(len(fields))
	for _, f := range fields {
		c.R.SimpleString(f.name)
		c.R.Int(f.v)
	}
}

// parseDoubles parses c.Args[2:] as doubles, NaN rejected, with the
// family's parse error; check (may be nil) adds a range check.
func parseDoubles(args [][]byte, parseErr string, check func(x float64) string) ([]float64, string) {
	xs := make([]float64, len(args))
	for i, b := range args {
		x, ok := argparse.Float(b)
		if !ok || math.IsNaN(x) {
			return nil, parseErr
		}
		if check != nil {
			if e := check(x); e != "" {
				return nil, e
			}
		}
		xs[i] = x
	}
	return xs, ""
}

// TDIGEST.QUANTILE key quantile [quantile …]
func (h *handlers) quantile(c *command.Ctx) {
	var out []float64
	if query(c, func(d *tdigest.Digest) string {
		qs, e := parseDoubles(c.Args[2:], errParseQuantile, func(q float64) string {
			if q < 0 || q > 1 {
				return errQuantileRange
			}
			return ""
		})
		if e != "" {
			return e
		}
		out = d.Quantiles(make([]float64, 0, len(qs)), qs...)
		return ""
	}) {
		replyDoubles(c, out)
	}
}

// TDIGEST.CDF key value [value …]
func (h *handlers) cdf(c *command.Ctx) {
	var out []float64
	if query(c, func(d *tdigest.Digest) string {
		xs, e := parseDoubles(c.Args[2:], errParseCDF, nil)
		if e != "" {
			return e
		}
		for i, x := range xs {
			xs[i] = d.CDF(x)
		}
		out = xs
		return ""
	}) {
		replyDoubles(c, out)
	}
}

// TDIGEST.RANK / TDIGEST.REVRANK key value [value …]
func (h *handlers) rank(c *command.Ctx)    { h.ranks(c, false) }
func (h *handlers) revrank(c *command.Ctx) { h.ranks(c, true) }

func (h *handlers) ranks(c *command.Ctx, rev bool) {
	var out []int64
	if query(c, func(d *tdigest.Digest) string {
		xs, e := parseDoubles(c.Args[2:], errParseValue, nil)
		if e != "" {
			return e
		}
		out = make([]int64, len(xs))
		for i, x := range xs {
			if rev {
				out[i] = d.RevRank(x)
			} else {
				out[i] = d.Rank(x)
			}
		}
		return ""
	}) {
		c.R.Array(len(out))
		for _, r := range out {
			c.R.Int(r)
		}
	}
}

// TDIGEST.BYRANK / TDIGEST.BYREVRANK key rank [rank …]
func (h *handlers) byrank(c *command.Ctx)    { h.byranks(c, false) }
func (h *handlers) byrevrank(c *command.Ctx) { h.byranks(c, true) }

func (h *handlers) byranks(c *command.Ctx, rev bool) {
	var out []float64
	if query(c, func(d *tdigest.Digest) string {
		rs := make([]uint64, len(c.Args)-2)
		for i, b := range c.Args[2:] {
			r, ok := argparse.Int(b)
			if !ok {
				return errParseRank
			}
			if r < 0 {
				return errRankNegative
			}
			rs[i] = uint64(r)
		}
		out = make([]float64, len(rs))
		for i, r := range rs {
			if rev {
				out[i] = d.ByRevRank(r)
			} else {
				out[i] = d.ByRank(r)
			}
		}
		return ""
	}) {
		replyDoubles(c, out)
	}
}

// TDIGEST.TRIMMED_MEAN key low_cut_quantile high_cut_quantile
func (h *handlers) trimmedMean(c *command.Ctx) {
	var m float64
	if query(c, func(d *tdigest.Digest) string {
		lo, ok := argparse.Float(c.Args[2])
		if !ok || math.IsNaN(lo) {
			return errParseLow
		}
		hi, ok := argparse.Float(c.Args[3])
		if !ok || math.IsNaN(hi) {
			return errParseHigh
		}
		if lo < 0 || lo > 1 || hi < 0 || hi > 1 {
			return errCutRange
		}
		if lo >= hi {
			return errCutOrder
		}
		m = d.TrimmedMean(lo, hi)
		return ""
	}) {
		c.R.Double(m)
	}
}

// _TDIGEST.COMPRESS key (a logged read's compression)
func (h *handlers) compress(c *command.Ctx) {
	if write(c, c.Args[1], func(tx *keyspace.Txn, d *tdigest.Digest) string {
		d.Compress()
		_ = tx.Log(recCompress, c.Args[1])
		return ""
	}) {
		c.R.OK()
	}
}

// _TDIGEST.LOAD key encoding (TDIGEST.MERGE's logged result)
func (h *handlers) load(c *command.Ctx) {
	v, err := Decode(c.Args[2])
	if err != nil {
		c.R.Error(errLoadArgs + ": " + err.Error())
		return
	}
	command.Load(c, recLoad, v, errAllocDest)
}
