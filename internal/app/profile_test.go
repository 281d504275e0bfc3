package app

import (
	"context"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/probly/probly/internal/server"
)

// TestProfileServe runs the full server (app.Run, default everysec AOF,
// metrics recorded, no snapshots) for a while and writes CPU and
// allocation profiles, for profiling under redis-benchmark. It runs only
// on request:
//
//	PROBLY_PROFILE_ADDR=127.0.0.1:16400 PROBLY_PROFILE_SECONDS=20 \
//	PROBLY_PROFILE_OUT=/tmp/prof go test -run TestProfileServe -v ./internal/app/
//	# meanwhile: redis-benchmark -p 16400 -c 50 -P 16 -r 1000000 -n 5000000 BF.ADD bf __rand_int__
//	go tool pprof -top /tmp/prof.cpu
//
// The CPU profile starts PROBLY_PROFILE_DELAY seconds (default 2, time to
// load data first) after the server and lasts
// PROBLY_PROFILE_SECONDS (default 15); the allocation profile
// (/tmp/prof.allocs) counts from the start.
func TestProfileServe(t *testing.T) {
	addr := os.Getenv("PROBLY_PROFILE_ADDR")
	if addr == "" {
		t.Skip("set PROBLY_PROFILE_ADDR to profile the server")
	}
	// The tests' input scrubbing (scrub_test.go) is not the server's work.
	server.ScrubInput = false
	defer func() { server.ScrubInput = true }()
	out := os.Getenv("PROBLY_PROFILE_OUT")
	if out == "" {
		out = "probly-profile"
	}
	secs := 15
	if s := os.Getenv("PROBLY_PROFILE_SECONDS"); s != "" {
		secs, _ = strconv.Atoi(s)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Dir: t.TempDir(), Listener: ln, MetricsAddr: "off",
			Config: [][2]string{{"save", ""}}})
	}()
	delay := 2
	if s := os.Getenv("PROBLY_PROFILE_DELAY"); s != "" {
		delay, _ = strconv.Atoi(s) // seconds before the profile starts (time to load data)
	}
	time.Sleep(time.Duration(delay) * time.Second)
	cpu, err := os.Create(out + ".cpu")
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Duration(secs) * time.Second)
	pprof.StopCPUProfile()
	cpu.Close()
	f, err := os.Create(out + ".allocs")
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cancel()
	if err := <-done; err != nil {
		t.Log(err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("profiles in %s.cpu and %s.allocs; %d GCs", out, out, ms.NumGC)
}
