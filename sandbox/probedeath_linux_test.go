package sandbox_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// probeHangEnv names the launcher TestMain's prober tries.
const probeHangEnv = "DSHD_TEST_PROBE_HANG"

// TestProbeDiesWithTheProber: a process killed with SIGKILL while it tries
// the launcher (an editor closing a daemon that has just started) leaves
// no launcher running. The launcher here never ends by itself; before, it
// outlived the prober.
func TestProbeDiesWithTheProber(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	pidFIFO := filepath.Join(dir, "launcher.pid")
	if err := syscall.Mkfifo(pidFIFO, 0o600); err != nil {
		t.Fatal(err)
	}
	launcher := filepath.Join(dir, "launcher")
	script := "#!/bin/sh\necho $$ > " + pidFIFO + "\nexec sleep 600\n"
	if err := os.WriteFile(launcher, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	prober, _ := testsupport.StartSelf(t, probeHangEnv+"="+launcher)
	// The launcher says its pid through the FIFO once it runs.
	pid := testsupport.ReadPID(t, pidFIFO)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if err := prober.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = prober.Wait()
	if !testsupport.ExitedWithin(pid, 10*time.Second) {
		t.Fatalf("the launcher (pid %d) still runs 10 s after its prober was killed", pid)
	}
}
