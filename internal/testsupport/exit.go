package testsupport

import (
	"testing"
	"time"
)

// ExitTimeout bounds how long [WaitExit] and [WaitGroupGone] wait before they
// fail the test: a failure deadline, generous for a loaded machine, never a
// decision that the process is gone.
const ExitTimeout = 30 * time.Second

// WaitExit waits until process pid has exited; a zombie counts as exited (it
// runs nothing; in a container init may take its time to reap it). The
// kernel signals the exit (Linux: a pidfd), so nothing polls. It fails the
// test after ExitTimeout.
func WaitExit(t testing.TB, pid int) {
	t.Helper()
	if !waitExit(pid, ExitTimeout) {
		t.Fatalf("process %d still runs after %v", pid, ExitTimeout)
	}
}

// WaitGroupGone waits until no live process of group pgid is left, waiting
// for each member's exit in turn; it fails the test after ExitTimeout.
func WaitGroupGone(t testing.TB, pgid int) {
	t.Helper()
	deadline := time.Now().Add(ExitTimeout)
	for {
		live := InGroups(pgid)
		if len(live) == 0 {
			return
		}
		for _, p := range live {
			if !waitExit(p.PID, time.Until(deadline)) {
				t.Fatalf("process group %d still has live members after %v: %v", pgid, ExitTimeout, InGroups(pgid))
			}
		}
	}
}
