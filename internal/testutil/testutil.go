// Package testutil holds the helpers the project's tests share: the switch
// that turns on the slow acceptance tests, and the one polling helper that
// tests use instead of sleeping.
//
// It is imported only by _test.go files.
package testutil

import (
	"os"
	"testing"
	"time"
)

// FullEnv is the environment variable that turns on the slow acceptance
// tests (multi-GiB structures, ten-million-item runs, the real-data tests,
// long crash and disk-full runs): PROBLY_FULL=1 go test ./... runs them;
// .ci/run sets it. Without it `go test ./...` runs the default set.
const FullEnv = "PROBLY_FULL"

// FullEnabled reports whether FullEnv is set to "1".
func FullEnabled() bool { return os.Getenv(FullEnv) == "1" }

// Full skips the calling test unless the slow acceptance tests are switched
// on (FullEnv=1). Call it first in such a test.
func Full(t testing.TB) {
	t.Helper()
	if !FullEnabled() {
		t.Skip("slow acceptance test: set " + FullEnv + "=1 to run it (.ci/run does)")
	}
}

// PollInterval is how often Eventually evaluates its condition.
const PollInterval = 5 * time.Millisecond

// Eventually evaluates cond every PollInterval until it returns true or
// timeout has passed, and reports whether it returned true. cond is always
// evaluated at least once, and once more at the deadline, so a condition
// that holds in time is never reported false because of scheduling. cond
// runs on the calling goroutine, so it may call t.Fatal.
//
// Use it for every wait in a test (a fixed sleep must never decide a
// test's outcome):
//
//	if !testutil.Eventually(t, 10*time.Second, func() bool { return db.Done() }) {
//		t.Fatalf("not done: %v", db.State())
//	}
func Eventually(t testing.TB, timeout time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(PollInterval)
	}
}
