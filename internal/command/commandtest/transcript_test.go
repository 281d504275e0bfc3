package commandtest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestMatchReply(t *testing.T) {
	for _, c := range []struct {
		want  string
		got   string
		proto int
		ok    bool
	}{
		{`null`, "$-1\r\n", 2, true},
		{`null`, "*-1\r\n", 2, true},
		{`null`, "_\r\n", 3, true},
		{`null`, ":0\r\n", 3, false},
		{`{"i": 5}`, ":5\r\n", 2, true},
		{`{"i": 5}`, ":6\r\n", 2, false},
		{`{"i": 5}`, "$1\r\n5\r\n", 2, false},
		{`{"s": "x\u00ff"}`, "$2\r\nx\xff\r\n", 2, true},
		{`{"s": "x"}`, "+x\r\n", 2, false},
		{`{"simple": "OK"}`, "+OK\r\n", 3, true},
		{`{"simple": "OK"}`, "$2\r\nOK\r\n", 3, false},
		{`{"err": "CMS: key does not exist"}`, "-CMS: key does not exist\r\n", 2, true},
		{`{"err": "CMS: key does not exist"}`, "-ERR CMS: key does not exist\r\n", 2, false},
		{`{"d": 0.9}`, "$19\r\n0.90000000000000002\r\n", 2, true},
		{`{"d": 0.9}`, "$3\r\n0.9\r\n", 2, true},
		{`{"d": 0.9}`, ",0.9\r\n", 3, true},
		{`{"d": 0.9}`, "$3\r\n0.9\r\n", 3, false},
		{`{"d": 0.9}`, ",0.91\r\n", 3, false},
		{`{"d": "nan"}`, ",nan\r\n", 3, true},
		{`{"d": "inf"}`, "$3\r\ninf\r\n", 2, true},
		{`{"d": "-inf"}`, ",inf\r\n", 3, false},
		{`{"d": 0}`, ",-0\r\n", 3, false},
		{`{"b": true}`, "#t\r\n", 3, true},
		{`{"b": true}`, "#f\r\n", 3, false},
		{`[{"i": 1}, null]`, "*2\r\n:1\r\n$-1\r\n", 2, true},
		{`[{"i": 1}, null]`, "*1\r\n:1\r\n", 2, false},
		{`[{"i": 1}]`, "*1\r\n:1\r\n:2\r\n", 2, false},
		{`{"map": [[{"simple": "Width"}, {"i": 5}]]}`, "%1\r\n+Width\r\n:5\r\n", 3, true},
		{`{"map": [[{"simple": "Width"}, {"i": 5}]]}`, "*2\r\n+Width\r\n:5\r\n", 3, false},
	} {
		err := MatchReply(json.RawMessage(c.want), c.got, c.proto)
		if (err == nil) != c.ok {
			t.Errorf("MatchReply(%s, %q, %d) = %v, want ok=%v", c.want, c.got, c.proto, err, c.ok)
		}
	}
}

func TestLoadTranscripts(t *testing.T) {
	for _, fam := range []string{"cms", "topk", "tdigest"} {
		for _, f := range TranscriptFiles(t, fam) {
			lines := LoadTranscript(t, f)
			for i, l := range lines {
				if len(l.Args) == 0 || len(l.RESP2) == 0 || len(l.RESP3) == 0 {
					t.Fatalf("%s:%d: incomplete line", f, i+1)
				}
			}
			// The copy must equal the shared original when it is here.
			shared := filepath.Join("../../../../shared/testdata/redisbloom", filepath.Base(f))
			if orig, err := os.ReadFile(shared); err == nil {
				mine, err := os.ReadFile(f)
				if err != nil || !bytes.Equal(orig, mine) {
					t.Errorf("%s differs from %s", f, shared)
				}
			}
		}
	}
}
