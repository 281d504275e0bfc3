package persist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/probly/probly/internal/codec"
	"github.com/probly/probly/internal/keyspace"
)

// sparseInputs are value encodings around the block and literal limits.
func sparseInputs() map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	holes := make([]byte, 3<<20)
	for i := 0; i < len(holes); i += 1 + rng.IntN(40000) {
		holes[i] = byte(1 + rng.IntN(255))
	}
	dense := make([]byte, 3*maxLiteral+17)
	for i := range dense {
		dense[i] = byte(1 + rng.IntN(255))
	}
	one := func(n, at int) []byte { b := make([]byte, n); b[at] = 7; return b }
	return map[string][]byte{
		"empty": {}, "zero byte": {0}, "one byte": {9},
		"block of zeros": make([]byte, sparseBlock), "block+1 zeros": make([]byte, sparseBlock+1),
		"block-1 zeros": make([]byte, sparseBlock-1), "last byte set": one(sparseBlock+1, sparseBlock),
		"first byte set": one(5*sparseBlock, 0), "1 MiB zeros": make([]byte, 1<<20),
		"holes": holes, "dense": dense,
	}
}

// The version 3 body round-trips every input, reading exactly what was
// written, and zero runs take a few bytes.
func TestSparseBodyRoundTrip(t *testing.T) {
	for name, in := range sparseInputs() {
		var enc bytes.Buffer
		sw := &sparseWriter{}
		if err := encodeValue(sw, &enc, bytesValue(in)); err != nil {
			t.Fatal(err)
		}
		if sw.size != uint64(len(in)) {
			t.Fatalf("%s: size %d, want %d", name, sw.size, len(in))
		}
		r := &recReader{r: bytes.NewReader(enc.Bytes()), left: uint64(enc.Len())}
		got, err := io.ReadAll(&sparseReader{r: r, left: uint64(len(in))})
		if err != nil || !bytes.Equal(got, in) || r.left != 0 {
			t.Fatalf("%s: decoded %d bytes (%v), equal %v, %d stored bytes left", name, len(got), err, bytes.Equal(got, in), r.left)
		}
		if bytes.Count(in, []byte{0}) == len(in) && enc.Len() > 8 {
			t.Errorf("%s: %d zero bytes took %d bytes", name, len(in), enc.Len())
		}
		t.Logf("%s: %d bytes stored as %d", name, len(in), enc.Len())
	}
}

// streamVal is a value type whose decoder streams (codec.Decoder.Read).
type streamVal []byte

const streamType = "persist-test-stream"

func (s streamVal) TypeName() string               { return streamType }
func (s streamVal) MemoryUsage() uint64            { return uint64(len(s)) }
func (s streamVal) Clone() keyspace.Value          { return streamVal(bytes.Clone(s)) }
func (s streamVal) MarshalBinary() ([]byte, error) { return bytes.Clone(s), nil }
func (s streamVal) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for b := []byte(s); len(b) > 0; { // in pieces, as a large value writes
		k, err := w.Write(b[:min(len(b), 1000)])
		n += int64(k)
		if err != nil {
			return n, err
		}
		b = b[k:]
	}
	return n, nil
}

var streamReads, streamDecodes int

func init() {
	codec.Register(streamType, codec.Decoder{
		Decode: func(data []byte, _ uint64) (keyspace.Value, error) {
			streamDecodes++
			return streamVal(bytes.Clone(data)), nil
		},
		Read: func(r io.Reader, n, _ uint64) (keyspace.Value, error) {
			streamReads++
			b := make([]byte, n)
			if _, err := io.ReadFull(r, b); err != nil {
				return nil, fmt.Errorf("stream test: %w", err)
			}
			if n > 0 && b[0] == 0xEE {
				return nil, errors.New("stream test: value refused")
			}
			return streamVal(b), nil
		}})
}

func decodeBoth(typ string, data []byte) (keyspace.Value, error) {
	if typ == streamType || typ == boundedType {
		return codec.Decode(typ, data)
	}
	return decodeTest(typ, data)
}

// A large value is written in the sparse body (a mostly zero one takes
// little space), streamed to its type's Read decoder when loaded, and the
// same holds for a large record of a version 2 file (read twice: its
// checksum first).
func TestSnapshotLargeValueStreams(t *testing.T) {
	big := sparseInputs()["holes"]
	dir := t.TempDir()
	p, size, err := writeSnapshot(dir, 2, entryList{
		{Key: "big", Value: streamVal(big)}, {Key: "k", Value: strVal("v")}, {Key: "small", Value: streamVal("abc")},
	}, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if size > int64(len(big))/10 {
		t.Errorf("snapshot of %d bytes for a %d-byte value with few non-zero bytes", size, len(big))
	}
	streamReads, streamDecodes = 0, 0
	_, ents, err := readSnapshot(p, decodeBoth)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 3 || !bytes.Equal(ents[0].value.(streamVal), big) || string(ents[1].value.(strVal)) != "v" || string(ents[2].value.(streamVal)) != "abc" {
		t.Fatalf("loaded %d entries, wrong values", len(ents))
	}
	if streamReads != 1 || streamDecodes != 1 {
		t.Errorf("%d streamed and %d in-memory decodes, want 1 and 1 (the large and the small value)", streamReads, streamDecodes)
	}

	// Version 2: a dense record larger than inMemRecord.
	dense := bytes.Repeat([]byte{1, 2, 3}, 1<<20)
	img := snapFile(2, recordV2("big", streamType, dense), recordV2("k", "string", []byte("v")))
	p = filepath.Join(t.TempDir(), snapshotName)
	writeFile(t, p, img)
	streamReads, streamDecodes = 0, 0
	if _, ents, err = readSnapshot(p, decodeBoth); err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2 || !bytes.Equal(ents[0].value.(streamVal), dense) || streamReads != 1 {
		t.Fatalf("version 2: %d entries, %d streamed", len(ents), streamReads)
	}
	// Its checksum is checked before the value is decoded.
	img[len(img)/2] ^= 1
	writeFile(t, p, img)
	streamReads = 0
	if _, _, err := readSnapshot(p, decodeBoth); !errors.Is(err, ErrCorrupt) || streamReads != 0 {
		t.Fatalf("damaged large record: %v, %d decodes", err, streamReads)
	}
}

// snapFile builds a snapshot file of version holding records.
func snapFile(version uint16, records ...[]byte) []byte {
	var h [snapHeaderSize]byte
	copy(h[:], snapMagic)
	binary.LittleEndian.PutUint16(h[8:], version)
	binary.LittleEndian.PutUint64(h[12:], 2)
	binary.LittleEndian.PutUint64(h[28:], uint64(len(records)))
	binary.LittleEndian.PutUint32(h[36:], crc32c(h[:36]))
	b := h[:]
	for _, r := range records {
		b = append(b, r...)
	}
	b = append(b, snapEndMagic...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(records)))
	return binary.LittleEndian.AppendUint32(b, crc32c(b))
}

func entryPrefix(key, typ string) []byte {
	b := binary.AppendUvarint(nil, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(typ)))
	return append(append(b, typ...), 0) // expire 0
}

// recordV2 is a version 2 record of a value stored as it is.
func recordV2(key, typ string, value []byte) []byte {
	body := append(entryPrefix(key, typ), value...)
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(body)))
	b = binary.LittleEndian.AppendUint32(b, crc32c(body))
	return append(b, body...)
}

// recordV3 is a version 3 record whose value has size bytes, stored as
// the segment bytes segs (valid or not), with a matching checksum.
func recordV3(key, typ string, size uint64, segs []byte) []byte {
	body := append(entryPrefix(key, typ), segs...)
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(body)))
	b = binary.LittleEndian.AppendUint64(b, size)
	b = binary.LittleEndian.AppendUint32(b, crc32c(body))
	return append(b, body...)
}

func segs(fields ...uint64) []byte {
	var b []byte
	for _, f := range fields {
		b = binary.AppendUvarint(b, f)
	}
	return b
}

// Damaged version 3 bodies whose checksums match (a bug or a forged file)
// are refused with ErrCorrupt, for a value read into memory and for a
// streamed one, and nothing is loaded.
func TestSnapshotSparseBodyDamage(t *testing.T) {
	huge := uint64(1) << 62
	for name, rec := range map[string][]byte{
		"good":                      recordV3("k", "string", 3, append(segs(1, 2), "ab"...)),
		"empty segment":             recordV3("k", "string", 3, append(segs(0, 0, 1, 2), "ab"...)),
		"segment past the size":     recordV3("k", "string", 3, append(segs(2, 2), "ab"...)),
		"literal past the record":   recordV3("k", "string", 3, append(segs(1, 2), "a"...)),
		"segments end early":        recordV3("k", "string", 4, append(segs(1, 2), "ab"...)),
		"bytes after the value":     recordV3("k", "string", 3, append(segs(1, 2), "abc"...)),
		"bad varint":                recordV3("k", "string", 3, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}),
		"larger than memory":        recordV3("k", "string", huge, segs(huge, 0)),
		"stream: segment past size": recordV3("k", streamType, 2<<20, segs(2<<20, 1, 1)),
		"stream: ends early":        recordV3("k", streamType, 2<<20, segs(1 << 20)[:2]),
		"stream: decoder refuses":   recordV3("k", streamType, 2<<20, append(append(segs(0, 1), 0xEE), segs(2<<20-1, 0)...)),
		"stream: bytes after":       recordV3("k", streamType, 2<<20, append(append(segs(0, 1), 1), segs(2<<20-1, 0, 9)...)),
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), snapshotName)
			writeFile(t, p, snapFile(FormatVersion, rec))
			_, ents, err := readSnapshot(p, decodeBoth)
			if name == "good" {
				if err != nil || len(ents) != 1 || string(ents[0].value.(strVal)) != "\x00ab" {
					t.Fatalf("good record: %v %v", ents, err)
				}
				return
			}
			if !errors.Is(err, ErrCorrupt) || ents != nil {
				t.Fatalf("accepted or wrong error: %v (%d entries)", err, len(ents))
			}
			t.Log(err)
		})
	}
}

// A file written now is version 4.
func TestSnapshotVersion4Written(t *testing.T) {
	dir := t.TempDir()
	p, _, err := writeSnapshot(dir, 2, entryList{{Key: "k", Value: strVal("v")}}, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || binary.LittleEndian.Uint16(b[8:]) != FormatVersion || FormatVersion != 4 {
		t.Fatalf("version %v, %v", b[8:10], err)
	}
}

// boundedType is a test type whose encoding is at most 1 MiB (MaxSize).
const boundedType = "bounded-test"

func init() {
	codec.Register(boundedType, codec.Decoder{MaxSize: 1 << 20,
		Decode: func(data []byte, _ uint64) (keyspace.Value, error) {
			return streamVal(bytes.Clone(data)), nil
		}})
}

// A record whose sparse body claims more bytes than its type allows (a
// few bytes of file standing for 1 GiB of zeros) is refused before the
// loader allocates the value: the QA case of a 65 KB dump.pdb whose
// string claims 2^30 bytes, which made the loader allocate 1 GiB first.
func TestSnapshotValueOverTypeMaxRefusedBeforeAllocating(t *testing.T) {
	const claimed = 1 << 30
	p := filepath.Join(t.TempDir(), snapshotName)
	writeFile(t, p, snapFile(FormatVersion,
		recordV3("small", boundedType, 3, append(segs(1, 2), "ab"...)),
		recordV3("huge", boundedType, claimed, segs(claimed, 0))))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, ents, err := readSnapshot(p, decodeBoth)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) || ents != nil {
		t.Fatalf("accepted or wrong error: %v (%d entries)", err, len(ents))
	}
	if !strings.Contains(err.Error(), `"huge"`) || !strings.Contains(err.Error(), "larger than type") {
		t.Fatalf("error does not name the key and the bound: %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Fatalf("allocated %d bytes before refusing a value claiming %d", got, claimed)
	}
	t.Log(err)
}

// noMagicType is a test type without a size bound or a streaming decoder,
// whose decoder refuses anything not starting with "MAGC" (as TopK, CMS
// and t-digest check their headers).
const noMagicType = "nomagic-test"

func init() {
	codec.Register(noMagicType, codec.Decoder{
		Decode: func(data []byte, _ uint64) (keyspace.Value, error) {
			if !bytes.HasPrefix(data, []byte("MAGC")) {
				return nil, errors.New("nomagic test: bad magic")
			}
			return streamVal(bytes.Clone(data)), nil
		}})
}

// A record of such a type whose sparse size claims 256 MiB of zeros is
// refused by its decoder without the loader touching those pages: zero
// runs read into the fresh buffer are not written (sparseReader.zeroed),
// so resident memory does not grow by the claim (QA: it grew by about
// 260 MiB before, up to the memory available for larger claims). It runs
// in a child process: there the heap is fresh, as at a server's start,
// where memory other tests freed would be zeroed by the runtime on reuse.
func TestSnapshotZeroRunsLeaveFreshMemoryUntouched(t *testing.T) {
	if os.Getenv("PERSIST_FRESH_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSnapshotZeroRunsLeaveFreshMemoryUntouched$", "-test.v")
		cmd.Env = append(os.Environ(), "PERSIST_FRESH_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestSnapshotZeroRunsLeaveFreshMemoryUntouched") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	rss := func() uint64 {
		b, err := os.ReadFile("/proc/self/statm")
		if err != nil {
			t.Skip("no /proc/self/statm:", err)
		}
		var size, res uint64
		if _, err := fmt.Sscan(string(b), &size, &res); err != nil {
			t.Fatal(err)
		}
		return res * uint64(os.Getpagesize())
	}
	const claimed = 256 << 20
	p := filepath.Join(t.TempDir(), snapshotName)
	writeFile(t, p, snapFile(FormatVersion, recordV3("k", noMagicType, claimed, segs(claimed, 0))))
	before := rss()
	_, ents, err := readSnapshot(p, func(typ string, data []byte) (keyspace.Value, error) {
		if grown := rss() - before; grown > 64<<20 {
			t.Errorf("resident memory grew by %d bytes reading a %d-byte claim", grown, claimed)
		}
		return codec.Decode(typ, data)
	})
	if !errors.Is(err, ErrCorrupt) || ents != nil || !strings.Contains(err.Error(), "bad magic") {
		t.Fatalf("accepted or wrong error: %v (%d entries)", err, len(ents))
	}
}
