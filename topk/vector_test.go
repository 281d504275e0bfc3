package topk

import (
	"reflect"
	"strings"
	"testing"
)

// The deterministic TopK vectors of redis-sketches.md §4.3, run on the
// library (the server replays them through TOPK.* in internal/command/topk).

func mustSketch(t *testing.T, k, w, d uint32, decay float64) *Sketch {
	t.Helper()
	s, err := NewWithConfig(Config{K: k, Width: w, Depth: d, Decay: decay})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// add runs AddN over pairs and returns the expelled items, "nil" for none.
func add(s *Sketch, items string, n uint32) []string {
	var out []string
	for _, it := range strings.Fields(items) {
		if it == `""` {
			it = ""
		}
		e, ok := s.AddN([]byte(it), n)
		if ok {
			out = append(out, string(e))
		} else {
			out = append(out, "nil")
		}
	}
	return out
}

func incr(s *Sketch, pairs ...any) []string {
	var out []string
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, add(s, pairs[i].(string), uint32(pairs[i+1].(int)))...)
	}
	return out
}

func list(s *Sketch) []string {
	var out []string
	for _, it := range s.List() {
		out = append(out, string(it.Value))
	}
	return out
}

func listCounts(s *Sketch) []any {
	out := []any{}
	for _, it := range s.List() {
		out = append(out, string(it.Value), int(it.Count))
	}
	return out
}

func counts(s *Sketch, items string) []int {
	var out []int
	for _, it := range strings.Fields(items) {
		if it == `""` {
			it = ""
		}
		out = append(out, int(s.Count([]byte(it))))
	}
	return out
}

func queries(s *Sketch, items string) []int {
	var out []int
	for _, it := range strings.Fields(items) {
		if it == `""` {
			it = ""
		}
		q := 0
		if s.Query([]byte(it)) {
			q = 1
		}
		out = append(out, q)
	}
	return out
}

func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func sp(s string) []string { return strings.Fields(s) }

func TestVectorsRedisPy(t *testing.T) {
	s := mustSketch(t, 3, 50, 4, 0.9)
	eq(t, "ADD", add(s, "A B C D E A A B C G D B D A E E 1", 1),
		sp("nil nil nil A C D nil nil E nil B C nil nil nil D nil"))
	eq(t, "QUERY", queries(s, "A B C D E F G"), []int{1, 1, 0, 0, 1, 0, 0})
	eq(t, "COUNT", counts(s, "A B C D E F G"), []int{4, 3, 2, 3, 3, 0, 1})

	l := mustSketch(t, 3, 50, 3, 0.9)
	add(l, "A B C D E A A B C G D B D A E E", 1)
	eq(t, "LIST", list(l), sp("A B E"))
	eq(t, "LIST WITHCOUNT", listCounts(l), []any{"A", 4, "B", 3, "E", 3})
}

func TestVectorsIncrBy(t *testing.T) {
	s := mustSketch(t, 3, 10, 3, 1)
	eq(t, "INCRBY 1", incr(s, "bar", 3, "baz", 6, "42", 2), sp("nil nil nil"))
	eq(t, "INCRBY 2", incr(s, "42", 8, "xyzzy", 4), sp("nil bar"))
	eq(t, "COUNT", counts(s, "bar baz 42 xyzzy 4"), []int{3, 6, 10, 4, 0})
}

func TestVectorsListInfo(t *testing.T) {
	s := mustSketch(t, 2, 50, 5, 0.9)
	eq(t, "ADD 1", add(s, "foo bar baz 42 foo bar baz", 1), sp("nil nil foo bar baz 42 foo"))
	eq(t, "ADD 2", add(s, "foo baz 42 foo baz", 1), sp("bar nil nil nil nil"))
	eq(t, "ADD 3", add(s, "foo bar baz foo baz", 1), sp("nil nil nil nil nil"))
	eq(t, "LIST", list(s), sp("foo baz"))
	eq(t, "QUERY", queries(s, "foo bar baz dan"), []int{1, 0, 1, 0})
	eq(t, "ADD 4", add(s, "bar bar bar bar bar", 1), sp("nil nil foo nil nil"))
	eq(t, "LIST", list(s), sp("bar baz"))
}

func TestVectorsNoInitParams(t *testing.T) {
	s := mustSketch(t, 3, 8, 7, 0.9)
	eq(t, "ADD 1", add(s, "foo bar baz 42 foo bar baz foo foo foo foo", 1), sp("nil nil nil foo baz nil 42 nil nil nil nil"))
	eq(t, "ADD 2", add(s, "foo baz 42 foo baz foo foo foo foo foo", 1), sp("nil nil bar nil nil nil nil nil nil nil"))
	eq(t, "ADD 3", add(s, "foo bar baz foo baz baz baz baz", 1), sp("nil 42 nil nil nil nil nil nil"))
	eq(t, "LIST WITHCOUNT", listCounts(s), []any{"foo", 15, "baz", 9, "bar", 3})

	w := mustSketch(t, 3, 8, 7, 0.9)
	eq(t, "ADD 1", add(w, "foo bar baz 42 foo bar baz", 1), sp("nil nil nil foo baz nil 42"))
	eq(t, "ADD 2", add(w, "foo baz 42 foo", 1), sp("nil nil bar nil"))
	eq(t, "ADD 3", add(w, "foo bar baz foo", 1), sp("nil 42 nil nil"))
	eq(t, "LIST WITHCOUNT", listCounts(w), []any{"foo", 6, "baz", 4, "bar", 3})
}

func TestVectorsEmptyString(t *testing.T) {
	s := mustSketch(t, 3, 8, 7, 0.9)
	eq(t, "ADD", add(s, `""`, 1), sp("nil"))
	eq(t, "LIST WITHCOUNT", listCounts(s), []any{"", 1})
	eq(t, "QUERY", queries(s, `""`), []int{1})
	eq(t, "COUNT", counts(s, `""`), []int{1})
	incr(s, `""`, 100)
	eq(t, "LIST WITHCOUNT", listCounts(s), []any{"", 101})
	eq(t, "ADD 3", add(s, "foo bar baz", 1), sp("nil nil foo"))
	eq(t, "ADD 4", add(s, `foo bar baz ""`, 1), sp("bar baz foo nil"))
	eq(t, "ADD 5", add(s, `foo bar ""`, 1), sp("bar baz nil"))
	eq(t, "ADD 6", add(s, `foo ""`, 1), sp("nil nil"))
	eq(t, "LIST WITHCOUNT", listCounts(s), []any{"", 104, "foo", 4, "bar", 3})
	eq(t, "QUERY", queries(s, `bla foo ""`), []int{0, 1, 1})
	got := incr(s, "foo", 500, "bar", 500, "baz", 500)
	eq(t, "INCRBY", len(got), 3)
	if got[2] != "" || got[0] != "nil" || got[1] != "nil" {
		t.Errorf("INCRBY expelled %q, want [nil nil \"\"]", got)
	}
	eq(t, "LIST WITHCOUNT", listCounts(s), []any{"foo", 504, "bar", 503, "baz", 502})
}

func TestVectorsLookupTable(t *testing.T) {
	s := mustSketch(t, 1, 3, 3, .9)
	eq(t, "INCRBY 1", incr(s, "bar", 300, "baz", 600, "42", 200), sp("nil bar nil"))
	eq(t, "INCRBY 2", incr(s, "42", 80, "xyzzy", 400), sp("nil nil"))
	eq(t, "LIST WITHCOUNT", listCounts(s), []any{"baz", 600})
}

func TestVectorsSimple(t *testing.T) {
	s := mustSketch(t, 20, 50, 5, 0.9)
	eq(t, "ADD", add(s, "a", 1), sp("nil"))
	eq(t, "ADD", add(s, "a b", 1), sp("nil nil"))
	eq(t, "QUERY", queries(s, "a c"), []int{1, 0})

	c := mustSketch(t, 20, 50, 5, 0.9)
	add(c, "bar baz 42", 1)
	eq(t, "QUERY", queries(c, "foo bar baz"), []int{0, 1, 1})
	eq(t, "COUNT", counts(c, "foo bar baz"), []int{0, 1, 1})
	add(c, "bar baz", 1)
	eq(t, "COUNT", counts(c, "foo bar baz 42"), []int{0, 2, 2, 1})
}

func TestVectorsGoRedis(t *testing.T) {
	s := mustSketch(t, 3, 8, 7, 0.9)
	eq(t, "ADD", add(s, "item1 item2 3 item1", 1), sp("nil nil nil nil"))
	eq(t, "QUERY", queries(s, "item1 item2 4 3"), []int{1, 1, 0, 1})
	eq(t, "COUNT", counts(s, "item1 item2 item3"), []int{2, 1, 0})
	eq(t, "INCRBY", incr(s, "item1", 5, "item2", 10), sp("nil nil"))
	eq(t, "COUNT", counts(s, "item1 item2 item3"), []int{7, 11, 0})
	eq(t, "LIST WITHCOUNT", listCounts(s), []any{"item2", 11, "item1", 7, "3", 1})
}

func TestVectorsQuirks(t *testing.T) {
	s := mustSketch(t, 3, 8, 7, 0.9)
	s.Add([]byte("a\x00b"))
	eq(t, "QUERY a\\0b", s.Query([]byte("a\x00b")), true)
	eq(t, "QUERY a", s.Query([]byte("a")), false)
	eq(t, "LIST", listCounts(s), []any{"a\x00b", 1}) // the server cuts at NUL

	z := mustSketch(t, 3, 8, 7, 0.9)
	eq(t, "INCRBY zero 0", incr(z, "zero", 0), sp("nil"))
	eq(t, "LIST", listCounts(z), []any{})
	eq(t, "QUERY", queries(z, "zero"), []int{1})
	eq(t, "COUNT", counts(z, "zero"), []int{0})
	eq(t, "ADD", add(z, "a b c d", 1), sp("nil zero nil a"))
	eq(t, "LIST WITHCOUNT", listCounts(z), []any{"c", 1, "d", 1, "b", 1})
}
