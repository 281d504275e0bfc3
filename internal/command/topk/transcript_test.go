package topk_test

import (
	"path/filepath"
	"testing"

	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/command/commandtest"
)

// Every reply of the RedisBloom reference transcripts, RESP2 and RESP3.
func TestTranscripts(t *testing.T) {
	tab, cfg := app.Tables()
	for _, f := range commandtest.TranscriptFiles(t, "topk") {
		t.Run(filepath.Base(f), func(t *testing.T) { commandtest.ReplayTranscript(t, f, tab, cfg) })
	}
}
