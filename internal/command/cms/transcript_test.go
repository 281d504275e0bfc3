package cms_test

import (
	"path/filepath"
	"testing"

	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/command/commandtest"
)

// TestTranscripts replays the RedisBloom reference transcripts of CMS
// (cms-1.jsonl, cms-2.jsonl: 3,012 commands recorded from a real
// RedisBloom) in RESP2 and RESP3 from an empty key space: every reply must
// match.
func TestTranscripts(t *testing.T) {
	files := commandtest.TranscriptFiles(t, "cms")
	if len(files) != 2 {
		t.Fatalf("CMS transcripts: %q", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			tab, cfg := app.Tables()
			commandtest.ReplayTranscript(t, f, tab, cfg)
		})
	}
}
