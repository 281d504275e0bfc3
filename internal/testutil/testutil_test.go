package testutil

import (
	"testing"
	"time"
)

func TestEventually(t *testing.T) {
	calls := 0
	if !Eventually(t, 0, func() bool { calls++; return true }) || calls != 1 {
		t.Errorf("a condition true at once: %d calls, want 1 and true", calls)
	}
	calls = 0
	if Eventually(t, 0, func() bool { calls++; return false }) || calls != 1 {
		t.Errorf("timeout 0, false condition: %d calls, want 1 and false", calls)
	}
	calls = 0
	if !Eventually(t, 10*time.Second, func() bool { calls++; return calls == 4 }) || calls != 4 {
		t.Errorf("a condition true at the 4th call: %d calls, want 4 and true", calls)
	}
	calls = 0
	start := time.Now()
	if Eventually(t, 50*time.Millisecond, func() bool { calls++; return false }) {
		t.Error("a condition that never holds was reported true")
	}
	if el := time.Since(start); el < 50*time.Millisecond {
		t.Errorf("gave up after %v, before the 50ms timeout", el)
	}
	if calls < 2 {
		t.Errorf("%d calls in 50ms, want it to poll", calls)
	}
	// The last evaluation comes after the deadline: a condition that
	// becomes true only then is reported true.
	deadline := time.Now().Add(30 * time.Millisecond)
	if !Eventually(t, 30*time.Millisecond, func() bool { return time.Now().After(deadline) }) {
		t.Error("a condition true at the deadline was reported false")
	}
}

func TestFull(t *testing.T) {
	for _, c := range []struct {
		env  string
		runs bool
	}{{"", false}, {"0", false}, {"yes", false}, {"1", true}} {
		t.Setenv(FullEnv, c.env)
		ran := false
		t.Run("env="+c.env, func(t *testing.T) {
			Full(t)
			ran = true
		})
		if ran != c.runs || FullEnabled() != c.runs {
			t.Errorf("%s=%q: test ran %v, FullEnabled %v, want %v", FullEnv, c.env, ran, FullEnabled(), c.runs)
		}
	}
}
