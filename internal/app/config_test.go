package app

import (
	"context"
	"testing"
)

// An invalid save setting answers Redis 7's CONFIG SET reply byte for byte
// (redis-server: "ERR CONFIG SET failed (possibly related to argument
// 'save') - Invalid save parameters"), although persist's Go error is
// "persist: invalid save parameters"; the setting keeps its old value.
func TestConfigSetSaveInvalidReply(t *testing.T) {
	ctx := context.Background()
	s := runApp(t, Options{Config: [][2]string{{"save", "900 1"}}}, true)
	c := newClient(t, s.addr, nil)
	const want = "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"
	for _, bad := range []string{"1", "a 1", "0 1", "1 -1"} {
		if err := c.ConfigSet(ctx, "save", bad).Err(); err == nil || err.Error() != want {
			t.Errorf("CONFIG SET save %q = %v, want %q", bad, err, want)
		}
	}
	if m, err := c.ConfigGet(ctx, "save").Result(); err != nil || m["save"] != "900 1" {
		t.Errorf("CONFIG GET save after refused sets = %v %v, want \"900 1\"", m, err)
	}
}
