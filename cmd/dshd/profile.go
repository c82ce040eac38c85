package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles writes a CPU profile of the whole daemon to cpuPath
// (DSHD_CPUPROFILE) and, when stop is called (the editor has closed the
// connection), a heap profile to heapPath (DSHD_MEMPROFILE): how the
// figures of the 1,000-call turns through the binary are taken apart.
// Either path may be empty.
func startProfiles(cpuPath, heapPath string) (stop func(), err error) {
	var cpu *os.File
	if cpuPath != "" {
		if cpu, err = os.Create(cpuPath); err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, fmt.Errorf("profile %s: %w", cpuPath, err)
		}
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if heapPath != "" {
			if f, err := os.Create(heapPath); err == nil {
				runtime.GC() // the live heap, not what the last cycle left
				_ = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
	}, nil
}
