//go:build windows

package mcp

import "os"

// processExists reports whether pid names a process: on Windows
// FindProcess opens it, which fails once it is gone.
func processExists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
