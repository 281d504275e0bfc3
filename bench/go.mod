module github.com/probly/probly/bench

go 1.26.0

require github.com/probly/probly v0.0.0

require (
	github.com/bits-and-blooms/bitset v1.24.2 // indirect
	github.com/bits-and-blooms/bloom/v3 v3.7.1 // indirect
)

replace github.com/probly/probly => ../
