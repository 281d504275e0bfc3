package cuckoo

import (
	"errors"
	"testing"
)

// tableBytesFor agrees with the filters newWithConfig and restore build, and
// fails exactly when they do.
func TestTableBytes(t *testing.T) {
	var cfgs []Config
	for _, capacity := range []uint64{1, 3, 100, 1000, 1 << 14, 12345} {
		for _, bs := range []int{1, 2, 4, 7} {
			for _, fp := range []int{8, 16} {
				for _, exp := range []uint32{0, 1, 2, 3, 4} {
					for _, maxBytes := range []uint64{0, 4096, 1 << 20} {
						cfgs = append(cfgs, Config{Capacity: capacity, BucketSize: bs, FingerprintBits: fp, Expansion: exp, MaxBytes: maxBytes})
					}
				}
			}
		}
	}
	cfgs = append(cfgs, Config{Capacity: 0}, Config{Capacity: 10, BucketSize: 300}, Config{Buckets: 3})
	for _, c := range cfgs {
		for _, sub := range []int{0, 1, 2, 5} {
			got, gerr := tableBytesFor(c, sub)
			var f *Filter
			var err error
			if sub == 1 {
				f, err = newWithConfig(c)
			} else {
				f, err = restore(c, sub, 0, 0)
			}
			if (gerr != nil) != (err != nil) {
				t.Fatalf("%+v sub %d: TableBytes error %v, build error %v", c, sub, gerr, err)
			}
			if err != nil {
				if errors.Is(err, ErrTooLarge) != errors.Is(gerr, ErrTooLarge) {
					t.Fatalf("%+v sub %d: errors differ: %v vs %v", c, sub, gerr, err)
				}
				continue
			}
			if got != f.Stats().Bytes {
				t.Fatalf("%+v sub %d: TableBytes %d, SizeBytes %d", c, sub, got, f.Stats().Bytes)
			}
		}
	}
}
