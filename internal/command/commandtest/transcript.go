package commandtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
)

// TranscriptLine is one recorded command of a reference transcript
// (../shared/testdata/redisbloom/*.jsonl): its arguments and the replies a
// real RedisBloom gave on a RESP2 and on a RESP3 connection, in the JSON
// encoding that directory's README.md defines.
type TranscriptLine struct {
	Args  []string        `json:"args"`
	RESP2 json.RawMessage `json:"resp2"`
	RESP3 json.RawMessage `json:"resp3"`
}

// TranscriptFiles returns the paths of the committed reference transcripts
// of one family ("cms", "topk", "tdigest"): testdata/redisbloom next to
// this file, a copy of ../shared/testdata/redisbloom (a test checks that
// the copy is identical when the shared folder is present).
func TranscriptFiles(t testing.TB, family string) []string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("commandtest: no caller information")
	}
	files, err := filepath.Glob(filepath.Join(filepath.Dir(file), "testdata", "redisbloom", family+"-*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("commandtest: no %s transcripts (%v)", family, err)
	}
	return files
}

// LoadTranscript reads a transcript file (one JSON object a line).
func LoadTranscript(t testing.TB, path string) []TranscriptLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []TranscriptLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<26)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l TranscriptLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no lines", path)
	}
	return out
}

// ReplayTranscript replays the transcript at path through tab (the table
// must hold every command the file uses, SET included) twice, on a fresh
// key space each time: once in RESP2 and once in RESP3, and fails t for
// every reply that differs from the recorded one (doubles compared by
// value, see MatchReply). It reports at most 20 differences per protocol.
func ReplayTranscript(t *testing.T, path string, tab *command.Table, cfg *config.Registry) {
	t.Helper()
	lines := LoadTranscript(t, path)
	for _, proto := range []int{2, 3} {
		store := keyspace.New(nil)
		CheckTranscript(t, lines, proto, func(args [][]byte) string {
			reply, _ := Run(tab, store, cfg, proto, args)
			return reply
		})
	}
}

// CheckTranscript runs every line through do (which returns the raw reply
// bytes of one command on a connection speaking proto) and fails t for
// every reply that differs from the recording (at most 20 reported).
func CheckTranscript(t testing.TB, lines []TranscriptLine, proto int, do func(args [][]byte) string) {
	t.Helper()
	bad := 0
	for i, l := range lines {
		args := make([][]byte, len(l.Args))
		for j, a := range l.Args {
			args[j] = latin1(a)
		}
		want := l.RESP2
		if proto == 3 {
			want = l.RESP3
		}
		got := do(args)
		if err := MatchReply(want, got, proto); err != nil {
			bad++
			if bad <= 20 {
				t.Errorf("RESP%d line %d %q: %v\n  want %s\n  got  %q", proto, i+1, l.Args, err, want, got)
			}
		}
	}
	if bad > 20 {
		t.Errorf("RESP%d: %d replies differ in all (%d lines)", proto, bad, len(lines))
	}
}

// latin1 turns a JSON string whose code points are bytes back into bytes.
func latin1(s string) []byte {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		b = append(b, byte(r))
	}
	return b
}

// MatchReply reports how the raw reply got (one complete RESP2 or RESP3
// reply) differs from want, a reply in the transcript JSON encoding, or nil
// if it matches. A double ({"d": …}) matches a RESP3 double (,x) in RESP3
// and a bulk string in RESP2 whose text parses to exactly the same float64
// (nan matches nan); a RESP3 nil (_) and the RESP2 nils ($-1, *-1) all
// match null.
func MatchReply(want json.RawMessage, got string, proto int) error {
	r := bufio.NewReader(strings.NewReader(got))
	v, err := parseReply(r)
	if err != nil {
		return fmt.Errorf("unparsable reply: %w", err)
	}
	if rest, _ := r.Peek(1); len(rest) > 0 {
		return fmt.Errorf("bytes after the reply")
	}
	var w any
	dec := json.NewDecoder(bytes.NewReader(want))
	dec.UseNumber()
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("bad recording: %w", err)
	}
	return match(w, v, proto, "")
}

// reply is a parsed RESP value: kind is its type byte.
type reply struct {
	kind  byte
	str   string
	elems []reply
}

func parseReply(r *bufio.Reader) (reply, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return reply{}, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return reply{}, fmt.Errorf("bad line %q", line)
	}
	k, body := line[0], line[1:len(line)-2]
	switch k {
	case '+', '-', ':', ',', '#', '_', '(':
		return reply{kind: k, str: body}, nil
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil {
			return reply{}, fmt.Errorf("bad length %q", line)
		}
		if n < 0 {
			return reply{kind: '_'}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return reply{}, err
		}
		return reply{kind: k, str: string(buf[:n])}, nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil {
			return reply{}, fmt.Errorf("bad length %q", line)
		}
		if n < 0 {
			return reply{kind: '_'}, nil
		}
		m := n
		if k == '%' || k == '|' {
			m = 2 * n
		}
		out := reply{kind: k, elems: make([]reply, m)}
		for i := range out.elems {
			if out.elems[i], err = parseReply(r); err != nil {
				return reply{}, err
			}
		}
		return out, nil
	}
	return reply{}, fmt.Errorf("unknown reply type %q", k)
}

func kindName(k byte) string {
	switch k {
	case '+':
		return "simple string"
	case '-':
		return "error"
	case ':':
		return "integer"
	case '$':
		return "bulk string"
	case ',':
		return "double"
	case '#':
		return "boolean"
	case '_':
		return "nil"
	case '*':
		return "array"
	case '%':
		return "map"
	}
	return fmt.Sprintf("type %q", k)
}

func match(w any, v reply, proto int, at string) error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("at %s: %s", orTop(at), fmt.Sprintf(format, a...))
	}
	switch w := w.(type) {
	case nil:
		if v.kind != '_' {
			return fail("want nil, got %s", kindName(v.kind))
		}
		return nil
	case []any:
		if v.kind != '*' {
			return fail("want array, got %s", kindName(v.kind))
		}
		if len(w) != len(v.elems) {
			return fail("want %d elements, got %d", len(w), len(v.elems))
		}
		for i := range w {
			if err := match(w[i], v.elems[i], proto, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		if len(w) != 1 {
			return fail("bad recording %v", w)
		}
		for key, x := range w {
			return matchTyped(key, x, v, proto, at, fail)
		}
	}
	return fail("bad recording %v", w)
}

func matchTyped(key string, x any, v reply, proto int, at string, fail func(string, ...any) error) error {
	switch key {
	case "i":
		n, _ := x.(json.Number)
		if v.kind != ':' || v.str != n.String() {
			return fail("want integer %s, got %s %q", n, kindName(v.kind), v.str)
		}
	case "s":
		s, _ := x.(string)
		if v.kind != '$' || v.str != string(latin1(s)) {
			return fail("want bulk %q, got %s %q", s, kindName(v.kind), v.str)
		}
	case "simple":
		s, _ := x.(string)
		if v.kind != '+' || v.str != s {
			return fail("want simple %q, got %s %q", s, kindName(v.kind), v.str)
		}
	case "err":
		s, _ := x.(string)
		if v.kind != '-' || v.str != s {
			return fail("want error %q, got %s %q", s, kindName(v.kind), v.str)
		}
	case "b":
		b, _ := x.(bool)
		want := "f"
		if b {
			want = "t"
		}
		if v.kind != '#' || v.str != want {
			return fail("want boolean %v, got %s %q", b, kindName(v.kind), v.str)
		}
	case "d":
		var want float64
		switch d := x.(type) {
		case json.Number:
			f, err := strconv.ParseFloat(d.String(), 64)
			if err != nil {
				return fail("bad recording %v", d)
			}
			want = f
		case string:
			switch d {
			case "nan":
				want = math.NaN()
			case "inf":
				want = math.Inf(1)
			case "-inf":
				want = math.Inf(-1)
			default:
				return fail("bad recording %q", d)
			}
		}
		wantKind := byte(',')
		if proto < 3 {
			wantKind = '$'
		}
		if v.kind != wantKind {
			return fail("want double %v, got %s %q", want, kindName(v.kind), v.str)
		}
		got, err := strconv.ParseFloat(v.str, 64)
		if err != nil {
			return fail("want double %v, got unparsable %q", want, v.str)
		}
		if !(got == want && math.Signbit(got) == math.Signbit(want)) && !(math.IsNaN(got) && math.IsNaN(want)) {
			return fail("want double %v, got %q", want, v.str)
		}
	case "map":
		pairs, _ := x.([]any)
		if v.kind != '%' {
			return fail("want map, got %s", kindName(v.kind))
		}
		if 2*len(pairs) != len(v.elems) {
			return fail("want %d pairs, got %d", len(pairs), len(v.elems)/2)
		}
		for i, p := range pairs {
			kv, _ := p.([]any)
			if len(kv) != 2 {
				return fail("bad recording %v", p)
			}
			for j := 0; j < 2; j++ {
				if err := match(kv[j], v.elems[2*i+j], proto, fmt.Sprintf("%s{%d}", at, i)); err != nil {
					return err
				}
			}
		}
	default:
		return fail("bad recording key %q", key)
	}
	return nil
}

func orTop(at string) string {
	if at == "" {
		return "top"
	}
	return at
}
