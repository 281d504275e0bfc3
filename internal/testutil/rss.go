package testutil

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// RSS returns the process's resident set size (VmRSS of
// /proc/self/status) in bytes; it skips the test where that cannot be
// read. Tests use it to check that large allocations are zeroed lazily
// by the OS (resident memory grows only with the pages touched).
func RSS(t testing.TB) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			fields := bytes.Fields(rest)
			if len(fields) == 0 {
				break
			}
			n, err := strconv.ParseInt(string(fields[0]), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n << 10
		}
	}
	t.Skip("no VmRSS in /proc/self/status")
	return 0
}

// freshEnv marks the child process RunFresh starts.
const freshEnv = "PROBLY_TEST_FRESH_PROCESS"

// RunFresh runs the calling test again in a new process of the test
// binary (only that test, -test.run '^Name$') and fails t if it fails
// there; it reports whether the caller is that new process, which then
// runs the test's body. For measurements that need a heap with no freed
// memory to reuse, e.g. that a large allocation is zeroed lazily by the
// OS (RSS): the Go runtime clears reused heap memory itself, touching
// every page.
func RunFresh(t *testing.T) bool {
	t.Helper()
	if os.Getenv(freshEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), freshEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("fresh process:\n%s", out)
	if err != nil {
		t.Fatalf("fresh process: %v", err)
	}
	return false
}
