//go:build !purego

package bloom

import "unsafe"

// sbbfImpl names the block-access implementation compiled in: "unsafe" by
// default, "purego" with the purego build tag. Both give identical results;
// the test suite runs under both (go test -tags purego ./bloom/).
const sbbfImpl = "unsafe"

// sbbfBlock returns block i of bits without a bounds check. Callers pass
// i < len(bits)/4: sbbfIndex(h, blocks) < blocks for every h, and
// len(bits) = 4·blocks for every SBBF this package builds.
func sbbfBlock(bits []uint64, i uint64) *[4]uint64 {
	return (*[4]uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(bits)), i*sbbfBlockBytes))
}
