package cli

import (
	"bytes"
	"encoding"
	"fmt"
	"github.com/probly/probly/internal/bloomraw"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probly/probly/bloom"
)

// buildInput returns an input for `bloom build` that crosses the batch
// boundaries of every build path (more than addBatchPairs lines), with CRLF
// endings, duplicates, empty lines and lines longer than addBatchBytes, and
// the keys it holds, in order.
func buildInput() (text string, keys []string) {
	var b strings.Builder
	for i := range 3*addBatchPairs + 17 {
		var k, end string
		switch {
		case i%997 == 0:
			k = fmt.Sprintf("long-%d-%s", i, strings.Repeat("x", addBatchBytes+i%3))
		case i%13 == 0:
			k = fmt.Sprintf("dup-%d", i%7)
		case i%11 == 0:
			k = ""
		default:
			k = fmt.Sprintf("pkg-%d", i)
		}
		if i%5 == 0 {
			end = "\r"
		}
		b.WriteString(k + end + "\n")
		keys = append(keys, k)
	}
	return b.String(), keys
}

// TestBloomBuildEqualsAdd checks that `bloom build` (reader and adder
// goroutines, a bloom.Builder for classic, hashing on the reader for sbbf)
// writes exactly the filter, bits and N, of calling Add on every line in
// order, for every layout, from a file and from stdin.
func TestBloomBuildEqualsAdd(t *testing.T) {
	dir := t.TempDir()
	text, keys := buildInput()
	in := filepath.Join(dir, "keys.txt")
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	const n, p = 10000, 0.01
	for _, layout := range []string{"classic", "sbbf", "counting"} {
		want, _, err := newLayoutFilter(layout, n, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			switch f := want.(type) {
			case *bloom.Filter:
				f.Add([]byte(k))
			case *bloom.SBBF:
				f.Add([]byte(k))
			case *bloom.Counting:
				f.Add([]byte(k))
			}
		}
		for _, stdin := range []bool{false, true} {
			out := filepath.Join(dir, fmt.Sprintf("%s-%v.bloom", layout, stdin))
			args := []string{"bloom", "build", "--layout", layout, "-n", fmt.Sprint(n), "-p", fmt.Sprint(p), "-o", out}
			input := ""
			if stdin {
				input = text
			} else {
				args = append(args, in)
			}
			if code, _, stderr := runCLI(t, input, args...); code != ExitOK {
				t.Fatalf("%s: exit %d: %s", layout, code, stderr)
			}
			got, err := readFilterFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !equalFilters(got, want) {
				t.Fatalf("%s (stdin %v): the built filter differs from Add on every line (N %d, want %d)",
					layout, stdin, got.Stats().N, want.Stats().N)
			}
		}
	}
}

// sameEncoding reports whether two filters encode to the same bytes
// (parameters, hash, count and bits).
func sameEncoding(a, b encoding.BinaryMarshaler) bool {
	x, errX := a.MarshalBinary()
	y, errY := b.MarshalBinary()
	return errX == nil && errY == nil && bytes.Equal(x, y)
}

func equalFilters(a, b layoutFilter) bool {
	switch x := a.(type) {
	case *bloom.Filter:
		y, ok := b.(*bloom.Filter)
		return ok && sameEncoding(x, y)
	case *bloom.SBBF:
		y, ok := b.(*bloom.SBBF)
		return ok && sameEncoding(x, y)
	case *bloom.Counting:
		y, ok := b.(*bloom.Counting)
		return ok && sameEncoding(x, y)
	}
	return false
}

// TestBuildPathFor checks which path each filter gets, and that the
// fallback (copied keys and AddMany) and the hash paths all give the
// result of Add, also for filters the CLI does not make (a seeded SBBF, a
// classic filter with a hash this package cannot compute).
func TestBuildPathFor(t *testing.T) {
	classic, _ := bloom.New(1000, 0.01)
	sbbf, _ := bloom.NewSBBF(1000, 0.01)
	seeded, _ := bloom.NewSBBF(1000, 0.01)
	bloomRaw.SBBFSetSeed(seeded, 99)
	counting, _ := bloom.NewCounting(1000, 0.01)
	murmur, _ := bloom.New(1000, 0.01)
	if err := bloomRaw.FilterSetHash(murmur, bloomraw.HashMurmur64A, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    layoutFilter
		m    manyAdder
		want string // "builder", "hash" or "keys"
	}{
		{"classic", classic, classic, "builder"},
		{"sbbf", sbbf, sbbf, "hash"},
		{"sbbf seed 99", seeded, seeded, "keys"},
		{"counting", counting, counting, "keys"},
		{"classic murmur", murmur, murmur, "keys"},
	} {
		p := buildPathFor(c.f, c.m)
		got := "keys"
		switch {
		case p.builder != nil:
			got = "builder"
			p.builder.Close()
		case p.hash != nil:
			got = "hash"
		}
		if got != c.want || (got == "keys") != (p.addKeys != nil) {
			t.Errorf("%s: path %s, want %s", c.name, got, c.want)
		}
	}
	// The seeded SBBF goes through the copied-key path: same result as Add.
	_, keys := buildInput()
	want, _ := bloom.NewSBBF(1000, 0.01)
	bloomRaw.SBBFSetSeed(want, 99)
	a := newAddBatcher(buildPathFor(seeded, seeded))
	for _, k := range keys {
		want.Add([]byte(k))
		if err := a.add([]byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	a.close()
	if !sameEncoding(seeded, want) || a.lines != uint64(len(keys)) {
		t.Fatalf("seeded SBBF: differs from Add (N %d, want %d; lines %d)", seeded.Stats().N, want.Stats().N, a.lines)
	}
}
