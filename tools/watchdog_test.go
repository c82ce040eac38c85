//go:build unix

package tools

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// When DSHD_TOOLS_ORPHAN_CHILD is set, the test binary plays a daemon that
// runs a long command and waits to be killed.
func init() {
	if os.Getenv("DSHD_TOOLS_ORPHAN_CHILD") == "" {
		return
	}
	_, _ = Run(context.Background(), Command{Line: "sleep 300; echo never", Dir: os.TempDir()})
	os.Exit(0)
}

// TestDaemonDeathKillsCommand kills a "daemon" with SIGKILL while its
// command runs: the command's watchdog must end it.
func TestDaemonDeathKillsCommand(t *testing.T) {
	daemon := exec.Command(os.Args[0], "-test.run=^$")
	daemon.Env = append(os.Environ(), "DSHD_TOOLS_ORPHAN_CHILD=1")
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer daemon.Process.Kill()

	var sleeper int
	for deadline := time.Now().Add(20 * time.Second); sleeper == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the daemon never started its command")
		}
		for _, p := range testsupport.Descendants(daemon.Process.Pid) {
			if p.Comm == "sleep" {
				sleeper = p.PID
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := daemon.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = daemon.Wait()
	for deadline := time.Now().Add(20 * time.Second); stillRunning(sleeper); {
		if time.Now().After(deadline) {
			_ = syscall.Kill(sleeper, syscall.SIGKILL)
			t.Fatalf("command %d outlived its daemon", sleeper)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stillRunning reports whether pid runs something (a zombie does not).
func stillRunning(pid int) bool {
	p, ok := testsupport.ReadProc(pid)
	return ok && p.Live()
}
