//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sessionlog

import "os"

// lockFile is a no-op where flock is not available: one writer per session
// is then not enforced (docs/rough_edges.md).
func lockFile(*os.File, string) error { return nil }
