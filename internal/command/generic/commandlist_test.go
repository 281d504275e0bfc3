package generic_test

import (
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command"
)

// TestSpecsDeclared checks that every public command and subcommand
// declares what COMMAND DOCS needs, and that key arguments point at key
// specs that exist.
func TestSpecsDeclared(t *testing.T) {
	tab := probly(t)
	// RedisBloom registers these without command info.
	bare := map[string]bool{"bf.debug": true, "cf.debug": true, "cf.compact": true}
	for _, name := range names(tab) {
		s := lookup(tab, name)
		d := s.Doc
		if s.Name != strings.ToLower(s.Name) {
			t.Errorf("%s: name not lowercase", s.Name)
		}
		switch {
		case s.Flags&command.FlagModule != 0:
			if d.Group != "" {
				t.Errorf("%s: a module command declares group %q (it is always module)", name, d.Group)
			}
			if !bare[name] && (d.Summary == "" || d.Since == "" || d.Complexity == "") {
				t.Errorf("%s: summary %q, since %q, complexity %q", name, d.Summary, d.Since, d.Complexity)
			}
		case d.Summary == "" || d.Since == "" || d.Group == "":
			t.Errorf("%s: summary %q, since %q, group %q", name, d.Summary, d.Since, d.Group)
		}
		var walk func([]command.Arg)
		walk = func(args []command.Arg) {
			for _, a := range args {
				if a.Name == "" || a.Type == "" {
					t.Errorf("%s: argument %+v", name, a)
				}
				nested := a.Type == command.ArgOneOf || a.Type == command.ArgBlock
				if nested != (len(a.Args) > 0) || (a.Type == command.ArgPureToken && a.Token == "") {
					t.Errorf("%s: argument %q of type %s with %d sub-arguments, token %q", name, a.Name, a.Type, len(a.Args), a.Token)
				}
				// RedisBloom's TDIGEST.MERGE names key spec 1 of 1 for its
				// sources (src/cmd_info/tdigest_info.c), and Redis reports it.
				dangling := name == "tdigest.merge" && a.Name == "source-key" && a.KeySpec == len(s.Keys)
				if a.Type == command.ArgKey && !dangling && (a.KeySpec < 0 || a.KeySpec >= len(s.Keys)) {
					t.Errorf("%s: key argument %q refers to key spec %d of %d", name, a.Name, a.KeySpec, len(s.Keys))
				}
				walk(a.Args)
			}
		}
		walk(d.Args)
		if (s.FirstKey > 0) != (len(s.Keys) > 0 || bare[name] || command.IsInternal([]byte(name))) {
			t.Errorf("%s: first key %d with %d key specs", name, s.FirstKey, len(s.Keys))
		}
	}
}

// TestCommandListCount checks COMMAND, COMMAND COUNT and COMMAND LIST
// against the table.
func TestCommandListCount(t *testing.T) {
	tab := probly(t)
	var top []string
	for _, s := range tab.Public() {
		top = append(top, s.Name)
	}
	sort.Strings(top)
	if got := do(t, tab, 2, "COUNT"); got != ":"+strconv.Itoa(len(top))+"\r\n" {
		t.Errorf("COMMAND COUNT = %q, want %d", got, len(top))
	}
	all := parseReply(t, do(t, tab, 3, "INFO"))
	var listed []string
	for _, e := range all.elems {
		listed = append(listed, e.elems[0].str)
	}
	if !reflect.DeepEqual(listed, top) {
		t.Errorf("COMMAND INFO lists %q, want %q", listed, top)
	}
	list := func(args ...string) []string {
		var out []string
		for _, e := range parseReply(t, do(t, tab, 3, append([]string{"LIST"}, args...)...)).elems {
			out = append(out, e.str)
		}
		return out
	}
	if got := slices.Sorted(slices.Values(list())); !reflect.DeepEqual(got, names(tab)) {
		t.Errorf("COMMAND LIST = %q, want %q", got, names(tab))
	}
	var module, bloom, hll []string
	for _, name := range names(tab) {
		s := lookup(tab, name)
		if s.Flags&command.FlagModule != 0 {
			module = append(module, name)
		}
		if strings.HasPrefix(name, "bf.") {
			bloom = append(bloom, name)
		}
		if strings.HasPrefix(name, "pf") {
			hll = append(hll, name)
		}
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"FILTERBY", "MODULE", "bf"}, module},
		{[]string{"filterby", "module", "other"}, nil},
		{[]string{"FILTERBY", "ACLCAT", "bloom"}, bloom},
		{[]string{"FILTERBY", "ACLCAT", "HyperLogLog"}, hll},
		{[]string{"FILTERBY", "ACLCAT", "topk"}, []string{"topk.add", "topk.count", "topk.incrby", "topk.info", "topk.list", "topk.query", "topk.reserve"}},
		{[]string{"FILTERBY", "ACLCAT", "nosuch"}, nil},
		{[]string{"FILTERBY", "PATTERN", "CONFIG|*"}, []string{"config|get", "config|help", "config|resetstat", "config|rewrite", "config|set"}},
	} {
		got := list(c.args...)
		slices.Sort(got)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("COMMAND LIST %q = %q, want %q", c.args, got, c.want)
		}
	}
	if len(module) != 52 || len(bloom) != 11 { // 11 BF.*, 14 CF.*, 7 TOPK.*, 6 CMS.*, 14 TDIGEST.*
		t.Errorf("%d module commands, %d Bloom commands", len(module), len(bloom))
	}
	for _, args := range [][]string{{"LIST", "FILTERBY"}, {"LIST", "FILTERBY", "FOO", "x"}, {"LIST", "x"}} {
		if got := do(t, tab, 2, args...); got != "-ERR syntax error\r\n" {
			t.Errorf("COMMAND %q = %q", args, got)
		}
	}
}
