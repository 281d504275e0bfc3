package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSplitLine(t *testing.T) {
	for in, want := range map[string][]string{
		"":                           nil,
		"   # comment":               nil,
		"maxmemory 2mb":              {"maxmemory", "2mb"},
		"  save 900 1\t300 10 \r":    {"save", "900", "1", "300", "10"},
		`save ""`:                    {"save", ""},
		`dir "/tmp/a b"`:             {"dir", "/tmp/a b"},
		`requirepass "p\"w\\\x41\n"`: {"requirepass", "p\"w\\A\n"},
		`requirepass 'it\'s'`:        {"requirepass", "it's"},
		`requirepass 'a\nb'`:         {"requirepass", `a\nb`},
		"requirepass a#b":            {"requirepass", "a#b"},
	} {
		got, err := SplitLine(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("SplitLine(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`dir "/tmp`, `dir "/tmp"x`, `dir 'a`, `dir 'a'b`} {
		if got, err := SplitLine(in); err == nil {
			t.Errorf("SplitLine(%q) = %q, want unbalanced quotes", in, got)
		}
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "probly.conf")
	inc := filepath.Join(dir, "extra.conf")
	write(t, inc, "timeout 5\n")
	write(t, main, "# c\nMaxMemory 2mb\n\ninclude "+inc+"\ninclude "+filepath.Join(dir, "none-*.conf")+"\nsave \"\"\n")
	ds, err := ParseFile(main)
	if err != nil {
		t.Fatal(err)
	}
	want := []Directive{
		{Name: "maxmemory", Args: []string{"2mb"}, File: main, Line: 2},
		{Name: "timeout", Args: []string{"5"}, File: inc, Line: 1},
		{Name: "save", Args: []string{""}, File: main, Line: 6},
	}
	if !reflect.DeepEqual(ds, want) {
		t.Fatalf("ParseFile = %+v\nwant %+v", ds, want)
	}
	for text, msg := range map[string]string{
		"timeout 5\ndir \"/x\n":         "probly.conf:2: unbalanced quotes",
		"maxmemory\n":                   "probly.conf:1: directive \"maxmemory\" without a value",
		"include " + dir + "/missing\n": "probly.conf:1: include: open",
		"include " + main + "\n":        "includes nested deeper than 16",
		"include a b\n":                 "probly.conf:1: include takes one file",
	} {
		write(t, main, text)
		_, err := ParseFile(main)
		if !errors.Is(err, ErrFile) || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseFile of %q: %v, want ErrFile mentioning %q", text, err, msg)
		}
	}
	// Levels of files each including every file of the next level (no
	// cycle): bounded by the number of files read, not only the depth
	// (10^levels reads otherwise).
	fan := t.TempDir()
	for level := range 5 {
		if err := os.Mkdir(filepath.Join(fan, fmt.Sprint(level)), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			write(t, filepath.Join(fan, fmt.Sprint(level), fmt.Sprintf("f%d.conf", i)), "include "+filepath.Join(fan, fmt.Sprint(level+1), "*.conf")+"\n")
		}
	}
	if _, err := ParseFile(filepath.Join(fan, "0", "f0.conf")); !errors.Is(err, ErrFile) || !strings.Contains(err.Error(), "more than 1000 files") {
		t.Errorf("include fan-out: %v", err)
	}
	if _, err := ParseFile(filepath.Join(dir, "nope.conf")); !errors.Is(err, ErrFile) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// Rewrite keeps comments, blanks and lines that are not parameters in
// place, replaces a parameter's first line, blanks its later ones and
// appends changed parameters after a blank line and the signature, once
// (checked against redis-server 7's CONFIG REWRITE of the same file).
func TestRewrite(t *testing.T) {
	r := New()
	r.Register(MemoryParam("maxmemory", "0", 0, 1<<62, func(uint64) {}))
	r.Register(IntParam("timeout", "0", 0, 1<<31-1, func(int64) {}))
	r.Register(IntParam("maxclients", "10000", 1, 1<<32-1, func(int64) {}))
	r.Register(Param{Name: "dir", Default: "."})
	path := filepath.Join(t.TempDir(), "probly.conf")
	if err := r.Rewrite(); !errors.Is(err, ErrNoFile) || err.Error() != "The server is running without a config file" {
		t.Fatalf("Rewrite without a file: %v", err)
	}
	r.SetFile(path)
	write(t, path, "# top\naddr 127.0.0.1:7000\ntimeout 5\n\ntimeout 6\nmaxmemory 1000\n")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	mustSet := func(name, v string) {
		t.Helper()
		if err := r.Set(name, v); err != nil {
			t.Fatal(err)
		}
	}
	mustSet("timeout", "6")
	mustSet("maxmemory", "3072")
	mustSet("maxclients", "100")
	mustSet("dir", "/tmp/a b")
	if err := r.Rewrite(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "# top\naddr 127.0.0.1:7000\ntimeout 6\n\n\nmaxmemory 3kb\n\n" + Signature + "\ndir \"/tmp/a b\"\nmaxclients 100\n"
	if string(got) != want {
		t.Fatalf("rewritten:\n%s\nwant:\n%s", got, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old file's 0600", fi.Mode().Perm())
	}
	// Again, with one more change: no second signature.
	mustSet("maxmemory", "1gb")
	mustSet("timeout", "0")
	if err := r.Rewrite(); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(path)
	want = "# top\naddr 127.0.0.1:7000\ntimeout 0\n\n\nmaxmemory 1gb\n\n" + Signature + "\ndir \"/tmp/a b\"\nmaxclients 100\n"
	if string(got) != want {
		t.Fatalf("second rewrite:\n%s\nwant:\n%s", got, want)
	}
	// What was written reads back to the same values.
	ds, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Name == "addr" {
			continue
		}
		if v, _ := r.Get(d.Name); d.Value() != v && d.Name != "maxmemory" {
			t.Errorf("%s reads back as %q, is %q", d.Name, d.Value(), v)
		}
	}
	// A file that is gone is written from scratch.
	os.Remove(path)
	if err := r.Rewrite(); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(path)
	if want := "\n" + Signature + "\ndir \"/tmp/a b\"\nmaxclients 100\nmaxmemory 1gb\n"; string(got) != want {
		t.Fatalf("from scratch:\n%q\nwant\n%q", got, want)
	}
}

func TestQuoteValueRoundTrip(t *testing.T) {
	for _, v := range []string{"", "x", "900 1 300 10", "a  b", " lead", "trail ", "#x", `q"uo'te\`, "tab\there", "nl\n", "\x00\xff", "10%"} {
		args, err := SplitLine("name " + quoteValue(v))
		if err != nil || strings.Join(args[1:], " ") != v {
			t.Errorf("%q → %q → %q, %v", v, quoteValue(v), args, err)
		}
	}
}

// A parameter written on several lines (Param.Lines, save's pairs, as
// Redis writes them) fills the file's lines in order, blanks extra ones and
// puts extra values after its last line.
func TestRewriteLines(t *testing.T) {
	r := New()
	r.Register(Param{Name: "save", Default: "", Lines: func(v string) []string {
		f := strings.Fields(v)
		var out []string
		for i := 0; i+1 < len(f); i += 2 {
			out = append(out, f[i]+" "+f[i+1])
		}
		if out == nil {
			return []string{v}
		}
		return out
	}})
	path := filepath.Join(t.TempDir(), "probly.conf")
	r.SetFile(path)
	for _, c := range []struct{ file, value, want string }{
		{"save 900 1\n# c\nsave 300 10\nsave 60 5\n", "1 2 3 4", "save 1 2\n# c\nsave 3 4\n\n"},
		{"save 900 1\n# c\n", "1 2 3 4 5 6", "save 1 2\nsave 3 4\nsave 5 6\n# c\n"},
		{"save 900 1\nsave 300 10\n", "", "save \"\"\n\n"},
		{"# none\n", "7 8 9 10", "# none\n\n" + Signature + "\nsave 7 8\nsave 9 10\n"},
	} {
		write(t, path, c.file)
		if err := r.Set("save", c.value); err != nil {
			t.Fatal(err)
		}
		if err := r.Rewrite(); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != c.want {
			t.Errorf("file %q, save %q: rewritten %q, want %q", c.file, c.value, got, c.want)
		}
	}
}
