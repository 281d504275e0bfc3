package tdigest

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/probly/probly/internal/binfmt"
)

// The PRBL encoding of a Digest (docs/FORMATS.md, "t-digest"): the whole
// state, buffer included, so a decoded digest answers and evolves exactly
// as the encoded one. All integers little-endian.
//
//	offset  size  field
//	0       4     magic "PRBL"
//	4       1     format version (1)
//	5       1     kind (9, t-digest)
//	6       2     reserved, 0
//	8       4     compression C (1 … MaxCompression)
//	12      4     merged nodes M
//	16      4     unmerged nodes U (M + U ≤ 6·C + 10)
//	20      4     reserved, 0
//	24      8     min (float64 bits; +MaxFloat64 when empty)
//	32      8     max (float64 bits; −MaxFloat64 when empty)
//	40      8     merged weight (int64; Σ of the M centroids' weights, rounded
//	              through a double as t-digest-c stores it)
//	48      8     unmerged weight (int64, Σ of the U buffered nodes' weights)
//	56      8     compressions (int64 ≥ 0)
//	64      4     CRC-32C of bytes [0, 64)
//	68      16·N  N = M + U nodes: mean (float64 bits, finite), weight (int64 ≥ 1)
//	68+16N  4     CRC-32C of the nodes
const (
	hdrLen = 68
	what   = "t-digest"
)

func (d *Digest) header() []byte {
	b := binfmt.AppendPrefix(make([]byte, 0, hdrLen), binfmt.KindTDigest)
	b = append(b, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(d.compression))
	b = binary.LittleEndian.AppendUint32(b, uint32(d.merged))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(d.nodes)-d.merged))
	b = binary.LittleEndian.AppendUint32(b, 0)
	for _, v := range []uint64{math.Float64bits(d.min), math.Float64bits(d.max),
		uint64(d.mergedWeight), uint64(d.unmergedWeight), uint64(d.compressions)} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return binfmt.Seal(b, 0)
}

func appendNodes(b []byte, nodes []node) []byte {
	for _, nd := range nodes {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(nd.mean))
		b = binary.LittleEndian.AppendUint64(b, uint64(nd.weight))
	}
	return b
}

// MarshalBinary implements encoding.BinaryMarshaler: 72 + 16·N bytes for N
// nodes (≤ 16·cap). It does not compress.
func (d *Digest) MarshalBinary() ([]byte, error) {
	return d.AppendBinary(make([]byte, 0, hdrLen+NodeBytes*len(d.nodes)+4))
}

// AppendBinary appends MarshalBinary's bytes to b (encoding.BinaryAppender).
// It never fails.
func (d *Digest) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, d.header()...)
	start := len(b)
	return binfmt.Seal(appendNodes(b, d.nodes), start), nil
}

// WriteTo implements io.WriterTo, streaming the nodes in pieces.
func (d *Digest) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(d.header())
	if err != nil {
		return int64(n), err
	}
	cw := &binfmt.CRCWriter{W: w, N: int64(n)}
	buf := make([]byte, 0, binfmt.IOChunk)
	for i := 0; i < len(d.nodes); i += binfmt.IOChunk / NodeBytes {
		buf = appendNodes(buf[:0], d.nodes[i:min(len(d.nodes), i+binfmt.IOChunk/NodeBytes)])
		if _, err := cw.Write(buf); err != nil {
			return cw.N, err
		}
	}
	return cw.Trailer()
}

// parsed is a validated header.
type parsed struct {
	compression, merged, unmerged int
	min, max                      float64
	mw, uw, comps                 int64
}

// parseHeader validates a possibly partial header (format errors before
// truncation), then the whole header.
func parseHeader(h []byte) (parsed, error) {
	var p parsed
	if err := codec.CheckHeader(h, binfmt.KindTDigest, hdrLen, what); err != nil {
		return p, err
	}
	le := binary.LittleEndian
	if h[6] != 0 || h[7] != 0 || le.Uint32(h[20:]) != 0 {
		return p, codec.Formatf("reserved bytes are not zero")
	}
	c := le.Uint32(h[8:])
	if c < 1 || c > MaxCompression {
		return p, codec.Formatf("compression %d, want 1 … %d", c, MaxCompression)
	}
	p.compression = int(c)
	m, u := uint64(le.Uint32(h[12:])), uint64(le.Uint32(h[16:]))
	if m+u > uint64(Capacity(p.compression)) {
		return p, codec.Formatf("%d+%d nodes, capacity %d", m, u, Capacity(p.compression))
	}
	p.merged, p.unmerged = int(m), int(u)
	p.min, p.max = math.Float64frombits(le.Uint64(h[24:])), math.Float64frombits(le.Uint64(h[32:]))
	p.mw, p.uw, p.comps = int64(le.Uint64(h[40:])), int64(le.Uint64(h[48:])), int64(le.Uint64(h[56:]))
	if p.mw < 0 || p.uw < 0 || p.comps < 0 {
		return p, codec.Formatf("negative weight or count")
	}
	if _, ok := addInt64(p.mw, p.uw); !ok {
		return p, codec.Formatf("total weight overflows")
	}
	if m+u == 0 {
		if p.mw != 0 || p.uw != 0 || p.min != math.MaxFloat64 || p.max != -math.MaxFloat64 {
			return p, codec.Formatf("empty digest with weights or bounds")
		}
	} else if math.IsNaN(p.min) || math.IsInf(p.min, 0) || math.IsNaN(p.max) || math.IsInf(p.max, 0) || p.min > p.max {
		return p, codec.Formatf("min %v, max %v", p.min, p.max)
	}
	return p, nil
}

// build checks the nodes against the header and returns the digest.
func (p parsed) build(body []byte) (*Digest, error) {
	n := p.merged + p.unmerged
	nodes := make([]node, n)
	var sums [2]int64
	for i := range nodes {
		mean := math.Float64frombits(binary.LittleEndian.Uint64(body[16*i:]))
		w := int64(binary.LittleEndian.Uint64(body[16*i+8:]))
		if math.IsNaN(mean) || math.IsInf(mean, 0) || w < 1 {
			return nil, codec.Formatf("node %d: mean %v, weight %d", i, mean, w)
		}
		part := 0
		if i >= p.merged {
			part = 1
		}
		s, ok := addInt64(sums[part], w)
		if !ok {
			return nil, codec.Formatf("node weights overflow")
		}
		sums[part] = s
		nodes[i] = node{mean, w}
	}
	// The header's weights are not required to equal the sums: a
	// compression stores (int64)(double total), which rounds above 2^53,
	// as t-digest-c does.
	if (sums[0] == 0) != (p.mw == 0) || (sums[1] == 0) != (p.uw == 0) {
		return nil, codec.Formatf("node weights %d+%d, header %d+%d", sums[0], sums[1], p.mw, p.uw)
	}
	return &Digest{compression: float64(p.compression), cap: Capacity(p.compression), min: p.min, max: p.max,
		nodes: nodes, merged: p.merged, mergedWeight: p.mw, unmergedWeight: p.uw, compressions: p.comps}, nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler: exactly one
// encoding. Everything is validated before d changes (the header, both
// CRCs, every node: finite means, weights ≥ 1 without overflow);
// it allocates only the nodes data holds. Errors: ErrFormat, ErrVersion,
// ErrChecksum, io.ErrUnexpectedEOF.
func (d *Digest) UnmarshalBinary(data []byte) error {
	p, err := parseHeader(data[:min(len(data), hdrLen)])
	if err != nil {
		return err
	}
	body, rest, err := codec.Body(data, hdrLen, uint64(NodeBytes)*uint64(p.merged+p.unmerged), what)
	if err != nil {
		return err
	}
	if err := codec.Trailing(rest, what); err != nil {
		return err
	}
	x, err := p.build(body)
	if err != nil {
		return err
	}
	*d = *x
	return nil
}

// ReadFrom implements io.ReaderFrom: one encoding from r, validated as
// UnmarshalBinary does; memory grows with the bytes read. io.EOF if r is
// empty.
func (d *Digest) ReadFrom(r io.Reader) (int64, error) {
	hdr := make([]byte, hdrLen)
	var p parsed
	n, err := codec.ReadHeader(r, hdr, what, func(h []byte) (err error) { p, err = parseHeader(h); return err })
	if err != nil {
		return n, err
	}
	body, m, err := codec.ReadBody(r, uint64(NodeBytes)*uint64(p.merged+p.unmerged), what)
	n += m
	if err != nil {
		return n, err
	}
	x, err := p.build(body)
	if err != nil {
		return n, err
	}
	*d = *x
	return n, nil
}

// String describes d briefly, e.g. "tdigest(C=100, n=10000, 51+422 nodes)".
func (d *Digest) String() string {
	return fmt.Sprintf("tdigest(C=%d, n=%d, %d+%d nodes)", d.Compression(), d.Count(), d.merged, len(d.nodes)-d.merged)
}
