package testsupport

import (
	"io"
	"os"
	"os/exec"
	"testing"
)

// StartSelf starts the test binary again, running no tests, with env added
// to its environment: the variable a package's TestMain or init looks for
// to make the binary play a part (a daemon to kill with SIGKILL, say). The
// child's stderr is the test's; its stdout is returned for the test to
// read what the child says. The child is killed when the test ends if it
// is still running.
func StartSelf(t testing.TB, env ...string) (*exec.Cmd, io.ReadCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, out
}
