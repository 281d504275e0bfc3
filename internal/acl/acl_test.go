package acl_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probly/probly/internal/acl"
	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
)

func table(t testing.TB) *command.Table {
	t.Helper()
	tab, _ := app.Tables()
	return tab
}

// spec resolves args[0] (and a container's subcommand) as Table.Run does.
func spec(t testing.TB, tab *command.Table, args [][]byte) *command.Spec {
	t.Helper()
	s := tab.Lookup(args[0])
	if s == nil {
		t.Fatalf("no command %s", args[0])
	}
	if len(s.Subcommands) > 0 && len(args) > 1 {
		if sub := s.Sub(args[1]); sub != nil {
			return sub
		}
	}
	return s
}

func TestCheck(t *testing.T) {
	tab := table(t)
	r := acl.New(tab)
	must := func(name string, rules ...string) *acl.User {
		t.Helper()
		if err := r.SetUser(name, rules); err != nil {
			t.Fatal(err)
		}
		return r.Lookup(name)
	}
	ro := must("ro", "on", "%R~r:*", "%W~w:*", "~rw:*", "+@all")
	t1 := must("t1", "on", "~t1:*", "+@bloom", "-bf.info", "+config|get", "+client|id")
	first := must("first", "on", "allkeys", "+config|get", "+object|help")
	off := must("off", "off", "allkeys", "+@all")
	for _, c := range []struct {
		u    *acl.User
		args string
		want acl.Denial
		key  int
	}{
		{ro, "GET r:1", acl.Allowed, 0},
		{ro, "GET w:1", acl.DeniedKey, 1},        // GET reads (access): needs %R
		{ro, "SET w:1 x", acl.Allowed, 0},        // SET overwrites (update): %W is enough
		{ro, "SET r:1 x", acl.DeniedKey, 1},      //
		{ro, "SET w:1 x GET", acl.DeniedKey, 1},  // with GET it also reads
		{ro, "SET rw:1 x GET", acl.Allowed, 0},   //
		{ro, "APPEND w:1 x", acl.Allowed, 0},     // RW insert: write only
		{ro, "APPEND r:1 x", acl.DeniedKey, 1},   //
		{ro, "GETDEL w:1", acl.DeniedKey, 1},     // access and delete: ~ or %RW~
		{ro, "GETDEL rw:1", acl.Allowed, 0},      //
		{ro, "EXISTS w:1", acl.Allowed, 0},       // neither access nor update: any pattern
		{ro, "COPY r:1 w:2", acl.Allowed, 0},     // source read, destination written
		{ro, "COPY w:1 r:2", acl.DeniedKey, 1},   //
		{ro, "MGET r:1 r:2 x", acl.DeniedKey, 3}, //
		{ro, "KEYS *", acl.Allowed, 0},
		{ro, "AUTH a b", acl.Allowed, 0},
		{t1, "BF.ADD t1:f x", acl.Allowed, 0},
		{t1, "BF.ADD t2:f x", acl.DeniedKey, 1},
		{t1, "BF.INFO t1:f", acl.DeniedCommand, 0},
		{t1, "CF.ADD t1:f x", acl.DeniedCommand, 0},
		{t1, "CONFIG GET maxmemory", acl.Allowed, 0},
		{t1, "CONFIG SET maxmemory 1", acl.DeniedCommand, 0},
		{t1, "CLIENT ID", acl.Allowed, 0},
		{t1, "CLIENT SETNAME x", acl.DeniedCommand, 0},
		{t1, "HELLO 3", acl.Allowed, 0}, // no_auth commands are always allowed
		{first, "CONFIG GET x", acl.Allowed, 0},
		{first, "CONFIG SET x y", acl.DeniedCommand, 0},
		{first, "OBJECT HELP", acl.Allowed, 0},
		{off, "GET x", acl.Allowed, 0}, // off: no new AUTH; connections keep working (Redis)
	} {
		args := commandtest.Argv(strings.Fields(c.args)...)
		d, k := c.u.Check(spec(t, tab, args), args)
		if d != c.want || (d == acl.DeniedKey && k != c.key) {
			t.Errorf("%s %s: %v at %d, want %v at %d", c.u.Name(), c.args, d, k, c.want, c.key)
		}
	}
	if got := acl.DenialMessage(acl.DeniedCommand, "t1", tab.Lookup([]byte("get"))); got != "NOPERM User t1 has no permissions to run the 'get' command" {
		t.Error(got)
	}
}

func TestSetUserAtomicAndErrors(t *testing.T) {
	r := acl.New(table(t))
	if err := r.SetUser("u", []string{"on", ">pw", "~a", "+get"}); err != nil {
		t.Fatal(err)
	}
	before := r.List()
	err := r.SetUser("u", []string{"off", "+set", "+nosuch"})
	var re *acl.RuleError
	if !errors.As(err, &re) || !errors.Is(err, acl.ErrRule) ||
		err.Error() != "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL" {
		t.Fatalf("SetUser with a bad rule: %v", err)
	}
	if after := r.List(); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("a failed SETUSER changed the user:\n%v\n%v", before, after)
	}
	if err := r.SetUser("v", []string{"+bogus"}); err == nil || r.Lookup("v") != nil {
		t.Errorf("a failed SETUSER of a new user created it: %v", err)
	}
	if _, ok := r.Authenticate("u", "pw"); !ok {
		t.Error("AUTH u pw failed")
	}
	if _, ok := r.Authenticate("u", "PW"); ok {
		t.Error("AUTH u PW succeeded")
	}
	if _, err := r.DelUser([]string{"u", "default"}); !errors.Is(err, acl.ErrDefaultUser) || r.Lookup("u") == nil {
		t.Errorf("DELUSER u default: %v (u kept: %v)", err, r.Lookup("u") != nil)
	}
	u := r.Lookup("u")
	if n, err := r.DelUser([]string{"u", "nosuch"}); n != 1 || err != nil || !u.Deleted() {
		t.Errorf("DELUSER u nosuch = %d, %v; deleted %v", n, err, u.Deleted())
	}
	r.SetRequirePass("secret")
	if _, ok := r.Authenticate("default", "secret"); !ok || r.Default().NoPass() {
		t.Error("requirepass did not set the default user's password")
	}
	r.SetRequirePass("")
	if !r.Default().NoPass() {
		t.Error("requirepass \"\" did not make the default user nopass")
	}
}

func TestLogGroups(t *testing.T) {
	var l acl.Log
	t0 := time.Unix(1000, 0)
	l.Add("key", "toplevel", "k", "u", "id=1", t0)
	l.Add("command", "toplevel", "get", "u", "id=1", t0)
	l.Add("key", "toplevel", "k", "u", "id=2", t0.Add(time.Second)) // folded into the first
	l.Add("key", "toplevel", "k", "u", "id=3", t0.Add(2*time.Minute))
	e := l.Entries(-1)
	if len(e) != 3 || e[0].Count != 1 || e[0].ID != 2 || e[1].Count != 2 || e[1].ClientInfo != "id=2" ||
		!e[1].Updated.Equal(t0.Add(time.Second)) || !e[1].Created.Equal(t0) || e[2].Object != "get" {
		t.Fatalf("entries: %+v", e)
	}
	l.SetMax(2)
	if n := len(l.Entries(-1)); n != 2 {
		t.Errorf("after SetMax(2): %d entries", n)
	}
	l.SetMax(0)
	if n := len(l.Entries(-1)); n != 0 {
		t.Errorf("after SetMax(0): %d entries", n)
	}
	l.SetMax(5)
	l.Add("auth", "toplevel", "AUTH", "x", "", t0)
	l.Reset()
	if n := len(l.Entries(-1)); n != 0 {
		t.Errorf("after Reset: %d entries", n)
	}
}

func TestFileRoundTrip(t *testing.T) {
	tab := table(t)
	r := acl.New(tab)
	for name, rules := range map[string]string{
		"t1":      "on >p1 ~t1:* %R~shared:* &news +@bloom -bf.info +config|get +get|x",
		"t2":      "off #5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8 allkeys allchannels +@all -@dangerous",
		"default": "resetpass >admin",
	} {
		if err := r.SetUser(name, strings.Fields(rules)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "users.acl")
	r.SetFile(path)
	if err := r.Save(); err != nil {
		t.Fatal(err)
	}
	r2 := acl.New(tab)
	r2.SetFile(path)
	if err := r2.Load(); err != nil {
		t.Fatal(err)
	}
	if a, b := strings.Join(r.List(), "\n"), strings.Join(r2.List(), "\n"); a != b {
		t.Errorf("after SAVE and LOAD:\n%s\nwant\n%s", b, a)
	}
	// Broken files: every problem reported, nothing changed.
	text := "user a on >x ~* +@all\nuser b bogus\nfoo\n\nuser a off\n"
	err := r2.LoadText("f.acl", text)
	want := "f.acl:2: Syntax error. f.acl:3 should start with user keyword followed by the username. WARNING: Duplicate user 'a' found on line 5. WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	if err == nil || err.Error() != want || !errors.Is(err, acl.ErrFile) {
		t.Errorf("LoadText: %v\n want %s", err, want)
	}
	// A file without the default user gets Redis's default one; users
	// not in the file are deleted.
	old := r2.Lookup("t1")
	if err := r2.LoadText("f.acl", "user a on nopass ~* +@all\n"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r2.List(), "\n"); got != "user a on nopass ~* resetchannels +@all\nuser default on nopass ~* &* +@all" || !old.Deleted() {
		t.Errorf("after loading a file without default: %q (t1 deleted %v)", got, old.Deleted())
	}
	r3 := acl.New(tab)
	if err := r3.Save(); !errors.Is(err, acl.ErrNoFile) {
		t.Errorf("Save without a file: %v", err)
	}
	r3.SetFile(filepath.Join(t.TempDir(), "missing.acl"))
	if err := r3.Load(); !errors.Is(err, acl.ErrFile) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

// describeStable checks the property the description must have: the
// rules ACL LIST prints, applied to a fresh user, give the same user
// (same description, same decision for every command).
func describeStable(t *testing.T, tab *command.Table, r *acl.Registry, name string) {
	t.Helper()
	line := ""
	for _, l := range r.List() {
		if strings.HasPrefix(l, "user "+name+" ") {
			line = l
		}
	}
	r2 := acl.New(tab)
	if err := r2.LoadText("x", line+"\n"); err != nil {
		t.Fatalf("the description %q does not load: %v", line, err)
	}
	var again string
	for _, l := range r2.List() {
		if strings.HasPrefix(l, "user "+name+" ") {
			again = l
		}
	}
	if again != line {
		t.Fatalf("description not stable:\n %s\n %s", line, again)
	}
	u, v := r.Lookup(name), r2.Lookup(name)
	for _, s := range tab.Public() {
		specs := append([]*command.Spec{s}, s.Subcommands...)
		for _, sp := range specs {
			args := commandtest.Argv(strings.Split(sp.Name, "|")...)
			d1, _ := u.Check(sp, args)
			d2, _ := v.Check(sp, args)
			if d1 != d2 {
				t.Fatalf("%s: %v vs %v after reloading %q", sp.Name, d1, d2, line)
			}
		}
	}
}

func TestDescribeStable(t *testing.T) {
	tab := table(t)
	r := acl.New(tab)
	for i, rules := range []string{
		"+@all -@dangerous +flushall",
		"+@string +@keyspace -@dangerous +client",
		"-@all +@slow -client|id",
		"+@read +@write -@keyspace +del",
		"+@bloom +@cuckoo -bf.add +cf.info +get|x +get|y",
		"+@all -@fast +ping -@admin",
	} {
		name := fmt.Sprint("u", i)
		if err := r.SetUser(name, strings.Fields(rules)); err != nil {
			t.Fatal(err)
		}
		describeStable(t, tab, r, name)
	}
}

func FuzzRules(f *testing.F) {
	for _, s := range []string{"on >pw ~t1:* +@bloom -bf.add", "%RW~x +client|id -client &c allkeys", "+get|x reset nopass", "#abc <x !x", "allcommands -@dangerous +flushall"} {
		f.Add(s)
	}
	tab := table(f)
	f.Fuzz(func(t *testing.T, rules string) {
		r := acl.New(tab)
		if err := r.SetUser("u", strings.Fields(rules)); err != nil {
			if !errors.Is(err, acl.ErrRule) {
				t.Fatalf("error not an ErrRule: %v", err)
			}
			return
		}
		describeStable(t, tab, r, "u")
	})
}

func FuzzFile(f *testing.F) {
	for _, s := range []string{"user default on nopass ~* &* +@all\n", "user a on >x ~* +@all\nuser b bogus\nfoo\n", "user x %R~a &b +@read\r\n\n"} {
		f.Add(s)
	}
	tab := table(f)
	f.Fuzz(func(t *testing.T, text string) {
		r := acl.New(tab)
		if err := r.LoadText("f", text); err != nil {
			if !errors.Is(err, acl.ErrFile) {
				t.Fatalf("error not an ErrFile: %v", err)
			}
			return
		}
		list := strings.Join(r.List(), "\n") + "\n"
		r2 := acl.New(tab)
		if err := r2.LoadText("f", list); err != nil {
			t.Fatalf("ACL LIST output does not load: %v\n%s", err, list)
		}
		if got := strings.Join(r2.List(), "\n") + "\n"; got != list {
			t.Fatalf("not stable:\n%s\n%s", list, got)
		}
	})
}
