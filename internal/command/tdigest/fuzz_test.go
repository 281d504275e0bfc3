package tdigest_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/keyspace"
)

// FuzzCommands runs arbitrary TDIGEST.* argument vectors (space-separated
// tokens, the command chosen by the first byte) against a key space
// holding a few digests: every call answers (never panics), and every
// reply is one well-formed RESP value.
func FuzzCommands(f *testing.F) {
	for _, s := range []string{
		"\x00t 1 2 3", "\x01t 0 0.5 1", "\x02d 2 t u COMPRESSION 10 OVERRIDE", "\x03t 0 1 99",
		"\x04t -1 0x10 inf", "\x05t 0.1 0.9", "\x06t COMPRESSION 9223372036854775807", "\x07t 5",
	} {
		f.Add([]byte(s))
	}
	names := []string{"TDIGEST.ADD", "TDIGEST.QUANTILE", "TDIGEST.MERGE", "TDIGEST.BYRANK", "TDIGEST.RANK",
		"TDIGEST.TRIMMED_MEAN", "TDIGEST.CREATE", "TDIGEST.CDF", "TDIGEST.REVRANK", "TDIGEST.BYREVRANK",
		"TDIGEST.INFO", "TDIGEST.RESET", "TDIGEST.MIN", "_TDIGEST.COMPRESS", "_TDIGEST.LOAD"}
	tab, cfg := table()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 4096 {
			return
		}
		store := keyspace.New(nil)
		for _, setup := range []string{"TDIGEST.CREATE t COMPRESSION 20", "TDIGEST.ADD t 1 2 3 4 5 6 7 8 9",
			"TDIGEST.CREATE u", "TDIGEST.ADD u 1.5", "SET s x"} {
			commandtest.Run(tab, store, cfg, 2, commandtest.Argv(strings.Fields(setup)...))
		}
		args := append([][]byte{[]byte(names[int(data[0])%len(names)])}, bytes.Fields(data[1:])...)
		for _, proto := range []int{2, 3} {
			reply, _ := commandtest.Run(tab, store, cfg, proto, args)
			if err := commandtest.MatchReply([]byte("null"), reply, proto); err != nil && (strings.Contains(err.Error(), "unparsable") || strings.Contains(err.Error(), "bytes after")) {
				t.Fatalf("%q: malformed reply %q: %v", args, reply, err)
			}
		}
	})
}
