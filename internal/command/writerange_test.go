package command

import "testing"

func TestWriteRange(t *testing.T) {
	for _, c := range []struct {
		spec              Spec
		argc              int
		first, last, step int
	}{
		{Spec{FirstKey: 1, LastKey: 1, Step: 1}, 3, 1, 1, 1},                                                   // BF.ADD k i
		{Spec{FirstKey: 1, LastKey: -1, Step: 1}, 4, 1, 3, 1},                                                  // DEL a b c
		{Spec{FirstKey: 1, LastKey: -1, Step: 2}, 5, 1, 4, 2},                                                  // MSET k v k v
		{Spec{FirstKey: 1, LastKey: -1, Step: 1, WriteKeys: KeyRange{First: 1, Last: 1, Step: 1}}, 4, 1, 1, 1}, // PFMERGE d s s
		{Spec{FirstKey: 1, LastKey: 2, Step: 1, WriteKeys: KeyRange{First: 2, Last: 2}}, 3, 2, 2, 1},           // COPY src dst
		{Spec{FirstKey: 2, LastKey: 2, Step: 1}, 3, 2, 2, 1},                                                   // PFDEBUG sub key
		{Spec{FirstKey: 1, LastKey: 3, Step: 1}, 2, 1, 1, 1},                                                   // clamped to argc-1
		{Spec{}, 1, 0, -1, 1}, // FLUSHALL: names no key
	} {
		f, l, s := c.spec.WriteRange(c.argc)
		if f != c.first || l != c.last || s != c.step {
			t.Errorf("%+v WriteRange(%d) = %d, %d, %d; want %d, %d, %d", c.spec, c.argc, f, l, s, c.first, c.last, c.step)
		}
	}
}
