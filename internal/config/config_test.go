package config

import "testing"

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
