package hll

import "github.com/probly/probly/internal/redishll"

// The server's Redis string operations (internal/redishll) run on the same
// layout code as Sketch; the tests of this package check the two against
// each other under these short names.
var (
	RedisAdd       = redishll.Add
	RedisCount     = redishll.Count
	RedisCountMany = redishll.CountMany
	RedisMerge     = redishll.Merge
	RedisToDense   = redishll.ToDense
	RedisGetReg    = redishll.GetReg
	RedisDecode    = redishll.Decode
	RedisValidate  = redishll.Validate
	RedisNew       = redishll.NewString
	RedisSelfTest  = redishll.SelfTest
	denseHisto     = redishll.DenseHisto
)

type RedisUnion = redishll.Union

const (
	RedisDenseSize        = redishll.DenseSize
	DefaultSparseMaxBytes = redishll.DefaultSparseMaxBytes
)
