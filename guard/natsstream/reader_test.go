package natsstream_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/probly/probly/guard/natsstream"
)

// TestReaderSurvivesConsumerLoss: the consumer is deleted twice while the
// reader is mid-stream; the reader recreates it after the last message it
// delivered, so every message arrives exactly once, in order.
func TestReaderSurvivesConsumerLoss(t *testing.T) {
	js, _ := startJetStream(t)
	ctx := context.Background()
	const total = 3000
	for i := range total {
		if _, err := js.PublishAsync(subjCreated, []byte(fmt.Sprint("k", i))); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		t.Fatal("publish timeout")
	}
	r := natsstream.NewReader(js, streamName, []string{subjCreated}, 0, natsstream.ReaderOptions{Buffer: 64})
	defer r.Close()
	st, err := js.Stream(ctx, streamName)
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for n := 0; n < total; n++ {
		if n == 700 || n == 1900 {
			for name := range st.ConsumerNames(ctx).Name() {
				if err := st.DeleteConsumer(ctx, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
					t.Fatal(err)
				}
			}
		}
		nctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		m, err := r.Next(nctx)
		cancel()
		if err != nil {
			t.Fatalf("after %d messages: %v (last error %q)", n, err, r.LastError())
		}
		if m.Seq != last+1 || string(m.Data) != fmt.Sprint("k", n) {
			t.Fatalf("message %d: seq %d after %d, data %q", n, m.Seq, last, m.Data)
		}
		last = m.Seq
	}
	if r.Resets() == 0 {
		t.Fatal("the consumer was deleted but the reader never recreated it")
	}
	t.Logf("%d messages in order across %d consumer resets (last: %s)", total, r.Resets(), r.LastError())
}

// TestReaderRefusesTruncation: a reader whose position the stream no
// longer covers stops with ErrTruncated instead of skipping.
func TestReaderRefusesTruncation(t *testing.T) {
	js, _ := startJetStream(t)
	ctx := context.Background()
	for i := range 20 {
		if _, err := js.Publish(ctx, subjCreated, []byte(fmt.Sprint("k", i))); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := js.Stream(ctx, streamName)
	if err := st.Purge(ctx, jetstream.WithPurgeKeep(5)); err != nil {
		t.Fatal(err)
	}
	r := natsstream.NewReader(js, streamName, []string{subjCreated}, 3, natsstream.ReaderOptions{})
	defer r.Close()
	nctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := r.Next(nctx); !errors.Is(err, natsstream.ErrTruncated) {
		t.Fatalf("Next = %v, want ErrTruncated", err)
	}
	// From a covered position it reads.
	r2 := natsstream.NewReader(js, streamName, []string{subjCreated}, 15, natsstream.ReaderOptions{})
	defer r2.Close()
	if m, err := r2.Next(nctx); err != nil || m.Seq != 16 {
		t.Fatalf("Next from 15 = %d, %v", m.Seq, err)
	}
}
