//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sessionlog

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes the exclusive, non-blocking flock that makes this open
// file the session's one writer. The kernel drops it when the file is
// closed or the process dies (kill -9 included), so a lock never outlives
// its holder.
func lockFile(f *os.File, id string) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return fmt.Errorf("%w: %s", ErrLocked, id)
		}
		return fmt.Errorf("sessionlog: locking log: %w", err)
	}
}
