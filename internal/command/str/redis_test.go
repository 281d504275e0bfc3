package str

import (
	"testing"

	"github.com/probly/probly/internal/command/commandtest"
)

// diffScript is a fixed list of string-command cases (the expiry options
// and commands have their own random differential test,
// TestExpiryDifferentialRedis in package generic).
func diffScript() [][]string {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	s := [][]string{
		{"GET", "k"}, {"STRLEN", "k"}, {"GETRANGE", "k", "0", "-1"},
		{"SET", "k", "v1"}, {"GET", "k"}, {"SET", "k", "v2", "NX"}, {"SET", "k", "v3", "XX"},
		{"SET", "m", "x", "XX"}, {"GET", "m"}, {"SET", "k", "v4", "GET"}, {"SET", "n", "v", "GET"},
		{"SET", "k", "v5", "NX", "GET"}, {"SET", "o", "v", "NX", "GET"}, {"SET", "p", "v", "XX", "GET"},
		{"SET", "k", "v6", "KEEPTTL", "GET", "xx"}, {"SET", "k", "v", "nx\x00zz"},
		{"SET", "k", "v", "NX", "XX"}, {"SET", "k", "v", "XX", "NX"}, {"SET", "k", "v", "FOO"},
		{"SET", "k", "v", "EX"}, {"SET", "k", "v", "EX", "1", "PX", "1"}, {"SET", "k", "v", "KEEPTTL", "EX", "1"},
		{"SET", "k", "v", "EX", "1", "KEEPTTL"}, {"SET", "k", "v", "PXAT", "1", "EXAT", "1"},
		{"SET", "k", "v", "EX", "abc"}, {"SET", "k", "v", "EX", "0"}, {"SET", "k", "v", "PX", "-1"},
		{"SET", "k", "v", "EX", "9223372036854776"}, {"SET", "k", "v", "PX", "9223372036854775807"},
		{"SET", "k", "v", "EX", "+1"}, {"SET", "k", "v", "EX", "01"}, {"SET", "k", "v", "EX", "abc", "FOO"},
		{"SET", "k", "v", "EX", "100"}, {"SET", "k", "v", "PXAT", "1"}, {"GET", "k"}, {"SETEX", "k", "100", "w"},
		{"GETEX", "k", "PERSIST"}, {"GETEX", "k", "EXAT", "1"}, {"GETDEL", "k"}, {"PSETEX", "k", "0", "v"},
		{"GET", "k"},
		{"SET", "bin", "a\r\nb\x00c"}, {"GET", "bin"}, {"STRLEN", "bin"},
		{"SET", "all", string(all)}, {"GET", "all"}, {"GETRANGE", "all", "100", "120"},
		{"SET", "\r\n\x00", "key"}, {"GET", "\r\n\x00"},
		{"SET", "e", ""}, {"GET", "e"}, {"STRLEN", "e"},
		{"APPEND", "a", "hello"}, {"APPEND", "a", " world\x00"}, {"APPEND", "a", ""}, {"GET", "a"},
		{"APPEND", "ae", ""}, {"GET", "ae"}, {"STRLEN", "ae"},
		{"SETRANGE", "r", "5", ""}, {"GET", "r"}, {"SETRANGE", "r", "3", "abc"}, {"GET", "r"},
		{"SETRANGE", "r", "0", "XY"}, {"SETRANGE", "r", "10", ""}, {"SETRANGE", "r", "6", "\r\n"}, {"GET", "r"},
		{"SETRANGE", "r", "-1", "x"}, {"SETRANGE", "r", "-1", ""}, {"SETRANGE", "r", "x", "x"},
		{"SETRANGE", "r", "1.5", "x"}, {"SETRANGE", "r", "-0", "x"}, {"SETRANGE", "r", "9223372036854775808", "x"},
		{"SETRANGE", "r", "536870912", "x"}, {"SETRANGE", "r", "536870911", "xy"},
		{"SETRANGE", "r", "9223372036854775807", "x"}, {"SETRANGE", "r", "536870912", ""},
		{"SETRANGE", "big", "536870912", "x"}, {"GET", "big"},
		{"SET", "s", "This is a string"},
		{"GET", "k", "x"}, {"SET", "k"}, {"APPEND", "k"}, {"SETRANGE", "k", "1"}, {"GETRANGE", "k", "1"},
		{"SUBSTR", "k", "1", "2", "3"}, {"STRLEN"},
	}
	idx := []string{"0", "1", "3", "-1", "-3", "-100", "15", "16", "100", "-16", "-17",
		"9223372036854775807", "-9223372036854775808", "x", "01", "9223372036854775808"}
	for _, key := range []string{"s", "e", "missing"} {
		for _, a := range idx {
			for _, b := range idx {
				s = append(s, []string{"GETRANGE", key, a, b})
			}
		}
	}
	s = append(s, []string{"SUBSTR", "s", "-3", "-1"}, []string{"substr", "s", "2", "-100"})
	return s
}

// TestDifferentialRedis runs the same commands against a real redis-server
// and probly's table, in RESP2 and RESP3, and requires identical reply
// bytes.
func TestDifferentialRedis(t *testing.T) {
	addr := commandtest.StartRedis(t)
	script := diffScript()
	for _, proto := range []int{2, 3} {
		rc := commandtest.DialRaw(t, addr, proto)
		if _, err := rc.Do(commandtest.Argv("FLUSHALL")); err != nil {
			t.Fatal(err)
		}
		e := newEnv(t)
		mismatches := 0
		for _, cmd := range script {
			want, err := rc.Do(commandtest.Argv(cmd...))
			if err != nil {
				t.Fatalf("redis %q: %v", cmd, err)
			}
			if got := e.do(proto, cmd...); got != want {
				t.Errorf("RESP%d %q:\n probly %q\n redis  %q", proto, cmd, got, want)
				if mismatches++; mismatches > 20 {
					t.FailNow()
				}
			}
		}
		t.Logf("RESP%d: %d commands compared", proto, len(script))
	}
}
