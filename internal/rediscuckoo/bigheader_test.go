package rediscuckoo

import (
	"encoding/binary"
	"testing"
)

// A CF.LOADCHUNK header of 2^32 buckets of size 1 (4 GiB, RedisBloom
// accepts it where the memory exists) is admitted by a budget that holds
// it, refused by one that does not, and a sub-filter of 2^33 slots, which
// RedisBloom's 32-bit slot index cannot address, is refused at any budget.
// Sized with HeaderMemoryUsage, nothing is allocated.
func TestHeader2p32Buckets(t *testing.T) {
	hdr := func(buckets uint64, bs uint16) []byte {
		le := binary.LittleEndian
		b := le.AppendUint64(nil, 0)
		b = le.AppendUint64(b, buckets)
		b = le.AppendUint64(b, 0)
		b = le.AppendUint64(b, 1)
		b = le.AppendUint16(b, bs)
		b = le.AppendUint16(b, 20)
		return le.AppendUint16(b, 1)
	}
	n, ok := HeaderMemoryUsage(hdr(1<<32, 1), 32, 5<<30)
	if !ok || n < 1<<32 {
		t.Fatalf("2^32×1 under a 5 GiB budget: %d %v", n, ok)
	}
	if _, ok := HeaderMemoryUsage(hdr(1<<32, 1), 32, n-1); ok {
		t.Fatal("admitted by a budget one byte short")
	}
	if _, ok := HeaderMemoryUsage(hdr(1<<32, 2), 32, 1<<40); ok {
		t.Fatal("2^33-slot sub-filter admitted")
	}
}
