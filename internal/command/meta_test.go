package command

import (
	"reflect"
	"testing"
)

func TestDeriveKeys(t *testing.T) {
	for _, c := range []struct {
		name              string
		keys              []KeySpec
		first, last, step int
		write             KeyRange
	}{
		{"one key", []KeySpec{{Flags: KeyRW | KeyInsert, Begin: 1}}, 1, 1, 1, KeyRange{}},
		{"second argument", []KeySpec{{Flags: KeyRW, Begin: 2}}, 2, 2, 1, KeyRange{}},
		{"all keys", []KeySpec{{Flags: KeyRM | KeyDelete, Begin: 1, LastKey: -1}}, 1, -1, 1, KeyRange{}},
		{"read-only keys", []KeySpec{{Flags: KeyRO, Begin: 1, LastKey: -1}}, 1, -1, 1, KeyRange{}},
		{"pairs", []KeySpec{{Flags: KeyOW, Begin: 1, LastKey: -1, KeyStep: 2}}, 1, -1, 2, KeyRange{}},
		// PFMERGE dest src …: only the destination is written.
		{"dest and sources", []KeySpec{{Flags: KeyRW | KeyAccess | KeyInsert, Begin: 1},
			{Flags: KeyRO | KeyAccess, Begin: 2, LastKey: -1}}, 1, -1, 1, KeyRange{1, 1, 1}},
		// COPY src dst: only the destination is written.
		{"source and dest", []KeySpec{{Flags: KeyRO | KeyAccess, Begin: 1},
			{Flags: KeyOW | KeyUpdate, Begin: 2}}, 1, 2, 1, KeyRange{2, 2, 1}},
	} {
		s := &Spec{Name: c.name, Keys: c.keys}
		s.deriveKeys()
		if s.FirstKey != c.first || s.LastKey != c.last || s.Step != c.step || s.WriteKeys != c.write {
			t.Errorf("%s: %d %d %d %+v; want %d %d %d %+v", c.name, s.FirstKey, s.LastKey, s.Step, s.WriteKeys,
				c.first, c.last, c.step, c.write)
		}
		// Declaring the same positions as well is allowed.
		again := &Spec{Name: c.name, Keys: c.keys, FirstKey: c.first, LastKey: c.last, Step: c.step, WriteKeys: c.write}
		again.deriveKeys()
	}
	pfmerge := &Spec{Name: "pfmerge", Flags: FlagWrite, Keys: []KeySpec{{Flags: KeyRW, Begin: 1}, {Flags: KeyRO, Begin: 2, LastKey: -1}}}
	NewTable().Add(pfmerge)
	if f, l, s := pfmerge.WriteRange(4); f != 1 || l != 1 || s != 1 {
		t.Errorf("PFMERGE d s s writes %d..%d step %d", f, l, s)
	}

	for _, bad := range []*Spec{
		{Name: "positions disagree", FirstKey: 2, LastKey: 2, Step: 1, Keys: []KeySpec{{Flags: KeyRW, Begin: 1}}},
		{Name: "write keys disagree", WriteKeys: KeyRange{1, 1, 1}, Keys: []KeySpec{{Flags: KeyRW, Begin: 1, LastKey: -1}}},
		{Name: "not consecutive", Keys: []KeySpec{{Flags: KeyRW, Begin: 1}, {Flags: KeyRO, Begin: 3}}},
		{Name: "subcommand", Subcommands: []*Spec{{Name: "x|y", FirstKey: 3, Keys: []KeySpec{{Flags: KeyRO, Begin: 2}}}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Add did not panic", bad.Name)
				}
			}()
			NewTable().Add(bad)
		}()
	}
}

func TestMetaNames(t *testing.T) {
	for _, c := range []struct{ got, want []string }{
		{(FlagFast | FlagModule | FlagReadonly).Names(), []string{"readonly", "module", "fast"}},
		{(FlagAllowBusy | FlagNoAuth | FlagFast | FlagStale | FlagLoading | FlagNoScript).Names(),
			[]string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"}},
		{(FlagNoMulti | FlagNoAsyncLoading | FlagAdmin | FlagNoScript).Names(), []string{"admin", "noscript", "no_async_loading", "no_multi"}},
		{(ACLConnection | ACLDangerous | ACLSlow | ACLAdmin | ACLBloom | ACLString | ACLKeyspace).Names(),
			[]string{"@keyspace", "@string", "@admin", "@slow", "@dangerous", "@connection", "@bloom"}},
		{(KeyVariableFlags | KeyUpdate | KeyAccess | KeyRW).Names(), []string{"RW", "access", "update", "variable_flags"}},
		{(ArgMultiple | ArgOptional).Names(), []string{"optional", "multiple"}},
		{(DocSyscmd | DocDeprecated).Names(), []string{"deprecated", "syscmd"}},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
	for _, c := range []struct {
		s    Spec
		want ACLCat
	}{
		{Spec{Flags: FlagReadonly | FlagFast, ACL: ACLString}, ACLRead | ACLString | ACLFast},
		{Spec{Flags: FlagWrite | FlagDenyOOM, ACL: ACLBloom}, ACLWrite | ACLSlow | ACLBloom},
		{Spec{Flags: FlagAdmin}, ACLAdmin | ACLSlow | ACLDangerous},
		{Spec{Flags: FlagLoading | FlagFast, ACL: ACLAdmin | ACLDangerous}, ACLAdmin | ACLFast | ACLDangerous}, // LASTSAVE
		{Spec{}, ACLSlow},
	} {
		if got := c.s.ACLCategories(); got != c.want {
			t.Errorf("%+v: categories %q, want %q", c.s, got.Names(), c.want.Names())
		}
	}
	if ACLCategory("HyperLogLog") != ACLHyperLogLog || ACLCategory("bloom") != ACLBloom || ACLCategory("@read") != 0 || ACLCategory("nosuch") != 0 {
		t.Error("ACLCategory")
	}
}
