//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package persist

import "os"

// lockDir is a no-op on platforms without flock: the caller must make sure
// only one process opens a data directory.
func lockDir(dir string) (*os.File, error) { return nil, nil }

func unlockDir(f *os.File) {}
