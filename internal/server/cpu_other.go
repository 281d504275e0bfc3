//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package server

// cpuTimes is not available on this platform.
func cpuTimes() (sys, user float64) { return 0, 0 }
