//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package server

import "syscall"

// cpuTimes returns the process's system and user CPU seconds.
func cpuTimes() (sys, user float64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Stime), tv(ru.Utime)
}
