package config

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestParseMemory(t *testing.T) {
	for in, want := range map[string]uint64{
		"0": 0, "1": 1, "100b": 100, "1k": 1000, "1kb": 1024, "2K": 2000, "2KB": 2048,
		"3m": 3000000, "3mb": 3 << 20, "1g": 1000000000, "1gb": 1 << 30, "512MB": 512 << 20,
		"18446744073709551615": 1<<64 - 1,
	} {
		if got, err := ParseMemory(in); err != nil || got != want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "kb", "-1", "1.5gb", "1tb", "1 gb", "18446744073709551616", "17179869184gb"} {
		if got, err := ParseMemory(in); err == nil {
			t.Errorf("ParseMemory(%q) = %d, want an error", in, got)
		}
	}
}

func TestMemoryAndIntParams(t *testing.T) {
	var m uint64
	p := MemoryParam("m", "1mb", 1<<20, 1<<30, func(n uint64) { m = n })
	if err := p.Set("2mb"); err != nil || m != 2<<20 {
		t.Fatalf("Set 2mb: %v %d", err, m)
	}
	if err := p.Set("1kb"); err == nil || err.Error() != "argument must be between 1048576 and 1073741824 inclusive" {
		t.Fatalf("Set 1kb: %v", err)
	}
	if err := p.Set("x"); err == nil || err.Error() != "argument must be a memory value" {
		t.Fatalf("Set x: %v", err)
	}
	var i int64
	q := IntParam("i", "1", 1, 10, func(n int64) { i = n })
	if err := q.Set("7"); err != nil || i != 7 {
		t.Fatalf("Set 7: %v %d", err, i)
	}
	if err := q.Set("7kb"); err == nil || err.Error() != "argument couldn't be parsed into an integer" {
		t.Fatalf("Set 7kb: %v", err)
	}
	if err := q.Set("11"); err == nil || err.Error() != "argument must be between 1 and 10 inclusive" {
		t.Fatalf("Set 11: %v", err)
	}
}

func TestAcceptMemoryUnits(t *testing.T) {
	r := New()
	var got int64
	r.Register(IntParam("x-max-bytes", "64", 64, 1<<40, func(n int64) { got = n }))
	r.Register(IntParam("x-count", "1", 1, 10, func(int64) {}))
	r.AcceptMemoryUnits("X-Max-Bytes")
	for in, want := range map[string]int64{"1mb": 1 << 20, "2KB": 2048, "3k": 3000, "4096": 4096, "1gb": 1 << 30} {
		if err := r.Set("x-max-bytes", in); err != nil || got != want {
			t.Errorf("Set %s: %v, stored %d, want %d", in, err, got, want)
		}
		if v, _ := r.Get("x-max-bytes"); v != strconv.FormatInt(want, 10) {
			t.Errorf("Get after Set %s = %q, want bytes (%d), as Redis shows them", in, v, want)
		}
	}
	if err := r.Set("x-max-bytes", "1gb"); err != nil {
		t.Fatal(err)
	}
	for in, msg := range map[string]string{
		"lots":   "argument must be a memory value",
		"-1":     "argument must be a memory value",
		"1.5mb":  "argument must be a memory value",
		"32":     "argument must be between 64 and 1099511627776 inclusive",
		"2048gb": "argument must be between 64 and 1099511627776 inclusive",
		// Over 2^63−1: Set's own parser refuses the decimal.
		"17179869183gb": "argument couldn't be parsed into an integer",
	} {
		if err := r.Set("x-max-bytes", in); err == nil || err.Error() != msg {
			t.Errorf("Set %s: %v, want %q", in, err, msg)
		}
	}
	if v, _ := r.Get("x-max-bytes"); v != "1073741824" {
		t.Errorf("a refused value changed the parameter: %q", v)
	}
	// Other parameters are unchanged.
	if err := r.Set("x-count", "1kb"); err == nil {
		t.Error("x-count accepted a memory value")
	}
	defer func() {
		if recover() == nil {
			t.Error("AcceptMemoryUnits of an unknown name did not panic")
		}
	}()
	r.AcceptMemoryUnits("nope")
}

// "auto" (AcceptAuto) sets the value it stands for, CONFIG GET shows
// that value in bytes, and CONFIG REWRITE writes "auto" back while the
// parameter holds what auto set (or its default, when that is the auto
// value), else the value.
func TestAcceptAuto(t *testing.T) {
	r := New()
	var got int64
	r.Register(IntParam("x-max-bytes", "4096", 64, 1<<40, func(n int64) { got = n }))
	r.Register(IntParam("y-max-bytes", "64", 64, 1<<40, func(int64) {}))
	r.AcceptMemoryUnits("x-max-bytes", "y-max-bytes")
	r.AcceptAuto("x-max-bytes", "4096")
	r.AcceptAuto("y-max-bytes", "128")
	path := filepath.Join(t.TempDir(), "probly.conf")
	if err := os.WriteFile(path, []byte("x-max-bytes auto\ny-max-bytes 64\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.SetFile(path)
	rewritten := func() string {
		t.Helper()
		if err := r.Rewrite(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// The default is the auto value: the file's "auto" stays; y's
	// default is not, so its line gets its value.
	if f := rewritten(); f != "x-max-bytes auto\ny-max-bytes 64\n" {
		t.Errorf("rewrite at the defaults: %q", f)
	}
	if err := r.Set("x-max-bytes", "1mb"); err != nil || got != 1<<20 {
		t.Fatalf("Set 1mb: %v %d", err, got)
	}
	if f := rewritten(); f != "x-max-bytes 1mb\ny-max-bytes 64\n" {
		t.Errorf("rewrite after 1mb: %q", f)
	}
	for _, auto := range []string{"auto", "AUTO"} {
		if err := r.Set("x-max-bytes", auto); err != nil || got != 4096 {
			t.Fatalf("Set %s: %v, stored %d, want 4096", auto, err, got)
		}
		if v, _ := r.Get("x-max-bytes"); v != "4096" {
			t.Errorf("Get after %s = %q, want the bytes it stands for", auto, v)
		}
	}
	if err := r.Set("y-max-bytes", "auto"); err != nil {
		t.Fatal(err)
	}
	if v, _ := r.Get("y-max-bytes"); v != "128" {
		t.Errorf("y after auto = %q, want 128", v)
	}
	if f := rewritten(); f != "x-max-bytes auto\ny-max-bytes auto\n" {
		t.Errorf("rewrite after auto: %q", f)
	}
	// Without AcceptAuto, "auto" is an ordinary (here invalid) value.
	r.Register(IntParam("z-max-bytes", "64", 64, 1<<40, func(int64) {}))
	if err := r.Set("z-max-bytes", "auto"); err == nil {
		t.Error("z-max-bytes accepted auto without AcceptAuto")
	}
}

// An Immutable parameter is reported so (CONFIG SET refuses it), while
// Set (start-up values, configuration files) still applies it through its
// Set function.
func TestImmutable(t *testing.T) {
	r := New()
	got := ""
	r.Register(Param{Name: "fixed", Default: "no", Immutable: true, Set: func(s string) error {
		if s != "no" {
			return Reason("only no")
		}
		got = s
		return nil
	}})
	r.Register(Param{Name: "free", Default: "1"})
	if !r.Immutable("FIXED") || r.Immutable("free") || r.Immutable("missing") {
		t.Fatalf("Immutable: fixed %v, free %v, missing %v", r.Immutable("FIXED"), r.Immutable("free"), r.Immutable("missing"))
	}
	got = ""
	if err := r.Set("fixed", "no"); err != nil || got != "no" {
		t.Fatalf("Set fixed no: %v (Set saw %q)", err, got)
	}
	if err := r.Set("fixed", "yes"); err == nil || err.Error() != "only no" {
		t.Fatalf("Set fixed yes: %v", err)
	}
}
