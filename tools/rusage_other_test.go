//go:build !unix

package tools

import "os"

// peakRSS is not reported where the OS gives no rusage.
func peakRSS(*os.ProcessState) int64 { return 0 }
