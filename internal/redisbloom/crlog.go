package redisbloom

import (
	"math"
	"math/big"
	"sync"
)

// Correctly rounded natural logarithm.
//
// RedisBloom computes a link's bits-per-entry with glibc's log(), which is
// correctly rounded in practice; Go's math.Log is accurate to < 1 ulp but
// differs in the last bit for about 5% of inputs (0.01 among them). The
// bpe double is stored in SCANDUMP headers, so to produce byte-identical
// dumps we compute ln with ~190 bits of precision and round once.
//
// Method: x = f·2^e with f ∈ [√½, √2); ln x = e·ln2 + ln f, where
// ln f = 2·atanh(z) = 2·Σ z^(2j+1)/(2j+1) with z = (f−1)/(f+1), |z| < 0.172,
// and ln2 = 2·atanh(1/3) computed once by the same series. All arithmetic
// is in big.Float at crPrec bits, so the final rounding to float64 is
// correct unless the exact value lies within ~2^-180 (relative) of a
// rounding boundary, far beyond the hardest known cases for log.

const crPrec = 192

var (
	ln2Once sync.Once
	ln2Big  *big.Float
)

// atanhSeries returns 2·atanh(z) = 2·Σ z^(2j+1)/(2j+1) at crPrec bits.
func atanhSeries(z *big.Float) *big.Float {
	z2 := new(big.Float).SetPrec(crPrec).Mul(z, z)
	pow := new(big.Float).SetPrec(crPrec).Set(z) // z^(2j+1)
	sum := new(big.Float).SetPrec(crPrec).Set(z)
	term := new(big.Float).SetPrec(crPrec)
	den := new(big.Float).SetPrec(crPrec)
	for j := int64(1); j < 1000; j++ {
		pow.Mul(pow, z2)
		if pow.Sign() == 0 {
			break
		}
		den.SetInt64(2*j + 1)
		term.Quo(pow, den)
		// Stop once the term no longer affects the sum at this precision.
		if term.MantExp(nil) < sum.MantExp(nil)-crPrec-8 {
			break
		}
		sum.Add(sum, term)
	}
	return sum.Mul(sum, big.NewFloat(2).SetPrec(crPrec))
}

func ln2() *big.Float {
	ln2Once.Do(func() {
		third := new(big.Float).SetPrec(crPrec).Quo(
			new(big.Float).SetPrec(crPrec).SetInt64(1),
			new(big.Float).SetPrec(crPrec).SetInt64(3))
		ln2Big = atanhSeries(third)
	})
	return ln2Big
}

// logCR returns ln(x) correctly rounded to nearest (ties to even). Special
// values follow math.Log: ln(+Inf) = +Inf, ln(0) = −Inf, ln(x<0) = NaN.
func logCR(x float64) float64 {
	switch {
	case math.IsNaN(x) || x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return x
	case x == 1:
		return 0
	}
	frac, exp := math.Frexp(x) // x = frac·2^exp, frac ∈ [0.5, 1)
	if frac < math.Sqrt2/2 {
		frac *= 2 // exact
		exp--
	}
	f := new(big.Float).SetPrec(crPrec).SetFloat64(frac)
	one := new(big.Float).SetPrec(crPrec).SetInt64(1)
	num := new(big.Float).SetPrec(crPrec).Sub(f, one)
	den := new(big.Float).SetPrec(crPrec).Add(f, one)
	var res *big.Float
	if num.Sign() == 0 {
		res = new(big.Float).SetPrec(crPrec)
	} else {
		res = atanhSeries(num.Quo(num, den))
	}
	if exp != 0 {
		e := new(big.Float).SetPrec(crPrec).SetInt64(int64(exp))
		res.Add(res, e.Mul(e, ln2()))
	}
	out, _ := res.Float64() // rounds to nearest even
	return out
}

// logCache memoizes logCR for the handful of error rates a server sees
// (every link of every default filter uses 0.01·2^-i, for example).
var logCache sync.Map // float64 → float64

const logCacheMax = 4096

var logCacheN struct {
	sync.Mutex
	n int
}

func cachedLogCR(x float64) float64 {
	if v, ok := logCache.Load(x); ok {
		return v.(float64)
	}
	v := logCR(x)
	logCacheN.Lock()
	if logCacheN.n < logCacheMax {
		if _, loaded := logCache.LoadOrStore(x, v); !loaded {
			logCacheN.n++
		}
	}
	logCacheN.Unlock()
	return v
}
