package tdigest_test

import (
	"path/filepath"
	"testing"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/commandtest"
	"github.com/probly/probly/internal/command/generic"
	"github.com/probly/probly/internal/command/str"
	tdcmd "github.com/probly/probly/internal/command/tdigest"
	"github.com/probly/probly/internal/config"
)

func table() (*command.Table, *config.Registry) {
	t := command.NewTable()
	cfg := config.New()
	generic.Register(t, cfg)
	str.Register(t, cfg)
	tdcmd.Register(t, cfg)
	return t, cfg
}

// TestTranscripts replays RedisBloom's recorded t-digest transcripts in
// RESP2 and RESP3: every reply must match (doubles by value).
func TestTranscripts(t *testing.T) {
	tab, cfg := table()
	for _, f := range commandtest.TranscriptFiles(t, "tdigest") {
		t.Run(filepath.Base(f), func(t *testing.T) { commandtest.ReplayTranscript(t, f, tab, cfg) })
	}
}
