//go:build unix

package acp_test

import "syscall"

// processCPU is the CPU time the whole process (all threads, the garbage collector included)
// has used, in nanoseconds. The codec benchmarks report it per op beside ns/op: on a shared,
// loaded machine wall-clock ns/op is inflated by other processes, CPU time much less so.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
