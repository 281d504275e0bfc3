//go:build purego

package bloom

// sbbfImpl names the block-access implementation compiled in (see
// sbbf_unsafe.go).
const sbbfImpl = "purego"

// sbbfBlock returns block i of bits, bounds-checked: the pure-Go twin of
// the unsafe fast path.
func sbbfBlock(bits []uint64, i uint64) *[4]uint64 {
	return (*[4]uint64)(bits[i*sbbfBlockWords : i*sbbfBlockWords+sbbfBlockWords])
}
