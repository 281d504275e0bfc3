//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package persist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive advisory lock (flock) on dir/LOCK. The kernel
// releases it when the process dies, so a crash never leaves it stale.
func lockDir(dir string) (*os.File, error) {
	p := filepath.Join(dir, lockName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("persist: open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, p)
		}
		return nil, fmt.Errorf("persist: lock %s: %w", p, err)
	}
	return f, nil
}

func unlockDir(f *os.File) {
	if f != nil {
		f.Close() // closing the descriptor releases the flock
	}
}
