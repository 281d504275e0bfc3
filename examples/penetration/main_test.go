package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"testing"
)

// TestPenetration runs the example at a smaller scale and checks that the
// guard takes the database load down by about the miss share: with 90% of
// requests for IDs that do not exist, about 90% of the queries disappear
// (less the filter's false positives), no answer is wrong, and every user
// inserted during the run is found as soon as the guard applied it. Its
// log holds the numbers of README.md (which names the equivalent go run
// command, logged here too: keep the two in step).
func TestPenetration(t *testing.T) {
	c := Config{Users: 20_000, Requests: 40_000, MissShare: 0.9, Concurrency: 4, FPR: 0.01, Seed: 1}
	t.Logf("the same as: go run . -users %d -requests %d -miss %g -concurrency %d -fpr %g -seed %d",
		c.Users, c.Requests, c.MissShare, c.Concurrency, c.FPR, c.Seed)
	rep, err := Run(context.Background(), c, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep.Print(&out, false)
	t.Log("\n" + out.String())

	if rep.DirectQueries != int64(c.Requests) {
		t.Fatalf("direct run: %d queries for %d requests", rep.DirectQueries, c.Requests)
	}
	if rep.Wrong != 0 {
		t.Fatalf("%d wrong answers", rep.Wrong)
	}
	// Expected reduction: the misses the filter rules out, 0.9 × (1 − FPR).
	if math.Abs(rep.Reduction-c.MissShare) > 0.03 {
		t.Fatalf("database load fell by %.3f, want about %.2f", rep.Reduction, c.MissShare)
	}
	if s := rep.Stats; s.NonMemberFPR > 2*c.FPR || s.Lookups != uint64(c.Requests)+uint64(rep.Inserted) {
		t.Fatalf("guard stats %+v", s)
	}
	if rep.Inserted == 0 || rep.ReadYourWrites != rep.Inserted {
		t.Fatalf("read-your-writes: %d of %d inserted users found", rep.ReadYourWrites, rep.Inserted)
	}
}
