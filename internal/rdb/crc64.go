package rdb

import "hash/crc64"

// jonesReflected is the Jones polynomial 0xad93d23594c935a9 in the
// bit-reversed form hash/crc64 takes.
const jonesReflected = 0x95ac9329ac4bc9b5

var jonesTable = crc64.MakeTable(jonesReflected)

// CRC64 returns Redis's CRC-64 of p continuing from crc (0 to start):
// the Jones polynomial, reflected input and output, initial value 0 and
// no final xor (Redis crc64.c; check value: CRC64(0, "123456789") =
// 0xe9c6d914c4b8d9ca). hash/crc64 inverts the register before and after,
// which the two inversions here undo. O(len(p)), no allocation.
func CRC64(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, jonesTable, p)
}
