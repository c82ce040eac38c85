package testsupport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/sandbox"
)

// OutsideSandbox makes a directory that a workspace-write sandbox does not
// let a command write unless it is one of the roots: outside every
// [sandbox.TempDirs]. It tries the test's package directory first, then
// $HOME: a checkout under /tmp (CI clones anywhere) would otherwise put the
// "outside" of a sandbox test where the sandbox rightly lets commands write.
// The directory is removed when the test ends.
func OutsideSandbox(t testing.TB) string {
	t.Helper()
	home, _ := os.UserHomeDir()
	for _, parent := range []string{".", home} {
		if parent == "" {
			continue
		}
		abs, err := filepath.Abs(parent)
		if err != nil || underAny(abs, sandbox.TempDirs()) {
			continue
		}
		d, err := os.MkdirTemp(abs, ".dshd-testoutside-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	t.Fatalf("no directory outside the sandbox's temp directories %v to test with (package directory and $HOME are inside them)", sandbox.TempDirs())
	return ""
}

func underAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
		if path == d || strings.HasPrefix(path, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}
