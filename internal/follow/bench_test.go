package follow_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// publishAsync publishes n adds to subject and returns the last sequence.
func publishAsync(tb testing.TB, js jetstream.JetStream, subject, prefix string, n int) uint64 {
	tb.Helper()
	var last uint64
	futures := make([]jetstream.PubAckFuture, 0, 1000) // under PublishAsync's pending limit (4,000)
	flush := func() {
		for _, f := range futures {
			select {
			case ack := <-f.Ok():
				last = max(last, ack.Sequence)
			case err := <-f.Err():
				tb.Fatal(err)
			}
		}
		futures = futures[:0]
	}
	for i := range n {
		f, err := js.PublishAsync(subject, []byte(fmt.Sprint(prefix, i)))
		if err != nil {
			tb.Fatal(err)
		}
		if futures = append(futures, f); len(futures) == cap(futures) {
			flush()
		}
	}
	flush()
	return last
}

// BenchmarkCatchUp: a fresh replica catches up with a stream of 200,000
// adds (BF and CF keys alternating in runs of 100) on loopback; events/s
// is the rate from start to the last message applied.
//
//	go test -run '^$' -bench CatchUp -benchtime 3x ./internal/follow/
func BenchmarkCatchUp(b *testing.B) {
	ns := startNATS(b)
	const total = 200000
	var last uint64
	for i := 0; i < total; i += 100 {
		subj := "users.created"
		if i/100%2 == 1 {
			subj = "sessions.opened"
		}
		last = publishAsync(b, ns.js, subj, fmt.Sprint("k", i, "-"), 100)
	}
	cfg := fmt.Sprintf(`{"url": %q, "stream": "USERS", "keys": [
	  {"key": "users", "type": "bf", "add": ["users.created"], "capacity": 200000, "error_rate": 0.001},
	  {"key": "sessions", "type": "cf", "add": ["sessions.opened"], "delete": ["sessions.closed"], "capacity": 200000}]}`, ns.url)
	b.ResetTimer()
	var elapsed time.Duration
	for range b.N {
		b.StopTimer()
		n := openNode(b, b.TempDir(), cfg)
		b.StartTimer()
		start := time.Now()
		n.start()
		for deadline := time.Now().Add(2 * time.Minute); n.f.Applied() < last; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatalf("not caught up: %v", n.info())
			}
		}
		elapsed += time.Since(start)
		b.StopTimer()
		n.close()
		b.StartTimer()
	}
	b.ReportMetric(float64(total)*float64(b.N)/elapsed.Seconds(), "events/s")
}

// BenchmarkStaleness: publish at 1,000 events/s; staleness is the time
// from the publish call to the change being applied (FOLLOW.WAIT's
// condition), reported as p50 and p99 in milliseconds.
//
//	go test -run '^$' -bench Staleness -benchtime 5000x ./internal/follow/
func BenchmarkStaleness(b *testing.B) {
	ns := startNATS(b)
	n := openNode(b, b.TempDir(), fmt.Sprintf(testConfig, ns.url))
	defer n.close()
	n.start()
	n.waitApplied(0)
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	done := make(chan time.Duration, 1024)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	b.ResetTimer()
	pending := 0
	for i := range b.N {
		<-tick.C
		start := time.Now()
		ack, err := ns.js.Publish(ctx, "users.created", []byte(fmt.Sprint("s-", i)))
		if err != nil {
			b.Fatal(err)
		}
		pending++
		go func(seq uint64) {
			n.f.WaitApplied(ctx, seq)
			done <- time.Since(start)
		}(ack.Sequence)
		for drained := false; !drained; {
			select {
			case d := <-done:
				lat = append(lat, d)
				pending--
			default:
				drained = true
			}
		}
	}
	for ; pending > 0; pending-- {
		lat = append(lat, <-done)
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(lat, 0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-ms")
}
