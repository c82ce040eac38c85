//go:build unix

package pipeline

import "syscall"

// processCPU is the CPU time the whole process (every thread, the garbage
// collector included) has used, in nanoseconds. Benchmarks report it per
// op next to ns/op because wall-clock figures are meaningless on a shared,
// overloaded machine, while CPU time is not inflated by other processes.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
