//go:build windows

package procgroup

import (
	"os/exec"
	"syscall"
	"testing"
)

// A guarded command runs (it was resumed), and Signal ends the job, the
// command's children included.
func TestJobEndsTheTree(t *testing.T) {
	cmd := exec.Command("cmd.exe", "/c", "ping -n 300 127.0.0.1 >NUL")
	Isolate(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := Guard(cmd.Process.Pid)
	if g.job == 0 {
		t.Fatal("no job object")
	}
	g.Signal(syscall.SIGKILL)
	if err := cmd.Wait(); err == nil {
		t.Error("the command exited on its own; it should have been terminated")
	}
	g.Release()
	g.Release()
}
