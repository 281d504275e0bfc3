package keyspace

import "testing"

// Expected results follow Redis's stringmatchlen (util.c).
func TestMatch(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"*", "", true},
		{"*", "anything/with/slashes", true},
		{"**", "", true},
		{"", "", true},
		{"", "a", false},
		{"a*", "a/b/c", true},
		{"*a", "", false},
		{"*?", "", false},
		{"h?llo", "hello", true},
		{"h?llo", "hllo", false},
		{"h*llo", "hllo", true},
		{"h*llo", "heeeello", true},
		{"h[ae]llo", "hallo", true},
		{"h[ae]llo", "hillo", false},
		{"h[^e]llo", "hallo", true},
		{"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true},
		{"h[a-b]llo", "hcllo", false},
		{"h[b-a]llo", "hallo", true}, // reversed range
		{`\*`, "*", true},
		{`\*`, "a", false},
		{`a\?`, "a?", true},
		{`a\?`, "ab", false},
		{`a\`, `a\`, true}, // trailing backslash is literal
		{"[]", "a", false},
		{"[]a]", "a]", false}, // "[]" is an empty class
		{"[^]", "x", true},
		{"[abc", "b", true}, // unterminated class ends with the pattern
		{"[abc", "bc", false},
		{`[\]]`, "]", true},
		{`[\-]`, "-", true},
		{"[a-]", "^", true}, // "a-]" is the range ']'..'a'
		{"[a-]", "b", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"a*b", "aXbXb", true},
		{"*b*b", "abab", true},
		{"user:*:name", "user:42:name", true},
		{"user:*:name", "user:42:nam", false},
		{"*[0-9]", "key7", true},
		{"*[0-9]", "key", false},
		{"Key", "key", false}, // case-sensitive
	}
	for _, c := range cases {
		if got := Match(c.pat, c.s); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pat, c.s, got, c.want)
		}
	}
}

func TestMatchPathological(t *testing.T) {
	// Many stars against a long non-matching name must stay fast.
	pat := ""
	for i := 0; i < 200; i++ {
		pat += "a*"
	}
	pat += "b"
	name := ""
	for i := 0; i < 5000; i++ {
		name += "a"
	}
	if Match(pat, name) {
		t.Fatal("unexpected match")
	}
}
