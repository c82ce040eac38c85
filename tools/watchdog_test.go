//go:build unix

package tools

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// When DSHD_TOOLS_ORPHAN_CHILD is set, the test binary plays a daemon that
// runs a long command and waits to be killed.
func init() {
	if os.Getenv("DSHD_TOOLS_ORPHAN_CHILD") == "" {
		return
	}
	// The command says its pid through the test's FIFO, then becomes the sleep.
	_, _ = Run(context.Background(), Command{Line: `echo $$ > "$DSHD_TOOLS_ORPHAN_FIFO"; exec sleep 300`, Dir: os.TempDir()})
	os.Exit(0)
}

// TestDaemonDeathKillsCommand kills a "daemon" with SIGKILL while its
// command runs: the command's watchdog must end it.
func TestDaemonDeathKillsCommand(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	daemon, _ := testsupport.StartSelf(t, "DSHD_TOOLS_ORPHAN_CHILD=1", "DSHD_TOOLS_ORPHAN_FIFO="+fifo)
	sleeper := testsupport.ReadPID(t, fifo) // returns once the command has written and closed it
	t.Cleanup(func() {
		if t.Failed() { // it may have outlived the daemon
			_ = syscall.Kill(sleeper, syscall.SIGKILL)
		}
	})
	if err := daemon.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = daemon.Wait()
	testsupport.WaitExit(t, sleeper)
}
