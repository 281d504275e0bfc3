package command_test

import (
	"bytes"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/resp"
)

// TestRun: Table.Run's refusals are answered as Redis words them and
// reported without running the handler; a handler's first error, at any
// depth, is the outcome's error, read from the writer and not from the
// reply bytes; a silent handler is answered for; Seq is the handler's.
func TestRun(t *testing.T) {
	tab := command.NewTable()
	tab.Add(
		&command.Spec{Name: "arr", Arity: 1, Handler: func(c *command.Ctx) {
			c.R.Array(3)
			c.R.Int(1)
			c.R.Error("ERR second")
			c.R.Error("ERR third")
			c.Seq = 7
		}},
		&command.Spec{Name: "ok", Arity: -1, Flags: command.FlagWrite, Handler: func(c *command.Ctx) { c.R.OK(); c.Seq = 3 }},
		&command.Spec{Name: "silent", Arity: 1, Handler: func(*command.Ctx) {}},
		&command.Spec{Name: "_int", Arity: 1, Handler: func(c *command.Ctx) { c.R.OK() }},
		&command.Spec{Name: "box", Arity: -2, Subcommands: []*command.Spec{
			{Name: "box|x", Arity: 3, Handler: func(c *command.Ctx) { c.R.Bulk(c.Args[2]) }},
		}},
	)
	var buf bytes.Buffer
	w := resp.NewWriter(&buf)
	c := &command.Ctx{R: resp.New(w, 2)}
	run := func(p *command.Policy, args ...string) (string, command.Outcome) {
		t.Helper()
		c.Args = nil
		for _, a := range args {
			c.Args = append(c.Args, []byte(a))
		}
		buf.Reset()
		w.Reset()
		o := tab.Run(c, p)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return buf.String(), o
	}
	plain := &command.Policy{}
	admitted := 0
	refuse := &command.Policy{Admit: command.AdmitFunc(func(_ *command.Ctx, s *command.Spec) string {
		admitted++
		if s.Flags&command.FlagWrite != 0 {
			return "READONLY no"
		}
		return ""
	})}
	for _, tc := range []struct {
		p      *command.Policy
		args   []string
		reply  string
		spec   string
		ran    bool
		err    string
		seq    uint64
		silent bool
	}{
		{plain, []string{"ARR"}, "*3\r\n:1\r\n-ERR second\r\n-ERR third\r\n", "arr", true, "ERR second", 7, false},
		{plain, []string{"Ok", "a"}, "+OK\r\n", "ok", true, "", 3, false},
		{plain, []string{"arr", "x"}, "-ERR wrong number of arguments for 'arr' command\r\n", "arr", false, "ERR wrong number of arguments for 'arr' command", 0, false},
		{plain, []string{"nosuch", "a"}, "-ERR unknown command 'nosuch', with args beginning with: 'a' \r\n", "", false, "ERR unknown command 'nosuch', with args beginning with: 'a' ", 0, false},
		{plain, []string{"_int"}, "-ERR unknown command '_int', with args beginning with: \r\n", "", false, "ERR unknown command '_int', with args beginning with: ", 0, false},
		{&command.Policy{Internal: true}, []string{"_INT"}, "+OK\r\n", "_int", true, "", 0, false},
		{plain, []string{"silent"}, "-ERR internal error: silent produced no reply\r\n", "silent", true, "ERR internal error: silent produced no reply", 0, true},
		{plain, []string{"box", "X"}, "-ERR wrong number of arguments for 'box|x' command\r\n", "box|x", false, "ERR wrong number of arguments for 'box|x' command", 0, false},
		{plain, []string{"box", "X", "v"}, "$1\r\nv\r\n", "box|x", true, "", 0, false},
		{plain, []string{"box", "y"}, "-ERR unknown subcommand 'y'. Try BOX HELP.\r\n", "box", false, "ERR unknown subcommand 'y'. Try BOX HELP.", 0, false},
		{&command.Policy{Unknown: func(c *command.Ctx) bool { return string(c.Args[0]) == "POST" }}, []string{"POST"}, "", "", false, "", 0, false},
		{&command.Policy{Unknown: func(*command.Ctx) bool { return false }}, []string{"GETX"}, "-ERR unknown command 'GETX', with args beginning with: \r\n", "", false, "ERR unknown command 'GETX', with args beginning with: ", 0, false},
		{refuse, []string{"ok"}, "-READONLY no\r\n", "ok", false, "READONLY no", 0, false},
		{refuse, []string{"arr"}, "*3\r\n:1\r\n-ERR second\r\n-ERR third\r\n", "arr", true, "ERR second", 7, false},
	} {
		reply, o := run(tc.p, tc.args...)
		name := ""
		if o.Spec != nil {
			name = o.Spec.Name
		}
		if reply != tc.reply || name != tc.spec || o.Ran != tc.ran || o.Failed != (tc.err != "") || o.Err != tc.err ||
			o.Seq != tc.seq || c.Seq != tc.seq || o.Silent != tc.silent {
			t.Errorf("%q: reply %q, outcome %+v (spec %q)", tc.args, reply, o, name)
		}
	}
	if admitted != 2 {
		t.Errorf("Admit asked %d times, want 2", admitted)
	}
	c.Args = [][]byte{[]byte("OK")}
	if a := testing.AllocsPerRun(100, func() { w.Reset(); tab.Run(c, plain) }); a != 0 {
		t.Errorf("Run allocates %v times", a)
	}
}

// TestRunLookupCache: one Ctx resolving names in turn (Table.Run's
// last-name cache) gets each name's own command whatever ran before it: a
// different spelling, an unknown name after a known one, an internal name
// without Policy.Internal after it ran with it, and another Table.
func TestRunLookupCache(t *testing.T) {
	mk := func(names ...string) *command.Table {
		tab := command.NewTable()
		for _, n := range names {
			tab.Add(&command.Spec{Name: n, Arity: 1, Handler: func(c *command.Ctx) { c.R.Bulk([]byte(n)) }})
		}
		return tab
	}
	tab, other := mk("get", "set", "_int"), mk("get")
	var buf bytes.Buffer
	w := resp.NewWriter(&buf)
	c := &command.Ctx{R: resp.New(w, 2)}
	run := func(tab *command.Table, p command.Policy, name string) string {
		t.Helper()
		c.Args = [][]byte{[]byte(name)}
		buf.Reset()
		w.Reset()
		tab.Run(c, &p)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	for i, tc := range []struct {
		tab      *command.Table
		internal bool
		name     string
		want     string
	}{
		{tab, false, "GET", "$3\r\nget\r\n"},
		{tab, false, "GET", "$3\r\nget\r\n"},
		{tab, false, "get", "$3\r\nget\r\n"},
		{tab, false, "SET", "$3\r\nset\r\n"},
		{tab, false, "GETX", "-ERR unknown command 'GETX', with args beginning with: \r\n"},
		{tab, false, "SET", "$3\r\nset\r\n"},
		{tab, true, "_int", "$4\r\n_int\r\n"},
		{tab, false, "_int", "-ERR unknown command '_int', with args beginning with: \r\n"},
		{tab, true, "_int", "$4\r\n_int\r\n"},
		{other, true, "_int", "-ERR unknown command '_int', with args beginning with: \r\n"},
		{other, false, "GET", "$3\r\nget\r\n"},
		{tab, false, "set", "$3\r\nset\r\n"},
	} {
		if got := run(tc.tab, command.Policy{Internal: tc.internal}, tc.name); got != tc.want {
			t.Errorf("step %d (%s, internal %v): %q, want %q", i, tc.name, tc.internal, got, tc.want)
		}
	}
}
