package hll

import "hash/crc32"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)
