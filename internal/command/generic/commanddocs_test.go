package generic_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/resp"
)

// The COMMAND INFO and COMMAND DOCS replies of every command are checked
// against what the system probly imitates answers:
//   - BF.*/CF.* (and the two Redis 7.2 subcommands the local 7.0 oracle
//     lacks): testdata/expected-docs.json, transcribed from RedisBloom's
//     command-info registration (and Redis 7.2's command JSON);
//   - every other Redis command: testdata/redis-docs.json, the replies of
//     redis-server recorded byte for byte (RESP2 and RESP3), and, when
//     redis-server is installed, the live server itself
//     (TestCommandDocsDifferentialRedis, which rewrites the recording with
//     PROBLY_RECORD_COMMAND_DOCS=1).
//
// Container commands (CLIENT, CONFIG …) are compared with their
// subcommands restricted to the ones probly has and sorted by name, since
// Redis lists many more, in hash order.

// probly is the table and config the server runs with.
func probly(t testing.TB) *command.Table {
	t.Helper()
	tab, _ := app.Tables()
	return tab
}

// tableServer is the part of command.Server that COMMAND uses.
type tableServer struct {
	command.Server
	tab *command.Table
}

func (s tableServer) Table() *command.Table { return s.tab }

// do runs COMMAND <sub> args… against tab and returns the reply bytes.
func do(t testing.TB, tab *command.Table, proto int, args ...string) string {
	t.Helper()
	argv := commandtest.Argv(append([]string{"COMMAND"}, args...)...)
	spec := tab.Lookup(argv[0])
	if len(argv) > 1 {
		spec = spec.Sub(argv[1])
	}
	if spec == nil || !command.CheckArity(spec.Arity, len(argv)) {
		t.Fatalf("COMMAND %q: no such subcommand or wrong arity", args)
	}
	var buf bytes.Buffer
	w := resp.NewWriter(&buf)
	spec.Handler(&command.Ctx{Args: argv, R: resp.New(w, proto), Conn: &command.Conn{Proto: proto, Authed: true},
		Server: tableServer{tab: tab}})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// node is one parsed RESP2/RESP3 reply. Maps keep their pairs flat
// (key, value, key, value …) in wire order.
type node struct {
	kind  byte // the RESP type byte
	str   string
	num   int64
	elems []*node
}

func parse(r *bufio.Reader) (*node, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("bad line %q", line)
	}
	n := &node{kind: line[0]}
	body := line[1 : len(line)-2]
	switch n.kind {
	case '+', '-':
		n.str = body
	case ':':
		n.num, err = strconv.ParseInt(body, 10, 64)
	case '_':
	case '$', '=':
		l, err := strconv.Atoi(body)
		if err != nil || l < 0 {
			n.kind = '_'
			return n, err
		}
		b := make([]byte, l+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		n.str = string(b[:l])
	case '*', '~', '%':
		l, err := strconv.Atoi(body)
		if err != nil {
			return nil, err
		}
		if n.kind == '%' {
			l *= 2
		}
		for range max(l, 0) {
			e, err := parse(r)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, e)
		}
	default:
		return nil, fmt.Errorf("unexpected reply type %q", line)
	}
	return n, err
}

func parseReply(t testing.TB, reply string) *node {
	t.Helper()
	n, err := parse(bufio.NewReader(strings.NewReader(reply)))
	if err != nil {
		t.Fatalf("parsing %q: %v", reply, err)
	}
	return n
}

func (n *node) encode(b *strings.Builder) {
	switch n.kind {
	case '+', '-':
		fmt.Fprintf(b, "%c%s\r\n", n.kind, n.str)
	case ':':
		fmt.Fprintf(b, ":%d\r\n", n.num)
	case '_':
		b.WriteString("_\r\n")
	case '$', '=':
		fmt.Fprintf(b, "%c%d\r\n%s\r\n", n.kind, len(n.str), n.str)
	default:
		l := len(n.elems)
		if n.kind == '%' {
			l /= 2
		}
		fmt.Fprintf(b, "%c%d\r\n", n.kind, l)
		for _, e := range n.elems {
			e.encode(b)
		}
	}
}

func (n *node) String() string {
	var b strings.Builder
	n.encode(&b)
	return b.String()
}

// field returns the value under key in a map (RESP3 map or RESP2 flat
// array of pairs), or nil.
func (n *node) field(key string) *node {
	for i := 0; i+1 < len(n.elems); i += 2 {
		if n.elems[i].str == key {
			return n.elems[i+1]
		}
	}
	return nil
}

// restrictSubcommands keeps, in a COMMAND INFO or COMMAND DOCS reply for
// one command, the subcommands keep accepts, sorted by name.
func restrictSubcommands(t testing.TB, reply string, docs bool, keep func(string) bool) string {
	t.Helper()
	n := parseReply(t, reply)
	if len(n.elems) == 0 || n.elems[0].kind == '_' {
		return reply
	}
	if docs {
		subs := n.elems[1].field("subcommands")
		if subs == nil {
			return reply
		}
		type pair struct{ k, v *node }
		var ps []pair
		for i := 0; i+1 < len(subs.elems); i += 2 {
			if keep(subs.elems[i].str) {
				ps = append(ps, pair{subs.elems[i], subs.elems[i+1]})
			}
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i].k.str < ps[j].k.str })
		subs.elems = subs.elems[:0]
		for _, p := range ps {
			subs.elems = append(subs.elems, p.k, p.v)
		}
		return n.String()
	}
	info := n.elems[0]
	if len(info.elems) != 10 {
		t.Fatalf("COMMAND INFO entry of %d fields: %q", len(info.elems), reply)
	}
	subs := info.elems[9]
	subs.elems = slices.DeleteFunc(subs.elems, func(e *node) bool { return !keep(e.elems[0].str) })
	sort.Slice(subs.elems, func(i, j int) bool { return subs.elems[i].elems[0].str < subs.elems[j].elems[0].str })
	return n.String()
}

// names returns every public command and subcommand name in tab, sorted.
func names(tab *command.Table) []string {
	var out []string
	for _, s := range tab.Public() {
		out = append(out, s.Name)
		for _, sub := range s.Subcommands {
			out = append(out, sub.Name)
		}
	}
	sort.Strings(out)
	return out
}

// lookup finds "name" or "container|sub" in tab.
func lookup(tab *command.Table, name string) *command.Spec {
	base, sub, ok := strings.Cut(name, "|")
	s := tab.Lookup([]byte(base))
	if ok && s != nil {
		s = s.Sub([]byte(sub))
	}
	return s
}

// replies returns the COMMAND DOCS and COMMAND INFO replies ask gives for
// name in RESP2 and RESP3; a container's subcommands are restricted to
// probly's, without the exceptions, and sorted.
func replies(t testing.TB, tab *command.Table, name string, ask func(proto int, args ...string) string) map[string]string {
	t.Helper()
	keep := func(string) bool { return true }
	if s := lookup(tab, name); s != nil && len(s.Subcommands) > 0 {
		keep = func(sub string) bool {
			return s.Sub([]byte(sub[strings.IndexByte(sub, '|')+1:])) != nil && !exceptions[sub]
		}
	}
	out := map[string]string{}
	for _, proto := range []int{2, 3} {
		p := strconv.Itoa(proto)
		out["docs"+p] = restrictSubcommands(t, ask(proto, "DOCS", name), true, keep)
		out["info"+p] = restrictSubcommands(t, ask(proto, "INFO", name), false, keep)
	}
	return out
}

// recording is testdata/redis-docs.json.
type recording struct {
	Note     string                       `json:"note"`
	Version  string                       `json:"redis_version"`
	Commands map[string]map[string]string `json:"commands"`
}

const recordingPath = "testdata/redis-docs.json"

// expected is testdata/expected-docs.json, decoded keeping object order.
func expected(t testing.TB) []kv {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "expected-docs.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err != nil {
		t.Fatal(err)
	}
	return v.([]kv)
}

// kv is one pair of an object decoded with its order kept.
type kv struct {
	K string
	V any
}

// decodeOrdered decodes one JSON value: objects as []kv, arrays as []any,
// numbers as int64, strings as string.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := tok.(type) {
	case json.Delim:
		switch x {
		case '{':
			out := []kv{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				out = append(out, kv{k.(string), v})
			}
			_, err := dec.Token()
			return out, err
		case '[':
			out := []any{}
			for dec.More() {
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			_, err := dec.Token()
			return out, err
		}
	case json.Number:
		return x.Int64()
	case string:
		return x, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// plain converts a RESP3 reply to the form decodeOrdered gives: maps as
// []kv, arrays and sets as []any, strings, integers, nil.
func plain(n *node) any {
	switch n.kind {
	case '%':
		out := []kv{}
		for i := 0; i+1 < len(n.elems); i += 2 {
			out = append(out, kv{n.elems[i].str, plain(n.elems[i+1])})
		}
		return out
	case '*', '~':
		out := []any{}
		for _, e := range n.elems {
			out = append(out, plain(e))
		}
		return out
	case ':':
		return n.num
	case '_':
		return nil
	}
	return n.str
}

func get(o []kv, k string) (any, bool) {
	for _, p := range o {
		if p.K == k {
			return p.V, true
		}
	}
	return nil, false
}

func toJSON(v any) string {
	conv := func(v any) any {
		switch x := v.(type) {
		case []kv:
			var parts []string
			for _, p := range x {
				k, _ := json.Marshal(p.K)
				parts = append(parts, string(k)+":"+toJSON(p.V))
			}
			return json.RawMessage("{" + strings.Join(parts, ",") + "}")
		case []any:
			var parts []string
			for _, e := range x {
				parts = append(parts, toJSON(e))
			}
			return json.RawMessage("[" + strings.Join(parts, ",") + "]")
		}
		return v
	}
	b, _ := json.Marshal(conv(v))
	return string(b)
}

// TestCommandDocsExpected compares COMMAND DOCS and COMMAND INFO of every
// BF/CF command (and of CLIENT SETINFO / NO-TOUCH) with the recorded
// RedisBloom (Redis 7.2) values: the whole DOCS map in order (summary,
// since, group, complexity, module, arguments with their nesting), and
// arity, flags, key positions and key specs (and ACL categories and tips
// where recorded) from INFO.
func TestCommandDocsExpected(t *testing.T) {
	tab := probly(t)
	exp := expected(t)
	have := map[string]bool{}
	for _, e := range exp {
		name := e.K
		have[name] = true
		if lookup(tab, name) == nil {
			t.Errorf("%s: expected but not in the command table", name)
			continue
		}
		entry := e.V.([]kv)
		wantDocs, _ := get(entry, "docs")
		docs := parseReply(t, do(t, tab, 3, "DOCS", name))
		if len(docs.elems) != 2 || docs.elems[0].str != name {
			t.Fatalf("COMMAND DOCS %s = %q", name, docs)
		}
		if got := plain(docs.elems[1]); !reflect.DeepEqual(got, wantDocs) {
			t.Errorf("COMMAND DOCS %s:\n got  %s\n want %s", name, toJSON(got), toJSON(wantDocs))
		}
		wantInfo, _ := get(entry, "info")
		info := parseReply(t, do(t, tab, 3, "INFO", name)).elems[0]
		if len(info.elems) != 10 || info.elems[0].str != name {
			t.Fatalf("COMMAND INFO %s = %q", name, info)
		}
		fields := map[string]*node{"arity": info.elems[1], "flags": info.elems[2], "first_key": info.elems[3],
			"last_key": info.elems[4], "step": info.elems[5], "acl_categories": info.elems[6], "tips": info.elems[7],
			"key_specs": info.elems[8]}
		for _, f := range wantInfo.([]kv) {
			n, ok := fields[f.K]
			if !ok {
				t.Fatalf("%s: unknown info field %q in the expectations", name, f.K)
			}
			if got := plain(n); !reflect.DeepEqual(got, f.V) {
				t.Errorf("COMMAND INFO %s %s:\n got  %s\n want %s", name, f.K, toJSON(got), toJSON(f.V))
			}
		}
	}
	// A new module command cannot go without an expectation.
	for _, name := range names(tab) {
		if s := lookup(tab, name); s.Flags&command.FlagModule != 0 && !have[name] {
			t.Errorf("%s: a RedisBloom command without an entry in testdata/expected-docs.json", name)
		}
	}
	if len(exp) < 27 {
		t.Fatalf("only %d expectations", len(exp))
	}
}

// exceptions are the commands the local redis-server does not know: Redis
// 7.2 subcommands (testdata/expected-docs.json has them) and probly's own.
var exceptions = map[string]bool{"client|setinfo": true, "client|no-touch": true, "follow.wait": true}

// TestCommandDocsRecorded compares probly's COMMAND DOCS and COMMAND INFO
// replies for every Redis command with redis-server's, recorded byte for
// byte in testdata/redis-docs.json.
func TestCommandDocsRecorded(t *testing.T) {
	tab := probly(t)
	b, err := os.ReadFile(recordingPath)
	if err != nil {
		t.Fatal(err)
	}
	var rec recording
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range names(tab) {
		s := lookup(tab, name)
		if s.Flags&command.FlagModule != 0 || exceptions[name] {
			continue
		}
		want, ok := rec.Commands[name]
		if !ok {
			t.Errorf("%s: no recorded redis-server reply (run the differential test with PROBLY_RECORD_COMMAND_DOCS=1)", name)
			continue
		}
		n++
		got := replies(t, tab, name, func(proto int, args ...string) string { return do(t, tab, proto, args...) })
		for _, k := range []string{"docs2", "docs3", "info2", "info3"} {
			if got[k] != want[k] {
				t.Errorf("COMMAND %s %s (RESP%c):\n probly %q\n redis  %q", strings.ToUpper(k[:4]), name, k[4], got[k], want[k])
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d commands compared", n)
	}
	for name := range rec.Commands {
		if lookup(tab, name) == nil {
			t.Errorf("%s: recorded but not in the command table", name)
		}
	}
}

// TestCommandDocsDifferentialRedis compares, for every Redis command and
// subcommand probly has, probly's COMMAND DOCS and COMMAND INFO replies
// with a live redis-server's, in RESP2 and RESP3. Every command must be
// known to redis-server except the listed exceptions. With
// PROBLY_RECORD_COMMAND_DOCS=1 it rewrites testdata/redis-docs.json from
// redis-server's replies.
func TestCommandDocsDifferentialRedis(t *testing.T) {
	addr := commandtest.StartRedis(t)
	tab := probly(t)
	conns := map[int]*commandtest.RawClient{2: commandtest.DialRaw(t, addr, 2), 3: commandtest.DialRaw(t, addr, 3)}
	redis := func(proto int, args ...string) string {
		r, err := conns[proto].Do(commandtest.Argv(append([]string{"COMMAND"}, args...)...))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	version, err := conns[2].Do(commandtest.Argv("INFO", "server"))
	if err != nil {
		t.Fatal(err)
	}
	rec := recording{
		Note:     "COMMAND DOCS/INFO replies of redis-server for the commands probly has (containers: probly's subcommands only, sorted); written by TestCommandDocsDifferentialRedis with PROBLY_RECORD_COMMAND_DOCS=1",
		Version:  versionOf(version),
		Commands: map[string]map[string]string{},
	}
	n := 0
	for _, name := range names(tab) {
		s := lookup(tab, name)
		if s.Flags&command.FlagModule != 0 {
			continue
		}
		known := redis(2, "INFO", name) != "*1\r\n$-1\r\n"
		if known == exceptions[name] {
			t.Errorf("%s: known to redis-server %v, listed as an exception %v", name, known, exceptions[name])
		}
		if !known {
			continue
		}
		want := replies(t, tab, name, redis)
		got := replies(t, tab, name, func(proto int, args ...string) string { return do(t, tab, proto, args...) })
		for _, k := range []string{"docs2", "docs3", "info2", "info3"} {
			if got[k] != want[k] {
				t.Errorf("COMMAND %s %s (RESP%c):\n probly %q\n redis  %q", strings.ToUpper(k[:4]), name, k[4], got[k], want[k])
			}
		}
		rec.Commands[name] = want
		n++
	}
	if n < 50 {
		t.Fatalf("only %d commands compared", n)
	}
	if os.Getenv("PROBLY_RECORD_COMMAND_DOCS") == "1" {
		b, err := json.MarshalIndent(rec, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(recordingPath, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d commands, redis %s", recordingPath, n, rec.Version)
	}
}

// versionOf returns redis_version from an INFO reply.
func versionOf(info string) string {
	_, v, _ := strings.Cut(info, "redis_version:")
	v, _, _ = strings.Cut(v, "\r\n")
	return v
}
