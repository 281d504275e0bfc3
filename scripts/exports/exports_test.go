package main

import (
	"os"
	"path/filepath"
	"testing"
)

// checked are the library packages whose export targets (issue 14, see
// targets) are enforced.
var checked = []string{"bloom", "cuckoo", "hll", "topk", "cms", "tdigest"}

func TestExportTargets(t *testing.T) {
	for _, pkg := range checked {
		names, err := Exports(filepath.Join("..", "..", pkg))
		if err != nil {
			t.Fatal(err)
		}
		if n, max := len(names), targets[pkg]; n > max {
			t.Errorf("%s exports %d functions and methods, target ≤ %d: %v", pkg, n, max, names)
		} else {
			t.Logf("%s: %d exported functions and methods (target ≤ %d)", pkg, n, max)
		}
	}
}

// TestExportsCounts checks the counter itself on a package written for
// the purpose: exported functions and methods of exported types count,
// unexported names, methods of unexported types and test files do not.
func TestExportsCounts(t *testing.T) {
	dir := t.TempDir()
	src := `package p
func F() {}
func f() {}
type T struct{}
func (T) M() {}
func (*T) N() {}
func (T) m() {}
type G[X any] struct{}
func (g *G[X]) M() {}
type u struct{}
func (u) M() {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\nfunc Helper() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	names, err := Exports(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"F", "G.M", "T.M", "T.N"}
	if len(names) != len(want) {
		t.Fatalf("got %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("got %v, want %v", names, want)
		}
	}
}
