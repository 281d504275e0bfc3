package tdigest_test

import (
	"path/filepath"
	"testing"

	"github.com/probly/probly/internal/app"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/config"
)

// table is the server's command table (TDIGEST.* with SET, TYPE …).
func table() (*command.Table, *config.Registry) { return app.Tables() }

// TestTranscripts replays RedisBloom's recorded t-digest transcripts in
// RESP2 and RESP3: every reply must match (doubles by value).
func TestTranscripts(t *testing.T) {
	tab, cfg := table()
	for _, f := range commandtest.TranscriptFiles(t, "tdigest") {
		t.Run(filepath.Base(f), func(t *testing.T) { commandtest.ReplayTranscript(t, f, tab, cfg) })
	}
}
