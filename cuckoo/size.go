package cuckoo

import "fmt"

// tableBytesFor returns the table bytes of the filter that
// newWithConfig(c) (sub = 1) or restore(c, sub, …) would build (c's
// Expansion in the encoded meaning), without allocating the tables, or the
// error those functions would return. It lets a caller account for a
// filter's memory before creating it.
func tableBytesFor(c Config, sub int) (uint64, error) {
	f, err := newEmpty(c)
	if err != nil {
		return 0, err
	}
	if sub < 1 || sub > MaxSubFilters {
		return 0, invalid("%d sub-filters not in [1, %d]", sub, MaxSubFilters)
	}
	if sub > 1 && f.expansion == 0 {
		return 0, invalid("%d sub-filters but expansion 0", sub)
	}
	for i := range sub {
		nb, ok := f.subBuckets(i)
		if !ok {
			return 0, fmt.Errorf("%w: sub-filter %d would have more than 2^40 buckets", ErrTooLarge, i)
		}
		b, err := f.reserve(nb) // checks the running total, as grow does
		if err != nil {
			return 0, err
		}
		f.bytes += b
	}
	return f.bytes, nil
}
