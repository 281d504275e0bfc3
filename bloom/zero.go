package bloom

// Panic messages of methods called on a zero value. The zero Filter,
// Counting, Stable, Scalable, SBBF and builder are not usable (they have
// no size); every method that reads or changes the contents panics with
// the message of its type, which names the constructors. Decoding into a
// zero value (UnmarshalBinary, ReadFrom) works.
const (
	zeroFilter   = "bloom: method called on a zero Filter, which is not usable: create it with New or NewWithConfig (or UnmarshalBinary into it)"
	zeroCounting = "bloom: method called on a zero Counting, which is not usable: create it with NewCounting or NewCountingWithConfig (or UnmarshalBinary into it)"
	zeroStable   = "bloom: method called on a zero Stable, which is not usable: create it with NewStable or NewStableWithConfig (or UnmarshalBinary into it)"
	zeroScalable = "bloom: method called on a zero Scalable, which is not usable: create it with NewScalable or NewScalableWithConfig (or UnmarshalBinary into it)"
	zeroSBBF     = "bloom: method called on a zero SBBF, which is not usable: create it with NewSBBF, NewSBBFWithConfig, NewSBBFFromParquet or DecodeParquet (or UnmarshalBinary into it)"
	zeroBuilder  = "bloom: method called on a zero builder, which is not usable: create it with NewBuilder (internal/bloomraw)"
)

// zeroPanic panics with msg. Keeping the panic out of line keeps the
// callers' checks to a compare and a predictable branch.
//
//go:noinline
func zeroPanic(msg string) { panic(msg) }
