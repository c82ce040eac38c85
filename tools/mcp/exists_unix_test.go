//go:build unix

package mcp

import (
	"errors"
	"syscall"
)

// processExists reports whether pid names a process (a zombie counts).
func processExists(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
