//go:build unix

package tools

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS is a finished process's peak resident set in bytes.
func peakRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes there, KiB on Linux
	}
	return int64(ru.Maxrss) << 10
}
