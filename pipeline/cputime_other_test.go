//go:build !unix

package pipeline

// processCPU is unavailable here; the cpu-ns/op metric reads 0.
func processCPU() int64 { return 0 }
