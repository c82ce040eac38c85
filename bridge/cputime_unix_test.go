//go:build unix

package bridge_test

import "syscall"

// processCPU is the CPU time (user and system) the process has used, in
// nanoseconds: agent and client together, all goroutines.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
