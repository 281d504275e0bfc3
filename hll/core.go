package hll

import "github.com/probly/probly/internal/redishll"

// The sketch's string layout (Redis's, generalised to 2^p registers) lives
// in internal/redishll, which the server's PF* commands use too; these are
// the package's short names for it.

// params describes one precision.
type params struct {
	p         uint8
	m         int // registers
	denseSize int // header + packed registers
	sparseMax int // default promotion threshold of a Sketch
	c         *redishll.Params
}

var paramTable = func() (t [MaxPrecision + 1]*params) {
	for p := MinPrecision; p <= MaxPrecision; p++ {
		c := redishll.ParamTable[p]
		t[p] = &params{p: c.P, m: c.M, denseSize: c.DenseSize, sparseMax: c.SparseMax, c: c}
	}
	return t
}()

const (
	hdrSize        = redishll.HdrSize
	encDense       = redishll.EncDense
	encSparse      = redishll.EncSparse
	redisP         = redishll.RedisP
	redisRegisters = redishll.Registers
)

// The precision bounds agree with the layout's.
var _ = [1]struct{}{}[MinPrecision-redishll.MinPrecision]
var _ = [1]struct{}{}[MaxPrecision-redishll.MaxPrecision]

var redisParams = paramTable[redisP]

func hasMagic(b []byte) bool                  { return redishll.HasMagic(b) }
func cacheValid(b []byte) bool                { return redishll.CacheValid(b) }
func invalidateCache(b []byte)                { redishll.InvalidateCache(b) }
func readCache(b []byte) uint64               { return redishll.ReadCache(b) }
func writeCache(b []byte, v uint64)           { redishll.WriteCache(b, v) }
func newSparse(l *params) []byte              { return redishll.NewSparse(l.c) }
func patLen(l *params, h uint64) (int, uint8) { return redishll.PatLen(l.c, h) }
func getReg(r []byte, i int) uint8            { return redishll.Reg(r, i) }
func setReg(r []byte, i int, v uint8)         { redishll.PutReg(r, i, v) }
func denseAdd(l *params, b []byte, h uint64) bool {
	return redishll.DenseAdd(l.c, b, h)
}
func isXZero(op byte) bool { return redishll.IsXZero(op) }
func walkSparse(body []byte, m int, term byte, fn func(first, run, value int)) bool {
	return redishll.WalkSparse(body, m, term, fn)
}
func countString(l *params, s []byte) (uint64, bool) { return redishll.CountString(l.c, s) }
func mergeInto(l *params, s []byte, regs []uint8) bool {
	return redishll.MergeInto(l.c, s, regs)
}
func setRegister(l *params, s []byte, index int, count uint8, maxBytes int) ([]byte, bool, error) {
	return redishll.SetRegister(l.c, s, index, count, maxBytes)
}
func writeRegisters(l *params, dst []byte, regs []uint8, toDenseFirst bool, maxBytes int) ([]byte, error) {
	return redishll.WriteRegisters(l.c, dst, regs, toDenseFirst, maxBytes)
}
