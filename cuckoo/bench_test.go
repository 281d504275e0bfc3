package cuckoo

import (
	"testing"
)

const benchN = 1 << 20

func benchKeys(n int, seed uint64) [][]byte {
	rng := splitmix64(seed)
	keys := make([][]byte, n)
	for i := range keys {
		k := make([]byte, 16)
		for j := 0; j < 16; j += 8 {
			v := rng.next()
			for b := 0; b < 8; b++ {
				k[j+b] = byte(v >> (8 * b))
			}
		}
		keys[i] = k
	}
	return keys
}

// benchFilter returns a filter of 2^18 buckets × 4 slots holding about 90%
// of capacity, and the keys it holds.
func benchFilter(b *testing.B, fpBits int) (*Filter, [][]byte) {
	f, err := NewWithConfig(Config{Buckets: benchN / 4, BucketSize: 4, FingerprintBits: fpBits, MaxKicks: 500, Expansion: NoGrowth})
	if err != nil {
		b.Fatal(err)
	}
	keys := benchKeys(benchN*9/10, 1)
	for _, k := range keys {
		if err := f.Add(k); err != nil {
			b.Fatal(err)
		}
	}
	return f, keys
}

func benchInsert(b *testing.B, fpBits int) {
	keys := benchKeys(benchN*9/10, 1)
	var f *Filter
	i := len(keys)
	for b.Loop() {
		if i == len(keys) {
			b.StopTimer()
			f, _ = NewWithConfig(Config{Buckets: benchN / 4, BucketSize: 4, FingerprintBits: fpBits, MaxKicks: 500, Expansion: NoGrowth})
			i = 0
			b.StartTimer()
		}
		if err := f.Add(keys[i]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkAdd8(b *testing.B)  { benchInsert(b, 8) }
func BenchmarkAdd16(b *testing.B) { benchInsert(b, 16) }

func benchLookup(b *testing.B, fpBits int, members bool) {
	f, keys := benchFilter(b, fpBits)
	if !members {
		keys = benchKeys(len(keys), 2)
	}
	i := 0
	for b.Loop() {
		f.Test(keys[i])
		i++
		if i == len(keys) {
			i = 0
		}
	}
}

func BenchmarkTest8Member(b *testing.B)     { benchLookup(b, 8, true) }
func BenchmarkTest8NonMember(b *testing.B)  { benchLookup(b, 8, false) }
func BenchmarkTest16Member(b *testing.B)    { benchLookup(b, 16, true) }
func BenchmarkTest16NonMember(b *testing.B) { benchLookup(b, 16, false) }
