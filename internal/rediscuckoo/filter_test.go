package rediscuckoo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strconv"
	"testing"
	"testing/iotest"

	"github.com/probly/probly/cuckoo"
	"github.com/probly/probly/internal/cuckooraw"
	"github.com/probly/probly/internal/hashing"
)

func mustNew(t testing.TB, p Params) *Filter {
	t.Helper()
	f, err := New(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

var (
	defaultParams = Params{Capacity: 1024, BucketSize: 2, MaxIterations: 20, Expansion: 1}
	reserve4      = Params{Capacity: 4, BucketSize: 2, MaxIterations: 20, Expansion: 1}
)

// insertUntilMax inserts item(0), item(1), … as CF.ADD does, which refuses
// a filter that already has 32 sub-filters, and returns how many went in.
func insertUntilMax(t *testing.T, f *Filter, item func(i int) []byte) int {
	t.Helper()
	for i := 0; ; i++ {
		if f.NumFilters() >= 32 {
			return i
		}
		if err := f.Insert(item(i)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSpecVectors reproduces the verified consequences of spec §2.2.
func TestSpecVectors(t *testing.T) {
	// CF.RESERVE k 4 takes 124 distinct items before "Maximum expansions".
	f := mustNew(t, reserve4)
	if n := insertUntilMax(t, f, func(i int) []byte { return []byte(strconv.Itoa(i)) }); n != 124 {
		t.Errorf("CF.RESERVE k 4: %d distinct items, want 124", n)
	}
	// The same item: 4 copies per sub-filter (125 in a default filter).
	f = mustNew(t, defaultParams)
	if n := insertUntilMax(t, f, func(int) []byte { return []byte("item") }); n != 125 {
		t.Errorf("default filter: %d copies, want 125", n)
	}
	// With 2 buckets, an item whose fingerprint is even has both buckets
	// equal (fp·0x5bd1e995 is even): 2 copies per sub-filter, 63 in all.
	for _, item := range []string{"item", "a", "b", "c", "foo", "bar"} {
		h := hashing.MurmurHash64A([]byte(item), 0)
		want := 125
		if (h%255+1)%2 == 0 {
			want = 63
		}
		f = mustNew(t, reserve4)
		if n := insertUntilMax(t, f, func(int) []byte { return []byte(item) }); n != want {
			t.Errorf("CF.RESERVE k 4, %q repeated: %d copies, want %d", item, n, want)
		}
	}
	// CF.RESERVE k 4 EXPANSION 2, add and delete "0".."999": Size 60.
	f = mustNew(t, Params{Capacity: 4, BucketSize: 2, MaxIterations: 20, Expansion: 2})
	for i := 0; i < 1000; i++ {
		if err := f.Insert([]byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 1000; i++ {
		if !f.Delete([]byte(strconv.Itoa(i))) {
			t.Fatalf("delete %d", i)
		}
	}
	if f.InfoSize() != 60 || f.NumFilters() != 1 || f.Items() != 0 {
		t.Errorf("after add/del 0..999: %s, Size %d", f.Debug(), f.InfoSize())
	}
	for capacity, size := range map[uint64]uint64{1000: 1080, 100: 184, 1024: 1080, 4: 60} {
		if got := mustNew(t, Params{Capacity: capacity, BucketSize: 2, MaxIterations: 20, Expansion: 1}).InfoSize(); got != size {
			t.Errorf("CF.RESERVE %d: Size %d, want %d", capacity, got, size)
		}
	}
	if got := mustNew(t, Params{Capacity: 100, BucketSize: 2, MaxIterations: 20, Expansion: 3}).Expansion(); got != 4 {
		t.Errorf("EXPANSION 3 reports %d", got)
	}
	if d := mustNew(t, defaultParams).Debug(); d != "bktsize:2 buckets:512 items:0 deletes:0 filters:1 max_iterations:20 expansion:1" {
		t.Errorf("debug %q", d)
	}
}

// refFilter is an independent transcription of spec §2.2 (one byte per
// slot, C-style arithmetic: modulo by the bucket count, 32-bit slot
// indices), used to check that the library-backed Filter is bit-exact.
type refFilter struct {
	bs, maxIter, exp uint64
	nb               uint64
	subs             [][]byte // sub-filter tables, oldest first
	items, deletes   uint64
}

func newRef(p Params) *refFilter {
	r := &refFilter{bs: uint64(p.BucketSize), maxIter: uint64(p.MaxIterations)}
	for r.exp = 1; r.exp < uint64(p.Expansion); r.exp *= 2 {
	}
	if p.Expansion == 0 {
		r.exp = 0
	}
	r.nb = 1
	for r.nb < p.Capacity/r.bs {
		r.nb *= 2
	}
	r.grow()
	return r
}

func (r *refFilter) grow() {
	nb := r.nb
	for range r.subs {
		nb *= r.exp
	}
	r.subs = append(r.subs, make([]byte, nb*r.bs))
}

func (r *refFilter) nbOf(s []byte) uint64 { return uint64(len(s)) / r.bs }

func (r *refFilter) index(s []byte, h uint64) uint32 { return uint32((h % r.nbOf(s)) * r.bs) }

func (r *refFilter) free(s []byte, at uint32) int {
	for j := uint32(0); j < uint32(r.bs); j++ {
		if s[at+j] == 0 {
			return int(at + j)
		}
	}
	return -1
}

func (r *refFilter) insert(h uint64) bool {
	fp := byte(h%255 + 1)
	h2 := h ^ uint64(fp)*0x5bd1e995
	for i := len(r.subs) - 1; i >= 0; i-- {
		s := r.subs[i]
		for _, x := range []uint64{h, h2} {
			if p := r.free(s, r.index(s, x)); p >= 0 {
				s[p] = fp
				r.items++
				return true
			}
		}
	}
	s := r.subs[len(r.subs)-1]
	nb := uint32(r.nbOf(s))
	cur, victim, ii := fp, uint32(0), uint32(h%uint64(nb))
	for n := uint64(0); n < r.maxIter; n++ {
		p := ii*uint32(r.bs) + victim
		s[p], cur = cur, s[p]
		ii = uint32((uint64(ii) ^ uint64(cur)*0x5bd1e995) % uint64(nb))
		if q := r.free(s, ii*uint32(r.bs)); q >= 0 {
			s[q] = cur
			r.items++
			return true
		}
		victim = (victim + 1) % uint32(r.bs)
	}
	for n := uint64(0); n < r.maxIter; n++ {
		victim = (victim + uint32(r.bs) - 1) % uint32(r.bs)
		ii = uint32((uint64(ii) ^ uint64(cur)*0x5bd1e995) % uint64(nb))
		p := ii*uint32(r.bs) + victim
		s[p], cur = cur, s[p]
	}
	if r.exp == 0 {
		return false
	}
	r.grow()
	return r.insert(h)
}

func (r *refFilter) del(h uint64) bool {
	fp := byte(h%255 + 1)
	h2 := h ^ uint64(fp)*0x5bd1e995
	for i := len(r.subs) - 1; i >= 0; i-- {
		s := r.subs[i]
		for _, x := range []uint64{h, h2} {
			at := r.index(s, x)
			for j := uint32(0); j < uint32(r.bs); j++ {
				if s[at+j] == fp {
					s[at+j] = 0
					r.items--
					r.deletes++
					if len(r.subs) > 1 && float64(r.deletes) > float64(r.items)*0.10 {
						r.compact(false)
					}
					return true
				}
			}
		}
	}
	return false
}

func (r *refFilter) compact(cont bool) {
	for ii := len(r.subs); ii > 1; ii-- {
		fi := ii - 1
		s := r.subs[fi]
		ok := true
		for b := uint64(0); b < r.nbOf(s); b++ {
			for j := uint64(0); j < r.bs; j++ {
				fp := s[b*r.bs+j]
				if fp == 0 {
					continue
				}
				moved := false
				for k := 0; k < fi && !moved; k++ {
					t := r.subs[k]
					for _, x := range []uint64{b, b ^ uint64(fp)*0x5bd1e995} {
						if p := r.free(t, r.index(t, x)); p >= 0 {
							t[p] = fp
							s[b*r.bs+j] = 0
							moved = true
							break
						}
					}
				}
				if !moved {
					ok = false
				}
			}
		}
		if ok && fi == len(r.subs)-1 {
			r.subs = r.subs[:fi]
		}
		if !ok && !cont {
			break
		}
	}
	r.deletes = 0
}

func (r *refFilter) dump() []byte {
	return bytes.Join(r.subs, nil)
}

// rawTables returns the concatenated sub-filter tables.
func rawTables(c *Filter) []byte {
	all := make([]byte, c.SizeBytes())
	off := 0
	for i := range c.NumFilters() {
		off += raw.ReadTableAt(c.Cuckoo(), i, all[off:], 0)
	}
	return all
}

// tables returns the concatenated tables as CF.SCANDUMP sends them.
func tables(f *Filter) []byte {
	var out []byte
	for pos := int64(1); ; {
		next, data := f.DumpChunk(pos)
		if data == nil {
			return out
		}
		out = append(out, data...)
		pos = next
	}
}

// TestMatchesReference drives the Filter and the reference transcription
// with the same random inserts (with duplicates), deletes (of present and
// absent items) and compactions, for several shapes, and requires the
// same answers, counters and table bytes throughout.
func TestMatchesReference(t *testing.T) {
	for _, p := range []Params{
		reserve4,
		{Capacity: 4, BucketSize: 2, MaxIterations: 20, Expansion: 2},
		{Capacity: 64, BucketSize: 4, MaxIterations: 5, Expansion: 4},
		{Capacity: 16, BucketSize: 1, MaxIterations: 3, Expansion: 1},
		{Capacity: 32, BucketSize: 3, MaxIterations: 50, Expansion: 0},
		{Capacity: 10, BucketSize: 5, MaxIterations: 1, Expansion: 2},
	} {
		f := mustNew(t, p)
		r := newRef(p)
		rng := uint64(p.Capacity*131 + uint64(p.BucketSize))
		next := func() uint64 {
			rng = rng*6364136223846793005 + 1442695040888963407
			return rng >> 33
		}
		for op := 0; op < 3000 && len(r.subs) < 12; op++ {
			item := []byte("i" + strconv.FormatUint(next()%300, 10))
			h := Hash(item)
			switch x := next() % 10; {
			case x < 6:
				want := r.insert(h)
				err := f.Insert(item)
				if (err == nil) != want || (err != nil && !errors.Is(err, ErrFull)) {
					t.Fatalf("%+v op %d: insert %v, reference %v", p, op, err, want)
				}
			case x < 9:
				if got, want := f.Delete(item), r.del(h); got != want {
					t.Fatalf("%+v op %d: delete %v, reference %v", p, op, got, want)
				}
			default:
				f.Compact()
				r.compact(true)
			}
			if f.Items() != r.items || f.Deletes() != r.deletes || f.NumFilters() != len(r.subs) ||
				!bytes.Equal(tables(f), r.dump()) {
				t.Fatalf("%+v op %d: state differs: %s vs items %d deletes %d filters %d", p, op, f.Debug(), r.items, r.deletes, len(r.subs))
			}
		}
	}
}

func TestHeader(t *testing.T) {
	f := mustNew(t, Params{Capacity: 100, BucketSize: 4, MaxIterations: 300, Expansion: 3})
	f.Insert([]byte("a"))
	f.Insert([]byte("b"))
	f.Delete([]byte("a"))
	want := make([]byte, 0, 38)
	le := binary.LittleEndian
	want = le.AppendUint64(want, 1)  // items
	want = le.AppendUint64(want, 32) // nextPow2(100/4 = 25)
	want = le.AppendUint64(want, 1)  // deletes
	want = le.AppendUint64(want, 1)  // filters
	want = le.AppendUint16(want, 4)
	want = le.AppendUint16(want, 300)
	want = le.AppendUint16(want, 4)
	if got := f.Header(); !bytes.Equal(got, want) || len(got) != HeaderSize {
		t.Fatalf("header % x", got)
	}
	if next, data := f.DumpChunk(0); next != 1 || !bytes.Equal(data, want) {
		t.Fatal("DumpChunk(0)")
	}
}

func validHeader() []byte {
	le := binary.LittleEndian
	h := make([]byte, 0, 38)
	h = le.AppendUint64(h, 5)
	h = le.AppendUint64(h, 8)
	h = le.AppendUint64(h, 0)
	h = le.AppendUint64(h, 3)
	h = le.AppendUint16(h, 2)
	h = le.AppendUint16(h, 20)
	return le.AppendUint16(h, 2)
}

func TestDecodeHeader(t *testing.T) {
	f, err := DecodeHeader(validHeader(), 32, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Items() != 5 || f.NumFilters() != 3 || f.SizeBytes() != 2*(8+16+32) || f.Expansion() != 2 || f.Cuckoo().Stats().SetBits != 0 {
		t.Fatalf("%s %d", f.Debug(), f.SizeBytes())
	}
	if !bytes.Equal(f.Header(), validHeader()) {
		t.Fatal("header does not round-trip")
	}
	le := binary.LittleEndian
	for name, edit := range map[string]func(b []byte){
		"bucket size 0":      func(b []byte) { le.PutUint16(b[32:], 0) },
		"bucket size 256":    func(b []byte) { le.PutUint16(b[32:], 256) },
		"filters 0":          func(b []byte) { le.PutUint64(b[24:], 0) },
		"filters 33":         func(b []byte) { le.PutUint64(b[24:], 33) },
		"filters 2^32+3":     func(b []byte) { le.PutUint64(b[24:], 1<<32+3) },
		"iterations 0":       func(b []byte) { le.PutUint16(b[34:], 0) },
		"expansion 32769":    func(b []byte) { le.PutUint16(b[36:], 32769) },
		"expansion 3":        func(b []byte) { le.PutUint16(b[36:], 3) },
		"expansion 0, 3":     func(b []byte) { le.PutUint16(b[36:], 0) },
		"buckets 0":          func(b []byte) { le.PutUint64(b[8:], 0) },
		"buckets 6":          func(b []byte) { le.PutUint64(b[8:], 6) },
		"buckets 2^48":       func(b []byte) { le.PutUint64(b[8:], 1<<48) },
		"buckets 2^57":       func(b []byte) { le.PutUint64(b[8:], 1<<57) },
		"buckets 2^63":       func(b []byte) { le.PutUint64(b[8:], 1<<63) },
		"over budget":        func(b []byte) { le.PutUint64(b[8:], 1<<26) },
		"growth over budget": func(b []byte) { le.PutUint64(b[8:], 1<<24); le.PutUint16(b[36:], 32768) },
	} {
		b := validHeader()
		edit(b)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := DecodeHeader(b, 32, 0)
		runtime.ReadMemStats(&after)
		if err != ErrBadHeader {
			t.Errorf("%s: %v", name, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("%s: allocated %d bytes", name, alloc)
		}
	}
	for _, n := range []int{0, 37, 39} {
		if _, err := DecodeHeader(make([]byte, n), 32, 0); err != ErrInvalidHeader {
			t.Errorf("%d bytes: %v", n, err)
		}
	}
	// expansion 0 with one sub-filter, and more filters with a larger limit.
	b := validHeader()
	le.PutUint16(b[36:], 0)
	le.PutUint64(b[24:], 1)
	if _, err := DecodeHeader(b, 32, 0); err != nil {
		t.Error(err)
	}
	b = validHeader()
	le.PutUint64(b[24:], 40)
	le.PutUint16(b[36:], 1)
	if _, err := DecodeHeader(b, 64, 0); err != nil {
		t.Error(err)
	}
}

func TestDumpLoad(t *testing.T) {
	f := mustNew(t, Params{Capacity: 8, BucketSize: 2, MaxIterations: 20, Expansion: 2})
	for i := 0; f.NumFilters() < 3; i++ {
		f.Insert([]byte(strconv.Itoa(i)))
	}
	// Sub-filters of 8, 16, 32 bytes: chunks are whole sub-filters.
	want := []struct {
		pos, next int64
		n         int
	}{{1, 9, 8}, {9, 25, 16}, {25, 57, 32}, {57, 0, -1}, {100, 0, -1}}
	for _, w := range want {
		next, data := f.DumpChunk(w.pos)
		if next != w.next || (w.n < 0 && data != nil) || (w.n >= 0 && len(data) != w.n) {
			t.Errorf("DumpChunk(%d) = %d, %d bytes", w.pos, next, len(data))
		}
	}
	// A position inside a small sub-filter returns the whole sub-filter
	// (RedisBloom), with next = pos + its size.
	next, data := f.DumpChunk(12)
	sub1 := make([]byte, 16)
	raw.ReadTableAt(f.Cuckoo(), 1, sub1, 0)
	if next != 28 || !bytes.Equal(data, sub1) {
		t.Errorf("DumpChunk(12) = %d, % x", next, data)
	}
	// Copy through header + chunks.
	g, err := DecodeHeader(f.Header(), 32, 0)
	if err != nil {
		t.Fatal(err)
	}
	for pos := int64(1); ; {
		next, data := f.DumpChunk(pos)
		if data == nil {
			break
		}
		if err := g.LoadChunk(next, data); err != nil {
			t.Fatal(err)
		}
		pos = next
	}
	if !g.Equal(f) {
		t.Fatal("copy differs")
	}
	for i := 0; i < 20; i++ {
		if g.Exists([]byte(strconv.Itoa(i))) != f.Exists([]byte(strconv.Itoa(i))) {
			t.Fatal("answers differ")
		}
	}
	// Errors: empty data, offsets before the start, past the end, across
	// a sub-filter boundary. Nothing changes.
	before := g.CloneFilter()
	for _, v := range []struct {
		pos  int64
		data []byte
	}{
		{9, nil}, {-5, []byte{1}}, {1, []byte{1}}, {3, []byte{1, 2, 3}},
		{58, []byte{1}}, {1 << 40, []byte{1}}, {10, make([]byte, 9)}, {26, make([]byte, 17)},
		{-1 << 63, []byte{1, 2}},
	} {
		if err := g.LoadChunk(v.pos, v.data); err != ErrLoadChunk {
			t.Errorf("LoadChunk(%d, %d bytes): %v", v.pos, len(v.data), err)
		}
	}
	if !g.Equal(before) {
		t.Fatal("failed loads changed the filter")
	}
	if err := g.LoadChunk(57, []byte{7}); err != nil || g.Equal(before) {
		t.Fatal("last byte", err)
	}
}

// TestDumpLargeSubFilter: a sub-filter over 16 MiB goes out in 16 MiB
// slices and the rest.
func TestDumpLargeSubFilter(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 40 MiB")
	}
	f, err := New(Params{Capacity: 20 << 20, BucketSize: 1, MaxIterations: 20, Expansion: 1}, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	f.Insert([]byte("x"))
	size := int64(f.SizeBytes()) // 32 MiB
	var sizes []int
	pos := int64(1)
	for {
		next, data := f.DumpChunk(pos)
		if data == nil {
			break
		}
		sizes = append(sizes, len(data))
		if next != pos+int64(len(data)) {
			t.Fatal(next, pos)
		}
		pos = next
	}
	if len(sizes) != 2 || sizes[0] != MaxScanDumpChunk || sizes[1] != int(size)-MaxScanDumpChunk {
		t.Fatalf("chunks %v of %d", sizes, size)
	}
	if _, err := New(Params{Capacity: 1 << 30, BucketSize: 1, MaxIterations: 20}, 0); err != ErrCreateMemory {
		t.Fatal(err)
	}
}

func TestBudgetGrowth(t *testing.T) {
	// Duplicate-driven growth with EXPANSION 2 stops at the budget.
	f, err := New(Params{Capacity: 1024, BucketSize: 2, MaxIterations: 20, Expansion: 2}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		before := f.CloneFilter()
		if err := f.Insert([]byte("same")); err != nil {
			if err != ErrInsufficientMemory || !f.Equal(before) {
				t.Fatalf("%v after %d copies", err, i)
			}
			break
		}
	}
	if f.SizeBytes() > 1<<20 || f.NumFilters() != 10 {
		t.Fatalf("%s, %d bytes", f.Debug(), f.SizeBytes())
	}
	// Expansion 0: full.
	g := mustNew(t, Params{Capacity: 4, BucketSize: 2, MaxIterations: 20})
	n := 0
	for ; g.Insert([]byte("same")) == nil; n++ {
	}
	if err := g.Insert([]byte("same")); err != ErrFull || n < 2 {
		t.Fatal(err, n)
	}
	if ok, err := g.InsertNX([]byte("same")); ok || err != nil {
		t.Fatal("NX of a present item", ok, err)
	}
	for _, p := range []Params{{}, {Capacity: 10, BucketSize: 0, MaxIterations: 1}, {Capacity: 10, BucketSize: 256, MaxIterations: 1},
		{Capacity: 10, BucketSize: 1}, {Capacity: 10, BucketSize: 1, MaxIterations: 1, Expansion: 40000}} {
		if _, err := New(p, 0); err != ErrCouldNotCreate {
			t.Errorf("%+v: %v", p, err)
		}
	}
}

func TestSnapshot(t *testing.T) {
	f := mustNew(t, Params{Capacity: 50, BucketSize: 3, MaxIterations: 7, Expansion: 2})
	for i := 0; i < 200; i++ {
		f.Insert([]byte(strconv.Itoa(i)))
	}
	f.Delete([]byte("3"))
	data, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	g, err := UnmarshalFilter(data, 0)
	if err != nil || !g.Equal(f) || g.Budget() != DefaultBudget {
		t.Fatal(err)
	}
	if h, err := UnmarshalFilter(data, 1<<20); err != nil || h.Budget() != 1<<20 {
		t.Fatal(err)
	}
	if _, err := UnmarshalFilter(data, 100); !errors.Is(err, ErrBadData) {
		t.Fatal("over budget:", err)
	}
	if _, err := UnmarshalFilter(append(bytes.Clone(data), 0), 0); !errors.Is(err, ErrBadData) {
		t.Fatal("trailing:", err)
	}
	bad := bytes.Clone(data)
	bad[len(bad)-1] ^= 1
	if _, err := UnmarshalFilter(bad, 0); !errors.Is(err, ErrBadData) || !errors.Is(err, cuckoo.ErrChecksum) {
		t.Fatal("corrupt:", err)
	}
	for _, c := range []cuckoo.Config{
		{Capacity: 10, FingerprintBits: 8},                                                          // xxh3
		{Capacity: 10, FingerprintBits: 16, HashID: cuckoo.HashID(cuckooraw.HashMurmur64A)},         // 16-bit
		{Capacity: 10, FingerprintBits: 8, HashID: cuckoo.HashID(cuckooraw.HashMurmur64A), Seed: 1}, // seed
	} {
		o, _ := raw.New(c)
		enc, _ := o.MarshalBinary()
		if _, err := UnmarshalFilter(enc, 0); !errors.Is(err, ErrBadData) {
			t.Errorf("%+v accepted: %v", c, err)
		}
	}
}

func TestAutoCompaction(t *testing.T) {
	f := mustNew(t, Params{Capacity: 8, BucketSize: 2, MaxIterations: 20, Expansion: 1})
	for i := 0; i < 40; i++ {
		f.Insert([]byte(strconv.Itoa(i)))
	}
	if f.NumFilters() < 3 {
		t.Fatal(f.Debug())
	}
	// One delete out of 40 items: 1 > 39·0.1 is false, no compaction.
	f.Delete([]byte("0"))
	if f.Deletes() != 1 {
		t.Fatal(f.Debug())
	}
	for i := 1; i < 36; i++ {
		f.Delete([]byte(strconv.Itoa(i)))
	}
	if f.Deletes() > 1 || f.NumFilters() > 2 {
		t.Fatalf("no automatic compaction: %s", f.Debug())
	}
	for i := 36; i < 40; i++ {
		if !f.Exists([]byte(strconv.Itoa(i))) {
			t.Fatalf("%d lost", i)
		}
	}
}

func TestCloneAndMemory(t *testing.T) {
	f := mustNew(t, defaultParams)
	f.Insert([]byte("a"))
	g := f.Clone().(*Filter)
	g.Insert([]byte("b"))
	if f.Exists([]byte("b")) || f.Equal(g) || f.TypeName() != "MBbloomCF" || f.MemoryUsage() < 1024 {
		t.Fatal("clone")
	}
	if f.Count([]byte("a")) != 1 || f.Count([]byte("zz")) != 0 {
		t.Fatal("count")
	}
}

// FuzzDecodeHeader: arbitrary 38-byte headers never panic, never allocate
// beyond the budget, and a decoded header round-trips.
func FuzzDecodeHeader(f *testing.F) {
	f.Add(validHeader())
	b := validHeader()
	binary.LittleEndian.PutUint64(b[8:], 1<<48)
	f.Add(b)
	f.Add(mustNew(f, defaultParams).Header())
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeHeader(data, 32, 1<<20)
		if err != nil {
			if err != ErrBadHeader && err != ErrInvalidHeader {
				t.Fatal(err)
			}
			return
		}
		if c.SizeBytes() > 1<<20 || !bytes.Equal(c.Header(), data) {
			t.Fatalf("%s", c.Debug())
		}
	})
}

// FuzzLoadChunk: arbitrary positions and chunks on a filter never panic;
// a load either fails and changes nothing or writes exactly its bytes.
func FuzzLoadChunk(f *testing.F) {
	f.Add(int64(9), []byte{1, 2, 3})
	f.Add(int64(1), []byte{1})
	f.Add(int64(-3), []byte{})
	f.Add(int64(57), []byte{0xff})
	f.Add(int64(1<<62), []byte{1})
	f.Fuzz(func(t *testing.T, pos int64, data []byte) {
		c, err := DecodeHeader(validHeader(), 32, 0)
		if err != nil {
			t.Fatal(err)
		}
		before := rawTables(c)
		if err := c.LoadChunk(pos, data); err != nil {
			if err != ErrLoadChunk {
				t.Fatal(err)
			}
			if !bytes.Equal(rawTables(c), before) {
				t.Fatal("failed load changed the filter")
			}
			return
		}
		all := rawTables(c)
		start := pos - int64(len(data)) - 1
		if !bytes.Equal(all[start:start+int64(len(data))], data) {
			t.Fatal("chunk not where it belongs")
		}
	})
}

// FuzzUnmarshalFilter: arbitrary snapshot bytes never panic or exceed the
// budget.
func FuzzUnmarshalFilter(f *testing.F) {
	g := mustNew(f, Params{Capacity: 16, BucketSize: 2, MaxIterations: 5, Expansion: 2})
	for i := 0; i < 30; i++ {
		g.Insert([]byte(strconv.Itoa(i)))
	}
	enc, _ := g.MarshalBinary()
	f.Add(enc)
	f.Add(enc[:40])
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := UnmarshalFilter(data, 1<<16)
		if err != nil {
			if !errors.Is(err, ErrBadData) {
				t.Fatal(err)
			}
			return
		}
		if c.SizeBytes() > 1<<16 {
			t.Fatal("over budget")
		}
		again, _ := c.MarshalBinary()
		d, err := UnmarshalFilter(again, 1<<16)
		if err != nil || !d.Equal(c) {
			t.Fatal("re-encoding does not decode to the same filter")
		}
	})
}

// WriteTo writes MarshalBinary's bytes and ReadFilter decodes them from a
// stream of any piece size, for tables spanning many pages (most of them
// empty); a short stream or a damaged byte is refused.
func TestSnapshotStreams(t *testing.T) {
	f := mustNew(t, Params{Capacity: 1 << 20, BucketSize: 2, MaxIterations: 20, Expansion: 1})
	for i := range 300 {
		f.Insert([]byte(strconv.Itoa(i)))
	}
	want, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	if n, err := f.WriteTo(&w); err != nil || n != int64(len(want)) || !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("WriteTo: %d %v", n, err)
	}
	for _, r := range []io.Reader{iotest.OneByteReader(bytes.NewReader(want)), iotest.HalfReader(bytes.NewReader(want))} {
		g, err := ReadFilter(r, uint64(len(want)), 0)
		if err != nil || !g.Equal(f) {
			t.Fatalf("ReadFilter: %v", err)
		}
	}
	if _, err := ReadFilter(bytes.NewReader(want[:len(want)-1]), uint64(len(want)), 0); !errors.Is(err, ErrBadData) {
		t.Fatalf("short stream: %v", err)
	}
	for _, i := range []int{10, len(want) / 2, len(want) - 2} {
		x := bytes.Clone(want)
		x[i] ^= 0x01
		if _, err := ReadFilter(bytes.NewReader(x), uint64(len(x)), 0); !errors.Is(err, ErrBadData) {
			t.Fatalf("damaged byte %d: %v", i, err)
		}
	}
}
