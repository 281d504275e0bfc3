package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probly/probly/internal/app"
)

// TestIndexUpToDate fails when the command index of docs/COMMANDS.md is not
// what the command specs generate.
func TestIndexUpToDate(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "COMMANDS.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tab, _ := app.Tables()
	want, err := splice(doc, index(tab))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, want) {
		t.Fatalf("the command index of docs/COMMANDS.md is out of date: run go run ./scripts/gencommands")
	}
	// Every command and subcommand has its row.
	for _, s := range tab.All() {
		for _, c := range append(s.Subcommands, s) {
			row := "| `" + strings.ToUpper(strings.ReplaceAll(c.Name, "|", " ")) + "` |"
			if !bytes.Contains(doc, []byte(row)) {
				t.Errorf("no row for %s", c.Name)
			}
		}
	}
}

func TestSplice(t *testing.T) {
	doc := []byte("a\n" + begin + "\nold\n" + end + "\nb\n")
	got, err := splice(doc, []byte("new\n"))
	if err != nil || string(got) != "a\n"+begin+"\nnew\n"+end+"\nb\n" {
		t.Fatalf("splice = %q, %v", got, err)
	}
	if _, err := splice([]byte("no markers\n"), nil); err != errNoMarkers {
		t.Fatalf("splice without markers: %v", err)
	}
}

func TestPosition(t *testing.T) {
	for _, c := range []struct {
		first, last, step int
		want              string
	}{{1, 1, 1, "1"}, {1, -1, 1, "1…last"}, {1, -2, 2, "1…last-1 step 2"}, {2, 3, 1, "2…3"}} {
		if got := position(c.first, c.last, c.step); got != c.want {
			t.Errorf("position(%d, %d, %d) = %q, want %q", c.first, c.last, c.step, got, c.want)
		}
	}
}
