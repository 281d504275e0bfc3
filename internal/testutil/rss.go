package testutil

import (
	"bufio"
	"bytes"
	"os"
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
